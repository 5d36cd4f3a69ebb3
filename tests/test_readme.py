"""The README's commands still say what the CLI takes: every ``collateral`` command in its
shell blocks parses, a scenario it describes is built (every value checked as a run
would check it, nothing simulated), and an experiment file it runs loads; its Python
blocks run as written (a second or two each). A renamed option or function, a value
the spec no longer takes or a moved example fails here, before a reader meets it."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

#: The commands whose options describe one scenario, built from them as the command
#: builds it (``advise`` builds its candidates itself: its options are parsed only).
SCENARIO_COMMANDS = {"simulate", "emulate", "shell"}


def shell_blocks(text: str) -> list[tuple[int, str]]:
    """The lines of the ```sh and ```bash blocks, with their line numbers."""
    out, inside = [], False
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            inside = line.strip() in ("```sh", "```bash")
            continue
        if inside:
            out.append((n, line))
    return out


def readme_commands() -> list[tuple[int, list[str]]]:
    """Each ``collateral`` command of the README's shell blocks as its argv (after
    ``collateral``), with its first line's number. A command continues over lines that
    end in a backslash or leave a quote open; one that needs the shell's expansion
    (``$VAR``, braces) is left out: it cannot be split without a shell."""
    commands, pending, start = [], "", 0
    for n, line in shell_blocks(README.read_text()):
        text = f"{pending}\n{line}" if pending else line
        start = start if pending else n
        if text.endswith("\\"):
            pending = text[:-1]
            continue
        try:
            words = shlex.split(text, comments=True)
        except ValueError:  # a quote still open: the command goes on
            pending = text
            continue
        pending = ""
        if words[:1] == ["sudo"]:
            words = words[1:]
        if not words or Path(words[0]).name != "collateral" or len(words) < 2:
            continue
        # Ours up to a redirection, or up to `--` (what follows is the user's command).
        end = [k for k, w in enumerate(words) if w in ("--", ">", "|", "<", "2>", "&&")]
        words = words[: end[0]] if end else words
        if any("$" in w or re.search(r"\{[^}]*,[^}]*\}", w) for w in words):
            continue
        commands.append((start, words[1:]))
    return commands


COMMANDS = readme_commands()


def test_the_readme_has_the_commands_it_teaches():
    """The extraction finds what the quick start shows (so an empty list cannot pass)."""
    names = {argv[0] for _, argv in COMMANDS}
    assert {"simulate", "run", "query", "advise", "reproduce", "emulate", "shell"} <= names
    assert len(COMMANDS) >= 30


@pytest.mark.parametrize(
    "argv", [argv for _, argv in COMMANDS], ids=[f"README:{n}" for n, _ in COMMANDS]
)
def test_a_readme_command_parses_and_its_scenario_builds(argv: list[str], capsys):
    from collateral.cli import build_parser
    from collateral.cli.scenario import scenario_from_args, versus_scenarios

    try:
        args = build_parser(argv[0]).parse_args(argv)
        if argv[0] in SCENARIO_COMMANDS:
            scenario = scenario_from_args(args)
            if getattr(args, "versus", None):
                versus_scenarios(args, scenario)
    except SystemExit as e:
        if e.code == 0 and "--help" in argv:
            return
        pytest.fail(f"collateral {shlex.join(argv)}: {capsys.readouterr().err.strip()}")
    if argv[0] == "run":
        from collateral.experiment import load_experiment

        assert len(load_experiment(ROOT / args.experiment)) > 0


def python_blocks() -> list[tuple[int, str]]:
    """The ```python blocks, with the line each starts on; those that need a cluster
    (dask_jobqueue's SLURM) are left out."""
    blocks, lines, start = [], None, 0
    for n, line in enumerate(README.read_text().splitlines(), 1):
        if lines is None and line.strip() == "```python":
            lines, start = [], n + 1
        elif lines is not None and line.startswith("```"):
            blocks.append((start, "\n".join(lines)))
            lines = None
        elif lines is not None:
            lines.append(line)
    return [(n, code) for n, code in blocks if "dask_jobqueue" not in code]


BLOCKS = python_blocks()


@pytest.mark.parametrize("code", [c for _, c in BLOCKS], ids=[f"README:{n}" for n, _ in BLOCKS])
def test_a_readme_python_block_runs(code: str, tmp_path: Path, monkeypatch):
    """Run where a reader would run it: a directory with the examples, where each block
    writes what it makes (a figure, a results directory)."""
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    assert [p.name for p in tmp_path.iterdir() if p.name != "examples"]


@pytest.mark.parametrize("script", sorted((ROOT / "examples").glob("*.py")), ids=lambda p: p.name)
def test_an_example_script_runs(script: Path, tmp_path: Path):
    """The example scripts run as their docstrings say, each in a second or three."""
    import subprocess
    import sys

    p = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip()
