"""A results directory's figures as the report shows them: those its reproduction drew,
grouped by the paper's figure they belong to, with captions and claims; or, for a store
no reproduction drew, one drawn for the report."""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..display import Unit, column_unit, is_null
from .embed import Embedded, embed_figure
from .parameters import param_label, parameters
from .tables import Table, markdown_table


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
    from ..reproduce import STUDIES

    return [f for f in STUDIES.values() if f.experiment == base]


def figures(
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
        table = markdown_table(md.read_text(encoding="utf-8")) if md.is_file() else None
        views.append(FigureView(gid, title, caption.strip(), images, claims, err, table))
    return views


def own_figure(store: Any, df: Any, description: str) -> FigureView | None:
    """A figure for a store no reproduction drew: a key measure against the swept axis,
    one line per a second swept parameter, a panel per a third, medians over trials with
    their interval.

    :mod:`collateral.plot`'s (``suggest`` and ``figure``, as ``collateral plot`` draws)
    when it can draw the store; otherwise a small figure of our own. Every point of the
    sweep is drawn (points without an x value as levels across the axis); what a marker
    pools, or why the small figure was drawn instead, is said in the caption, never as
    a warning on the console."""
    import warnings

    from ..plot import figure, suggest
    from ..plot.style import plt
    from ..plot.sweep import load_data

    fig, notes = None, []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            data = load_data(store.path, df)  # read once, for both
            fig = figure(data, **suggest(data))
        except Exception as e:  # its own error is for `collateral plot`; draw ours instead
            notes.append(f"`collateral plot` cannot draw this store ({e}); a simpler figure.")
    if fig is None:
        fig = _fallback_figure(df, notes)
        if fig is None:
            return None
        what_is = (
            "Each marker is the median over a point's trials, its bars from the smallest"
            " to the largest trial."
        )
    else:
        text = fig.collateral_caption  # type: ignore[attr-defined]
        what_is = text[:1].upper() + text[1:]
        tab = fig.collateral_table  # type: ignore[attr-defined]
        points = int(df["point"].nunique()) if "point" in df.columns else len(tab)
        if len(tab) < points:
            notes.append(
                f"The sweep's {points} points are drawn as {len(tab)} markers, each pooling"
                f" {', '.join(tab.attrs['pooled']) or 'several points'}."
            )
    if not notes:  # anything else the figure warned of, said once in the caption
        said = dict.fromkeys(str(w.message) for w in caught if w.category is UserWarning)
        notes += [f"{m[:1].upper()}{m[1:]}." for m in said]
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
    caption = " ".join(
        [
            what_is,
            *notes,
            "Drawn for this report from the store (no reproduction draws it);"
            " `collateral plot DIR --list` names every other measure it can draw."
            + (f" Experiment: {description}." if description else ""),
        ]
    )
    img = embed_figure(svg.getvalue(), png.getvalue(), what)
    return FigureView("overview", what[0].upper() + what[1:], caption, [("", img, "")])


def _fallback_figure(df: Any, notes: list[str]) -> Any:
    """Our own small figure, for when :mod:`collateral.plot` cannot draw the store;
    adds to ``notes`` what it leaves out or pools."""
    import pandas as pd

    from ..plot.measure import column_name
    from ..plot.param import kind_name
    from ..plot.style import STYLE, plt

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
    params = parameters(df)
    per_point = df.drop_duplicates("point") if "point" in df.columns else df
    numeric = [p for p in params if pd.api.types.is_numeric_dtype(df[p])]
    x = (
        max(numeric, key=lambda p: per_point[p].nunique())
        if numeric
        else (params[0] if params else None)
    )
    hue = next((p for p in params if p != x and per_point[p].nunique() <= 8), None)
    yu = column_unit(y, df[y])
    if x and df[x].isna().any():
        notes.append(f"{int(df[x].isna().sum())} trials without a {param_label(x)} are left out.")
    keys = [c for c in (x, hue) if c]
    kept = per_point.dropna(subset=[x] if x else [])
    drawn = kept.groupby(keys).ngroups if keys else min(len(kept), 1)  # one point: one marker
    if "point" in df.columns and 0 < drawn < per_point["point"].nunique():
        notes.append(f"The sweep's {len(per_point)} points are drawn as {drawn} markers.")
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(8, 4.5), layout="constrained")
        for j, (h, part) in enumerate(df.groupby(hue, dropna=False) if hue else [(None, df)]):
            xs = part[x] if x else part.get("rep", pd.Series(range(len(part)), index=part.index))
            vals = pd.to_numeric(part[y], errors="coerce") * yu.scale
            g = vals.groupby(xs)
            med, lo, hi = g.median(), g.min(), g.max()
            if med.empty:  # no trial of this line has an x (said in the notes)
                continue
            pos = med.index if (x in numeric or x is None) else range(len(med))
            if hue and hue.endswith("queue_kind"):
                h = kind_name(None if is_null(h) else h)
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
            xu = column_unit(x, per_point[x]) if x in numeric else Unit()
            if xu.scale != 1:
                ticks = ax.get_xticks()
                ax.set_xticks(ticks, [f"{t * xu.scale:g}" for t in ticks])
            ax.set_xlabel(param_label(x) + (f" ({xu.name})" if xu.name else ""))
        else:
            ax.set_xlabel("trial")
        ax.set_ylabel(yu.label(column_name(y)))
        if hue:
            ax.legend(fontsize=10, title=param_label(hue))
        ax.set_ylim(bottom=0)
    return fig
