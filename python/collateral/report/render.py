"""The report as one HTML document, rendered from the Jinja2 templates in
``collateral/templates/``, and written to a file once its arguments are checked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .comparison import sim_vs_emu
from .embed import PX_PER_INCH
from .provenance import metadata
from .sections import section


class ReportError(ValueError):
    pass


def environment() -> Any:
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    env = Environment(
        loader=PackageLoader("collateral", "templates"),
        autoescape=select_autoescape(["html", "j2"], default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["kib"] = lambda n: f"{n / 1024:,.0f} KiB"
    return env


def render(stores: list[Any]) -> str:
    """The report of ``stores`` as one HTML document."""
    taken: set[str] = {"top", "claims", "contents", "sim-vs-emu"}
    sections = [section(st, taken) for st in stores]
    rank = {False: 0, True: 1, None: 2}  # those that differ first
    claims = sorted(
        ((s, f, c, rank.get(c.holds, 2)) for s in sections for f in s.figures for c in f.claims),
        key=lambda t: t[3],
    )
    summary = {
        "hold": sum(1 for *_, c, _ in claims if c.holds is True),
        "differ": sum(1 for *_, c, _ in claims if c.holds is False),
        "total": len(claims),
    }
    return (
        environment()
        .get_template("report.html.j2")
        .render(
            meta=metadata(stores, sections),
            sections=sections,
            claims=claims,
            summary=summary,
            sim_emu=sim_vs_emu(stores),
            px_per_inch=PX_PER_INCH,
        )
    )


def write_report(results: list[Path], output: Path) -> Path:
    """Writes the report of the results directories ``results`` to the file ``output``.
    Raises :class:`ReportError` (a ValueError) naming the argument at fault before
    anything is written."""
    from ..store import Store, StoreError

    if isinstance(results, str | Path) or not results:
        raise ReportError(f"results: {results!r}: give a list of results directories")
    output = Path(output)
    if not str(output).strip() or output.name in ("", ".", "..") or output.is_dir():
        raise ReportError(
            f"output: {str(output)!r} is a directory; give a file name such as report.html"
        )
    stores = []
    seen: set[Path] = set()
    for r in results:
        if Path(r).is_dir() and Path(r).resolve() in seen:
            continue  # named twice (results/x results/x/): one section, not two
        seen.add(Path(r).resolve())
        if not Path(r).is_dir():
            raise ReportError(f"results: {str(r)!r} is not a directory (a results directory)")
        st = Store(r)
        try:
            st.meta()
        except StoreError as e:
            raise ReportError(str(e)) from None
        stores.append(st)
    doc = render(stores)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(doc, encoding="utf-8")
    return output
