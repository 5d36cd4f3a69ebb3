"""How a figure is embedded in the page.

Each is embedded as the smaller of its SVG (minified, gzip-compressed, base64; the
page's script inflates it with the browser's DecompressionStream) and its PNG
re-encoded with a 64-colour palette. Gzip is what keeps all reproductions under ~1 MB
(the quick runs' SVGs are 4 MB as written, their PNGs 3.5 MB): it needs JavaScript,
which the sortable tables need too. Each figure is shown at 90 CSS px per inch it was
drawn at, so matplotlib's 11-pt text is ~14 px and 9-pt text ~11 px, narrower only where
the window is; a click opens it at full size. Not interactive (plotly): plotly.js alone
is ~4.7 MB, and a vector figure already zooms sharp; ``collateral plot -o x.html``
draws the interactive form of any store.
"""

from __future__ import annotations

import base64
import gzip
import io
import re
from dataclasses import dataclass

#: CSS px per inch of a figure as drawn (matplotlib's 11-pt text at ~14 px).
PX_PER_INCH = 90


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
