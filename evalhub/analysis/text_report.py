"""Words and plain-text tables for an analysis result (the `analyze --format table` output and the dashboard).

Pure functions over the ``AnalysisResult`` of ``analysis.study_analysis``; nothing here reads the database.
"""

from __future__ import annotations

from collections.abc import Sequence

from evalhub.analysis.alt_test_rows import ALL_QUESTIONS
from evalhub.analysis.reading import ALL_GROUPS, HUMAN, HUMAN_LABEL, READ_BY_PERSON
from evalhub.analysis.result import (
    AblationTable,
    AltTestRow,
    AnalysisResult,
    CellRow,
    Interval,
    KappaRow,
    KendallRow,
    PairwiseKendallRow,
    PoolSummary,
    PositionRow,
    WelchRow,
)
from evalhub.analysis.trust_notes import (
    ALT_TEST_COLUMNS,
    KAPPA_COLUMNS,
    KENDALL_P_METHODS,
    MAX_NOTE_LINES,
    MIN_INTERVAL_ITEMS,
    PAIRWISE_COLUMNS,
    POOL_LABEL_RULE,
    TABLE1_COUNTS,
    TABLE1_ICC,
    TOO_FEW,
    agreement_text,
    ceiling_withheld,
    counts_head,
    group_title,
    interval_note,
    no_ci_text,
    note_lines,
    p_adjusted_note,
    pooled_groups_caveat,
    value_note,
    welch_withheld,
    zero_width,
)

SIGNIFICANCE = 0.05


def fmt(value: float | None, digits: int = 2) -> str:
    """A value at ``digits`` decimals; "–" when undefined. A tiny negative that rounds to zero prints "0.000", not
    "-0.000" (the sign of nothing; issue 25 review)."""
    if value is None:
        return "–"
    text = f"{value:.{digits}f}"
    return text.removeprefix("-") if float(text) == 0 else text


def p_text(p: float | None) -> str:
    """The paper's way of writing p: "p < 0.001" below a thousandth, else three decimals."""
    if p is None:
        return "p undefined"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


P_METHOD_WORDS = {"exact": "exact", "asymptotic": "normal approx."}


def p_method_text(method: str | None) -> str:
    """How a Kendall p was computed, in words (issue 25, eighth review: the page said only that p "can be of
    different kinds"): "exact" or "normal approx." (tie-corrected); "" where p is undefined."""
    return P_METHOD_WORDS.get(method or "", "")


def p_with_method(p: float | None, method: str | None) -> str:
    """A Kendall p with its kind, as table 2 and the scatter legends write it: "p = 0.333 (exact)"."""
    kind = p_method_text(method)
    return f"{p_text(p)} ({kind})" if kind and p is not None else p_text(p)


def p_cell(p: float | None) -> str:
    """p in a column headed "p": "0.022", "< 0.001", "undefined" (issue 25 review, C9: not "p = " again)."""
    return p_text(p).removeprefix("p = ").removeprefix("p ")


def stars(p: float | None) -> str:
    if p is None:
        return ""
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < SIGNIFICANCE else ""


def pool_label(pool: str, labels: dict[str, str] | None = None) -> str:
    """What a reader sees of a pool: its label ("gpt-4 · T=0.7 · variant explain") when known, else its key."""
    if labels and pool in labels:
        return labels[pool]
    return HUMAN_LABEL if pool == HUMAN else pool


# What the "all individual ratings" unit assumes (issue 25 review: the same contrast was p = 0.095 on item means,
# p < 0.001 on ratings): every sentence on that unit that gives a p says so (a withheld test's gives none, so no
# warning; issue 25, ninth review: docs/analysis.md says exactly that).
RATINGS_UNIT_WARNING = ("all individual ratings, treated as independent though ratings of one item or one rater "
                        "are not: this p is optimistic")
RATINGS_UNIT_HEADING = RATINGS_UNIT_WARNING.replace("this p is", "its p-values are")  # the report's Welch heading


# A score's name in words, never its key (issue 25 review: "scoring neg_rmse" in the verdict's heading, and in the
# alt-test plan's page and command). The pages (a template filter), the plan and the command all ask this function.
SCORING_WORDS = {
    "neg_rmse": "negative RMSE against the other raters (higher = closer; 0 = identical)",
    "accuracy": "accuracy against the other raters (the share who gave the same label; higher = closer)",
}


def scoring_words(scoring: str | None) -> str:
    """The words for a scoring key ("neg_rmse", "accuracy"); an unknown key passes as it is."""
    return SCORING_WORDS.get(scoring or "", scoring or "")


# A ceiling's dot is the mean over the rater's items of the per-item score (stats.ceiling; fifth review, U5: an RMSE
# over all the rater's ratings differs), so its axis and heading say so.
CEILING_AXIS_HEAD = "mean over items of the per-item"
CEILING_SCORES = {"neg_rmse": f"{CEILING_AXIS_HEAD} negative RMSE against the other raters, higher = closer",
                  "accuracy": f"{CEILING_AXIS_HEAD} accuracy against the other raters"}


def welch_n_text(row: WelchRow) -> str:
    """The n of each side and its unit, e.g. 'n = 3 “human” and 3 “gpt2” items' (issue 25 review, U3: d stood
    without the n it rests on)."""
    # On all individual ratings an LLM pool's n counts its samples' answers (review 15: "9 ratings" were answers).
    unit = "item" if row.test.unit == "item means" else "rating" if row.pool == HUMAN else "answer"
    plural = "" if row.test.n_a == row.test.n_b == 1 else "s"
    return f"n = {row.test.n_a} “{row.group_a}” and {row.test.n_b} “{row.group_b}” {unit}{plural}"


def welch_d_text(row: WelchRow) -> str:
    """Cohen's d with its sign as the table gives it (group_a - group_b), the SD it divides by and the n of each side,
    e.g. 'd = -0.79, “human” − “gpt2” over the pooled SD of the item means; n = 3 “human” and 3 “gpt2” items'
    (sentences name the higher group first; the sign keeps the table's direction)."""
    d = row.test.cohens_d
    if d is None:
        return f"d undefined; {welch_n_text(row)}"
    unit = "item means" if row.test.unit == "item means" else "individual ratings"
    return f"d = {fmt(d)}, “{row.group_a}” − “{row.group_b}” over the pooled SD of the {unit}; {welch_n_text(row)}"


def welch_sentence(row: WelchRow, labels: dict[str, str] | None = None) -> str:
    """e.g. 'Human raters prefer the group “human” over “gpt2” on cohesiveness (4.29 vs 3.19, p < 0.001,
    d = 1.52, “human” − “gpt2” over the pooled SD of the item means).'

    Groups are quoted, so that the pool "Human raters" and a group named "human" cannot be read as one. The means
    quoted are those the test compared (of item means, or of all ratings); Cohen's d is given with its sign (as the
    table) whether or not the difference is significant. The verdict and the p quoted are Benjamini-Hochberg
    adjusted over the analysis's Welch contrasts (``p_adjusted``) when there is one. On all individual ratings a
    sentence that gives a p warns that it is optimistic. A test withheld by trust_notes (too few items, a side with
    no variation) gives its means and the note, never its p or d, and so no warning about a p.
    """
    if withheld := welch_withheld(row):
        # As the agreement statistics withhold theirs (issue 25 review, M1): the means, and why no p, d or star.
        return (f"{pool_label(row.pool, labels)}: the groups “{row.group_a}” and “{row.group_b}” on {row.question} "
                f"({fmt(row.mean_a)} vs {fmt(row.mean_b)}; {welch_n_text(row)}): no test is reported, {withheld} "
                "(t, p and Cohen's d are in the JSON, with this note).")
    if row.p_adjusted is not None:
        return _welch_sentence(row, row.p_adjusted, labels).replace("p = ", "BH-adjusted p = ").replace(
            "p < ", "BH-adjusted p < ")
    return _welch_sentence(row, row.test.p, labels)


def _welch_sentence(row: WelchRow, p: float | None, labels: dict[str, str] | None = None) -> str:
    who = pool_label(row.pool, labels)
    prefer, show = ("prefer", "show") if row.pool == HUMAN else ("prefers", "shows")
    a, b, q = f"“{row.group_a}”", f"“{row.group_b}”", row.question
    mean_a, mean_b = row.mean_a, row.mean_b
    if p is None:
        reason = next(iter(row.notes.values()), "undefined")
        return f"{who}: the groups {a} vs {b} on {q} cannot be tested ({reason})."
    mean_diff = row.test.mean_diff or 0.0  # defined wherever p is
    quoted = f"{fmt(mean_a)} vs {fmt(mean_b)}" if mean_diff >= 0 else f"{fmt(mean_b)} vs {fmt(mean_a)}"
    unit = "" if row.test.unit == "item means" else f"; {RATINGS_UNIT_WARNING}"
    if p < SIGNIFICANCE:
        high, low = (a, b) if mean_diff > 0 else (b, a)
        return (f"{who} {prefer} the group {high} over {low} on {q} ({quoted}, {p_text(p)}, "
                f"{welch_d_text(row)}{unit}).")
    # The means in the order the groups are named (issue 25 review: "between human and gpt2 (4.00 vs 2.00)"
    # quoted gpt2's mean first).
    return (f"{who} {show} no significant preference between the groups {a} and {b} on {q} "
            f"({fmt(mean_a)} vs {fmt(mean_b)}, {p_text(p)}, {welch_d_text(row)}{unit}).")


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = lambda r: "  ".join(str(v).ljust(w) for v, w in zip(r, widths, strict=True)).rstrip()  # noqa: E731
    return "\n".join([line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def text_report(result: AnalysisResult) -> str:
    """The paper's tables as aligned plain text: pools as rows, question x group as columns."""
    labels = result.pool_labels()
    out = _header_lines(result, labels)
    if caveat := pooled_groups_caveat(result):  # sixth review, M2: once, before any pooled value
        out += ["", f"Caveat: {caveat}."]
    out += _cell_tables(result, labels)
    out += _paper_tables(result, labels)
    out += _rater_mean_lines(result, labels)
    out += _ablation_lines(result.ablations)
    out += alt_test_report(result.alt_test, labels, pooled=bool(pooled_groups_caveat(result)))
    out += _evidence_lines(result)
    out += _position_lines(result.position_bias, labels)
    out += _ppi_lines(result, labels)
    for table, reason in (result.not_computed or {}).items():
        out += ["", f"== {table}: not computed ({reason})"]
    notes = note_lines(result)  # the dashboard's Notes, line for line
    if notes:
        out += ["", "== Notes: undefined values, and values that rest on part of the data",
                *notes[:MAX_NOTE_LINES]]
        if len(notes) > MAX_NOTE_LINES:
            out.append(f"... and {len(notes) - MAX_NOTE_LINES} more (see --format json)")
    return "\n".join(out) + "\n"


def _header_lines(result: AnalysisResult, labels: dict[str, str]) -> list[str]:
    study = result.study

    def counts(pool: PoolSummary) -> str:
        if pool.kind != "llm":
            return ""
        words = {READ_BY_PERSON: "read by a person", "error": "errors"}  # read: among the ok ones, counted apart
        # Refused, unparseable, errors and pending always, as the page's pools table (fourth review, U5; review 17:
        # errors and pending were left out), 0 included.
        shown = {"refused": 0, "unparseable": 0, "error": 0, "pending": 0, **pool.status_counts}
        return "".join(f", {words.get(k, k)} {v}" for k, v in sorted(shown.items()) if k != "ok")

    scale = f"scale {study.scale.min}-{study.scale.max}"
    return [f"Study {study.slug}: {study.title} ({_count(study.n_items, 'item')}, {scale})",
            "", "Pools: " + "; ".join(f"{labels[p.name]} ({pool_size(p)}{counts(p)})" for p in result.pools)]


def pool_size(pool: PoolSummary) -> str:
    """A pool's raters and ratings in the glossary's words (docs/analysis.md): an LLM pool's samples are samples,
    and its ratings count item x questions, each made of the samples' answers."""
    if pool.kind != "llm":
        return f"{_count(pool.n_raters, 'rater')}, {_count(pool.n_ratings, 'rating')}"
    return (f"{_count(pool.n_raters, 'sample')}; {_count(pool.n_item_questions, 'item × question rating')}, "
            f"{_count(pool.n_ratings, 'answer')}")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"




def _cell_tables(result: AnalysisResult, labels: dict[str, str]) -> list[str]:
    """Table 1 per question: mean (std) on one line, alpha with its interval and full agreement (and its share) on
    the next, the cell's n on the third, in the dashboard's words (``trust_notes``; issue 25, ninth review)."""
    study = result.study
    groups = sorted({c.group for c in result.cells},
                    key=lambda g: (g == ALL_GROUPS, study.groups.index(g) if g in study.groups else 0))
    cells = {(c.question, c.group, c.pool): c for c in result.cells}
    level = result.settings.ci_level
    pooled = pooled_groups_caveat(result)
    likert = result.settings.measurement != "nominal"
    out: list[str] = ["", TABLE1_COUNTS, *([TABLE1_ICC] if likert else [])] if study.questions else []
    for question in study.questions:
        interval = alpha_interval_head([c for c in result.cells if c.question == question], level)
        # "/ ICC(1)" only where a cell shows one (review 17: the heading named it over 16 withheld alphas).
        icc = any(_icc_text(c, result.settings.measurement, ("alpha", f"alpha.{level}"))
                  for c in result.cells if c.question == question)
        out += ["", f"== {question}: mean (std) / Krippendorff's alpha ({level}) {interval} / full agreement %"
                    f"{' / ICC(1)' if icc else ''} / items, ratings"]
        rows = []
        for pool in result.pools:
            line1, line2, line3 = [labels[pool.name]], [""], [""]
            samples = pool.n_raters if pool.kind == "llm" else 0
            for group in groups:
                c = cells.get((question, group, pool.name))
                if c is None:
                    line1.append("")
                    line2.append("")
                    line3.append("")
                    continue
                line1.append(f"{fmt(c.mean)} ({fmt(c.std)})")
                line3.append(counts_head(c, samples))
                # What the dashboard shows in their place (trust_notes): a note for a withheld alpha, no interval.
                keys = ("alpha", f"alpha.{level}")
                ci_note = interval_note(c.notes, c.alpha_ci95, "alpha_ci95", *keys)
                # A reason is never in brackets, where an interval goes (review: "alpha 0.74 [few items for a
                # bootstrap interval, n = 6]" read as an interval).
                ci_text = "" if ci_note == "–" else f" ({no_ci_text(ci_note)})" if ci_note else \
                    f" [{fmt(c.alpha_ci95[0])}, {fmt(c.alpha_ci95[1])}]" if c.alpha_ci95 else ""
                # Named in full (fourth review, C8: "a=too few items (n = 3) 33%" left "a" to be guessed).
                agreement = "" if c.full_agreement_pct is None else \
                    f", full agreement {c.full_agreement_pct:.0f}% ({agreement_text(c, samples)})"
                line2.append(f"alpha {value_note(c.notes, *keys) or fmt(c.alpha[level])}{ci_text}{agreement}"
                             f"{_icc_text(c, result.settings.measurement, keys)}")
            rows += [line1, line2, line3]
        # Groups by their titles (group “human”, all groups): never bare beside the pool "Human raters".
        out.append(_table(["pool", *(group_title(g, pooled) for g in groups)], rows))
    return out


def _icc_text(cell: CellRow, measurement: str, alpha_keys: tuple[str, str]) -> str:
    """ICC(1) beside alpha, as the dashboard's cell gives it (review 15: the Notes spoke of an ICC the report never
    printed): on Likert studies only, "withheld" on too few items."""
    if measurement == "nominal" or value_note(cell.notes, *alpha_keys):
        return ""
    if cell.notes.get("icc", "").startswith(TOO_FEW):
        return ", ICC(1) withheld"
    return f", ICC(1) {fmt(cell.icc1)}"


def alpha_interval_head(cells: Sequence[CellRow], level: str) -> str:
    """What table 1's heading says of alpha's interval: where one is shown (from ``MIN_INTERVAL_ITEMS`` items), or
    that none is, and why when every cell has too few items (review: "[95% CI]" promised intervals none had)."""
    keys = ("alpha", f"alpha.{level}")
    if any(c.alpha_ci95 and not interval_note(c.notes, c.alpha_ci95, "alpha_ci95", *keys) for c in cells):
        return f"[95% CI where at least {MIN_INTERVAL_ITEMS} items]"
    if all(c.n_items < MIN_INTERVAL_ITEMS for c in cells):
        return f"(no 95% CI: every cell has fewer than {MIN_INTERVAL_ITEMS} items)"
    return "(no 95% CI shown: see the cells' notes)"


def _tau_cells(row: KendallRow) -> list[str]:
    """Tau, p, p's method, items and band as table 2 prints them: a tau withheld on too few items, or undefined, prints
    its note in place of the value, and neither p, its method nor band (as the page)."""
    note = value_note(row.notes, "tau")
    if note:  # withheld, or why tau is undefined (issue 25 review, U1: "– p undefined ... undefined")
        return [note, "–", "–", str(row.n), "–"]
    return [fmt(row.tau, 3), p_cell(row.p), p_method_text(row.p_method) or "–", str(row.n), row.band]


def welch_family_text(size: int) -> str:
    """Which contrasts the Welch tests' "p (BH)" is adjusted over, as the dashboard says it (issue 25 review, U4)."""
    over = f"the {_count(size, 'contrast')}" if size else "every contrast between groups"
    return (f"p (BH): Benjamini-Hochberg adjusted over {over} of this analysis (every question, pool and pair of "
            "groups with a p, whatever the filters show; withheld tests included)")


def _welch_cells(row: WelchRow) -> list[str]:
    """t, df, p (raw), p (BH) and d as the Welch table prints them: a withheld test prints "–" for each (as the
    page); its sentence under the table says why."""
    if welch_withheld(row):  # why: in the sentence under the table (fourth review, U5: not inside the p column)
        return ["–", "–", "–", "–", "–"]
    return [fmt(row.test.t, 3), fmt(row.test.df, 1), p_cell(row.test.p), p_cell(row.p_adjusted),
            fmt(row.test.cohens_d, 2)]


def _paper_tables(result: AnalysisResult, labels: dict[str, str]) -> list[str]:
    """Kendall's tau (table 2), Welch's test with its sentences, the majority table, pairwise tau (table 6); groups
    by their titles (group “human”, all groups, marked as pooled under the pooled caveat), never bare beside the pool
    "Human raters"."""
    out: list[str] = []
    pooled = pooled_groups_caveat(result)
    if result.kendall:
        out += ["", "== Kendall's tau-b: per-item mean of the human raters vs the LLM pool"]
        rows = [[k.question, group_title(k.group, pooled), labels.get(k.pool, k.pool), *_tau_cells(k)]
                for k in result.kendall]
        out.append(_table(["question", "group", "pool", "tau", "p", "p method", "items", "band"], rows))
        out.append(KENDALL_P_METHODS)
    if result.welch:
        # On all ratings the heading warns as the page's table 1 footnote does, whether or not a sentence gives a p
        # (issue 25, ninth review: on 3 items a group every test is withheld, and no sentence warned).
        unit = result.settings.welch_unit
        out += ["", f"== Welch's t-test between groups ({RATINGS_UNIT_HEADING if unit == 'ratings' else unit})"]
        rows = [[w.question, labels.get(w.pool, w.pool), f"“{w.group_a}” vs “{w.group_b}”", *_welch_cells(w),
                 f"{w.test.n_a}/{w.test.n_b}"] for w in result.welch]
        # Both p-values, named: a bare "p" column beside BH-adjusted sentences read as significant where the
        # sentences say not (the second dashboard review).
        n_unit = "items" if result.settings.welch_unit == "item means" else "ratings; an LLM: answers"
        out.append(_table(["question", "pool", "groups", "t", "df", "p (raw)", "p (BH)", "Cohen's d", f"n ({n_unit})"],
                          rows))
        out.append(welch_family_text(result.welch[0].p_family))
        out += [welch_sentence(w, labels) for w in result.welch]
    elif result.settings.measurement != "nominal":
        # Said, not left out (seventh review, U6), in the dashboard's words.
        why = ("this view pools the groups, and Welch's t-test compares one group with another; the report "
               "without --group, or with two groups, gives them") if pooled_groups_caveat(result) else \
            "Welch's t-test compares two groups, and this analysis has no pool with ratings in two"
        out += ["", f"== Welch's t-test between groups: no contrasts: {why}"]
    if result.majority:
        out += ["", "== Pairwise: each pool's majority choice vs the human majority choice"]
        rows = [[m.question, group_title(m.group, pooled), labels.get(m.pool, m.pool), fmt(m.agreement_pct, 1),
                 f"{m.n_agree}/{m.n_items}",
                 str(m.human_no_majority), str(m.pool_no_majority)] for m in result.majority]
        out.append(_table(["question", "group", "pool", "agreement %", "agree/items", "human no majority",
                           "pool no majority"], rows))
    if result.pairwise_kendall:
        out += ["", "== Mean pairwise Kendall's tau among a pool's raters (table 6)"]
        rows = [[r.question, group_title(r.group, pooled), labels.get(r.pool, r.pool),
                 value_note(r.notes, "mean_tau") or fmt(r.mean_tau, 3), _pairs_text(r), str(r.n_items)]
                for r in result.pairwise_kendall]
        out.append(_table(["question", "group", "pool", "mean tau", "pairs", "items"], rows))
        out.append(PAIRWISE_COLUMNS)
    return out


def _rater_mean_lines(result: AnalysisResult, labels: dict[str, str]) -> list[str]:
    """Table 12 as the dashboard shows it (fourth review, U5): one line per (pool, rater), its mean and n per
    question and group, n in its unit ("n = 12 ratings"; an LLM sample's "n = 12 answers")."""
    if not result.rater_means:
        if result.cells and all(c.group == ALL_GROUPS for c in result.cells):  # fifth review, U1: say why
            return ["", "== Per-rater means (table 12): not given for all groups together (each rater's mean is "
                    "per group; run without the group filter to see it)"]
        return []
    columns = list(dict.fromkeys((r.question, r.group) for r in result.rater_means))
    by_rater: dict[tuple[str, str], dict[tuple[str, str], str]] = {}
    llm = set(result.llm_pools())
    for r in result.rater_means:
        # n in its unit, as the dashboard's table 12 (issue 25, ninth review: "n ratings" over an LLM's answers)
        unit = "answer" if r.pool in llm else "rating"
        by_rater.setdefault((r.pool, r.rater), {})[(r.question, r.group)] = \
            f"{fmt(r.mean)} (n = {_count(r.n, unit)})"
    rows = [[labels.get(pool, pool), rater, *(values.get(col, "–") for col in columns)]
            for (pool, rater), values in by_rater.items()]
    return ["", "== Per-rater means (table 12): mean (n) per question / group; n counts a person's ratings, an LLM "
                "sample's answers",
            _table(["pool", "rater", *(f"{q} / {group_title(g)}" for q, g in columns)], rows)]


def _pairs_text(row: PairwiseKendallRow) -> str:
    """Table 6's pairs as the page gives them: "1 of 3" when some pairs' tau is undefined (fourth review, U5)."""
    note = row.notes.get("n_pairs", "")
    return note.split(" pairs")[0] if " of " in note.split(";")[0] else str(row.n_pairs)


def _ablation_lines(tables: Sequence[AblationTable]) -> list[str]:
    out: list[str] = []
    for table in tables:
        runs = ", ".join(map(str, table.runs))
        out += ["", f"== Per-rater methods side by side (CINEMETRIC tables 1-2): runs {runs}, "
                    "on the (rater, item) pairs every run predicts"]
        rows = [[r.question, r.label, str(r.run), str(r.n_raters), str(r.n_items), str(r.n_missing),
                 fmt(r.accuracy, 3), fmt(r.mae, 3), fmt(r.rater_accuracy, 3), fmt(r.rater_mae, 3)]
                for r in table.rows]
        out.append(_table(["question", "method", "run", "raters", "pairs scored", "missing", "accuracy", "MAE",
                           "rater-mean accuracy", "rater-mean MAE"], rows))
    return out


def _position_lines(rows: Sequence[PositionRow], labels: dict[str, str]) -> list[str]:
    """Issue 19: pairwise judges run with a swap share."""
    if not rows:
        return []
    table = [[r.question, labels.get(r.pool, r.pool), str(r.n_pairs),
              f"{fmt(r.flip_rate, 2)} [{fmt(r.flip_ci95_low, 2)}, {fmt(r.flip_ci95_high, 2)}]",
              f"{fmt(r.first_position_share, 2)} [{fmt(r.first_position_ci95_low, 2)}, "
              f"{fmt(r.first_position_ci95_high, 2)}]", "; ".join(r.notes)] for r in rows]
    return ["", "== Position bias: choices with A and B swapped (flip rate, first-position share; 95% Wilson CI)",
            _table(["question", "pool", "pairs", "flip rate", "first position", "note"], table)]


def _ppi_lines(result: AnalysisResult, labels: dict[str, str]) -> list[str]:
    """Issue 27: the human means with each judge's help (docs/analysis.md), or why there are none."""
    if result.ppi is None or result.ppi_differences is None:
        return ["", f"== Prediction-powered inference: no PPI figure ({result.ppi_note})"]
    pooled = pooled_groups_caveat(result)
    means = [[r.question, group_title(r.group, pooled), labels.get(r.pool, r.pool),
              f"{fmt(r.humans_only_estimate)} [{fmt(r.humans_only_ci_low)}, {fmt(r.humans_only_ci_high)}]",
              f"{fmt(r.estimate)} [{fmt(r.ci_low)}, {fmt(r.ci_high)}]", fmt(r.lam), f"{r.n_labelled}/{r.n_unlabelled}",
              fmt(r.effective_n, 1), "; ".join(r.notes.values())] for r in result.ppi]
    differences = [[d.question, f"“{d.groups[0]}” − “{d.groups[1]}”", labels.get(d.pool, d.pool),
                    f"{fmt(d.difference)} [{fmt(d.ci_low)}, {fmt(d.ci_high)}]", p_cell(d.p),
                    "; ".join(d.notes.values())] for d in result.ppi_differences]
    return ["", "== Prediction-powered inference: human means with the judge's help (95% CI; the human-rated items "
                "are a random subset)",
            _table(["question", "group", "judge", "humans only", "PPI++", "lambda", "rated/judge only", "effective n",
                    "note"], means),
            "", _table(["question", "groups", "judge", "PPI++ difference", "p", "note"], differences)]


ALL_QUESTIONS_TEXT = (f'question "{ALL_QUESTIONS}" (here and in the alt_test CSV): every question together, the '
                      "rows that pool the study's questions: every (item, question) pair is its own instance, as the "
                      "authors pool their datasets' aspects (docs/alt-test.md)")


def alt_test_report(rows: Sequence[AltTestRow], labels: dict[str, str] | None = None, pooled: bool = False
                    ) -> list[str]:
    """The alternative annotator test as text lines: one line per row, then the per-human table and notes;
    pools by their labels, groups by their titles (``pooled``: the report shows the pooled-groups caveat)."""
    if not rows:
        return []
    first = rows[0].test
    out = ["", f"== Alternative annotator test: may the LLM pool replace the human raters? "
               f"(scoring: {scoring_words(first.scoring)}; epsilon {first.epsilon}, "
               f"Benjamini-Yekutieli at a false discovery rate q {first.q_fdr})"]
    table = [[r.question, group_title(r.group, pooled), pool_label(r.pool, labels), str(r.test.n_instances),
              fmt(r.test.winning_rate), fmt(r.test.advantage_probability), verdict_word(r.test.passed),
              str(sum(h.rejected for h in r.test.humans)) + "/" + str(len(r.test.humans))] for r in rows]
    # Each column said under the table, in the dashboard's words (_verdict.html; review: "omega", "rho" and
    # "beat/tested" were explained nowhere in the report).
    header = ["question", "group", "pool", "judge ratings used", "omega", "rho", "verdict", "beat/tested"]
    out += [_table(header, table), ALT_TEST_COLUMNS]
    if any(r.question == ALL_QUESTIONS for r in rows):  # said once (issue 25, eighth review), in alt-test.md's words
        out.append(ALL_QUESTIONS_TEXT)
    humans = [[r.question, group_title(r.group, pooled), pool_label(r.pool, labels), h.rater, str(h.n),
               p_cell(h.p), "yes" if h.rejected else "no",
               fmt(h.advantage)] for r in rows for h in r.test.humans]
    if humans:
        out += ["", "Per human: the one-sided t-test of d = W_h - W_llm against epsilon, and rho_j = mean(W_llm)"]
        out.append(_table(["question", "group", "pool", "rater", "usable ratings", "p", "beaten", "rho_j"],
                          humans[:200]))
        if len(humans) > 200:  # a crowd study has thousands of raters: the JSON and CSV have them all
            out.append(f"... and {len(humans) - 200} more (see --format json or the alt_test CSV table)")
    notes = [f"{r.question} / {group_title(r.group, pooled)} / {pool_label(r.pool, labels)}: {note}"
             for r in rows for note in r.test.notes]
    if notes:
        out += ["", "Alt-test notes:", *notes[:50]]
        if len(notes) > 50:
            out.append(f"... and {len(notes) - 50} more (see --format json)")
    return out


def verdict_word(passed: bool | None) -> str:
    return "no verdict" if passed is None else "passes" if passed else "cannot yet"


def _kappa_ci(k: KappaRow) -> str:
    """The kappa interval as the dashboard shows it: the note in its place when withheld or of width 0."""
    note = interval_note(k.notes, k.ci95, "ci95", "kappa")
    if note or k.ci95 is None:
        return no_ci_text(note) if note and note != "–" else "–"
    return f"[{fmt(k.ci95[0], 3)}, {fmt(k.ci95[1], 3)}]"


def _kappa_p(k: KappaRow) -> str:
    """A per-rater kappa's "p (BH)" cell as the page shows it: "–" when kappa is withheld (issue 25 review, C5)."""
    if k.against != "rater":
        return "–"  # Fleiss' kappa and kappa vs the majority are not tested (fourth review, C4: never blank)
    if value_note(k.notes, "kappa"):
        return "–"
    if k.p_adjusted is None:
        return p_adjusted_note(k.notes) or "–"
    return p_cell(k.p_adjusted) + stars(k.p_adjusted)




# Whom a kappa row compares with, in the dashboard's words (review 19: "raters" beside the pool "Human raters").
KAPPA_AGAINST = {"majority": "human majority", "raters": "Fleiss' kappa among the human raters"}


def _evidence_lines(result: AnalysisResult) -> list[str]:
    """Issue 19: kappa, the confusion matrices and the human ceiling as plain text, pools by their labels."""
    out: list[str] = []
    labels = result.pool_labels()
    pooled = pooled_groups_caveat(result)
    if result.kappa:
        out += ["", "== Cohen's kappa of each LLM pool (vs the human majority, vs each rater; BH-adjusted p) "
                    "and Fleiss' kappa among the human raters"]
        rows = [[k.question, group_title(k.group, pooled), pool_label(k.pool, labels),
                 KAPPA_AGAINST.get(k.against, k.against) if k.rater is None else f"rater {k.rater}",
                 k.weights, value_note(k.notes, "kappa") or fmt(k.kappa, 3), _kappa_ci(k), str(k.n_items),
                 str(k.n_tied) if k.against == "majority" else "–",  # only the human majority can tie
                 _kappa_p(k)] for k in result.kappa]
        out.append(_table(["question", "group", "pool", "against", "weights", "kappa", "95% CI", "items",
                           "tied (left out)", "p (BH)"], rows))
        out.append(f"{KAPPA_COLUMNS}. {POOL_LABEL_RULE}")
    for c in result.confusion:
        out += ["", f"== Confusion: {c.question} / {group_title(c.group, pooled)} / {pool_label(c.pool, labels)} "
                    f"(rows: human majority, columns: pool; {_count(c.n_items, 'item')}, {c.n_tied} tied left out)"]
        out.append(_table(["human \\ pool", *c.labels],
                          [[label, *map(str, counts)] for label, counts in zip(c.labels, c.counts, strict=True)]))
    for ceiling in result.ceiling:
        score = CEILING_SCORES.get(ceiling.scoring or "", ceiling.scoring or "")
        head = f"== Human ceiling ({score}): {ceiling.question} / " \
               f"{group_title(ceiling.group, pooled)} / {pool_label(ceiling.pool, labels)}"
        withheld = ceiling_withheld(ceiling)
        summary = ceiling.summary or (f"withheld, {withheld}" if withheld else "")
        out += ["", head + (f": {summary}" if summary else "")]
        # A withheld ceiling prints neither its values nor its per-rater "better", as the page greys them as "not a
        # result" (issue 25 review, C9); the JSON keeps them.
        # With their 95 % t intervals, which the summary's "a point comparison: see the intervals" points at
        # (seventh review, U4).
        rows = [[r.rater, str(r.n_items), *(["withheld"] * 5 if withheld else [
                 fmt(r.rater_score, 3), t_interval_text(r.rater_ci95),
                 fmt(r.judge_score, 3), t_interval_text(r.judge_ci95),
                 {None: "", True: "yes", False: "no"}[r.judge_better]])]
                for r in ceiling.raters]
        if rows:
            out.append(_table(["rater", "items", "rater vs others", "95% CI", "judge vs the same others", "95% CI",
                               "judge better"], rows))
        out += [f"note: {n}" for n in ceiling.notes]
    return out


def t_interval_text(ci: Interval | None) -> str:
    """A ceiling score's 95 % t interval as the report prints it; "width 0" where it has none to report."""
    if ci is None:
        return "–"
    return "width 0" if zero_width(ci) else f"[{fmt(ci[0], 3)}, {fmt(ci[1], 3)}]"
