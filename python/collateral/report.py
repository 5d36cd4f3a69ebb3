"""A self-contained HTML report of results directories.

One file, figures embedded as data URIs, no scripts from anywhere else: a section per
experiment with its description, parameters (the experiment file), trial counts, its
figures, a table of key numbers, and — where a published study states a number or a
claim — the claim beside our value. Where emulation results exist for an experiment
that was also simulated, a "simulation vs emulation" section sets them side by side.
Light and printable: one column, system fonts, no dark backgrounds.
"""

from __future__ import annotations

import base64
import datetime as dt
import html
from pathlib import Path
from typing import Any

__all__ = ["ReportError", "write_report"]

_CSS = """
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #222;
       max-width: 1100px; margin: 2em auto; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
.meta { color: #666; } figure { margin: 1.2em 0; }
figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.9em; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; }
th { background: #f5f5f5; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.holds { color: #176f2c; font-weight: 600; } .differs { color: #b00020; font-weight: 600; }
details pre { background: #fafafa; border: 1px solid #eee; padding: 0.6em;
              overflow-x: auto; font-size: 0.85em; }
.quick { background: #fff3cd; padding: 0.1em 0.4em; border-radius: 3px; }
@media print { h2 { break-before: page; } figure { break-inside: avoid; } }
"""

# Sets data-figures on <body> once every image has loaded: "loaded/total" (a test reads it).
_SCRIPT = """
window.addEventListener('load', () => {
  const imgs = Array.from(document.images);
  const ok = imgs.filter(i => i.complete && i.naturalWidth > 0).length;
  document.body.dataset.figures = ok + '/' + imgs.length;
});
"""


class ReportError(ValueError):
    pass


def _e(x: Any) -> str:
    return html.escape(str(x))


def _img(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode()
    return f'<img src="data:image/png;base64,{data}" alt="{_e(path.stem)}">'


def _num(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return _e(v)


def _key_numbers(store: Any) -> str:
    """Medians per point of the main metrics, grouped by what the sweep varies."""
    df = store.summary()
    if df.empty:
        return "<p>No trials.</p>"
    params = [
        c
        for c in df.columns
        if (
            c
            in (
                "link",
                "rtt_s",
                "down_queue_limit",
                "down_queue_rule",
                "tcp0_cc",
                "tcp0_profile",
                "cbr0_jitter_s",
                "down_rate_bps",
            )
            or c.startswith("tag_")
        )
        and df[c].nunique() > 1
    ]
    metrics = [
        c
        for c in (
            "tcp0_goodput_bps",
            "cbr0_loss_rate",
            "cbr0_delay_median_s",
            "cbr0_delay_p95_s",
            "cbr1_delay_median_s",
        )
        if c in df.columns
    ]
    g = df.groupby(params, dropna=False) if params else None
    table = (
        g[metrics].median().reset_index() if g is not None else df[metrics].median().to_frame().T
    )
    table.insert(len(params), "trials", g.size().to_numpy() if g is not None else [len(df)])
    rows = table.head(60)
    head = "".join(f"<th>{_e(c)}</th>" for c in rows.columns)
    body = "".join(
        "<tr>" + "".join(f'<td class="num">{_num(v)}</td>' for v in r) + "</tr>"
        for r in rows.itertuples(index=False)
    )
    more = (
        f"<p class='meta'>… {len(table) - 60} more rows: query the store.</p>"
        if len(table) > 60
        else ""
    )
    return f"<table><tr>{head}</tr>{body}</table>{more}<p class='meta'>Medians over trials.</p>"


def _claims_html(claims: list[Any]) -> str:
    if not claims:
        return ""
    rows = []
    for c in claims:
        mark = {
            True: '<span class="holds">holds</span>',
            False: '<span class="differs">differs</span>',
            None: "",
        }[c.holds]
        rows.append(
            f"<tr><td>{_e(c.text)}</td><td>{_e(c.published)}</td><td>{_e(c.ours)}</td>"
            f"<td>{mark}</td></tr>"
        )
    return (
        "<h3>Published claims and our values</h3><table><tr><th>claim</th><th>paper</th>"
        "<th>ours</th><th></th></tr>" + "".join(rows) + "</table>"
    )


def _section(store: Any) -> tuple[str, str]:
    from .reproduce import STUDIES

    meta = store.meta()
    name = meta.get("experiment", store.path.name)
    base = name.removesuffix("-quick")
    quick = name.endswith("-quick")
    n = len(store.keys())
    text = (
        (store.path / "experiment.toml").read_text()
        if (store.path / "experiment.toml").exists()
        else ""
    )
    desc = next(
        (
            ln.split("=", 1)[1].strip().strip('"')
            for ln in text.splitlines()
            if ln.strip().startswith("description")
        ),
        "",
    )
    parts = [
        f'<h2 id="{_e(name)}">{_e(name)}'
        + (' <span class="quick">quick: reduced version</span>' if quick else "")
        + "</h2>",
        f"<p>{_e(desc)}</p>" if desc else "",
        f"<p class='meta'>{n} trials · results in <code>{_e(store.path)}</code></p>",
    ]
    figs = (
        sorted((store.path / "figures").glob("*.png")) if (store.path / "figures").exists() else []
    )
    for f in figs:
        parts.append(f"<figure>{_img(f)}<figcaption>{_e(f.name)}</figcaption></figure>")
    claims = []
    for fig in STUDIES.values():
        if fig.experiment == base:
            try:
                claims += fig.claims(store)
            except Exception as e:  # a claim needs data this store lacks: say so, go on
                parts.append(f"<p class='meta'>claims of {_e(fig.id)} unavailable: {_e(e)}</p>")
    parts.append(_claims_html(claims))
    parts.append("<h3>Key numbers</h3>" + _key_numbers(store))
    if text:
        parts.append(f"<details><summary>experiment file</summary><pre>{_e(text)}</pre></details>")
    return name, "\n".join(parts)


def _sim_vs_emu(stores: list[Any]) -> str:
    by_name: dict[str, dict[str, Any]] = {}
    for st in stores:
        df = st.summary()
        mode = (
            "emulation"
            if "mode" in df.columns and (df["mode"] == "emulation").any()
            else "simulation"
        )
        by_name.setdefault(st.meta().get("experiment", st.path.name).removesuffix("-emu"), {})[
            mode
        ] = df
    rows = []
    metrics = [
        ("tcp0_goodput_bps", "TCP goodput (Mbit/s)", 1e-6),
        ("cbr0_loss_rate", "CBR loss down (%)", 100),
        ("cbr0_delay_median_s", "CBR delay p50 down (ms)", 1e3),
        ("cbr0_delay_p95_s", "CBR delay p95 down (ms)", 1e3),
    ]
    for name, modes in by_name.items():
        if len(modes) < 2:
            continue
        for col, label, scale in metrics:
            s = modes["simulation"][col].median() * scale
            e = modes["emulation"][col].median() * scale
            diff = f"{(e - s) / s * 100:+.1f} %" if s else "n/a"
            rows.append(
                f"<tr><td>{_e(name)}</td><td>{_e(label)}</td><td class='num'>{s:.4g}</td>"
                f"<td class='num'>{e:.4g}</td><td class='num'>{diff}</td></tr>"
            )
    if not rows:
        return ""
    return (
        "<h2 id='sim-vs-emu'>Simulation vs emulation</h2><table><tr><th>experiment</th>"
        "<th>metric</th><th>simulation</th><th>emulation</th><th>difference</th></tr>"
        + "".join(rows)
        + "</table>"
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
    sections = [_section(st) for st in stores]
    toc = "".join(f'<li><a href="#{_e(n)}">{_e(n)}</a></li>' for n, _ in sections)
    from . import __version__

    doc = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>collateral report</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>{_CSS}</style><script>{_SCRIPT}</script></head>
<body><h1>collateral report</h1>
<p class="meta">collateral {_e(__version__)} · {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC ·
{len(stores)} results directories</p><ul>{toc}</ul>
{"".join(s for _, s in sections)}
{_sim_vs_emu(stores)}
</body></html>"""
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(doc, encoding="utf-8")
    return output
