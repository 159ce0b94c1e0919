"""Server-side SVG charts for the dashboard: readable without JavaScript and in PNG screenshots.

One approach everywhere: each function returns a complete inline <svg> as a SafeString (drawn with
``evalhub.pages.svg``). Every piece of text that comes from data (pool, group, question names) goes through
``escape``; numbers are formatted here. No external library, nothing loaded at runtime.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from evalhub.analysis.result import Distribution, Interval
from evalhub.pages import svg
from evalhub.pages.svg import PHONE_WIDTH


@dataclass(frozen=True)
class ScatterSeries:
    """One group's bubbles in a scatter chart."""

    group: str  # the legend's text
    colour: str
    points: Sequence[tuple[float, float, int]]  # (x, y, number of items)


@dataclass(frozen=True)
class AlphaBar:
    """One row of the alpha chart: a group x pool's alpha and its interval."""

    label: str
    colour: str
    alpha: float | None
    ci: Interval | None
    note: str  # shown in place of alpha when alpha is None: why it is undefined or not shown
    ci_note: str = ""  # shown beside the dot when its interval is withheld (width 0, or too few items for one)


def distribution_peak(series: Sequence[Distribution]) -> float:
    """The highest share (in %) of any pool's ratings at any score: the charts of one question share the largest."""
    return max([100 * c / s.n for s in series if s.n for c in s.counts] + [1.0])


def distribution_chart(*, title: str, bins: Sequence[float], series: Sequence[Distribution],
                       pool_colours: dict[str, str], pool_labels: dict[str, str], answer_pools: dict[str, int],
                       peak: float | None = None) -> SafeString:
    """Grouped bars: share of each pool's ratings per score (one chart per question x group).

    The legend and the bars' tooltips name pools by their labels ("Human raters", "gpt-4 · T=0.7"), never by
    their keys: the title names the group, and a group may be called "human" too (issue 25).

    Every whole scale point is shown, so charts side by side compare; half points only take room when
    some pool gave them. ``peak`` (``distribution_peak`` over the question's charts) puts the charts of one
    question on one y scale (issue 25 review, C8). An LLM pool's n counts its samples' answers (``answer_pools``:
    its samples), a human pool's ratings (docs/analysis.md, "Words"; review U5).
    """
    used = [k for k in range(len(bins)) if float(bins[k]).is_integer() or any(s.counts[k] for s in series)]
    width, left, right, top, plot_h = PHONE_WIDTH, 34, 8, 34, 140
    plot_w = width - left - right
    names = [f"{pool_labels.get(s.pool, s.pool)} (n = {_count(s, answer_pools)})" for s in series]
    lines, reach = svg.legend_extent(names, plot_w)  # the SVG makes room for every legend entry (issue 25, U1)
    width, legend_y = max(width, math.ceil(left + reach + right)), top + plot_h + 46
    height = legend_y + svg.LEGEND_LINE * (lines - 1) + 12
    shares = [[100 * s.counts[k] / s.n if s.n else 0.0 for k in used] for s in series]
    peak = peak or distribution_peak(series)
    # The axis ends on a tick at or above the highest bar (issue 25 review: ticks stopped at 40 % under a 56 % bar).
    step = next((b - a for a, b in itertools.pairwise(svg.ticks(0, peak, 4))), peak)
    ymax = math.ceil(peak / step - 1e-9) * step
    body = [svg.text(4, 28, "% of each pool's ratings (an LLM: answers; n in the legend)", anchor="start", size=10,
                     fill="#57606a"),
            svg.text(left + plot_w / 2, top + plot_h + 26, "score", size=10, fill="#57606a")]
    for tick in svg.ticks(0, ymax, 4):
        y = top + plot_h - tick / ymax * plot_h
        body.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#d8dee4"/>')
        body.append(svg.text(left - 4, y + 3, f"{tick:g}%", anchor="end", size=10, fill="#57606a"))
    slot = plot_w / max(len(used), 1)
    bar = min(18.0, 0.8 * slot / max(len(series), 1))
    for j, k in enumerate(used):
        x0 = left + j * slot + (slot - bar * len(series)) / 2
        for i, s in enumerate(series):
            h = shares[i][j] / ymax * plot_h
            name = pool_labels.get(s.pool, s.pool)
            body.append(f'<rect x="{x0 + i * bar:.1f}" y="{top + plot_h - h:.1f}" width="{bar - 1:.1f}" '
                        f'height="{h:.1f}" fill="{pool_colours[s.pool]}"><title>{escape(name)}: '
                        f'{shares[i][j]:.1f}% of {_count(s, answer_pools)} scored {bins[k]:g}</title></rect>')
        body.append(svg.text(left + j * slot + slot / 2, top + plot_h + 13, f"{bins[k]:g}", size=10))
    body.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{top + plot_h}" y2="{top + plot_h}" stroke="#57606a"/>')
    body += svg.legend(names, left, legend_y, [pool_colours[s.pool] for s in series], plot_w)
    return svg.figure(width, height, body, title)


def with_values(chart: SafeString, header: Sequence[str], rows: Sequence[Sequence[str]]) -> SafeString:
    """A chart and, under it, its values as a table in a closed <details>: what its tooltips say, reachable by a tap
    on a phone, which has no hover (issue 25 fourth review, C3)."""
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{escape(v)}</td>" for v in row) + "</tr>" for row in rows)
    # On a phone a table of more than 4 columns says that it scrolls (review 16: the ceiling's 7 did not).
    hint = (f'<caption class="scroll-hint">{len(header)} columns: scroll sideways →</caption>'
            if len(header) > 4 else "")
    return mark_safe(  # noqa: S308 - every string is escaped above
        f'{chart}<details class="chart-values"><summary>values</summary><div class="scroll"><table class="paper">'
        f"{hint}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div></details>")


def distribution_values(chart: SafeString, *, bins: Sequence[float], series: Sequence[Distribution],
                        pool_labels: dict[str, str]) -> SafeString:
    """A distribution chart with its bars' values: per score, each pool's share and count."""
    header = ["score", *(pool_labels.get(s.pool, s.pool) for s in series)]
    rows = [[f"{bins[k]:g}", *(f"{100 * s.counts[k] / s.n:.1f}% ({s.counts[k]} of {s.n})" if s.n else "–"
                               for s in series)]
            for k in range(len(bins)) if float(bins[k]).is_integer() or any(s.counts[k] for s in series)]
    return with_values(chart, header, rows)


def scatter_values(chart: SafeString, series: Sequence[ScatterSeries]) -> SafeString:
    """A scatter chart with its bubbles' values: per bubble, its group, the two means and its items."""
    rows = [[s.group.split(" (")[0], f"{x:.2f}", f"{y:.2f}", str(n)] for s in series for x, y, n in s.points]
    return with_values(chart, ["group", "human mean", "LLM mean", "items"], rows)


def _count(s: Distribution, answer_pools: dict[str, int]) -> str:
    """A pool's n with its unit: a human pool's ratings, an LLM pool's answers and its samples (issue 25 review, U5)."""
    if s.pool not in answer_pools:
        return f"{s.n} rating{'' if s.n == 1 else 's'}"
    samples = answer_pools[s.pool]
    return f"{s.n} answer{'' if s.n == 1 else 's'} of its {samples} sample{'' if samples == 1 else 's'}"


def scatter_chart(*, title: str, scale: tuple[float, float], series: Sequence[ScatterSeries],
                  x_label: str, y_label: str) -> SafeString:
    """Per-item human mean (x) vs LLM mean (y); a bubble's area grows with the items at that point."""
    width, left, right, top, plot_h = 320, 40, 10, 24, 238
    plot_w = width - left - right
    lines, reach = svg.legend_extent([s.group for s in series], plot_w)  # room for every entry (issue 25, U1)
    width, legend_y = max(width, math.ceil(left + reach + right)), top + plot_h + 50
    height = legend_y + svg.LEGEND_LINE * (lines - 1) + 8
    lo, hi = scale[0] - 0.25, scale[1] + 0.25

    def px(v: float) -> float:
        return left + (v - lo) / (hi - lo) * plot_w

    def py(v: float) -> float:
        return top + plot_h - (v - lo) / (hi - lo) * plot_h

    body: list[str] = []
    for tick in range(int(scale[0]), int(scale[1]) + 1):
        grid = 'stroke="#eaeef2"'
        body.append(f'<line x1="{px(tick):.1f}" x2="{px(tick):.1f}" y1="{top}" y2="{top + plot_h}" {grid}/>')
        body.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{py(tick):.1f}" y2="{py(tick):.1f}" {grid}/>')
        body.append(svg.text(px(tick), top + plot_h + 13, f"{tick}", size=10))
        body.append(svg.text(left - 6, py(tick) + 3, f"{tick}", anchor="end", size=10))
    body.append(f'<line x1="{px(lo):.1f}" y1="{py(lo):.1f}" x2="{px(hi):.1f}" y2="{py(hi):.1f}" '
                f'stroke="#8c959f" stroke-dasharray="4 3"/>')
    biggest = max([p[2] for s in series for p in s.points] + [1])
    for s in series:
        for x, y, n in s.points:
            r = 2.0 + 7.0 * math.sqrt(n / biggest)
            body.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="{r:.1f}" fill="{s.colour}" '
                        f'fill-opacity="0.55" stroke="{s.colour}"><title>{escape(s.group)}: {n} '
                        f'item{"" if n == 1 else "s"}, '
                        f'human {x:.2f}, LLM {y:.2f}</title></circle>')
    body.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#8c959f"/>')
    body.append(svg.text(left + plot_w / 2, top + plot_h + 28, x_label, size=10, fill="#57606a"))
    body.append(f'<text transform="translate(11 {top + plot_h / 2:.1f}) rotate(-90)" text-anchor="middle" '
                f'font-size="10" fill="#57606a">{escape(y_label)}</text>')
    body += svg.legend([s.group for s in series], left, legend_y, [s.colour for s in series], plot_w)
    return svg.figure(width, height, body, title)


def alpha_chart(*, title: str, rows: Sequence[AlphaBar]) -> SafeString:
    """Krippendorff's alpha (dot) with its 95 % bootstrap interval (bar), one row per group x pool."""
    # The labels' column fits the longest label ("all groups ⚠ pooled · Human raters"), within limits.
    row_h, top, right = 20, 30, 16
    left = min(230, max(170, round(5.6 * max((len(r.label) for r in rows), default=0)) + 14))
    width = PHONE_WIDTH
    height = top + row_h * len(rows) + 30
    values = [v for r in rows for v in ([r.alpha] if r.alpha is not None else []) + list(r.ci or [])]
    lo = min([-0.2, *values])
    lo = math.floor(lo * 5) / 5
    hi = 1.0
    plot_w = width - left - right

    def px(v: float) -> float:
        return left + (v - lo) / (hi - lo) * plot_w

    body: list[str] = []
    for tick in svg.ticks(lo, hi, 6):
        stroke = "#57606a" if tick == 0 else "#eaeef2"
        body.append(f'<line x1="{px(tick):.1f}" x2="{px(tick):.1f}" y1="{top - 6}" y2="{top + row_h * len(rows)}" '
                    f'stroke="{stroke}"/>')
        body.append(svg.text(px(tick), top + row_h * len(rows) + 14, f"{tick:g}", size=10))
    for i, r in enumerate(rows):
        y = top + i * row_h + row_h / 2
        band = "#f6f8fa" if i % 2 == 0 else "#fff"
        if i % 2 == 0:
            body.append(f'<rect x="0" y="{y - row_h / 2:.1f}" width="{width}" height="{row_h}" fill="{band}"/>')
        body.append(svg.text(left - 8, y + 4, r.label, anchor="end", size=10))
        if r.alpha is None:
            body.append(svg.text(left + 6, y + 4, r.note[:70], anchor="start", size=10, fill="#6e7781", halo=band))
            continue
        if r.ci:
            low, high = r.ci
            body.append(f'<line x1="{px(low):.1f}" x2="{px(high):.1f}" y1="{y:.1f}" y2="{y:.1f}" '
                        f'stroke="{r.colour}" stroke-width="3" stroke-opacity="0.45"/>')
            for v in (low, high):
                body.append(f'<line x1="{px(v):.1f}" x2="{px(v):.1f}" y1="{y - 5:.1f}" y2="{y + 5:.1f}" '
                            f'stroke="{r.colour}"/>')
        ci_text = (f", 95% CI [{r.ci[0]:.2f}, {r.ci[1]:.2f}]" if r.ci
                   else f"; no interval: {r.ci_note}" if r.ci_note else "")
        body.append(f'<circle cx="{px(r.alpha):.1f}" cy="{y:.1f}" r="4.5" fill="{r.colour}">'
                    f'<title>{escape(r.label)}: alpha {r.alpha:.3f}{ci_text}</title></circle>')
        if not r.ci and r.ci_note:  # a dot alone would read as a very narrow interval (seventh review, M1)
            on_right = px(r.alpha) > left + plot_w / 2  # the words on the dot's roomier side
            body.append(svg.text(px(r.alpha) + (-9 if on_right else 9), y + 4, "no CI",
                                 anchor="end" if on_right else "start", size=10, fill="#6e7781", halo=band))
    return svg.figure(width, height, body, title)
