"""The researcher's dashboard of a study: the paper's tables and charts, their JSON and CSV.

Views follow the four steps: check access (owner or staff, others get 404), validate the filter form,
call the analysis selector (or, for the verdict's epsilon, the service), render. Turning the analysis result
into rows and charts is ``dashboard_context``, a pure function; the verdict's cards are ``verdict.py``'s.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.safestring import SafeString
from django.views.decorators.http import require_POST

from annotations.forms import form_field
from annotations.models import Study
from annotations.selectors import counted_items, study_changeable, study_for_researcher
from annotations.studies import study_alt_epsilon_set
from evalhub.analysis import ALL_GROUPS, AnalysisOptions, pool_labels, study_analysis_cached
from evalhub.analysis.result import (
    AnalysisResult,
    CellRow,
    Distribution,
    KendallRow,
    PersonalEntry,
    RaterMeanRow,
    RaterMetrics,
    Scatter,
    WelchRow,
)
from evalhub.analysis.result_json import analysis_json
from evalhub.analysis.text_report import SIGNIFICANCE, p_text, p_with_method, pool_label, stars, welch_sentence
from evalhub.analysis.trust_notes import (
    FEW_FOR_INTERVAL,
    MAX_NOTE_LINES,
    MIN_INTERVAL_ITEMS,
    NO_VARIATION,
    agreement_text,
    counts_text,
    interval_note,
    n_text,
    note_lines,
    pooled_groups_caveat,
    shown_notes,
    value_note,
    welch_withheld,
)
from evalhub.imports.exports import TABLE_COLUMNS, csv_lines, demographic_rows, rating_rows, table_rows
from evalhub.pages import charts, svg
from evalhub.pages.evidence import evidence_context
from evalhub.pages.forms import EpsilonForm
from evalhub.pages.ppi_panel import ppi_context
from evalhub.pages.verdict import verdict_context
from evalhub.templatetags.evalhub_format import group_title, notes_text


class _HasWhere(Protocol):
    """A result row placed by question, group and pool: the tables index their rows by that triple."""

    @property
    def question(self) -> str: ...
    @property
    def group(self) -> str: ...
    @property
    def pool(self) -> str: ...


Keyed = TypeVar("Keyed", bound=_HasWhere)


class FilterForm(forms.Form):
    run = forms.TypedMultipleChoiceField(coerce=int, required=False, widget=forms.CheckboxSelectMultiple,
                                         label="Judge runs (none ticked: every run)")
    question = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple,
                                         label="Questions (none ticked: every question)")
    # Review 13, C: unticked boxes beside a page showing every group; the labels say what none ticked shows.
    group = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple,
                                      label=f"Groups (none ticked: each group on its own; {ALL_GROUPS}: every group "
                                            "pooled)")
    # Issue 25 review: on all ratings, the same contrast went from p = 0.095 to p < 0.001; the option says why.
    welch = forms.ChoiceField(choices=[("items", "per-item means"), ("ratings", "all individual ratings (treated as "
                                                                     "independent: optimistic p)")],
                              required=False, label="Welch on")

    def __init__(self, data: Mapping[str, object], *, study: Study) -> None:
        super().__init__(data)
        runs = [(run_id, label) for run_id, (label, _) in pool_labels(study).items()]
        form_field(self, "run", forms.ChoiceField).choices = runs
        questions = study.questions.values_list("key", flat=True)
        form_field(self, "question", forms.ChoiceField).choices = [(k, k) for k in questions]
        groups = list(study.groups) or list(study.items.order_by("group").values_list("group", flat=True).distinct())
        form_field(self, "group", forms.ChoiceField).choices = [(g, g) for g in [*groups, ALL_GROUPS]]

    def options(self, *, charts_wanted: bool) -> AnalysisOptions:
        data = self.cleaned_data
        return AnalysisOptions(
            runs=tuple(data["run"]) or None,
            questions=tuple(data["question"]) or None,
            groups=tuple(data["group"]) or None,
            welch_unit="ratings" if data.get("welch") == "ratings" else "item means",
            charts=charts_wanted,
        )


def _options_or_400(request: HttpRequest, study: Study, *, charts_wanted: bool) -> AnalysisOptions | HttpResponse:
    form = FilterForm(request.GET, study=study)
    if not form.is_valid():
        return JsonResponse({"errors": form.errors.get_json_data()}, status=400)
    return form.options(charts_wanted=charts_wanted)


def _filter_items(study: Study, options: AnalysisOptions) -> int | None:
    """The counted items in the groups a filter shows (issue 25 fourth review, C6), or None when it shows all."""
    if options.groups is None or ALL_GROUPS in options.groups:
        return None
    return counted_items(study=study).filter(group__in=options.groups).count()


@login_required
def study_dashboard(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_for_researcher(user=request.user, slug=slug)
    form = FilterForm(request.GET, study=study)
    if not form.is_valid():
        return render(request, "evalhub/dashboard.html", {"study": study, "form": form}, status=400)
    options = form.options(charts_wanted=True)
    result = study_analysis_cached(study=study, options=options)
    context = {"study": study, "form": form, "query": request.GET.urlencode(), "tables": list(TABLE_COLUMNS),
               "filter_items": _filter_items(study, options),
               **dashboard_context(result),
               "ppi": ppi_context(result, declared=bool(study.human_subset.get("declared_random"))),
               "verdict": verdict_context(result, epsilon=study.alt_epsilon,
                                          can_set_epsilon=study_changeable(user=request.user, study=study))}
    return render(request, "evalhub/dashboard.html", context)


@login_required
@require_POST
def study_alt_epsilon(request: HttpRequest, slug: str) -> HttpResponse:
    """The verdict's epsilon form: the owner only (staff see other researchers' studies read-only)."""
    study = study_for_researcher(user=request.user, slug=slug, for_change=True)
    form = EpsilonForm(request.POST)
    if not form.is_valid():
        # A bad value changes nothing and says why in one line (the form's select offers only good ones).
        message = " ".join(str(error) for error in form.errors["epsilon"])
        return HttpResponse(message, status=400, content_type="text/plain; charset=utf-8")
    study_alt_epsilon_set(study=study, epsilon=form.cleaned_data["epsilon"])
    return redirect(reverse("study_dashboard", args=[study.slug]) + "#verdict")


@login_required
def study_analysis_json(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_for_researcher(user=request.user, slug=slug)
    options = _options_or_400(request, study, charts_wanted=True)
    if isinstance(options, HttpResponse):
        return options
    return JsonResponse(analysis_json(study_analysis_cached(study=study, options=options)),
                        json_dumps_params={"allow_nan": False})


@login_required
def study_ratings_csv(request: HttpRequest, slug: str) -> HttpResponseBase:
    study = study_for_researcher(user=request.user, slug=slug)
    return _csv_response(csv_lines(rating_rows([study])), f"{study.slug}-ratings.csv")


@login_required
def study_demographics_csv(request: HttpRequest, slug: str) -> HttpResponseBase:
    study = study_for_researcher(user=request.user, slug=slug)
    return _csv_response(csv_lines(demographic_rows(study)), f"{study.slug}-demographics.csv")


@login_required
def study_table_csv(request: HttpRequest, slug: str, table: str) -> HttpResponseBase:
    study = study_for_researcher(user=request.user, slug=slug)
    if table != "all" and table not in TABLE_COLUMNS:
        raise Http404("no such table")
    options = _options_or_400(request, study, charts_wanted=False)
    if isinstance(options, HttpResponse):
        return options
    rows = table_rows(study_analysis_cached(study=study, options=options), None if table == "all" else table)
    return _csv_response(csv_lines(rows), f"{study.slug}-{table}.csv")


def _csv_response(lines: Iterator[str], filename: str) -> StreamingHttpResponse:
    response = StreamingHttpResponse(lines, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


# ---------------------------------------------------------------------------
# Presentation

Row = TypeVar("Row")
Column = tuple[str, str]  # (question, group)


@dataclass(frozen=True)
class PoolRow(Generic[Row]):
    """One pool's line of a table with a column per question x group (None: no row there)."""

    pool: str
    label: str
    colour: str
    cells: tuple[Row, ...]


@dataclass(frozen=True)
class Table1Cell:
    """A cell of table 1, with the stars of the contrasts its group wins."""

    cell: CellRow | None
    alpha: float | None  # at the result's ci_level
    alpha_note: str  # shown in place of alpha: why it is undefined or not to be read ("too few items (n = 2)")
    alpha_ci_note: str  # shown in place of its interval ("withheld: too few items (n = 3)"), "" to show the interval
    notes_text: str  # the notes a reader meets: none on an interval that is withheld (issue 25 review, U8)
    stars: str
    mark_title: str
    counts_text: str = ""  # what n counts and what the mean and std are over (issue 25 third review, U5)
    agreement_text: str = ""  # the share % full agreement is of ("1 of 3 items"; fourth review, U3)
    n_text: str = ""  # the cell's n in the cell, not only in its tooltip (a phone has no hover; fourth review, C3)


@dataclass(frozen=True)
class WelchLine:
    sentence: str
    significant: bool  # the BH-adjusted p is below SIGNIFICANCE, and the test is not withheld
    row: WelchRow
    withheld: str  # trust_notes' note in place of t, p, d and the star, or ""


@dataclass(frozen=True)
class RaterLine:
    pool: str
    label: str
    rater: str
    cells: tuple[RaterMeanRow | None, ...]
    unit: str  # what its n counts: a person's "rating", an LLM sample's "answer" (as table 1 words them)


@dataclass(frozen=True)
class PersonalRow:
    """A predicted rater, beside the plain baseline's scores as predictions of the same rater."""

    metrics: RaterMetrics
    base_accuracy: float | None
    base_mae: float | None


@dataclass(frozen=True)
class PersonalTable:
    entry: PersonalEntry
    rows: tuple[PersonalRow, ...]


@dataclass(frozen=True)
class Charts:
    """A row of charts under one heading (a question, or a pool)."""

    heading: str
    charts: tuple[SafeString, ...]
    text: str = ""  # in place of the charts when they would draw nothing


def _keyed(rows: Iterable[Keyed]) -> dict[tuple[str, str, str], Keyed]:
    return {(r.question, r.group, r.pool): r for r in rows}


def dashboard_context(result: AnalysisResult) -> dict[str, object]:
    """Rows and charts of the dashboard from an analysis result (with charts)."""
    study = result.study
    pools = [p.name for p in result.pools]
    llm_pools = result.llm_pools()
    labels = result.pool_labels()
    pool_colours = {name: svg.colour(i) for i, name in enumerate(pools)}
    groups = [g for g in [*study.groups, ALL_GROUPS] if any(c.group == g for c in result.cells)]
    columns = [(q, g) for q in study.questions for g in groups]
    pooled_caveat = pooled_groups_caveat(result)
    pooled = bool(pooled_caveat)  # every title of all groups says "⚠ pooled" (trust_notes.group_title)

    def pool_rows(rows: Iterable[Keyed], names: list[str]) -> list[PoolRow[Keyed | None]]:
        keyed = _keyed(rows)
        return [PoolRow(pool, labels[pool], pool_colours[pool], tuple(keyed.get((q, g, pool)) for q, g in columns))
                for pool in names]

    rater_columns = [(q, g) for q, g in columns if g != ALL_GROUPS]
    rater_rows, n_raters = _rater_lines(result, rater_columns, labels)
    return {
        "result": result,
        "pooled_caveat": pooled_caveat,
        "pools": result.pools,
        "personal": _personal(result.personal),
        "ablations": result.ablations,
        "questions": study.questions,
        "groups": groups,
        "n_groups": len(groups),
        # Review 15: in a view of some groups and "(all)" the pooled points are drawn nowhere; said, not implied.
        "scatter_pooled": _scatter_pooled_text(study.groups, groups) if pooled else "",
        "columns": columns,
        "table1": _table1(result, columns, labels, pool_colours),
        "kendall_rows": pool_rows(result.kendall, llm_pools),
        "nominal": result.settings.measurement == "nominal",
        "not_computed": result.not_computed or {},
        "majority_rows": pool_rows(result.majority, llm_pools) if result.majority else [],
        "welch": [WelchLine(welch_sentence(w, labels), _starred(w), w, welch_withheld(w)) for w in result.welch],
        # Every Welch row carries the size of the one family it is adjusted in (the whole analysis, unfiltered).
        "welch_family": result.welch[0].p_family if result.welch else 0,
        "welch_reported": any(not welch_withheld(w) for w in result.welch),  # a key to stars only where one can be
        "pairwise_rows": pool_rows(result.pairwise_kendall, pools),
        # Ninth review, U4: why "1 of 3 pairs", visibly (it was in a tooltip and the collapsed Notes only).
        "pairs_left_out": [f"{r.question} / {group_title(r.group)} / {labels.get(r.pool, r.pool)}: "
                           f"{r.notes['n_pairs']}" for r in result.pairwise_kendall
                           if r.notes.get("n_pairs")][:MAX_PAIRS_LINES],
        "max_pairs_lines": MAX_PAIRS_LINES,
        "rater_columns": rater_columns,
        "rater_rows": rater_rows,
        "rater_rows_cut": n_raters > MAX_RATER_ROWS,
        "distribution_charts": _distribution_charts(result, groups, pool_colours, labels, pooled),
        "scatter_charts": _scatter_charts(result, groups, labels, pooled),
        "alpha_charts": _alpha_charts(result, groups, pools, pool_colours, labels, pooled),
        "alpha_ci_withheld": _alpha_ci_withheld(result),
        **evidence_context(result, pool_colours),  # issue 19
        "undefined": note_lines(result)[:MAX_NOTE_LINES],
        "max_notes": MAX_NOTE_LINES,
    }


def _starred(row: WelchRow) -> bool:
    """A contrast that earns a star: its BH-adjusted p is below SIGNIFICANCE and trust_notes does not withhold it
    (issue 25 review, M1: a star on 3 vs 3 items, one side without variation)."""
    return row.p_adjusted is not None and row.p_adjusted < SIGNIFICANCE and not welch_withheld(row)


def _table1(result: AnalysisResult, columns: list[Column], labels: dict[str, str],
            pool_colours: dict[str, str]) -> list[PoolRow[Table1Cell]]:
    """Table 1: each pool's cells; significant Welch contrasts mark the preferred group's cell, as the paper does."""
    marks: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    # Issue 19: Benjamini-Hochberg adjusted over the analysis's contrasts.
    for w in result.welch:
        p = w.p_adjusted
        if p is not None and _starred(w):
            high, low = (w.group_a, w.group_b) if (w.test.mean_diff or 0.0) > 0 else (w.group_b, w.group_a)
            marks[(w.question, high, w.pool)].append(f"{stars(p)} over {low} (BH-adjusted {p_text(p)})")
    cells = _keyed(result.cells)
    level = result.settings.ci_level
    rows = []
    for pool in result.pools:
        row = []
        for q, g in columns:
            c = cells.get((q, g, pool.name))
            mark = marks.get((q, g, pool.name), [])
            row.append(_table1_cell(c, level, mark, samples=pool.n_raters if pool.kind == "llm" else 0))
        rows.append(PoolRow(pool.name, pool_label(pool.name, labels), pool_colours[pool.name], tuple(row)))
    return rows


def _table1_cell(c: CellRow | None, level: str, mark: list[str], *, samples: int) -> Table1Cell:
    keys = ("alpha", f"alpha.{level}")  # too few items, then undefined at the level shown
    note = value_note(c.notes, *keys) if c else ""
    alpha = c.alpha[level] if c else None
    # A withheld alpha's interval is withheld too, and its tooltip says so and why, not how it was bootstrapped.
    ci_note = interval_note(c.notes, c.alpha_ci95, "alpha_ci95", *keys) if c else "–"
    if note:
        ci_note = f"withheld: {note}" if alpha is not None else f"undefined: {note}"
    elif ci_note not in ("", "–"):  # review 16: "α 95% CI few items for ..." read as an interval called "few items"
        ci_note = f"not shown: {ci_note}"
    return Table1Cell(cell=c, alpha=alpha, alpha_note=note, alpha_ci_note=ci_note,
                      notes_text=notes_text(shown_notes(c.notes, ("alpha_ci95",), *keys)) if c else "",
                      stars=max((m.split(" ")[0] for m in mark), key=len, default=""), mark_title="; ".join(mark),
                      counts_text=counts_text(c, samples) if c else "",
                      agreement_text=agreement_text(c, samples) if c else "", n_text=n_text(c, samples) if c else "")


MAX_RATER_ROWS = 60  # the CSV has all
MAX_PAIRS_LINES = 12  # table 6's pairs left out, under it; the Notes have all


def _rater_lines(result: AnalysisResult, columns: list[Column],
                 labels: dict[str, str]) -> tuple[list[RaterLine], int]:
    """Table 12: the first MAX_RATER_ROWS (pool, rater) lines, and how many there are."""
    by_rater: dict[tuple[str, str], dict[Column, RaterMeanRow]] = defaultdict(dict)
    for r in result.rater_means:
        by_rater[(r.pool, r.rater)][(r.question, r.group)] = r
    llm = set(result.llm_pools())
    lines = [RaterLine(pool, labels.get(pool, pool), rater, tuple(values.get(col) for col in columns),
                       "answer" if pool in llm else "rating")
             for (pool, rater), values in list(by_rater.items())[:MAX_RATER_ROWS]]
    return lines, len(by_rater)


def _personal(entries: Sequence[PersonalEntry]) -> list[PersonalTable]:
    tables = []
    for entry in entries:
        base = {m.rater: m for m in entry.baseline.raters} if entry.baseline else {}
        rows = []
        for metrics in entry.raters:
            plain = base.get(metrics.rater)
            rows.append(PersonalRow(metrics, plain.accuracy if plain else None, plain.mae if plain else None))
        tables.append(PersonalTable(entry, tuple(rows)))
    return tables


def _distribution_charts(result: AnalysisResult, groups: list[str], pool_colours: dict[str, str],
                         labels: dict[str, str], pooled: bool) -> list[Charts]:
    by_key: dict[Column, list[Distribution]] = defaultdict(list)
    for d in result.distributions or ():
        by_key[(d.question, d.group)].append(d)
    out = []
    answer_pools = {p.name: p.n_raters for p in result.pools if p.kind == "llm"}
    for question in result.study.questions:
        row = []
        peak = charts.distribution_peak([s for group in groups for s in by_key.get((question, group), [])])
        for group in groups:
            series = [s for s in by_key.get((question, group), []) if s.n]
            if not series:
                continue
            chart = charts.distribution_chart(title=f"{question} · {group_title(group, pooled)}", bins=series[0].bins,
                                              series=series, pool_colours=pool_colours, pool_labels=labels,
                                              answer_pools=answer_pools, peak=peak)
            row.append(charts.distribution_values(chart, bins=series[0].bins, series=series, pool_labels=labels))
        out.append(Charts(question, tuple(row)))
    return out


def _scatter_charts(result: AnalysisResult, groups: list[str], labels: dict[str, str],
                    pooled: bool) -> list[Charts]:
    scale = (result.study.scale.min, result.study.scale.max)
    kendall = _keyed(result.kendall)
    by_key: dict[tuple[str, str], list[Scatter]] = defaultdict(list)
    # One colour per group whatever the view shows (eighth review, U3: "human" orange in one view, purple in
    # another); the pooled items only where no group of theirs is drawn, never over them.
    every = [*result.study.groups, *(g for g in groups if g not in result.study.groups and g != ALL_GROUPS),
             ALL_GROUPS]
    shown = [g for g in groups if g != ALL_GROUPS] or [ALL_GROUPS]
    group_colours = {g: svg.colour(every.index(g) + 3) for g in shown}
    for s in result.scatter or ():
        if s.group in group_colours:
            by_key[(s.question, s.pool)].append(s)
    out = []
    for pool in result.llm_pools():
        row = []
        for question in result.study.questions:
            series = []
            for s in by_key.get((question, pool), []):
                if not s.points:
                    continue
                tau = kendall.get((question, s.group, pool))
                # Here the series are groups (the heading names the pool): named as groups, never bare.
                # With its p and band, as table 2 gives it (issue 25 review: 'group "gpt2" (tau -1.00)' on 3 items,
                # p = 0.333, with no word that it is not significant).
                legend = _scatter_legend(s.group, tau, pooled)
                series.append(charts.ScatterSeries(legend, group_colours[s.group], s.points))
            if not series:
                continue
            row.append(charts.scatter_values(charts.scatter_chart(
                title=question, scale=scale, series=series, x_label="human raters: mean per item",
                y_label=f"{labels[pool]}: mean per item"), series))
        if row:
            out.append(Charts(labels[pool], tuple(row)))
    return out


def _scatter_pooled_text(study_groups: Sequence[str], groups: Sequence[str]) -> str:
    """What the scatter charts say of the all-groups points beside groups of their own (``_scatter_charts`` draws
    the groups shown, never the pooled points over them)."""
    shown = [g for g in groups if g != ALL_GROUPS]
    if not shown:
        return ""
    if set(study_groups) <= set(shown):
        return "All groups together are not drawn over the groups' own bubbles: their points are the same items."
    drawn = f"{', '.join(group_title(g) for g in shown)} {'is' if len(shown) == 1 else 'are'}"
    return (f"All groups together are not drawn: only {drawn}; the other groups' items are in no chart here, and "
            "table 2 gives τ over all groups.")


def _scatter_legend(group: str, tau: KendallRow | None, pooled: bool = False) -> str:
    """A scatter series' legend: the group, and its tau as table 2 gives it (with p, p's kind and band, or the note
    that withholds it on too few items: issue 25 review, U6)."""
    title = group_title(group, pooled)
    if tau is None:
        return title
    if tau.tau is None:  # why, in words, as table 2's cell (issue 25 review, U2: a bare group beside withheld taus)
        return f"{title} (τ undefined: {value_note(tau.notes, 'tau') or 'undefined'})"
    if withheld := value_note(tau.notes, "tau"):
        return f"{title} (τ withheld: {withheld})"
    return f"{title} (τ {tau.tau:.2f}, {p_with_method(tau.p, tau.p_method)}, {tau.band})"


def _alpha_charts(result: AnalysisResult, groups: list[str], pools: list[str],
                  pool_colours: dict[str, str], labels: dict[str, str], pooled: bool) -> list[Charts]:
    cells = _keyed(result.cells)
    level = result.settings.ci_level
    out = []
    for question in result.study.questions:
        rows = []
        for group in groups:
            for pool in pools:
                c = cells.get((question, group, pool))
                if c is None or not c.n_ratings:
                    continue
                # Issue 25: on too few items the value is not drawn, and a zero-width interval is no interval.
                few = c.notes.get("alpha")
                undefined = c.notes.get(f"alpha.{level}")
                ci_note = interval_note(c.notes, c.alpha_ci95, "alpha_ci95", "alpha")
                rows.append(charts.AlphaBar(label=f"{group_title(group, pooled)} · {labels[pool]}",
                                            colour=pool_colours[pool], alpha=None if few else c.alpha[level],
                                            ci=None if ci_note else c.alpha_ci95,
                                            note=few or f"undefined: {undefined}", ci_note=ci_note))
        if rows and all(r.alpha is None for r in rows):
            # Nothing to draw: one line of text, not empty axes with a note on each row (issue 25 fourth review, C1).
            out.append(Charts(question, (), text=_withheld_text(rows)))
        elif rows:
            out.append(Charts(question, (charts.alpha_chart(
                title=f"{question}: Krippendorff's alpha ({level}), 95% CI", rows=rows),)))
    return out


def _alpha_ci_withheld(result: AnalysisResult) -> str:
    """Why the alpha chart's dots without a bar have none, in words: each distinct reason once, or ""."""
    reasons = []
    for c in result.cells:
        note = interval_note(c.notes, c.alpha_ci95, "alpha_ci95", "alpha")
        if note and note != "–" and c.notes.get("alpha_ci95"):
            reason = c.notes["alpha_ci95"].split(":")[0]
            if reason.startswith(FEW_FOR_INTERVAL):
                reason = (f"{FEW_FOR_INTERVAL}: below {MIN_INTERVAL_ITEMS} items its ends move with the "
                          "bootstrap's seed")
            elif reason.startswith(NO_VARIATION):
                reason = f"{NO_VARIATION}: the bootstrap's interval has width 0, which reports no uncertainty"
            if reason not in reasons:
                reasons.append(reason)
    return "; ".join(reasons)


def _withheld_text(rows: Sequence[charts.AlphaBar]) -> str:
    notes = {r.note for r in rows}
    if len(notes) == 1:
        which = "both rows" if len(rows) == 2 else f"all {len(rows)} rows"  # review 14: not "all 2 rows"
        return f"α withheld on {which} (group × pool): {notes.pop()}"
    return "α withheld on every row: " + "; ".join(f"{r.label}: {r.note}" for r in rows)
