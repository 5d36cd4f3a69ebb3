"""The Python package's layout (issue 26's rooms): every module small enough to hold in
one's head, no module reaching into another's private names, no import circle (lazy
imports inside functions count), and no library module importing the CLI."""

from __future__ import annotations

import ast
from pathlib import Path

import collateral

ROOT = Path(collateral.__file__).parent
#: The most lines a module may have.
MAX_LINES = 600


def _modules() -> dict[str, Path]:
    out = {}
    for p in ROOT.rglob("*.py"):
        parts = list(p.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = p
    for p in ROOT.rglob("*.so"):  # the native module
        rel = p.relative_to(ROOT.parent)
        out[".".join((*rel.parts[:-1], p.name.split(".")[0]))] = p
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> list[tuple[str, str | None]]:
    """(module, imported name) for every import of a package module in ``path``, at
    any depth (a function's lazy import too)."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(a.name, None) for a in node.names if a.name in MODULES]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join([*base, *([node.module] if node.module else [])])
            if target not in MODULES:
                continue
            for a in node.names:
                sub = f"{target}.{a.name}"
                out.append((sub, None) if sub in MODULES else (target, a.name))
    return out


def _graph() -> dict[str, set[str]]:
    return {
        m: {t for t, _ in _imports(m, p)} - {m} for m, p in MODULES.items() if p.suffix == ".py"
    }


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while (w := stack.pop()) != v:
                comp.append(w)
            if comp:
                out.append(sorted([v, *comp]))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_module_is_over_the_line_limit():
    long = {
        m: n
        for m, p in MODULES.items()
        if p.suffix == ".py" and (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_no_module_imports_another_modules_private_name():
    private = [
        f"{m}: from {target} import {name}"
        for m, p in MODULES.items()
        if p.suffix == ".py"
        for target, name in _imports(m, p)
        if name and name.startswith("_") and not name.startswith("__")
    ]
    assert not private, private


def test_no_import_circle():
    assert _cycles(_graph()) == []


def test_the_cli_is_imported_by_no_library_module():
    cli = "collateral.cli"
    offenders = [
        f"{m} imports {t}"
        for m, targets in _graph().items()
        if not (m == cli or m.startswith(cli + "."))
        for t in targets
        if t == cli or t.startswith(cli + ".")
    ]
    assert offenders == ["collateral.__main__ imports collateral.cli"], offenders


def test_the_checks_can_fail():
    """The cycle finder finds a circle, and the import reader sees a lazy private import."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    tmp = ROOT / "cli" / "paths.py"
    lazy = _imports("collateral.cli.paths", tmp)
    assert ("collateral.cli.errors", None) in lazy or ("collateral.cli.errors", "fail") in lazy


def test_no_name_loaded_on_first_use_is_also_a_submodules_name():
    """A package's lazy name (:func:`collateral.lazy.lazy_names`) that a submodule also
    has becomes that module once anything imports the submodule (``advise.figure`` did):
    with every submodule imported, no public name of such a package is a module."""
    import subprocess
    import sys

    packages = sorted(
        m for m, p in MODULES.items() if p.name == "__init__.py" and "lazy_names(" in p.read_text()
    )
    assert {"collateral", "collateral.spec", "collateral.plot"} <= set(packages)
    code = (
        "import importlib, pkgutil, sys, types\n"
        "p = importlib.import_module(sys.argv[1])\n"
        "for s in pkgutil.iter_modules(p.__path__):\n"
        "    if not s.name.startswith('__'):\n"
        "        importlib.import_module(f'{p.__name__}.{s.name}')\n"
        "bad = [n for n in p.__all__ if isinstance(getattr(p, n), types.ModuleType)]\n"
        "print(len(p.__all__), ','.join(bad) or '-')\n"
    )
    for package in packages:
        n, bad = subprocess.run(
            [sys.executable, "-c", code, package],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout.split()
        assert int(n) > 0 and bad == "-", (package, bad)
