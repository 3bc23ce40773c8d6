"""SVG primitives for the report's charts: escaped elements, scales, ticks, text widths.

Every string that reaches the SVG goes through :func:`el`, which escapes text
and attribute values, so labels taken from results files (and so, possibly,
from model answers) can never become markup.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from markupsafe import Markup, escape

FONT_SIZE = 12
# Okabe-Ito: distinguishable for colour-blind readers.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
MARK_COLOURS = {"A": "#1a9850", "B": "#d9c62b", "C": "#f08c2b", "D": "#d73027"}


def coord(x: float) -> str:
    """A short, exact-enough coordinate (keeps large charts small)."""
    text = f"{x:.1f}"
    return text[:-2] if text.endswith(".0") else text


def el(tag: str, attrs: Mapping[str, object] | None = None, children: Iterable[str] | str = ()) -> Markup:
    """One element; attribute values and plain-string children are escaped."""
    parts = [f"<{tag}"]
    for name, value in (attrs or {}).items():
        if value is None:
            continue
        if isinstance(value, float):
            value = coord(value)
        parts.append(f' {name.replace("_", "-")}="{escape(str(value))}"')
    if isinstance(children, str):
        children = [children]
    inner = "".join(str(escape(c)) for c in children)
    if not inner:
        return Markup("".join(parts) + "/>")
    return Markup("".join(parts) + ">" + inner + f"</{tag}>")


def text(x: float, y: float, content: str, *, anchor: str = "start", cls: str | None = None,
         full: str | None = None, **attrs: object) -> Markup:
    """A text label; ``full`` (the untruncated label) becomes its tooltip."""
    children: list[str] = [content]
    if full is not None and full != content:
        children.insert(0, el("title", {}, full))
    return el("text", {"x": x, "y": y, "text-anchor": anchor, "class": cls, **attrs}, children)


def svg(width: float, height: float, children: Iterable[str], *, label: str) -> Markup:
    return el(
        "svg",
        {"xmlns": "http://www.w3.org/2000/svg", "viewBox": f"0 0 {coord(width)} {coord(height)}",
         "width": width, "role": "img", "aria-label": label, "class": "chart-svg"},
        list(children),
    )


def char_width(ch: str, size: float = FONT_SIZE) -> float:
    """Approximate advance of one character (wide East Asian glyphs take a full em)."""
    if unicodedata.east_asian_width(ch) in ("W", "F"):
        return size
    return size * 0.62


def text_width(s: str, size: float = FONT_SIZE) -> float:
    return sum(char_width(c, size) for c in s)


def truncate(s: str, max_px: float, size: float = FONT_SIZE) -> str:
    """Shorten ``s`` with an ellipsis so it fits ``max_px``."""
    if text_width(s, size) <= max_px:
        return s
    out, used = [], text_width("…", size)
    for c in s:
        w = char_width(c, size)
        if used + w > max_px:
            break
        out.append(c)
        used += w
    return "".join(out) + "…"


@dataclass(frozen=True)
class Linear:
    """Maps a data domain onto a pixel range."""

    d0: float
    d1: float
    r0: float
    r1: float

    def __call__(self, v: float) -> float:
        if self.d1 == self.d0:
            return (self.r0 + self.r1) / 2
        return self.r0 + (v - self.d0) / (self.d1 - self.d0) * (self.r1 - self.r0)


def nice_step(span: float, count: int) -> float:
    raw = span / max(1, count)
    power = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * power:
            return m * power
    return 10 * power


def nice_domain(lo: float, hi: float, count: int = 5) -> tuple[float, float, list[float]]:
    """A domain widened to round numbers that holds [lo, hi], and its ticks."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        lo, hi = 0.0, 1.0
    if hi < lo:
        lo, hi = hi, lo
    if hi == lo:
        pad = abs(lo) * 0.1 or 1.0
        lo, hi = lo - pad, hi + pad
    step = nice_step(hi - lo, count)
    start = math.floor(lo / step + 1e-9) * step
    stop = math.ceil(hi / step - 1e-9) * step
    ticks = [round(start + i * step, 10) for i in range(int(round((stop - start) / step)) + 1)]
    return start, stop, ticks


def tick_label(v: float) -> str:
    if abs(v) < 1e-12:  # a tick at 0 reached by adding steps (5.6e-17) is 0
        return "0"
    if abs(v) >= 10000 or abs(v) < 0.001:
        return f"{v:.2g}"
    return f"{v:.6g}"


def finite(v: object) -> float | None:
    """A finite float, or None for null, NaN, infinities and non-numbers."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def no_data(width: float, message: str, label: str) -> Markup:
    """The drawing of an empty chart: a framed message, so the reader knows it is empty."""
    return svg(width, 60, [
        el("rect", {"x": 0.5, "y": 0.5, "width": width - 1, "height": 59, "class": "frame"}),
        text(width / 2, 34, message, anchor="middle", cls="muted"),
    ], label=label)
