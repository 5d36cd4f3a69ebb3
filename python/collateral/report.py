"""A self-contained HTML report of results directories (``collateral report``).

One file that opens offline: no fetches, figures and long tables embedded. At the top
the run's metadata and a summary of every published claim (paper, ours, tolerance,
verdict); then a section per results directory: its description, each figure with a
caption saying what it shows and the claims it checks, a table of key numbers in human
units (medians over trials, sortable, long ones collapsed) and the experiment file. A
store that no reproduction drew gets a figure of its own. Where emulation results
exist for an experiment that was also simulated, a "simulation vs emulation" section
sets them side by side.

Figures: each is embedded as the smaller of its SVG (minified, gzip-compressed, base64;
the page's script inflates it with the browser's DecompressionStream) and its PNG
re-encoded with a 64-colour palette. Gzip is what keeps all reproductions under ~1 MB
(the quick runs' SVGs are 4 MB as written, their PNGs 3.5 MB): it needs JavaScript,
which the sortable tables need too. Each figure is shown at 90 CSS px per inch it was
drawn at, so matplotlib's 11-pt text is ~14 px and 9-pt text ~11 px, narrower only where
the window is; a click opens it at full size. Not interactive (plotly): plotly.js alone
is ~4.7 MB, and a vector figure already zooms sharp; ``collateral plot -o x.html``
draws the interactive form of any store.

The page is rendered from Jinja2 templates in ``collateral/templates/``.
"""

from __future__ import annotations

import base64
import datetime as dt
import gzip
import io
import json
import math
import os
import platform
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["ReportError", "write_report"]

#: CSS px per inch of a figure as drawn (matplotlib's 11-pt text at ~14 px).
PX_PER_INCH = 90
#: Rows of a table shown before the rest collapses.
PREVIEW_ROWS = 12
#: A table longer than this shows PREVIEW_ROWS and keeps the full table collapsed.
LONG_TABLE = 25
#: Summary fields that are shares (0-1) and shown as %. The core's schema gives them no
#: unit; it could declare one (then this list goes).
_SHARES = ("loss_rate", "over_100ms", "over_500ms", "over_1000ms", "drop_rate")


class ReportError(ValueError):
    pass


# ---------------------------------------------------------------------------------------
# Numbers and units


@dataclass(frozen=True)
class Unit:
    """How a column's values are shown: the label's unit and the factor from the stored
    (SI) value."""

    label: str = ""
    scale: float = 1.0


def _unit(name: str, values: Any) -> Unit:
    """The display unit of a stored column, from the schema's unit (metrics) or the
    parameter naming convention (``_s``, ``_bps``, ``_bytes``): seconds as ms when the
    values are under a second, bit/s as Mbit/s or kbit/s, bytes as kB."""
    from . import schema

    col = schema.column(name)
    unit = col["unit"] if col else ""
    if col is None:
        unit = (
            "s"
            if name.endswith("_s")
            else "bit/s"
            if name.endswith("_bps")
            else "B"
            if name.endswith("_bytes")
            else ""
        )
    if any(name.endswith("_" + s) or name == s for s in _SHARES):
        return Unit("%", 100.0)
    big = _typical(values)
    if unit == "s":
        return Unit("ms", 1e3) if big < 1 else Unit("s")
    if unit == "bit/s":
        return Unit("Mbit/s", 1e-6) if big >= 1e6 else Unit("kbit/s", 1e-3)
    if unit == "B":
        return Unit("kB", 1e-3) if big >= 1e4 else Unit("B")
    return Unit(unit)


def _typical(values: Any) -> float:
    """The median magnitude of the finite non-zero values (0 when there are none)."""
    xs = sorted(abs(float(v)) for v in _finite(values) if v != 0)
    return xs[len(xs) // 2] if xs else 0.0


def _finite(values: Any) -> list[float]:
    out = []
    for v in values:
        try:
            f = float(v)
        except (TypeError, ValueError):
            continue
        if math.isfinite(f):
            out.append(f)
    return out


def _decimals(values: Any) -> int:
    """Decimals for a column: none for whole numbers, else three significant digits of
    its typical value, at most 4."""
    if all(float(v).is_integer() for v in _finite(values)):
        return 0
    t = _typical(values)
    if t == 0 or t >= 100:
        return 0
    return min(4, max(0, 2 - math.floor(math.log10(t))))


def _is_missing(v: Any) -> bool:
    if v is None:
        return True
    try:
        import pandas as pd

        if v is pd.NA or v is pd.NaT:
            return True
    except ImportError:  # pragma: no cover
        pass
    return isinstance(v, float) and not math.isfinite(v)


def fmt_number(v: Any, decimals: int) -> str:
    """``v`` with thousands separators and fixed decimals; "—" for nothing (None, NaN)."""
    if _is_missing(v):
        return "—"
    if isinstance(v, bool) or not isinstance(v, int | float):
        try:
            v = float(v)
        except (TypeError, ValueError):
            return str(v)
    if not math.isfinite(float(v)):
        return "—"
    return f"{float(v):,.{decimals}f}"


# ---------------------------------------------------------------------------------------
# Tables


@dataclass
class Cell:
    text: str
    key: float | str | None = None  # sort key when the text alone would sort wrong


@dataclass
class Table:
    columns: list[tuple[str, str]]  # (label, tooltip)
    numeric: list[bool]
    rows: list[list[Cell]]
    note: str = ""

    @property
    def header(self) -> list[tuple[str, str, bool]]:
        return [(lb, tip, n) for (lb, tip), n in zip(self.columns, self.numeric, strict=True)]

    @property
    def long(self) -> bool:
        return len(self.rows) > LONG_TABLE

    @property
    def preview(self) -> list[list[Cell]]:
        return self.rows[:PREVIEW_ROWS] if self.long else self.rows

    def packed(self) -> str:
        """The whole table as gzip+base64 JSON, which the page's script renders when
        the reader opens it (a 2,000-row table as HTML would be half the budget)."""
        rows = [[c.text if c.key is None else [c.text, c.key] for c in r] for r in self.rows]
        data = json.dumps({"rows": rows}, separators=(",", ":"), ensure_ascii=False)
        return base64.b64encode(gzip.compress(data.encode(), 9, mtime=0)).decode()


_PARAM_LABELS = {
    "link": "link",
    "rtt_s": "RTT",
    "down_queue_kind": "queue",
    "down_queue_rule": "queue rule",
    "tcp0_cc": "CC",
    "tcp0_profile": "TCP stack",
    "down_queue_limit_bytes": "queue limit",
    "down_queue_limit_packets": "queue limit (packets)",
    "tcp_flows": "TCP flows",
    "cbr0_jitter_s": "CBR jitter",
    "down_rate_bps": "rate ↓",
    "up_rate_bps": "rate ↑",
}
#: Parameters tried first as a table's row labels (the sweeps' usual axes).
_PARAM_ORDER = list(_PARAM_LABELS)


def _param_label(name: str) -> str:
    if name in _PARAM_LABELS:
        return _PARAM_LABELS[name]
    label = re.sub(r"_(s|bps|bytes)$", "", name.removeprefix("tag_"))
    label = re.sub(r"^down_", "↓ ", re.sub(r"^up_", "↑ ", label))
    label = re.sub(r"^(tcp|cbr|web)(\d+)_", lambda m: f"{m[1].upper()} {m[2]} ", label)
    return label.replace("_", " ")


def _parameters(df: Any) -> list[str]:
    """The fewest parameter columns that tell the points apart: tags and the usual sweep
    axes first, then any other varying column, each kept only if it splits points that
    the ones before it do not (``down_rate_bps`` adds nothing once ``link`` is there)."""
    from . import schema
    from .store import IDENTITY_COLUMNS

    per_point = df.drop_duplicates("point") if "point" in df.columns else df
    n_points = len(per_point)
    # As text, missing values included (pandas' string columns keep NA through astype).
    text = per_point.astype(object).map(lambda v: "" if _is_missing(v) else str(v))
    cands = [
        c
        for c in df.columns
        if c not in IDENTITY_COLUMNS
        and schema.column(c) is None
        and c not in ("mode", "duration_s", "warmup_s")
        and text[c].nunique() > 1
        and text[c].str.len().max() <= 40  # no JSON lists as labels
    ]
    # A tag set on every point names the sweep's axis; one set on some points only
    # (a size kept beside a packet limit) is a last resort.
    tags = [c for c in cands if c.startswith("tag_") and per_point[c].notna().all()]
    partial = [c for c in cands if c.startswith("tag_") and c not in tags]
    known = [c for c in _PARAM_ORDER if c in cands]
    rest = sorted(
        (c for c in cands if c not in tags + partial + known),
        key=lambda c: text[c].nunique(),
    )
    chosen: list[str] = []
    groups = 1
    for c in tags + known + rest + partial:
        g = text[[*chosen, c]].drop_duplicates().shape[0]
        if g > groups:
            chosen.append(c)
            groups = g
        if groups >= n_points:
            break
    return chosen


@dataclass
class Measure:
    label: str
    tooltip: str
    values: Any  # per-trial Series
    unit: Unit


def _flow_name(df: Any, kind: str, i: int) -> str:
    app = df.get(f"{kind}{i}_app")
    d = df.get(f"{kind}{i}_direction")
    arrow = ""
    if d is not None and d.dropna().nunique() == 1:
        arrow = {"down": " ↓", "up": " ↑"}.get(str(d.dropna().iloc[0]), "")
    if app is not None and app.dropna().nunique() == 1:
        return f"{app.dropna().iloc[0]}{arrow}"
    return f"CBR {i}{arrow}"


def _measures(df: Any) -> list[Measure]:
    """The key measures of a summary, per trial: TCP goodput per direction (the sum over
    that direction's flows), and per real-time flow its loss and additional delay."""
    import pandas as pd

    out: list[Measure] = []
    tcp = sorted({int(m[1]) for c in df.columns if (m := re.fullmatch(r"tcp(\d+)_goodput_bps", c))})
    for d, arrow in (("down", "↓"), ("up", "↑")):
        flows = [
            i
            for i in tcp
            if f"tcp{i}_direction" not in df.columns
            or (df[f"tcp{i}_direction"] == d).any()
            or (d == "down" and df[f"tcp{i}_direction"].isna().all())
        ]
        if not flows:
            continue
        total = pd.Series(0.0, index=df.index)
        any_flow = pd.Series(False, index=df.index)
        for i in flows:
            mine = (
                df[f"tcp{i}_direction"] == d
                if f"tcp{i}_direction" in df.columns and df[f"tcp{i}_direction"].notna().any()
                else pd.Series(d == "down", index=df.index)
            )
            v = pd.to_numeric(df[f"tcp{i}_goodput_bps"], errors="coerce")
            total = total + v.where(mine & v.notna(), 0.0)
            any_flow |= mine & v.notna()
        total = total.where(any_flow)
        per_row = sum(
            (df[f"tcp{i}_direction"] == d).astype(int)
            if f"tcp{i}_direction" in df.columns and df[f"tcp{i}_direction"].notna().any()
            else int(d == "down")
            for i in flows
        )
        several = bool((pd.Series(per_row, index=df.index) > 1).any())
        out.append(
            Measure(
                f"TCP goodput {arrow}" + (", all flows" if several else ""),
                f"application bytes delivered per second after the warm-up, {d}stream"
                + (", summed over the direction's flows" if several else ""),
                total,
                _unit("tcp0_goodput_bps", total),
            )
        )
    cbr = sorted({int(m[1]) for c in df.columns if (m := re.fullmatch(r"cbr(\d+)_sent", c))})
    fields = (
        ["loss_rate", "delay_median_s", "delay_p95_s"]
        if len(cbr) <= 2
        else [
            "loss_rate",
            "delay_p95_s",
        ]
    )
    names = {"loss_rate": "loss", "delay_median_s": "delay p50", "delay_p95_s": "delay p95"}
    from . import schema

    for i in cbr[:4]:
        who = _flow_name(df, "cbr", i)
        for f in fields:
            col = f"cbr{i}_{f}"
            if col not in df.columns:
                continue
            v = pd.to_numeric(df[col], errors="coerce")
            meaning = (schema.column(col) or {}).get("meaning", "")
            out.append(Measure(f"{who} {names[f]}", meaning, v, _unit(col, v)))
    for i in sorted({int(m[1]) for c in df.columns if (m := re.fullmatch(r"web(\d+)_users", c))}):
        col = f"web{i}_response_median_s"
        if col in df.columns:
            v = pd.to_numeric(df[col], errors="coerce")
            out.append(
                Measure(f"web {i} response p50", "median object response time", v, _unit(col, v))
            )
    return out


def _param_cells(per_point: Any, name: str) -> tuple[str, list[Cell]]:
    """A parameter column's label and cells: numbers in their unit (a queue limit is
    stored in bytes or in packets, one column each)."""
    vals = per_point[name].tolist()
    if name.endswith("queue_kind"):  # no kind: drop-tail
        return _param_label(name), [Cell("drop-tail" if _is_missing(v) else str(v)) for v in vals]
    nums = [v for v in vals if not _is_missing(v)]
    if nums and all(isinstance(v, int | float) and not isinstance(v, bool) for v in nums):
        u = _unit(name, nums)
        scaled = [None if _is_missing(v) else float(v) * u.scale for v in vals]
        d = _decimals(scaled)
        label = _param_label(name) + (f" ({u.label})" if u.label else "")
        return label, [Cell(fmt_number(v, d)) for v in scaled]
    return _param_label(name), [Cell("—" if _is_missing(v) else str(v)) for v in vals]


def key_numbers(df: Any) -> Table | None:
    """Medians over trials per point of the key measures, rows labelled by the fewest
    parameters that tell the points apart."""
    if df is None or df.empty:
        return None
    params = _parameters(df)
    measures = _measures(df)
    by = df["point"] if "point" in df.columns else df[params].astype(str).agg("|".join, axis=1)
    grouped = df.groupby(by, sort=False)
    first = grouped.head(1)
    first.index = by.loc[first.index]  # one row per point, indexed by it
    counts = grouped.size()
    if params:
        first = first.sort_values(params, kind="stable", na_position="last")
    order = list(first.index)
    cols: list[tuple[str, str]] = []
    numeric: list[bool] = []
    columns_cells: list[list[Cell]] = []
    for p in params:
        label, cells = _param_cells(first.loc[order], p)
        cols.append((label, p))
        numeric.append(all(c.key is not None or _looks_numeric(c.text) for c in cells))
        columns_cells.append(cells)
    cols.append(("trials", "trials per point"))
    numeric.append(True)
    columns_cells.append([Cell(f"{int(counts[k]):,}") for k in order])
    for m in measures:
        med = (m.values.groupby(by, sort=False).median() * m.unit.scale).reindex(order)
        d = _decimals(med.tolist())
        cols.append((m.label + (f" ({m.unit.label})" if m.unit.label else ""), m.tooltip))
        numeric.append(True)
        columns_cells.append([Cell(fmt_number(v, d)) for v in med.tolist()])
    rows = [list(r) for r in zip(*columns_cells, strict=True)]
    return Table(cols, numeric, rows, "Medians over each point's trials; — : nothing measured.")


def _looks_numeric(s: str) -> bool:
    return s == "—" or re.fullmatch(r"-?[\d,]+(\.\d+)?", s) is not None


def _markdown_table(text: str) -> Table | None:
    """A pipe table (the figures' ``<stem>.md``) as a Table."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("|")]
    if len(lines) < 3:
        return None
    split = lambda ln: [c.strip() for c in ln.strip("|").split("|")]  # noqa: E731
    head, body = split(lines[0]), [split(ln) for ln in lines[2:]]
    body = [r for r in body if len(r) == len(head)]
    rows = [[Cell(c, _sort_key(c)) for c in r] for r in body]
    numeric = [all(_sort_key(r[i].text) is not None for r in rows) for i in range(len(head))]
    return Table([(h, "") for h in head], numeric, rows)


def _sort_key(text: str) -> float | None:
    m = re.match(r"^\s*(-?[\d,]*\.?\d+)", text)
    return float(m[1].replace(",", "")) if m else None


# ---------------------------------------------------------------------------------------
# Figures


@dataclass
class Embedded:
    """One figure as the page embeds it."""

    kind: str  # "svg" (gzip+base64, inflated by the page) or "png" (data URI)
    data: str
    width: int  # CSS px as shown (at most the column's width)
    height: int
    alt: str


_SVG_NUMBER_ATTR = re.compile(r'\b(d|x|y|points)="([^"]*)"')
_LONG_DECIMAL = re.compile(r"-?\d+\.\d{2,}")


def _round(m: re.Match[str]) -> str:
    s = f"{float(m[0]):.1f}"
    return s[:-2] if s.endswith(".0") else s


def minify_svg(text: str) -> str:
    """matplotlib's SVG without metadata, comments and inter-tag white space, coordinates
    in path data and positions rounded to 0.1 pt (a tenth of a CSS px as shown).
    Transforms keep every digit (glyph scales such as 0.015625)."""
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    text = _SVG_NUMBER_ATTR.sub(lambda m: f'{m[1]}="{_LONG_DECIMAL.sub(_round, m[2])}"', text)
    return re.sub(r">\s+<", "><", text).strip()


def _svg_size_in(text: str) -> tuple[float, float] | None:
    """The SVG's drawn size in inches, from its root's width/height (matplotlib: pt)."""
    m = re.search(r"<svg\b[^>]*>", text)
    if not m:
        return None
    tag = m[0]
    w = re.search(r'\bwidth="([\d.]+)(pt|px|in)?"', tag)
    h = re.search(r'\bheight="([\d.]+)(pt|px|in)?"', tag)
    if not (w and h):
        return None
    per_in = {"pt": 72.0, "px": 96.0, "in": 1.0, None: 96.0}
    return float(w[1]) / per_in[w[2]], float(h[1]) / per_in[h[2]]


def _png_reencoded(data: bytes) -> tuple[bytes, tuple[float, float]]:
    """The PNG with a 64-colour palette (a plot has few colours; text edges keep enough
    shades), and its drawn size in inches (from its dpi, 150 when not recorded)."""
    from PIL import Image

    im = Image.open(io.BytesIO(data))
    dpi = float((im.info.get("dpi") or (150, 150))[0]) or 150.0
    size_in = (im.width / dpi, im.height / dpi)
    if im.mode in ("RGBA", "LA", "P"):
        rgba = im.convert("RGBA")
        bg = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        im = Image.alpha_composite(bg, rgba)
    q = im.convert("RGB").quantize(64, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    out = io.BytesIO()
    q.save(out, "PNG", optimize=True)
    return (out.getvalue() if out.tell() < len(data) else data), size_in


def embed_figure(svg: str | None, png: bytes | None, alt: str) -> Embedded:
    """The smaller of the gzipped SVG and the re-encoded PNG (the SVG unless the PNG is
    under 80 % of it: vector stays sharp at any zoom)."""
    if svg is None and png is None:
        raise ValueError(f"figure {alt!r}: neither SVG nor PNG given")
    cands: list[tuple[str, str, tuple[float, float] | None]] = []
    if svg is not None:
        gz = gzip.compress(minify_svg(svg).encode(), 9, mtime=0)
        cands.append(("svg", base64.b64encode(gz).decode(), _svg_size_in(svg)))
    if png is not None:
        small, size_in = _png_reencoded(png)
        cands.append(("png", base64.b64encode(small).decode(), size_in))
    kind, data, size_in = cands[0]
    if len(cands) == 2 and len(cands[1][1]) < 0.8 * len(cands[0][1]):
        kind, data, size_in = cands[1]
    if size_in is None:
        size_in = next((c[2] for c in cands if c[2] is not None), (10.0, 6.0))
    w, h = size_in
    return Embedded(kind, data, round(w * PX_PER_INCH), round(h * PX_PER_INCH), alt)


@dataclass
class FigureView:
    """A figure as the report shows it: one or more images (variants such as the five
    set-ups of huebner-epochs, shown as tabs), a caption, and its claims."""

    id: str
    title: str
    caption: str
    images: list[tuple[str, Embedded, str]]  # (variant label, image, its own caption)
    claims: list[Any] = field(default_factory=list)
    claims_error: str = ""
    table: Table | None = None


def _variant_label(stem: str, fig_id: str) -> str:
    rest = stem[len(fig_id) :].lstrip("-")
    return rest.replace("-", " ") if rest else ""


def _read_caption(figdir: Path, stem: str) -> str:
    """Caption text the figure code left beside the figure, if any."""
    for name in (f"{stem}.caption.txt", f"{stem}.caption.md"):
        p = figdir / name
        if p.is_file():
            return p.read_text(encoding="utf-8").strip()
    return ""


def _study_figures(base: str) -> list[Any]:
    from .reproduce import STUDIES

    return [f for f in STUDIES.values() if f.experiment == base]


def _figures(
    store: Any, base: str, quick: bool, trials_per_point: str, description: str
) -> list[FigureView]:
    """The store's figures, grouped by the reproduction figure they belong to (longest
    id that the file name starts with), with captions and claims. A caption is the
    figure code's own (``<stem>.caption.txt``) or else the experiment's description."""
    figdir = store.path / "figures"
    stems = sorted(
        {p.stem for p in figdir.glob("*.png")} | {p.stem for p in figdir.glob("*.svg")}
        if figdir.is_dir()
        else set()
    )
    studies = sorted(_study_figures(base), key=lambda f: -len(f.id))
    groups: dict[str, list[str]] = {}
    for stem in stems:
        fig = next((f for f in studies if stem == f.id or stem.startswith(f.id + "-")), None)
        groups.setdefault(fig.id if fig else stem, []).append(stem)
    views = []
    order = {f.id: i for i, f in enumerate(_study_figures(base))}
    for gid in sorted(groups, key=lambda g: (order.get(g, 999), g)):
        fig = next((f for f in studies if f.id == gid), None)
        images = []
        for stem in groups[gid]:
            svg_p, png_p = figdir / f"{stem}.svg", figdir / f"{stem}.png"
            label = _variant_label(stem, gid) if fig else ""
            images.append(
                (
                    label,
                    embed_figure(
                        svg_p.read_text(encoding="utf-8") if svg_p.is_file() else None,
                        png_p.read_bytes() if png_p.is_file() else None,
                        f"{gid} {label}".strip(),
                    ),
                    _read_caption(figdir, stem),
                )
            )
        title = f"{fig.paper}: {fig.title}" if fig else gid.replace("-", " ")
        texts = list(dict.fromkeys(t for *_, t in images))
        caption = ""
        if len(texts) == 1:  # one caption for all: the figure's; else each tab shows its own
            caption = texts[0]
            images = [(lb, im, "") for lb, im, _ in images]
        if not any(texts) and description:
            caption = f"Experiment: {description}."
        if len(images) > 1:
            caption += f" One figure per set-up ({len(images)}, one tab each)."
        caption += f" From {trials_per_point}."
        if quick:
            caption += " Quick run: fewer trials, shorter runs, coarser sweeps than the paper's."
        claims, err = [], ""
        if fig is not None:
            try:
                claims = list(fig.claims(store))
            except Exception as e:  # a claim needs data this store lacks: say so, go on
                err = f"{type(e).__name__}: {e}"
        md = figdir / f"{groups[gid][0]}.md"
        table = _markdown_table(md.read_text(encoding="utf-8")) if md.is_file() else None
        views.append(FigureView(gid, title, caption.strip(), images, claims, err, table))
    return views


def _own_figure(store: Any, df: Any, description: str) -> FigureView | None:
    """A figure for a store no reproduction drew: a key measure against the swept axis,
    one line per a second swept parameter, medians over trials with their interval.

    ``collateral.storeplot`` (``suggest`` and ``figure``, as ``collateral plot`` draws)
    when it is importable and can draw the store; otherwise a small figure of our own."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    try:
        from . import plot as storeplot  # type: ignore[attr-defined]
    except ImportError:
        storeplot = None
    fig, bars = None, "the 95 % bootstrap interval of the median"
    if storeplot is not None:
        try:
            fig = storeplot.figure(store.path, **storeplot.suggest(store.path))
        except Exception:  # its own error is for `collateral plot`; draw ours instead
            fig = None
    if fig is None:
        fig, bars = _fallback_figure(df), "from the smallest to the largest trial"
        if fig is None:
            return None
    ax = fig.axes[0]
    legend = ax.get_legend() or (fig.legends[0] if fig.legends else None)
    hue = legend.get_title().get_text() if legend is not None else ""
    what = f"{ax.get_ylabel() or 'the measure'} against {ax.get_xlabel() or 'the trial'}"
    if hue:
        what += f", one line per {hue}"
    svg, png = io.StringIO(), io.BytesIO()
    fig.savefig(svg, format="svg")
    fig.savefig(png, format="png", dpi=150)
    plt.close(fig)
    caption = (
        f"Each marker is the median over a point's trials, its bars {bars}. Drawn for this"
        " report from the store (no reproduction draws it);"
        " `collateral plot DIR --list` names every other measure it can draw."
        + (f" Experiment: {description}." if description else "")
    )
    img = embed_figure(svg.getvalue(), png.getvalue(), what)
    return FigureView("overview", what[0].upper() + what[1:], caption, [("", img, "")])


def _fallback_figure(df: Any) -> Any:
    """Our own small figure, for when ``storeplot`` is missing or cannot draw the store."""
    import matplotlib.pyplot as plt
    import pandas as pd

    from .plot.style import STYLE

    y = next(
        (
            c
            for c in ("cbr0_delay_p95_s", "tcp0_goodput_bps", "cbr0_loss_rate")
            if c in df.columns and pd.to_numeric(df[c], errors="coerce").notna().any()
        ),
        None,
    )
    if y is None:
        return None
    params = _parameters(df)
    per_point = df.drop_duplicates("point") if "point" in df.columns else df
    numeric = [p for p in params if pd.api.types.is_numeric_dtype(df[p])]
    x = (
        max(numeric, key=lambda p: per_point[p].nunique())
        if numeric
        else (params[0] if params else None)
    )
    hue = next((p for p in params if p != x and per_point[p].nunique() <= 8), None)
    yu = _unit(y, df[y])
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(8, 4.5), layout="constrained")
        for j, (h, part) in enumerate(df.groupby(hue, dropna=False) if hue else [(None, df)]):
            xs = part[x] if x else part.get("rep", pd.Series(range(len(part)), index=part.index))
            vals = pd.to_numeric(part[y], errors="coerce") * yu.scale
            g = vals.groupby(xs)
            med, lo, hi = g.median(), g.min(), g.max()
            pos = med.index if (x in numeric or x is None) else range(len(med))
            label = str(h) if hue else None
            ax.errorbar(
                pos,
                med.to_numpy(),
                yerr=[med - lo, hi - med],
                marker="o",
                capsize=3,
                color=f"C{j}",
                label=label,
            )
            if x and x not in numeric:
                ax.set_xticks(list(pos), [str(v) for v in med.index])
        if x:
            xu = _unit(x, per_point[x]) if x in numeric else Unit()
            if xu.scale != 1:
                ticks = ax.get_xticks()
                ax.set_xticks(ticks, [f"{t * xu.scale:g}" for t in ticks])
            ax.set_xlabel(_param_label(x) + (f" ({xu.label})" if xu.label else ""))
        else:
            ax.set_xlabel("trial")
        ax.set_ylabel(_param_label(y) + (f" ({yu.label})" if yu.label else ""))
        if hue:
            ax.legend(fontsize=10, title=_param_label(hue))
        ax.set_ylim(bottom=0)
    return fig


# ---------------------------------------------------------------------------------------
# Sections


@dataclass
class Section:
    id: str
    name: str
    description: str
    quick: bool
    path: str
    trials: int
    points: int
    trials_per_point: str
    figures: list[FigureView]
    numbers: Table | None
    experiment_text: str
    notes: list[str] = field(default_factory=list)

    @property
    def claims(self) -> list[Any]:
        return [c for f in self.figures for c in f.claims]


#: Summary columns the report never shows: each trial's whole scenario and phases as
#: JSON, most of a large store's bytes.
_UNSHOWN = ("scenario", "phases")


def _summary(store: Any) -> Any:
    """The store's summary table without the columns of :data:`_UNSHOWN`, read once per
    store (a 60,000-trial store takes seconds)."""
    cached = getattr(store, "_report_summary", None)
    if cached is not None:
        return cached
    try:
        names = store.query("DESCRIBE summary")["column_name"].tolist()
    except Exception:  # no parts yet: no summary view
        names = []
    if names:
        cols = ", ".join('"' + n.replace('"', '""') + '"' for n in names if n not in _UNSHOWN)
        df = store.query(f"SELECT {cols} FROM summary")
    else:
        df = _summary(store)
    store._report_summary = df
    return df


def _experiment_file(store: Any) -> tuple[str, dict[str, Any]]:
    p = store.path / "experiment.toml"
    if not p.is_file():
        return "", {}
    text = p.read_text(encoding="utf-8")
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return text, {}


def _slug(name: str, taken: set[str]) -> str:
    s = re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-") or "results"
    out, i = s, 2
    while out in taken:
        out, i = f"{s}-{i}", i + 1
    taken.add(out)
    return out


def _section(store: Any, taken: set[str]) -> Section:
    meta = store.meta()
    name = meta.get("experiment", store.path.name)
    quick = name.endswith("-quick")
    base = name.removesuffix("-emu").removesuffix("-quick")
    text, parsed = _experiment_file(store)
    exp = parsed.get("experiment", {}) if isinstance(parsed.get("experiment"), dict) else {}
    description = str(exp.get("description", "")).strip()
    df = store.summary()
    n = len(df)
    points = int(df["point"].nunique()) if "point" in df.columns and n else 0
    if points:
        per = df.groupby("point").size()
        tpp = (
            f"{per.iloc[0]} trial{'s' if per.iloc[0] != 1 else ''} per point"
            if per.nunique() == 1
            else f"{per.min()}–{per.max()} trials per point"
        )
        tpp = f"{points:,} points × {tpp}" if points > 1 else tpp
    else:
        tpp = "no trials"
    figs = _figures(store, base, quick, tpp, description)
    notes = []
    if not figs and n:
        own = _own_figure(store, df, description)
        if own is not None:
            figs = [own]
        else:
            notes.append("No figure: the store has no measure to plot.")
    return Section(
        id=_slug(name, taken),
        name=name,
        description=description,
        quick=quick,
        path=str(store.path),
        trials=n,
        points=points,
        trials_per_point=tpp,
        figures=figs,
        numbers=key_numbers(df) if n else None,
        experiment_text=text,
        notes=notes,
    )


_SIM_EMU = [
    ("tcp0_goodput_bps", "TCP goodput", "Mbit/s", 1e-6),
    ("cbr0_loss_rate", "CBR loss ↓", "%", 100.0),
    ("cbr0_delay_median_s", "CBR delay p50 ↓", "ms", 1e3),
    ("cbr0_delay_p95_s", "CBR delay p95 ↓", "ms", 1e3),
]


def sim_vs_emu(stores: list[Any]) -> Table | None:
    """Medians of the main measures of each experiment run both in simulation and in
    the testbed (a store named ``X-emu``, or with mode = emulation)."""
    by_name: dict[str, dict[str, Any]] = {}
    for st in stores:
        df = _summary(st) if hasattr(st, "query") else st.summary()
        mode = (
            "emulation"
            if "mode" in df.columns and (df["mode"] == "emulation").any()
            else "simulation"
        )
        name = st.meta().get("experiment", st.path.name).removesuffix("-emu")
        by_name.setdefault(name, {})[mode] = df
    rows = []
    for name, modes in by_name.items():
        if len(modes) < 2:
            continue
        for col, label, unit, scale in _SIM_EMU:
            if col not in modes["simulation"] or col not in modes["emulation"]:
                continue
            s = modes["simulation"][col].median() * scale
            e = modes["emulation"][col].median() * scale
            d = _decimals([s, e])
            diff = f"{(e - s) / s * 100:+.1f} %" if s and not _is_missing(s) else "—"
            rows.append(
                [
                    Cell(name),
                    Cell(f"{label} ({unit})"),
                    Cell(fmt_number(s, d)),
                    Cell(fmt_number(e, d)),
                    Cell(diff, _sort_key(diff)),
                ]
            )
    if not rows:
        return None
    cols = [
        ("experiment", ""),
        ("measure", ""),
        ("simulation", ""),
        ("emulation", ""),
        ("difference", "(emulation − simulation) / simulation"),
    ]
    return Table(cols, [False, False, True, True, True], rows, "Medians over all trials.")


# ---------------------------------------------------------------------------------------
# The document


def _metadata(stores: list[Any], sections: list[Section]) -> list[tuple[str, str]]:
    from . import __version__

    versions: set[str] = set()
    for st in stores:
        try:
            df = st.query("SELECT DISTINCT code_version FROM summary")
            versions |= {str(v) for v in df["code_version"].dropna()}
        except Exception:  # an empty store has no summary view
            pass
    cpu = os.cpu_count() or 0
    return [
        ("collateral", __version__),
        ("code version of the trials", "; ".join(sorted(versions)) or "—"),
        ("report written", f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC"),
        (
            "machine",
            f"{platform.node() or '—'} · {platform.system()} {platform.machine()} · {cpu} CPUs"
            f" · Python {platform.python_version()}",
        ),
        (
            "results",
            f"{len(sections)} directories, {sum(s.trials for s in sections):,} trials",
        ),
    ]


def _environment() -> Any:
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
    sections = [_section(st, taken) for st in stores]
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
        _environment()
        .get_template("report.html.j2")
        .render(
            meta=_metadata(stores, sections),
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
    from .store import Store, StoreError

    if isinstance(results, str | Path) or not results:
        raise ReportError(f"results: {results!r}: give a list of results directories")
    output = Path(output)
    if not str(output).strip() or output.name in ("", ".", "..") or output.is_dir():
        raise ReportError(
            f"output: {str(output)!r} is a directory; give a file name such as report.html"
        )
    stores = []
    for r in results:
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
