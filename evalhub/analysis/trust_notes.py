"""How far an agreement number can be trusted: the notes added beside a defined agreement statistic (issue 25).

The value stays in the result (and its JSON); the note says why a reader should not take it at face value,
and the pages show the note in its place:

- ``too few items (n = 2)``: kappa, Fleiss' kappa, Krippendorff's alpha, ICC, table 6's mean pairwise tau and
  table 2's Kendall's tau rest on fewer than ``MIN_ITEMS`` items (alpha: pairable items, with 2 or more
  ratings). On so few items one item moves the value by tenths and the bootstrap over items has a handful of
  distinct resamples (n = 3: 10), so its interval says little. docs/analysis.md documents the minimum.
- ``cut at ...``: the ceiling's t interval reached past what its score can be (above 1 for an accuracy) and
  was cut there; near such a bound a t interval is only approximate, and the cut side says nothing.
- Welch's test between groups (table 1's stars, its sentences): ``too few items (n = 3 and 3)``
  when a side has fewer than ``MIN_ITEMS`` items (on either unit: on all individual ratings too), and on item
  means ``no variation within “human” (every item mean 4.33)`` when one side's item means are all equal, so that
  the other side's spread alone makes t and d (t = 19, d = 15.5 on 3 vs 3 items). t, p and d stay in the JSON
  with the note under ``"test"``; the page and the text report show the note in place of p, d and the star.
  The row's p stays in the Benjamini-Hochberg family (its size, ``p_family``, does not depend on which rows are
  withheld). On all individual ratings (n = ratings) every sentence that gives a p also carries its own warning
  (optimistic p); a withheld one gives no p, so no warning.
- ``no variation: ...``: a bootstrap interval whose bounds are equal (up to float noise, ``zero_width``). The
  replicates inside the interval all gave one value, so the width 0 reports no uncertainty,
  only that resampling so few items rarely changed it.
- ``few items for a bootstrap interval (n = 6)``: an interval over fewer than ``MIN_INTERVAL_ITEMS`` items (the
  value shown from ``MIN_ITEMS``): its ends move with the bootstrap's seed, so the pages withhold it.

The CSV exports ask ``withheld_values`` (and ``ceiling_rater_withheld``): a value the page withholds is left
empty there and the ``withheld`` column names it and why; the JSON keeps every value with its note, and
names the same fields in the row's ``withheld`` object (``result_json``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np

from evalhub import stats
from evalhub.analysis.reading import ALL_GROUPS
from evalhub.analysis.result import (
    AnalysisResult,
    CeilingRater,
    CeilingRow,
    CellRow,
    Interval,
    KappaRow,
    KendallRow,
    PairwiseKendallRow,
    WelchRow,
)
from evalhub.stats.alt_test import MIN_INSTANCES_PER_HUMAN

MIN_ITEMS = 5
TOO_FEW = "too few items"  # how the note starts: pages find it among a row's notes
NO_VARIATION = "no variation"
# A bootstrap interval over fewer items than this is withheld, its value shown (seventh review, M1: α 0.74 [0.25,
# 0.82] on 6 items was [-0.28, 0.86] with another seed: the resamples of 6 items are so few that the 2.5 % point
# falls in a gap between them).
MIN_INTERVAL_ITEMS = 10
FEW_FOR_INTERVAL = "few items for a bootstrap interval"
WITHHELD_INTERVAL = (NO_VARIATION, FEW_FOR_INTERVAL)  # how the note of an interval the pages withhold starts
MAX_NOTE_LINES = 200  # the dashboard's Notes and the text report's list the same first lines; the JSON has all


def too_few_items(n_items: int) -> str | None:
    """The note for a statistic computed on ``n_items`` items, or None from ``MIN_ITEMS`` items on."""
    return f"{TOO_FEW} (n = {n_items})" if n_items < MIN_ITEMS else None


def welch_trust(*, sides: tuple[str, str], n_items: tuple[int, int],
                item_means: tuple[np.ndarray, np.ndarray] | None) -> str | None:
    """The note for a Welch test whose p is defined but rests on too few items (fewer than ``MIN_ITEMS`` on a
    side, on either unit: ratings of 3 items are not independent observations) or, on item means (``item_means``
    given), on a side with no variation (every item mean equal), or None."""
    reasons = []
    if min(n_items) < MIN_ITEMS:
        reasons.append(f"{TOO_FEW} (n = {n_items[0]} and {n_items[1]})")
    for side, means in zip(sides, item_means or (), strict=False):
        if means.size >= 2 and means.min() == means.max():
            reasons.append(f"no variation within “{side}” (every item mean {float(means[0]):.2f})")
    return "; ".join(reasons) or None


WELCH_TRUST_KEY = "test"  # the key of a Welch row's note when its defined t, p and d are withheld


def welch_withheld(row: WelchRow) -> str:
    """What stands in place of a Welch row's p, d, t and star: its trust note, or "" when they are shown."""
    return row.notes.get(WELCH_TRUST_KEY, "") if row.test.p is not None else ""


def ceiling_withheld(row: CeilingRow) -> str:
    """The note for which a ceiling's summary, intervals and per-rater "judge better" are withheld
    ("too few items (n = 3)"), or "" when they are shown: the page, the text report and the CSV ask this."""
    return next((n for n in row.notes if n.startswith(TOO_FEW)), "")


ZERO_WIDTH = 1e-9  # relative to the bounds' scale: a width below it is float noise, not precision


def zero_width(ci: Interval | None) -> bool:
    """Whether an interval has width 0 up to float noise ([0.0, 2.22e-16] has; fifth review, M2), relative to its
    scale: width <= ``ZERO_WIDTH`` * max(1, |bounds|). The one test for "no variation" everywhere."""
    if ci is None:
        return False
    return abs(ci[1] - ci[0]) <= ZERO_WIDTH * max(1.0, abs(ci[0]), abs(ci[1]))


def degenerate_interval(ci: Interval | None, kind: str = "bootstrap") -> str | None:
    """The note for an interval of width 0 up to float noise (``kind``: "bootstrap", or "t" for the ceiling's),
    or None."""
    if ci is None or not zero_width(ci):
        return None
    return f"no variation: the {kind} interval has width 0 (both bounds {ci[0]:.3f})"


def few_for_interval(n_items: int) -> str | None:
    """The note for a bootstrap interval over ``n_items`` items, from ``MIN_ITEMS`` (below it the value itself is
    withheld) to under ``MIN_INTERVAL_ITEMS``, or None."""
    if not MIN_ITEMS <= n_items < MIN_INTERVAL_ITEMS:
        return None
    return (f"{FEW_FOR_INTERVAL} (n = {n_items}): below {MIN_INTERVAL_ITEMS} items the resamples are so few that "
            "the interval's ends move with the bootstrap's seed")


def bootstrap_interval_notes(ci: Interval | None, n_items: int, *more: str | None) -> str | None:
    """An interval's notes, joined: too few items for it, then width 0 (either withholds it; the first is what a
    cell shows: eleventh review, C), then ``more`` (such as the replicates dropped), none lost; or None."""
    notes = [n for n in (few_for_interval(n_items), degenerate_interval(ci), *more) if n]
    return "; ".join(notes) or None


def cut_interval(ci: Interval | None, bounds: tuple[float, float]) -> str | None:
    """The note for a t interval of nonzero width cut at ``bounds`` (the score's range; see ``mean_ci``), or None."""
    if ci is None or zero_width(ci):
        return None
    ends = (("below at", bounds[0], ci[0]), ("above at", bounds[1], ci[1]))
    cut = [f"{edge} {bound:.3f}" for edge, bound, end in ends if end == bound]
    if not cut:
        return None
    return (f"the t interval is cut {' and '.join(cut)}, the score's limit: this close to it a t interval is only "
            "approximate")


# ---------------------------------------------------------------------------
# The one rule for what a reader sees in place of a number: the dashboard's templates (through the filters of
# templatetags/evalhub_format.py) and the text report (text_report.py) both ask these functions.

# What a reader sees of a note's key: the statistic's name, never the JSON key ("icc1k", "alpha_ci95").
NOTE_NAMES = {
    "mean": "mean", "std": "standard deviation", "alpha": "α", "alpha_ci95": "α 95% CI",
    "full_agreement_pct": "full agreement", "icc": "ICC", "icc1": "ICC(1)", "icc1k": "ICC(1,k)", "tau": "τ",
    "mean_tau": "mean pairwise τ", "n_pairs": "rater pairs", "p_adjusted": "p (BH)",
    "kappa": "κ", "ci95": "95% CI", "p": "p", "t": "t", "df": "degrees of freedom",
    "mean_diff": "mean difference", "cohens_d": "Cohen's d", "agreement_pct": "agreement",
    WELCH_TRUST_KEY: "t, p and d",
}


def note_name(key: str) -> str:
    """The name of a note's statistic: ``alpha.ordinal`` reads "α (ordinal)"."""
    if key.startswith("alpha."):
        return f"α ({key.removeprefix('alpha.')})"
    return NOTE_NAMES.get(key, key.replace("_", " "))


def short_note(note: str | None) -> str:
    """What a cell shows in place of a number it should not claim: the note up to its colon, its count after a
    comma ("too few items, n = 2", "no variation"), so that it nests in parentheses cleanly (fourth review, C4:
    "(τ withheld: too few items (n = 3))"); the whole note goes in the cell's tooltip and the Notes."""
    head = (note or "").split(":")[0]
    # Each "; "-joined clause alike (sixth review, C: "too few items (n = 3 and 3); no variation ..." beside
    # "too few items, n = 3 and 3" in one CSV column).
    return re.sub(r" \((n = [^()]*)\)(?=;|$)", r", \1", head)


def p_adjusted_note(notes: Mapping[str, str]) -> str:
    """What a per-rater kappa's "p (BH)" cell shows when its adjusted p is not given: "unfiltered only" when the
    unfiltered analysis gives it, "–" for an all-groups row, which no analysis adjusts (fifth review, U2)."""
    note = notes.get("p_adjusted", "")
    return "unfiltered only" if note.startswith("given on the unfiltered") else "–" if note else ""


def value_note(notes: Mapping[str, str], *keys: str) -> str:
    """What stands in place of a value: the short note of the first of ``keys`` with a note (too few items, or why
    it is undefined), or "" when the value is shown. Alpha's keys: "alpha" (too few), then "alpha.<level>"."""
    return next((short_note(notes[k]) for k in keys if notes.get(k)), "")


def interval_note(notes: Mapping[str, str], ci: Interval | None, ci_key: str, *value_keys: str) -> str:
    """What stands in place of an interval: "–" when its value is withheld (the value's note says why), the short
    note when it is undefined or has no variation, or "" when the interval is shown."""
    if value_note(notes, *value_keys):
        return "–"
    note = notes.get(ci_key, "")
    if ci is None:
        return short_note(note) or "–"
    return short_note(note) if note.startswith(WITHHELD_INTERVAL) else ""


def no_ci_text(note: str) -> str:
    """A reason in place of an interval, written so that it cannot be read as one: "no CI: few items for a
    bootstrap interval, n = 6" (the text report and the dashboard's kappa tables)."""
    return f"no CI: {note}"


def shown_notes(notes: Mapping[str, str], hidden: tuple[str, ...], *value_keys: str) -> dict[str, str]:
    """A row's notes as a reader meets them: the notes of ``hidden`` (its interval, its p) go when its value is
    withheld, since neither is shown then."""
    if value_note(notes, *value_keys):
        return {k: v for k, v in notes.items() if k not in hidden}
    return dict(notes)


Withheld = dict[str, str]  # CSV column -> why the page and the text report do not show its value


def withheld_values(row: object) -> Withheld:
    """The columns of a row's CSV line whose defined value the page and the text report withhold, each with the
    short reason (fourth review, M2: a script reading p_adjusted < 0.05 found effects the page refuses). The
    export leaves them empty and names the reason in its ``withheld`` column; the JSON keeps the values."""
    out: Withheld = {}
    if isinstance(row, CellRow):
        if note := value_note(row.notes, "alpha"):
            out |= {f"alpha_{level}": note for level, value in row.alpha.items() if value is not None}
        ci_note = note or value_note({k: v for k, v in row.notes.items() if k == "alpha_ci95"
                                      and v.startswith(WITHHELD_INTERVAL)}, "alpha_ci95")
        if ci_note and row.alpha_ci95 is not None:
            out |= {"alpha_ci95_low": ci_note, "alpha_ci95_high": ci_note}
        if (icc := row.notes.get("icc", "")).startswith(TOO_FEW):
            out |= {k: short_note(icc) for k, v in (("icc1", row.icc1), ("icc1k", row.icc1k)) if v is not None}
    elif isinstance(row, KendallRow | PairwiseKendallRow):
        key = "tau" if isinstance(row, KendallRow) else "mean_tau"
        if (note := value_note(row.notes, key)) and getattr(row, key) is not None:
            out |= dict.fromkeys((key, "p", "p_method", "band") if key == "tau" else (key,), note)
    elif isinstance(row, WelchRow):
        if note := welch_withheld(row):
            out |= dict.fromkeys(("t", "df", "p", "p_adjusted", "cohens_d"), short_note(note))
    elif isinstance(row, KappaRow):
        if (note := value_note(row.notes, "kappa")) and row.kappa is not None:
            # p only where the row has one (per-rater rows; review 20: the JSON named a p on majority and Fleiss rows)
            tested = {"p": row.p, "p_adjusted": row.p_adjusted}
            out |= dict.fromkeys(("kappa", "ci95_low", "ci95_high", *(k for k, v in tested.items() if v is not None)),
                                 note)
        elif row.ci95 is not None and row.notes.get("ci95", "").startswith(WITHHELD_INTERVAL):
            out |= dict.fromkeys(("ci95_low", "ci95_high"), short_note(row.notes["ci95"]))
    return out


def ceiling_interval_note(rater: str, who: str, note: str) -> str:
    """A ceiling block's note on one rater's interval (``who``: "rater" or "judge"): "demo-rater-2, judge's score:
    the t interval is cut ..."."""
    return f"{rater}, {who}'s score: {note}"


def ceiling_rater_notes(row: CeilingRow, rater: CeilingRater) -> list[str]:
    """The block's notes one rater's CSV line carries: the block's own and this rater's interval notes, not another
    rater's (review 14: demo-rater-1's line said "demo-rater-2, judge's score: ...")."""
    others = tuple(ceiling_interval_note(r.rater, who, "") for r in row.raters if r.rater != rater.rater
                   for who in ("rater", "judge"))
    return [note for note in row.notes if not note.startswith(others)]


def ceiling_rater_cut(row: CeilingRow, rater: CeilingRater) -> str:
    """The ceiling CSV's ``ci95_cut``: the interval ends of one rater's line cut at the score's limit ("rater_ci95_high
    at 0"), joined by ", ", or "" (tenth review, U: the cut was only in the free-text notes)."""
    if ceiling_withheld(row) or row.scoring is None:
        return ""
    low, high = stats.score_range(row.scoring)
    cut = []
    for side, ci in (("rater", rater.rater_ci95), ("judge", rater.judge_ci95)):
        if ci is not None and not zero_width(ci):
            cut += [f"{side}_ci95_{end} at {bound:g}" for end, bound, value in (("low", low, ci[0]),
                                                                                   ("high", high, ci[1]))
                    if value == bound]
    return ", ".join(cut)


def ceiling_rater_withheld(row: CeilingRow, rater: CeilingRater) -> Withheld:
    """As ``withheld_values`` for one rater's line of a ceiling: everything the page greys as "not a result" when
    the ceiling is withheld, else an interval of width 0."""
    if note := ceiling_withheld(row):
        return dict.fromkeys(("rater_score", "rater_ci95_low", "rater_ci95_high", "judge_score", "judge_ci95_low",
                              "judge_ci95_high", "judge_better"), short_note(note))
    out: Withheld = {}
    for side, ci in (("rater", rater.rater_ci95), ("judge", rater.judge_ci95)):
        if zero := degenerate_interval(ci, "t"):
            out |= {f"{side}_ci95_low": short_note(zero), f"{side}_ci95_high": short_note(zero)}
    return out


POOLED_GROUPS = ("All groups pooled: every figure over all groups together that compares items with each other "
                 "(Krippendorff's α, ICC, Kendall's τ, pairwise τ, Cohen's and Fleiss' κ) mixes the difference "
                 "between the groups into it, so it can be high while each group's is low or withheld; read the "
                 "per-group values (without the group filter). Figures that count or average over items (% full "
                 "agreement, the confusion matrix's counts, the human ceiling's scores) are the groups' items added "
                 "together")


# An all-groups row's mark in the CSV (``pooled``) and the JSON (a row's ``pooled``), where several groups are pooled.
POOLED_ROW = ("all groups pooled: α, ICC, τ and κ mix the difference between the groups into them; counts and "
              "averages over items add the groups' items together")


def pooled_groups_caveat(result: AnalysisResult) -> str:
    """The caveat shown once near the top of a view with all-groups rows when the study has several groups (sixth
    review, M2: a pooled α of 0.74 where each group's is below 0), or ""."""
    pooled = any(c.group == ALL_GROUPS for c in result.cells)
    return POOLED_GROUPS if pooled and len(result.study.groups) > 1 else ""


def ceiling_summary_withheld(row: CeilingRow) -> Withheld:
    """The block-level summary fields of a withheld ceiling (``summary`` when set, ``judge_better``,
    ``n_compared``), each with the short reason, else {} (sixth review, M1: "2 of 3" read from a withheld block)."""
    if not (note := ceiling_withheld(row)):
        return {}
    fields = ("summary", "judge_better", "n_compared") if row.summary is not None else ("judge_better", "n_compared")
    return dict.fromkeys(fields, short_note(note))


def withheld_text(withheld: Withheld) -> str:
    """The ``withheld`` column: "t, df, p: too few items, n = 3 and 3", one part per reason, the parts joined by
    " | " (a reason may hold "; ", so a script splits on " | " then on the first ": "; eighth review, C6)."""
    by_reason: dict[str, list[str]] = {}
    for column, reason in withheld.items():
        by_reason.setdefault(reason, []).append(column)
    return " | ".join(f"{', '.join(columns)}: {reason}" for reason, columns in by_reason.items())


def group_title(group: str, pooled: object = False) -> str:
    """How a title names a group: never bare, since a group may share a word with a pool ("human"). ``pooled``
    (truthy: the view's pooled-groups caveat): all groups are marked as pooled wherever their figures appear, not
    only in the caveat (ninth review, M1: pooled τ, κ and pairwise τ shown unmarked beside withheld groups)."""
    if group != ALL_GROUPS:
        return f"group “{group}”"
    return f"all groups {POOLED_MARK}" if pooled else "all groups"


POOLED_MARK = "⚠ pooled"  # beside every pooled figure's group; the ⚠ points at the view's caveat


def note_lines(result: AnalysisResult) -> list[str]:
    """Every note of the statistics the dashboard and the text report show (table 1, kappa and Fleiss' kappa,
    Kendall's tau, pairwise tau, the human ceiling, a withheld Welch test), one line each, in the study's question
    order:
    "question / group / pool: name — note".
    Notes on an interval whose value is withheld are left out: no interval is shown, the value's note says why."""
    labels = result.pool_labels()
    level = result.settings.ci_level

    pooled = pooled_groups_caveat(result)  # "all groups ⚠ pooled", as the tables name them (review 17)

    def where(question: str, group: str, pool: str) -> str:
        return f"{question} / {group_title(group, pooled)} / {labels.get(pool, pool)}"

    lines = {f"{where(c.question, c.group, c.pool)}: {note_name(k)} — {v}" for c in result.cells
             for k, v in shown_notes(c.notes, ("alpha_ci95",), "alpha", f"alpha.{level}").items()}
    for k in result.kappa:
        name = "Fleiss' κ among the raters" if k.against == "raters" else \
            f"κ vs {'the human majority' if k.rater is None else k.rater} ({k.weights})"
        lines |= {f"{where(k.question, k.group, k.pool)}: {name}{'' if key == 'kappa' else ', ' + note_name(key)}"
                  f" — {v}" for key, v in shown_notes(k.notes, ("ci95", "p"), "kappa").items()}
    lines |= {f"{where(t.question, t.group, t.pool)}: Kendall's τ vs the human raters"
              f"{'' if key == 'tau' else ', ' + note_name(key)} — {v}"
              for t in result.kendall for key, v in t.notes.items()}
    lines |= {f"{where(r.question, r.group, r.pool)}: {note_name(key)} — {v}"
              for r in result.pairwise_kendall for key, v in r.notes.items()}
    lines |= {f"{where(c.question, c.group, c.pool)}: human ceiling — {n}" for c in result.ceiling for n in c.notes}
    lines |= {f"{w.question} / “{w.group_a}” vs “{w.group_b}” / {labels.get(w.pool, w.pool)}: Welch's t-test — "
              f"{note}" for w in result.welch if (note := welch_withheld(w))}
    # In the study's question order, as every table (review 19: alphabetical put "cohesiveness" first), then by text.
    order = {q: n for n, q in enumerate(result.study.questions)}
    return sorted(lines, key=lambda line: (order.get(line.split(" / ", 1)[0], len(order)), line))


# What a table 1 cell's n counts, in words (moved from cell_counts; the dashboard's cell and tooltip and the text
# report's table 1 ask the same functions: issue 25, ninth review, the report's "full agreement 100%" did not say
# it rests on 3 items). ``samples`` is the pool's number of samples when it is an LLM pool (its n counts answers),
# 0 for a human pool (its n counts ratings); docs/analysis.md, "Words".
def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def counts_head(c: CellRow, samples: int) -> str:
    """A cell's items and its ratings, or an LLM pool's answers: "3 items, 9 ratings",
    "3 items, 27 answers (3 samples of 3 items)"; "1 sample" in the singular (ninth review)."""
    items = _plural(c.n_items, "item")
    if samples:
        return f"{items}, {_plural(c.n_ratings, 'answer')} ({_plural(samples, 'sample')} of {items})"
    return f"{items}, {_plural(c.n_ratings, 'rating')}"


def counts_text(c: CellRow, samples: int) -> str:
    """What a cell's n counts and what its mean and std are over (the dashboard's tooltip): the std of an LLM pool
    is over its answers, not its items."""
    unit = "answers" if samples else "ratings"
    return f"{counts_head(c, samples)}; mean (std) over the {c.n_ratings} {unit}, sample std"


def agreement_text(c: CellRow, samples: int) -> str:
    """What % full agreement is a share of ("1 of 3 items"). It counts the items with 2 or more ratings: that is
    every item when ICC's complete items are all of them; otherwise the count is not in the result, and the words
    say so instead. "" when there is no % full agreement."""
    pct = c.full_agreement_pct
    if pct is None:
        return ""
    among = " among its own samples" if samples else ""
    if c.icc_n_items == c.n_items and c.n_items:
        agree = round(pct * c.n_items / 100)
        return f"{agree} of {_plural(c.n_items, 'item')}{among}"
    return f"of the items with 2 or more {'answers' if samples else 'ratings'}{among}"


def n_text(c: CellRow, samples: int) -> str:
    """The cell's n as the dashboard's cell shows it: "n = 9 ratings", an LLM pool's "n = 27 answers"."""
    return f"n = {_plural(c.n_ratings, 'answer' if samples else 'rating')}"


# ---------------------------------------------------------------------------
# The text report's column legends: one line under a table, saying what each of its columns counts (the dashboard
# says the same in its headings and intros).

KENDALL_P_METHODS = ("items: the items with both a human mean and the pool's mean; p: scipy's two-sided p of "
                     "tau-b; p method: exact (the exact distribution, used when neither the human means nor the "
                     "pool's have a tie and there are at most 33 items, or on more items when the two orders differ "
                     "in at most one pair or agree in at most one) or normal approx. (the normal approximation with "
                     "the tie correction, used otherwise; \"asymptotic\" in the CSV and JSON); band: |tau| < 0.1 very "
                     "weak, < 0.2 weak, < 0.3 moderate, >= 0.3 strong, \"negative\" added for a negative tau, and "
                     "\"not significant\" in place of the whole band when p > 0.05")

PAIRWISE_COLUMNS = ("pairs: the rater pairs (an LLM: sample pairs) whose tau enters the mean, \"1 of 3\" when some "
                    "pair's tau is undefined (the Notes say why); items: the items with 2+ ratings of the pool")

# How a pool of several samples becomes one label, as the dashboard's evidence intro says it (review 18, U).
POOL_LABEL_RULE = ("A pool with several samples per item is, for kappa and the confusion matrices, its samples' "
                   "majority label (nominal studies) or their mean rounded to the nearest scale point (Likert); the "
                   "human ceiling uses the unrounded mean on Likert scales.")

KAPPA_COLUMNS = ("items: the items kappa is over (against the majority: those left once the tied ones are left out); "
                 "tied (left out): the items whose human majority ties, left out (only against the majority); "
                 "p (BH): the z-test of kappa = 0 against a rater, Benjamini-Hochberg adjusted over every per-rater "
                 "kappa of the analysis (\"–\" on majority and Fleiss rows, which are not tested, where kappa is "
                 "withheld, and on all-groups rows, which are in no family: the Notes say so)")

TABLE1_COUNTS = ("Table 1's cells: mean (std); alpha and % full agreement, with the items it is a share of; "
                 "items, ratings: the cell's items and its ratings (an LLM pool: its answers, one per sample, item "
                 "and question). The mean and the std (sample std) are over those ratings or answers.")

TABLE1_ICC = ("On a Likert scale, ICC(1) (one-way random-effects intraclass correlation of one rating, over the items "
              "every rater of the cell rated) follows alpha where alpha is shown; the JSON has ICC(1,k) too.")

ALT_TEST_COLUMNS = (
    "judge ratings used: the items with the judge's rating and 2+ human ratings (question (all): the item × question "
    "pairs, over all questions); omega: the winning rate, the share of the human raters tested that the judge beats "
    "within epsilon (a one-sided t-test, Benjamini-Yekutieli adjusted over the raters); rho: the advantage "
    "probability, the mean over the raters tested of the share of their ratings on which the judge scores at least as "
    "well as the rater; verdict: passes when omega >= 0.5, cannot yet below, no verdict when the test cannot run (the "
    f"notes say why); beat/tested: the human raters beaten / the human raters tested (those with "
    f"{MIN_INSTANCES_PER_HUMAN} usable ratings)")
