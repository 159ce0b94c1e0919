"""The evidence beside the verdict (issue 19): kappa per pool, the confusion heat map, the ceiling strip.

A pure function of the analysis result (``evidence_context``) and two server-side SVG charts drawn with
``evalhub.pages.svg``, as ``evalhub.pages.charts``: every data-derived string is escaped, numbers are formatted
here.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString

from evalhub.analysis.reading import ALL_GROUPS
from evalhub.analysis.result import AnalysisResult, CeilingRater, CeilingRow, ConfusionRow, KappaRow
from evalhub.analysis.text_report import CEILING_AXIS_HEAD, scoring_words, t_interval_text
from evalhub.analysis.trust_notes import (
    MIN_INTERVAL_ITEMS,
    MIN_ITEMS,
    ceiling_withheld,
    pooled_groups_caveat,
    zero_width,
)
from evalhub.pages import svg
from evalhub.pages.charts import with_values
from evalhub.templatetags.evalhub_format import group_title

MAX_BLOCKS = 30  # question x group x pool blocks drawn; the JSON and CSV have all


def confusion_chart(*, title: str, labels: Sequence[str], counts: Sequence[Sequence[int]]) -> SafeString:
    """Heat map of a confusion matrix: rows = human majority label, columns = the pool's label, counts in cells.

    A cell's shade grows with its count relative to the largest cell; the diagonal (agreement) is outlined.
    """
    k = len(labels)
    cell = max(26, min(56, (svg.PHONE_WIDTH - 100) // max(k, 1)))
    left, top = 84, 50
    width, height = left + k * cell + 16, top + k * cell + 30
    peak = max([c for row in counts for c in row] + [1])
    body = [svg.text(left + k * cell / 2, 30, "pool's label", size=10, fill="#57606a"),
            f'<text transform="translate(12 {top + k * cell / 2:.1f}) rotate(-90)" text-anchor="middle" '
            f'font-size="10" fill="#57606a">human majority</text>']
    for c, label in enumerate(labels):
        body.append(svg.text(left + c * cell + cell / 2, top - 5, label[:12], size=10))
    for r, (label, row) in enumerate(zip(labels, counts, strict=True)):
        y = top + r * cell
        body.append(svg.text(left - 6, y + cell / 2 + 4, label[:12], anchor="end", size=10))
        for c, count in enumerate(row):
            x = left + c * cell
            share = count / peak
            stroke = ' stroke="#1f2328" stroke-width="1.5"' if r == c else ' stroke="#fff"'
            body.append(f'<rect class="confusion-cell" data-count="{count}" x="{x}" y="{y}" width="{cell}" '
                        f'height="{cell}" fill="{svg.colour(0)}" fill-opacity="{0.06 + 0.9 * share:.3f}"{stroke}>'
                        f'<title>human majority {escape(label)}, pool {escape(labels[c])}: {count} '
                        f'item{"" if count == 1 else "s"}</title></rect>')
            body.append(svg.text(x + cell / 2, y + cell / 2 + 4, str(count), size=11,
                              fill="#fff" if share > 0.55 else "#1f2328"))
    return svg.figure(width, height, body, title)


def ceiling_low(scoring: str, raters: Sequence[CeilingRater]) -> float:
    """The left end of a ceiling chart's axis: 0 for accuracy; for negative RMSE a tick at or below every value it
    draws (and -1 at most), so that the page's charts can share one axis (sixth review, C: withheld charts' ranges
    differed; a withheld chart now draws no axis)."""
    if scoring == "accuracy":
        return 0.0
    values = [v for r in raters if r.rater_score is not None and r.judge_score is not None
              for v in [r.rater_score, r.judge_score, *(r.rater_ci95 or []), *(r.judge_ci95 or [])]]
    lo = min(values + [-1.0])
    first = svg.ticks(lo, 0.0, 5)[0]
    return first if first <= lo else lo - 0.1


def ceiling_chart(*, title: str, scoring: str, raters: Sequence[CeilingRater], judge_colour: str,
                  withheld: str | None = None, low: float | None = None) -> SafeString:
    """Strip plot: per rater, their agreement with the other raters (grey) and the judge's on the same items.

    Each score is a dot with its 95 % t interval; a row whose judge dot lies right of the rater's
    is a rater the judge agrees with the others better than. ``withheld`` (the analysis's "too few items"
    note) draws the raters' names and why, no axis and no dot (``_withheld_ceiling_chart``; issue 25 review, U2,
    and review 18); an interval of width 0 is named, not drawn.
    ``low``: the axis's left end shared with the page's other ceiling charts (default: this chart's own).
    """
    lo = ceiling_low(scoring, raters) if low is None else low
    hi = 1.0 if scoring == "accuracy" else 0.0
    row_h, top, left, right, width = 18, 58 if withheld else 30, 120, 16, svg.PHONE_WIDTH
    height = top + row_h * max(len(raters), 1) + 44
    plot_w = width - left - right

    def px(v: float) -> float:
        return left + (v - lo) / ((hi - lo) or 1) * plot_w

    body: list[str] = []
    if withheld:
        return _withheld_ceiling_chart(title, raters, withheld)
    marks = ('fill="#6e7781"', f'fill="{judge_colour}"')  # the rater's grey, the pool's colour
    bottom = top + row_h * len(raters)
    for tick in svg.ticks(lo, hi, 5):
        body.append(f'<line x1="{px(tick):.1f}" x2="{px(tick):.1f}" y1="{top - 4}" y2="{bottom}" stroke="#eaeef2"/>')
        body.append(svg.text(px(tick), bottom + 13, f"{tick:g}", size=10))
    for i, r in enumerate(raters):
        y = top + i * row_h + row_h / 2
        band = "#f6f8fa" if i % 2 == 0 else "#fff"
        if i % 2 == 0:
            body.append(f'<rect x="0" y="{y - row_h / 2:.1f}" width="{width}" height="{row_h}" fill="{band}"/>')
        body.append(svg.text(left - 8, y + 4, str(r.rater)[:20], anchor="end", size=10))
        if r.rater_score is None or r.judge_score is None:
            body.append(svg.text(left + 6, y + 4, f"undefined: {r.reason}"[:70], anchor="start", size=10,
                                 fill="#6e7781", halo=band))
            continue
        for (value, ci, dy, shape), paint in zip(((r.rater_score, r.rater_ci95, -3, "rater"),
                                                   (r.judge_score, r.judge_ci95, 3, "judge")), marks, strict=True):
            if zero_width(ci):
                ci_text = "; no variation (an interval of width 0)"
                ci = None
            else:
                ci_text = f", 95% CI [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""
            if ci:
                body.append(f'<line x1="{px(ci[0]):.1f}" x2="{px(ci[1]):.1f}" y1="{y + dy:.1f}" y2="{y + dy:.1f}" '
                            f'stroke="{judge_colour if shape == "judge" else "#6e7781"}" stroke-width="2" '
                            'stroke-opacity="0.5"/>')
            said = f"{value:.3f}{ci_text} ({r.n_items} items)"
            body.append(f'<circle class="ceiling-{shape}" cx="{px(value):.1f}" cy="{y + dy:.1f}" r="4" {paint}>'
                        f'<title>{escape(str(r.rater))}: {shape} vs the other raters {said}</title></circle>')
    # The axis label says what a dot is exactly (fifth review, U5: stats.ceiling averages the per-item score over
    # the rater's items), on lines that fit the phone's width ("negative RMSE ... (higher = closer; ...)").
    head, sep, tail = scoring_words(scoring).partition(" (")
    axis = [CEILING_AXIS_HEAD, head, sep.strip() + tail] if tail else [CEILING_AXIS_HEAD, head]
    for k, line in enumerate(axis):
        body.append(svg.text(left + plot_w / 2, bottom + 28 + 13 * k, line, size=10, fill="#57606a"))
    key = bottom + 38 + 13 * (len(axis) - 1)
    body.append(f'<circle cx="{left - 100}" cy="{key}" r="4" {marks[0]}/>')
    body.append(svg.text(left - 92, key + 3, "the rater", anchor="start", size=10))
    body.append(f'<circle cx="{left - 20}" cy="{key}" r="4" {marks[1]}/>')
    body.append(svg.text(left - 12, key + 3, "the judge, on the same items", anchor="start", size=10))
    return svg.figure(width, height + 13 * (len(axis) - 1), body, title)


def _withheld_ceiling_chart(title: str, raters: Sequence[CeilingRater], withheld: str) -> SafeString:
    """A withheld ceiling: its raters named, no axis and no dot (review 18, M: grey dots on a scaled axis still read
    "the judge far below every rater" on 3 items), and why, on lines that fit a phone."""
    row_h, top, left, width = 18, 58, 120, svg.PHONE_WIDTH
    body = [f'<text class="ceiling-withheld" x="{width / 2}" y="{line_y}" text-anchor="middle" font-size="10" '
            f'fill="#a40e26">{escape(line)}</text>'
            for line_y, line in ((30, f"withheld: {withheld}"),
                                 (44, "no scores are drawn: they would not be a result"))]
    for i, r in enumerate(raters):
        y = top + i * row_h + row_h / 2
        if i % 2 == 0:
            body.append(f'<rect x="0" y="{y - row_h / 2:.1f}" width="{width}" height="{row_h}" fill="#f6f8fa"/>')
        body.append(svg.text(left - 8, y + 4, str(r.rater)[:20], anchor="end", size=10))
        body.append(svg.text(left + 6, y + 4, f"withheld ({r.n_items} items)", anchor="start", size=10,
                             fill="#6e7781"))
    return svg.figure(width, top + row_h * max(len(raters), 1) + 16, body, title)


def ceiling_values(chart: SafeString, raters: Sequence[CeilingRater], withheld: str | None) -> SafeString:
    """A ceiling chart with its dots' values under it, a tap away on a phone (eighth review, U1: the scores and
    intervals were in tooltips only); none for a withheld ceiling, whose dots are not a result."""
    if withheld:
        return chart

    rows = [[str(r.rater), str(r.n_items), *(["–", "–", "–", "–"] if r.rater_score is None or r.judge_score is None
                                             else [f"{r.rater_score:.3f}", t_interval_text(r.rater_ci95),
                                                   f"{r.judge_score:.3f}", t_interval_text(r.judge_ci95)]),
             {None: r.reason or "", True: "yes", False: "no"}[r.judge_better]] for r in raters]
    return with_values(chart, ["rater", "items", "rater vs others", "95% CI", "judge vs the same others", "95% CI",
                               "judge better"], rows)


@dataclass(frozen=True)
class EvidenceBlock:
    """One question x group x LLM pool: its kappas, confusion matrix and human ceiling, with their charts."""

    question: str
    group: str
    pool: str
    label: str  # the pool's label, what a reader sees of it
    colour: str
    kappas: list[KappaRow]  # against the human majority and each rater
    fleiss: KappaRow | None  # among the human raters of the question x group
    confusion: ConfusionRow
    confusion_chart: SafeString
    ceiling: CeilingRow | None
    ceiling_chart: SafeString | None
    ceiling_withheld: str | None  # "too few items (n = 3)": shown in place of the withheld summary and intervals
    ceiling_items: int = 0  # the items the ceiling's summary rests on (its raters' most), said in the summary


def evidence_context(result: AnalysisResult, pool_colours: dict[str, str]) -> dict[str, object]:
    """The ``evidence`` blocks of the dashboard: one per question x group x LLM pool (at most MAX_BLOCKS)."""
    pooled = bool(pooled_groups_caveat(result))
    fleiss = {(k.question, k.group): k for k in result.kappa if k.against == "raters"}
    kappas: dict[tuple[str, str, str], list[KappaRow]] = defaultdict(list)
    for k in result.kappa:
        if k.against != "raters":
            kappas[(k.question, k.group, k.pool)].append(k)
    ceilings = {(c.question, c.group, c.pool): c for c in result.ceiling}
    labels = result.pool_labels()
    blocks = []
    # One axis for every ceiling chart of a scoring on the page (sixth review, C): the lowest of their own ends.
    lows: dict[str, float] = {}
    for row in result.ceiling:
        if row.scoring and row.raters and not ceiling_withheld(row):  # a withheld chart draws no axis
            low = ceiling_low(row.scoring, row.raters)
            lows[row.scoring] = min(low, lows.get(row.scoring, low))
    for c in result.confusion[:MAX_BLOCKS]:
        where = f"{c.question} · {group_title(c.group, pooled)} · {labels.get(c.pool, c.pool)}"
        ceiling = ceilings.get((c.question, c.group, c.pool))
        withheld = (ceiling_withheld(ceiling) or None) if ceiling else None
        block_colour = pool_colours.get(c.pool, svg.colour(1))
        blocks.append(EvidenceBlock(
            question=c.question, group=c.group, pool=c.pool, label=labels.get(c.pool, c.pool), colour=block_colour,
            kappas=kappas.get((c.question, c.group, c.pool), []), fleiss=fleiss.get((c.question, c.group)),
            confusion=c, confusion_chart=confusion_chart(title=f"{where}: confusion", labels=c.labels, counts=c.counts),
            ceiling=ceiling,
            ceiling_chart=ceiling_values(ceiling_chart(title=f"{where}: human ceiling", scoring=ceiling.scoring,
                                                       raters=ceiling.raters, judge_colour=block_colour,
                                                       withheld=withheld, low=lows.get(ceiling.scoring)),
                                         ceiling.raters, withheld)
            if ceiling and ceiling.scoring and ceiling.raters else None,
            ceiling_withheld=withheld,
            ceiling_items=max((r.n_items for r in ceiling.raters), default=0) if ceiling else 0,
        ))
    # The intro speaks only of what the blocks show (issue 25 fourth review, U2): no "better" where none is drawn.
    return {"evidence": blocks, "evidence_cut": len(result.confusion) > MAX_BLOCKS, "min_items": MIN_ITEMS,
            "min_interval_items": MIN_INTERVAL_ITEMS,
            "ceiling_shown": any(b.ceiling and not b.ceiling_withheld for b in blocks),
            "ceiling_withheld_any": any(b.ceiling_withheld for b in blocks),
            # Sixth review, U3: why an all-groups row's "p (BH)" is "–", in visible text (not only a tooltip).
            "kappa_all_groups_unadjusted": any(k.group == ALL_GROUPS and k.against == "rater"
                                               for b in blocks for k in b.kappas)}
