"""The CLI as a user runs it: `python -m collateral ...` in a subprocess."""

import json
import subprocess
import sys
from importlib.metadata import version

import pytest


def run(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "collateral", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


@pytest.mark.parametrize(
    ("args", "option", "fragment"),
    [
        (["--queue", "0p"], "--queue", "must be positive"),
        (["--queue", "-5p"], "--queue", "must be positive"),
        (["--queue", "20kb"], "--queue", "kB"),
        (["--queue", "lots"], "--queue", "27p"),
        (["--down", "-1Mbit", "--up", "1Mbit"], "--down", "must be positive"),
        (["--down", "1.5Mbit"], "--up", "rate missing"),
        (["--down", "fast", "--up", "1Mbit"], "--down", "1.5Mbit"),
        (["--rule", "red"], "--rule", "fb-strict"),
        (["--queue", "20kB", "--rule", "ps"], "--rule", "in bytes"),
        (["--rtt", "100parsec"], "--rtt", "100ms"),
        (["--jitter", "-1ms"], "--jitter", "negative"),
        (["--cc", "vegas"], "--cc", "newreno, cubic, htcp, bbr"),
        (["--warmup", "90s"], "--warmup", "shorter"),
        (["--cbr", "sideways"], "--cbr", "down"),
        (["--cbr-size", "10B"], "--cbr-size", "28 B"),
        (["--cbr-interval", "0s"], "--cbr-interval", "positive"),
        (["--rto-min", "0s"], "--rto-min", "positive"),
        (["--seed", "x"], "--seed", "whole number"),
        (["--tcp-flows", "-1"], "--tcp-flows", ">= 0"),
        # An option with two spellings is named as typed (or abbreviated), else by its first.
        (["--downloads", "-1"], "--downloads", ">= 0"),
        (["--tcp-flows=-1"], "--tcp-flows", ">= 0"),
        (["--tcp-f", "-1"], "--tcp-flows", ">= 0"),
        (["--downl", "-1"], "--downloads", ">= 0"),
        (["--down", "1Mbit", "--up", "1Mbit", "--tcp-flows", "-1"], "--tcp-flows", ">= 0"),
        (["--link", "adsl3"], "--link", "adsl1"),
        (["--link", "adsl1", "--down", "1Mbit"], "--link", "not both"),
        (["--window", "0s", "--duration", "2s", "--warmup", "1s"], "--window", "positive"),
        (["--bogus"], "--bogus", "unrecognized"),
    ],
)
def test_bad_input_is_one_line_naming_the_option_and_exit_2(args, option, fragment):
    p = run("simulate", *args)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith(f"collateral: error: {option}"), lines[0]
    assert fragment in lines[0]
    assert "Traceback" not in p.stderr and p.stdout == ""


def test_help_lists_subcommands_and_units():
    top = run("--help")
    assert top.returncode == 0 and "simulate" in top.stdout and "demo" in top.stdout
    sim = run("simulate", "--help")
    for text in ("--queue", "27p", "fb-strict", "1.5Mbit", "--count-in-service", "--json"):
        assert text in sim.stdout
    # `run --help` names the runner's default batch length without importing the runner.
    from collateral.runner import DEFAULT_BATCH_SECONDS

    help_text = " ".join(run("run", "--help").stdout.split())
    assert f"one batch (default: {DEFAULT_BATCH_SECONDS:g})" in help_text


def test_simulate_json_is_parsable_and_plot_written(tmp_path):
    plot = tmp_path / "fig.svg"
    p = run(
        "simulate",
        "--duration",
        "8s",
        "--warmup",
        "2s",
        "--queue",
        "27p",
        "--json",
        "--plot",
        str(plot),
        "--window",
        "3s",
    )
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)  # stdout is pure JSON; "wrote ..." goes to stderr
    assert doc["scenario"]["down"]["queue"] == {
        "limit": "27p",
        "rule": "ps",
        "count_in_service": False,
    }
    assert doc["summary"]["tcp"][0]["goodput_bps"] > 0
    # Exactly the file asked for: an SVG, no PNG beside it.
    assert b"<svg" in plot.read_bytes()[:1000] and not plot.with_suffix(".png").exists()


def test_demo_prints_table_and_writes_png(tmp_path):
    p = run("demo", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    png = tmp_path / "out" / "demo.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "wrote out/demo.png" in p.stdout
    for text in ("TCP newreno down", "CBR down", "CBR up", "Mbit/s", "ms"):
        assert text in p.stdout


def test_simulate_takes_an_aqm_an_app_and_web_users():
    p = subprocess.run(
        [
            sys.executable, "-m", "collateral", "simulate", "--link", "adsl1", "--aqm",
            "fq_codel", "--app", "quake3", "--cbr", "down", "--web-users", "20",
            "--duration", "20s", "--json",
        ],
        capture_output=True,
        text=True,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)["summary"]
    assert s["web"][0]["users"] == 20 and s["web"][0]["connections"] > 0
    assert len(s["cbr"]) == 1 and s["cbr"][0]["sent"] > 200  # Quake 3: 20 packets/s
    for bad, msg in [
        (["--aqm", "bogus"], "--aqm: 'bogus'"),
        (["--aqm", '{"kind": "codel", "target_ns": 0}'], "--aqm: target: must be positive"),
        (["--app", "doom"], "--app:"),
    ]:
        p = subprocess.run(
            [sys.executable, "-m", "collateral", "simulate", *bad], capture_output=True, text=True
        )
        assert p.returncode == 2 and p.stderr.count("\n") == 1 and msg in p.stderr, p.stderr


def test_output_piped_to_a_file_is_not_cut():
    """Piped (not a terminal), no cell is cut to fit 80 columns (a wide table: web users
    and an application flow numbered past 1000)."""
    p = run(
        "simulate",
        *("--duration", "6s", "--warmup", "2s", "--web-users", "300", "--app", "quake3"),
        *("--cbr", "down"),
    )
    assert p.returncode == 0, p.stderr
    assert "\u2026" not in p.stdout, p.stdout
    assert any("web 300 users · seed 1" in ln for ln in p.stdout.splitlines()), p.stdout
    # Real-time rows are named by application and direction, not by a flow id that
    # counts the 1200 web slots (1201, 1202).
    rows = [ln for ln in p.stdout.splitlines() if ln.rstrip().endswith("% >100 ms")]
    assert rows and all(ln.startswith("quake3 down") for ln in rows), rows


def test_a_game_row_names_the_app_and_shows_its_budget_share():
    p = run("simulate", "--duration", "6s", "--warmup", "2s", "--app", "quake3", "--cbr", "down")
    assert p.returncode == 0, p.stderr
    row = next(ln for ln in p.stdout.splitlines() if "quake3 down" in ln)
    assert row.rstrip().endswith("% >100 ms"), row
    assert "quality" in p.stdout and "CBR down" not in p.stdout


def test_implausible_values_are_warned_about_and_the_run_goes_on():
    p = run("simulate", "--rtt", "100", "--duration", "20s")
    assert p.returncode == 0, p.stderr
    assert "warning: --rtt 100: read as 100 s" in p.stderr and "did you mean 100ms?" in p.stderr
    # An AQM's time as a bare number is seconds too: PIE's target of 15 s, not 15 ms.
    p = run("simulate", "--aqm", "pie:target=15", "--duration", "3s", "--warmup", "1s")
    assert p.returncode == 0, p.stderr
    assert "warning: --aqm target=15: read as 15 s; did you mean 15ms?" in p.stderr
    p = run(
        "simulate", "--aqm", "pie:target=15ms,tupdate=0.5", "--duration", "3s", "--warmup", "1s"
    )
    assert p.returncode == 0 and "warning" not in p.stderr, p.stderr
    p = run("simulate", "--duration", "1ms", "--warmup", "0")  # no packet: "-", not "nan %"
    assert p.returncode == 0 and "nan" not in p.stdout.lower(), p.stdout
    p = run("simulate", "--queue", "1000B", "--duration", "8s")
    assert p.returncode == 0 and "warning: --queue 1000B: smaller than one 1500-byte" in p.stderr
    # A --versus workload replaces the base's --downloads (refused beside a workload of
    # its own).
    p = run("simulate", "--downloads", "4", "--versus", "workload=rrul", "--duration", "12s")
    assert p.returncode == 0, p.stderr
    p = run("simulate", "--start-spread", "2min", "--duration", "10s")
    assert p.returncode == 0 and "warning: --start-spread 2min: longer than the run (10s)" in (
        p.stderr
    )
    p = run("simulate", "--down", "1500", "--up", "256kbit", "--duration", "8s", "--warmup", "2s")
    assert p.returncode == 0 and "--down 1500: read as 1500 bit/s; did you mean 1500kbit?" in (
        p.stderr
    )
    # A packet gap or jitter as a bare number is seconds: a call's 20 is surely 20 ms.
    p = run("simulate", "--cbr-interval", "20", "--jitter", "1", "--duration", "12s")
    assert p.returncode == 0, p.stderr
    assert "--cbr-interval 20: read as 20 s; did you mean 20ms?" in p.stderr
    assert "--jitter 1: read as 1 s; did you mean 1ms?" in p.stderr
    p = run("advise", "--budget", "100", "--trials", "1", "--duration", "4s", "--cc", "cubic")
    assert p.returncode == 0 and "--budget 100: read as 100 s; did you mean 100ms?" in p.stderr
    # Plausible values: no warning.
    p = run("simulate", "--rtt", "100ms", "--duration", "8s", "--warmup", "2s")
    assert p.returncode == 0 and "warning" not in p.stderr, p.stderr
    p = run("simulate", "--cbr-interval", "0.02", "--jitter", "0.5", "--duration", "8s")
    assert p.returncode == 0 and "warning" not in p.stderr, p.stderr


def test_queue_with_aqm_sets_its_limit_or_says_why_not():
    def queue_of(*args):
        p = run("simulate", *args, "--duration", "6s", "--warmup", "2s", "--json")
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout)["scenario"]["down"]["queue"]

    assert queue_of("--aqm", "fq_codel", "--queue", "200p") == {"kind": "fq_codel", "limit": 200}
    assert queue_of("--aqm", "cake", "--queue", "256kB") == {
        "kind": "cake",
        "memory_limit": 256_000,
    }
    for args, text in (
        (("--aqm", "fq_codel", "--queue", "256kB"), "--queue: '256kB': fq_codel's limit counts"),
        (("--aqm", "cake", "--queue", "20p"), "cake's memory_limit counts bytes"),
        (("--aqm", "fq_codel:limit=100", "--queue", "50p"), "give it once"),
        (("--aqm", "cbq", "--queue", "50p"), "per-class limits"),
        (("--aqm", "fq_codel", "--rule", "ps"), "--rule"),
    ):
        p = run("simulate", *args, "--duration", "6s")
        assert p.returncode == 2 and text in p.stderr, (args, p.stderr)
        assert len(p.stderr.strip().splitlines()) == 1


def _summaries(*args: str) -> list[dict]:
    p = run("simulate", "--duration", "12s", "--json", *args)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    return [t["summary"] for t in doc["trials"]] if "trials" in doc else [doc["summary"]]


def test_trials_are_the_seeds_one_by_one_and_the_table_shows_their_median():
    many = _summaries("--trials", "3", "--seed", "5")
    singles = [_summaries("--seed", str(s))[0] for s in (5, 6, 7)]
    for a, b in zip(many, singles, strict=True):
        assert a["tcp"][0]["goodput_bps"] == b["tcp"][0]["goodput_bps"]
        assert a["cbr"][0]["delay_p95_s"] == b["cbr"][0]["delay_p95_s"]
    p95 = sorted(1000 * s["cbr"][0]["delay_p95_s"] for s in singles)
    table = run("simulate", "--duration", "12s", "--trials", "3", "--seed", "5").stdout
    assert "3 trials, seeds 5–7" in table
    assert f"{p95[1]:.1f} ms" in table  # the median of three is the middle one
    assert f"{p95[0]:.1f}–{p95[2]:.1f} ms" in table  # and the range below it


def test_versus_runs_the_same_trials_with_each_queue():
    p = run(
        "simulate",
        "--duration",
        "12s",
        "--json",
        "--trials",
        "2",
        "--queue",
        "30p",
        "--versus",
        "fq_codel",
        "--versus",
        "10p",
    )
    assert p.returncode == 0, p.stderr
    queues = json.loads(p.stdout)["queues"]
    assert [q["queue"] for q in queues] == ["30p ps", "fq_codel", "10p ps"]
    alone = _summaries("--trials", "2", "--aqm", "fq_codel")
    got = [t["summary"] for t in queues[1]["trials"]]
    assert [s["down_goodput_bps"] for s in got] == [s["down_goodput_bps"] for s in alone]
    assert [s["cbr"][0]["delay_median_s"] for s in got] == [
        s["cbr"][0]["delay_median_s"] for s in alone
    ]
    table = run("simulate", "--duration", "12s", "--queue", "30p", "--versus", "fq_codel").stdout
    assert "30p ps" in table and "fq_codel" in table and "TCP down" in table


def test_versus_rows_are_each_variants_own_flows():
    """A variant that changes the flows (another game, no CBR, a call) shows its own rows,
    judged by its own budget, and whole-number options vary as on the command line."""
    table = run("simulate", "--duration", "12s", "--app", "quake3", "--cbr", "down",
                "--versus", "app=wow").stdout  # fmt: skip
    wow = table[table.index("app=wow") :]
    assert "wow down" in wow and "quake3" not in wow and ">500 ms" in wow, table
    assert ">100 ms" in table[: table.index("app=wow")], table
    p = run("simulate", "--duration", "12s", "--versus", "cbr=none", "--versus", "video=gcc",
            "--versus", "downloads=2,uploads=1")  # fmt: skip
    assert p.returncode == 0, p.stderr
    none = p.stdout[p.stdout.index("cbr=none") : p.stdout.index("video=gcc")]
    assert "CBR" not in none and "TCP down" in none, p.stdout
    assert "video gcc down" in p.stdout[p.stdout.index("video=gcc") :], p.stdout
    two = p.stdout[p.stdout.index("downloads=2, uploads=1") :]
    assert "TCP up" in two, p.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--versus", "downloads=x"), "--versus: downloads=x: 'x' is not a whole number"),
        (("--versus", "seed=3"), "--versus: seed: the variants run the same seeds"),
        (("--versus", "10p", "--versus", "10p"), "--versus: '10p ps' is given twice"),
        (("--versus", "bogus"), "--versus: 'bogus': not JSON"),
        (("--versus", "10p", "--rule", "fb-strict"), "--versus: '10p': rule fb-strict counts"),
        (("--trials", "0"), "--trials"),
        (("--trials", "1001"), "--trials"),
    ],
)
def test_bad_trials_and_versus_are_one_line_errors(args, message):
    p = run("simulate", "--duration", "8s", *args)
    assert p.returncode == 2 and message in p.stderr and p.stderr.count("\n") == 1, p.stderr


def test_several_flows_get_a_total_row_that_sums_them():
    s = _summaries("--tcp-flows", "3")[0]
    assert s["down_goodput_bps"] == sum(f["goodput_bps"] for f in s["tcp"])
    table = run("simulate", "--duration", "12s", "--tcp-flows", "3").stdout
    assert "TCP total down" in table


def _fresh_python(code: str) -> list[str]:
    """What ``code`` prints in a new interpreter (nothing imported yet), split in words."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    ).stdout.split()


def test_simulate_starts_without_what_it_does_not_use():
    """Issue 33: `collateral simulate` imports neither the data and plotting stack nor
    the other commands' modules (the CLI imports a command's module only to run it)."""
    code = (
        "import sys, io, contextlib\n"
        "from collateral.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    rc = main(['simulate', '--link', 'adsl1', '--duration', '10s', '--warmup', '1s'])\n"
        "print(rc, ' '.join(sorted(sys.modules)))\n"
    )
    out = _fresh_python(code)
    assert out[0] == "0"
    loaded = set(out[1:])
    heavy = {"numpy", "pandas", "pyarrow", "duckdb", "matplotlib", "scipy", "plotly", "dask"}
    assert not heavy & loaded
    others = {"report", "advise", "run", "query", "reproduce", "infer", "import_", "plot"}
    assert not {f"collateral.cli.{m}" for m in others} & loaded
    assert "collateral.cli.simulate" in loaded


def test_version_imports_no_command():
    """`collateral --version` prints both versions and the core's build without importing
    a command's module (and so no pydantic): 0.1 s instead of the 0.4 s of building every
    command's parser."""
    from collateral import _native
    from collateral.build_info import core

    code = (
        "import sys\n"
        "from collateral.cli import main\n"
        "rc = main(['--version'])\n"
        "print(rc, ' '.join(sorted(sys.modules)))\n"
    )
    out = _fresh_python(code)
    line = f"collateral {version('collateral')} (core {_native.version()}, {core()})"
    assert out[: len(line.split())] == line.split()
    rc, loaded = out[len(line.split())], set(out[len(line.split()) + 1 :])
    assert rc == "0"
    assert "pydantic" not in loaded
    assert not {
        m for m in loaded if m.startswith("collateral.cli.") and m != "collateral.cli.errors"
    }


def test_a_commands_help_and_usage_errors_import_no_pydantic():
    """`collateral simulate --help` (emulate's, advise's, an option argparse refuses) is
    drawn from the declared parameters without the scenario's models: no pydantic, no
    rich (0.09 s instead of 0.26 s here); the help still lists every parameter's option."""
    from collateral.cli.scenario import option
    from collateral.spec.fields import FIELDS

    for argv, rc in (
        (["simulate", "--help"], "0"),
        (["emulate", "--help"], "0"),
        (["advise", "--help"], "0"),
        (["simulate", "--trials", "0"], "2"),
    ):
        code = (
            "import sys, io, contextlib\n"
            "from collateral.cli import main\n"
            "out, err = io.StringIO(), io.StringIO()\n"
            "with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):\n"
            "    try:\n"
            f"        rc = main({argv!r})\n"
            "    except SystemExit as e:\n"
            "        rc = e.code\n"
            "print(rc, ' '.join(sorted(sys.modules)))\n"
            "print(out.getvalue() + err.getvalue(), file=sys.stderr)\n"
        )
        p = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
        )
        words = p.stdout.split()
        assert words[0] == rc, (argv, p.stderr)
        loaded = set(words[1:])
        assert not {"pydantic", "pydantic_core", "rich"} & loaded, argv
        assert not {m for m in loaded if m.startswith("collateral.spec.")} - {
            "collateral.spec.fields"
        }, argv
        if argv[0] == "simulate" and rc == "0":
            assert all(option(f.name) in p.stderr for f in FIELDS)
        if rc == "2":
            assert "--trials" in p.stderr


def test_the_overview_is_the_whole_parsers_help_without_its_imports():
    """`collateral --help` (and no command, or a misspelt one) is drawn from the table of
    each command's line, importing no command's module; it reads as the whole parser's."""
    from collateral.cli import build_parser, overview_parser

    assert overview_parser().format_help() == build_parser().format_help()
    code = (
        "import sys, io, contextlib\n"
        "from collateral.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    rc = main([])\n"
        "print(rc, ' '.join(sorted(sys.modules)))\n"
    )
    out = _fresh_python(code)
    assert out[0] == "2"
    assert {m for m in out[1:] if m.startswith("collateral.cli.")} == {"collateral.cli.errors"}


def test_schema_and_a_plot_of_a_run_import_no_scenario_model(tmp_path):
    """The core's names (the vocabulary) are read without the spec package: `collateral
    schema`, and `collateral plot` of a store whose run kept its points and sweep keys,
    import neither pydantic nor the spec nor the experiment file's models."""
    from collateral.experiment import load_experiment
    from collateral.runner import run_experiment

    (tmp_path / "e.toml").write_text(
        '[experiment]\nname = "e"\n[scenario]\nlink = "adsl1"\nduration = "4s"\n'
        'warmup = "1s"\ntcp = [{}]\n[sweep]\n"tcp.cc" = ["cubic", "newreno"]\n'
    )
    run_experiment(load_experiment(tmp_path / "e.toml"), tmp_path / "s", progress=False)
    spec = {"pydantic", "collateral.spec", "collateral.experiment"}
    for argv in (
        ["schema"],
        [
            "plot",
            str(tmp_path / "s"),
            "--x",
            "cc",
            "--y",
            "tcp0_goodput_bps",
            "-o",
            str(tmp_path / "p.png"),
        ],
    ):
        code = (
            "import sys, io, contextlib\n"
            "from collateral.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    rc = main({argv!r})\n"
            "print(rc, ' '.join(sorted(sys.modules)))\n"
        )
        out = _fresh_python(code)
        assert out[0] == "0" and not spec & set(out[1:]), (argv[0], spec & set(out[1:]))
    assert (tmp_path / "p.png").stat().st_size > 0


def test_listing_the_reproductions_imports_no_matplotlib():
    """`collateral reproduce --list` imports every figure's module (the registry) but
    draws nothing: matplotlib is imported when a figure is drawn, not with the modules."""
    code = (
        "import sys, io, contextlib\n"
        "from collateral.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    rc = main(['reproduce', '--list'])\n"
        "print(rc, 'mmsys-fig6a' in out.getvalue(), 'matplotlib' in sys.modules)\n"
    )
    assert _fresh_python(code) == ["0", "True", "False"]


def test_importing_the_spec_builds_no_validator():
    """Issue 33: the spec models build their validators when first used, not at import
    (a model instance as a field's default, or one built to show it in a signature,
    would build them for every command, whether it validates a scenario or not)."""
    code = (
        "import collateral.spec as s\n"
        "models = [s.Scenario, s.LinkSpec, s.QueueSpec, s.TcpSpec, s.TraceSpec, s.CbrSpec]\n"
        "print(sum(m.__pydantic_complete__ for m in models))\n"
        "s.Scenario(link='adsl1')\n"
        "print(int(s.Scenario.__pydantic_complete__))\n"
    )
    assert _fresh_python(code) == ["0", "1"]


def test_ctrl_c_and_an_ascii_terminal_end_in_one_line_not_a_traceback(tmp_path):
    # Ctrl-C in a command that is not `run` (which stores what finished): one line,
    # status 130. Output an ASCII locale cannot encode ('·' in the table's title) is
    # written with '?' instead of ending in UnicodeEncodeError.
    import os
    import signal
    import time

    cmd = [sys.executable, "-m", "collateral", "trace", "constant", "--rate", "1Mbit",
           "--duration", "24h", "-o", str(tmp_path / "long.trace")]  # fmt: skip
    # Ctrl-C as a terminal sends it: to a process that takes SIGINT (a pytest-xdist worker
    # may ignore it, and a child inherits that, so Python would install no handler).
    default_sigint = lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)  # noqa: E731
    p = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    time.sleep(5.0)  # past the imports (a second or less) into the 40 s of building
    p.send_signal(signal.SIGINT)
    err = p.communicate(timeout=60)[1]
    assert p.returncode == 130 and err == "collateral: interrupted\n", err
    env = {**os.environ, "PYTHONIOENCODING": "ascii", "PYTHONUTF8": "0", "LC_ALL": "C"}
    p = subprocess.run(
        [sys.executable, "-m", "collateral", "simulate", "--duration", "8s"],
        capture_output=True, env=env,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert b"RTT 100ms ? queue 20kB" in p.stdout, p.stdout[:300]


def test_emulate_refuses_one_trials_options_beside_an_experiment_file(cli_main, tmp_path):
    # The file sets every trial's scenario: --duration beside it was ignored in silence,
    # and -o without a file stored nothing.
    rc, _, err = cli_main("emulate", str(tmp_path / "exp.toml"), "--duration", "3s")
    assert rc == 2 and err.startswith("collateral: error: --duration: sets the one trial"), err
    rc, _, err = cli_main("emulate", str(tmp_path / "exp.toml"), "--count-in-service")
    assert rc == 2 and "with EXPERIMENT.toml the file sets it" in err, err
    rc, _, err = cli_main("emulate", str(tmp_path / "exp.toml"), "--tcp-flows", "3")
    assert rc == 2 and err.startswith("collateral: error: --downloads: sets the one"), err
    rc, _, err = cli_main("emulate", str(tmp_path / "exp.toml"), "--json")
    assert rc == 2 and "--json: the one trial's output; EXPERIMENT.toml's trials go" in err
    # Typed with the option's default value: still not the file's (was passed in silence).
    for typed in (["--rtt", "100ms"], ["--cc", "newreno"], ["--window", "10s"], ["--seed=1"]):
        rc, _, err = cli_main("emulate", str(tmp_path / "exp.toml"), *typed)
        assert rc == 2 and err.startswith(f"collateral: error: {typed[0][:6]}"), (typed, err)
    rc, _, err = cli_main("emulate", "-o", str(tmp_path / "x"), "--duration", "3s")
    assert rc == 2 and err.startswith("collateral: error: --out: stores an experiment's"), err
    assert not (tmp_path / "x").exists()
    # Nothing to carry: refused, not an "on time" run of idle namespaces.
    rc, _, err = cli_main("emulate", "--downloads", "0", "--cbr", "none", "--duration", "6s")
    assert rc == 2 and "no traffic: give a flow" in err, err
    # A testbed limit is named by the option, by shell as by emulate.
    for cmd in (["shell", "--rtt", "100s", "--", "true"], ["emulate", "--rtt", "100s"]):
        rc, _, err = cli_main(*cmd)
        last = err.splitlines()[-1]  # after the warning of an unusual round trip
        assert rc == 2 and last.startswith("collateral: error: --rtt: 100s: the testbed"), err


def test_rto_min_above_the_stacks_rto_max_is_refused_by_its_option(cli_main):
    # The core refused it as "tcp[0].rto_min_ns: must be at most rto_max (120000000000 ns)".
    rc, _, err = cli_main("simulate", "--rto-min", "200")
    assert rc == 2 and err == (
        "collateral: error: --rto-min: '200': 200s: above the stack's largest timeout, rto_max 120s"
    ), err
    rc, _, err = cli_main("simulate", "--rtt", "0ms")
    assert rc == 2 and err.endswith("must be positive, e.g. 100ms"), err


def test_simulate_says_when_its_trials_came_out_identical(cli_main):
    """The responsiveness workload draws nothing on the seed: --trials 2 gives the same
    trial twice, and the command says so rather than show ranges of width zero; trials
    that differ (the default TCP start spread) get no such line."""
    rc, out, err = cli_main(
        "simulate", "--link", "adsl2", "--workload", "responsiveness", "--duration", "20s",
        "--trials", "2",
    )  # fmt: skip
    assert rc == 0, err
    assert "note: the 2 trials came out identical" in out
    rc, out, err = cli_main("simulate", "--link", "adsl2", "--duration", "20s", "--trials", "2")
    assert rc == 0, err
    assert "identical" not in out


def test_simulate_notes_a_default_queue_too_small_for_the_link(cli_main):
    """20 kB (the studies' ADSL queue) on 100 Mbit/s at 100 ms: 1.6 ms of buffer against
    1.25 MB in flight; the note gives both, and goes when --queue is given or the queue
    is a quarter of that or more (ADSL1: 18.75 kB in flight)."""
    rc, out, err = cli_main("simulate", "--down", "100Mbit", "--up", "10Mbit", "--duration", "8s")
    assert rc == 0, err
    assert "note: the default 20kB queue drains in 1.6 ms at 100Mbit" in out
    assert "the 1.25MB a TCP flow has in flight over the 100ms round trip" in out
    for given in (["--queue", "1MB"], ["--queue", "20kB"]):
        rc, out, _ = cli_main(
            "simulate", "--down", "100Mbit", "--up", "10Mbit", "--duration", "8s", *given
        )
        assert rc == 0 and "note:" not in out
    rc, out, _ = cli_main("simulate", "--link", "adsl1", "--duration", "8s")
    assert rc == 0 and "note:" not in out


def test_shares_take_a_percentage_and_a_small_bare_rate_suggests_both_units(cli_main):
    """``--target 5%`` is 0.05 (it was "not a number", though the help wrote 1 %); a
    bare ``--down 24`` is as likely Mbit/s as kbit/s, ``--down 1500`` kbit/s."""
    from collateral.cli.values import share

    assert share("5%") == 0.05 and share("0.05") == 0.05 and share(" 2 %") == 0.02
    rc, _, err = cli_main("simulate", "--down", "24", "--up", "1Mbit", "--duration", "6s")
    assert rc == 0 and "--down 24: read as 24 bit/s; did you mean 24Mbit or 24kbit?" in err


def test_screams_discards_are_shown_below_its_loss():
    """SCReAM discards from its RTP queue what is past its deadline: not network loss, so
    the table shows it below the loss when the summary has any (GCC discards nothing)."""
    args = ("simulate", "--duration", "30s", "--downloads", "2", "--cc", "cubic")
    p = run(*args, "--video", "scream", "--json")
    assert p.returncode == 0, p.stderr
    discarded = json.loads(p.stdout)["summary"]["media"][0]["discarded"]
    assert discarded > 0  # the case this test is about
    table = run(*args, "--video", "scream").stdout
    assert f"{100 * discarded:.2f} % discarded" in table, table
    assert "discarded" not in run(*args, "--video", "gcc").stdout


def test_a_window_without_a_plot_is_warned_of():
    p = run("simulate", "--duration", "8s", "--window", "5s")
    assert p.returncode == 0 and "warning: --window: " in p.stderr, p.stderr
    assert "--window" not in run("simulate", "--duration", "8s").stderr


def test_emulate_takes_set_with_an_experiment_file_as_run_does():
    """``emulate FILE --set KEY=VALUE`` overrides the file as ``run --set`` does (it was
    'unrecognized', so the two sides of a compare could not be shortened alike); both
    refusals below come before anything is set up."""
    p = run("emulate", "--set", "experiment.trials=1")
    assert p.returncode == 2 and p.stderr.strip().endswith(
        "--set: overrides a key of an experiment file; give EXPERIMENT.toml"
    ), p.stderr
    p = run("emulate", "examples/sim-vs-emu.toml", "--set", "experiment.trails=1")
    assert p.returncode == 2 and "did you mean 'trials'?" in p.stderr, p.stderr
    assert "unrecognized" not in p.stderr
