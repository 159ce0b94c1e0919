"""Drawing inline SVG for the dashboard's charts (``charts``, ``evidence``): the document, text, axis ticks, a legend.

Every function returns markup as a string; ``figure`` wraps the parts into one <svg> marked safe. Text that
comes from data goes through ``escape`` here, so a chart never writes it raw.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

PALETTE = ("#0969da", "#cf222e", "#1a7f37", "#8250df", "#bc4c00", "#bf3989", "#0a7f8a", "#6e7781", "#9a6700",
           "#4c2889")
FONT = 'font-family="system-ui, -apple-system, Segoe UI, sans-serif"'


def colour(index: int) -> str:
    """The index-th colour of the palette, round again after its last."""
    return PALETTE[index % len(PALETTE)]


# The widest chart a 390 px phone shows whole at its own size (the page's and the figure's margins taken off), so
# that its 10-unit text stays 10 px tall (issue 25 review, C2). A chart whose legend needs more grows, and scrolls.
PHONE_WIDTH = 350
TITLE_LINE = 15  # the distance between a chart title's lines
TITLE_CHAR = 7.2  # a generous width of one character of a title (font size 12, semibold)


def wrap_words(content: str, room: int) -> list[str]:
    """``content`` broken at spaces into lines of at most ``room`` characters, greedily; a single word longer than
    ``room`` keeps a line of its own. Chart titles and legend entries both wrap this way."""
    lines: list[str] = []
    for word in content.split(" "):
        if lines and len(lines[-1]) + 1 + len(word) <= room:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines or [""]


def title_lines(title: str, width: float) -> list[str]:
    """The chart title broken at spaces into lines that fit ``width`` (issue 25 review, C1: long titles were cut at
    both ends)."""
    return wrap_words(title, max(int((width - 8) / TITLE_CHAR), 8))


def figure(width: int, height: int, body: list[str], title: str) -> SafeString:
    """One <svg> of the given parts under its title (drawn here, on as many lines as it needs: the parts are laid
    out for one title line at y = 14 and move down by the extra lines), titled for screen readers and on hover."""
    lines = title_lines(title, width)
    extra = TITLE_LINE * (len(lines) - 1)
    heading = "".join(text(width / 2, 14 + TITLE_LINE * k, line, size=12, weight="600") for k, line in enumerate(lines))
    parts = "".join(body)
    if extra:
        parts = f'<g transform="translate(0 {extra})">{parts}</g>'
    return mark_safe(  # noqa: S308 - every data-derived string below is escaped
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height + extra}" width="{width}" '
        f'height="{height + extra}" role="img" aria-label="{escape(title)}" {FONT} font-size="11">'
        f'<title>{escape(title)}</title><g class="chart-title">{heading}</g>{parts}</svg>'
    )


def text(x: float, y: float, content: str, anchor: str = "middle", size: int = 11, fill: str = "#1f2328",
         weight: str = "normal", halo: str | None = None) -> str:
    """A text; ``halo`` (the colour behind it) paints a box of that colour under it first (a generous estimate of
    its extent), so that no gridline crosses it (issue 25 review, C4: a note sat on the zero line, struck through)."""
    box = ""
    if halo:
        w = 0.6 * size * len(content) + 6
        x0 = {"start": x - 3, "middle": x - w / 2, "end": x - w + 3}[anchor]
        box = f'<rect x="{x0:.1f}" y="{y - size:.1f}" width="{w:.1f}" height="{size + 4}" fill="{halo}"/>'
    return (f'{box}<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}" fill="{fill}" '
            f'font-weight="{weight}">{escape(content)}</text>')


LEGEND_LINE = 15  # the distance between a legend's lines


def _entry_width(name: str) -> float:
    """A generous estimate of a legend entry's width: the swatch, its gap and the name at font size 10."""
    return 16 + 6.5 * len(name)


def _entry_lines(name: str, width: float) -> list[str]:
    """An entry broken at spaces into lines that fit ``width`` with its swatch (issue 25 fourth review, C2: a 681 px
    scatter in a 362 px box for one long "τ undefined: ..." entry)."""
    return wrap_words(name, max(int((width - 16) / 6.5), 8))


def _legend_places(names: Sequence[str], x: float, y: float,
                   width: float) -> list[tuple[float, float, list[str]]]:
    """Where each entry's swatch goes, and its lines: rightwards from (x, y), a new line when the next entry would pass
    ``width``; an entry wider than ``width`` wraps onto lines of its own, and the next entry starts below it."""
    places, cx, cy = [], x, y
    for name in names:
        lines = _entry_lines(name, width)
        w = max(_entry_width(line) for line in lines)
        if cx + w > x + width and cx > x:
            cx, cy = x, cy + LEGEND_LINE
        places.append((cx, cy, lines))
        if len(lines) > 1:
            cx, cy = x, cy + LEGEND_LINE * len(lines)
        else:
            cx += w + 10
    return places


def legend_extent(names: Sequence[str], width: float) -> tuple[int, float]:
    """How many lines ``legend`` takes within ``width`` and how far right of its x it reaches (a single word wider
    than ``width`` reaches further): a chart sizes itself so that every entry shows (issue 25 review, U1: the
    scatter's second legend line fell below the SVG's height)."""
    places = _legend_places(names, 0, 0, width)
    lines = 1 + round(max((cy + LEGEND_LINE * (len(parts) - 1) for _, cy, parts in places), default=0) / LEGEND_LINE)
    reach = max((cx + _entry_width(line) for cx, _, parts in places for line in parts), default=0.0)
    return lines, reach


def legend(names: Sequence[str], x: float, y: float, colours: Sequence[str], width: float) -> list[str]:
    """A swatch and a name per entry, from (x, y) rightwards, wrapping within ``width`` (``legend_extent`` says how
    many lines of ``LEGEND_LINE`` it takes); a long entry's further lines are texts of class "legend-more"."""
    out = []
    for (cx, cy, lines), fill in zip(_legend_places(names, x, y, width), colours, strict=True):
        out.append(f'<rect x="{cx:.1f}" y="{cy - 8:.1f}" width="10" height="10" rx="2" fill="{fill}"/>')
        out.append(text(cx + 14, cy + 1, lines[0], anchor="start", size=10))
        for k, line in enumerate(lines[1:], start=1):
            out.append(text(cx + 14, cy + 1 + LEGEND_LINE * k, line, anchor="start", size=10)
                       .replace("<text ", '<text class="legend-more" ', 1))
    return out


def ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About ``count`` round axis values from ``low`` to ``high`` (steps of 1, 2, 2.5 or 5 times a power of ten)."""
    span = high - low
    if span <= 0:
        return [low]
    raw = span / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step - 1e-9) * step
    values, value = [], first
    while value <= high + 1e-9:
        values.append(round(value, 10) + 0.0)  # + 0.0: an axis ending at zero reads "0", never "-0"
        value += step
    return values
