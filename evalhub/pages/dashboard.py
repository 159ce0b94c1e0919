"""The researcher's dashboard of a study: the paper's tables and charts, their JSON and CSV.

Views follow the four steps: check access (owner or staff, others get 404), validate the filter form,
call the analysis selector, render. Turning the analysis result into rows and charts is
``dashboard_context``, a pure function.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import render

from annotations.models import Study
from annotations.selectors import study_for_researcher
from evalhub.analysis import ALL_GROUPS, HUMAN, AnalysisOptions, pool_labels, study_analysis_cached
from evalhub.analysis.text_report import SIGNIFICANCE, p_text, pool_label, result_pool_labels, stars, welch_sentence
from evalhub.imports.exports import TABLE_COLUMNS, csv_lines, rating_rows, table_rows
from evalhub.pages import charts
from evalhub.pages.evidence import evidence_context
from evalhub.pages.verdict import may_set_epsilon, verdict_context


class FilterForm(forms.Form):
    run = forms.TypedMultipleChoiceField(coerce=int, required=False, widget=forms.CheckboxSelectMultiple,
                                         label="Judge runs")
    question = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple, label="Questions")
    group = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple, label="Groups")
    welch = forms.ChoiceField(choices=[("items", "per-item means"), ("ratings", "all ratings")], required=False,
                              label="Welch on")

    def __init__(self, data: Any, *, study: Study) -> None:
        super().__init__(data)
        self.fields["run"].choices = [(run_id, label) for run_id, (label, _) in pool_labels(study).items()]
        self.fields["question"].choices = [(k, k) for k in study.questions.values_list("key", flat=True)]
        groups = list(study.groups) or list(study.items.order_by("group").values_list("group", flat=True).distinct())
        self.fields["group"].choices = [(g, g) for g in [*groups, ALL_GROUPS]]

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


@login_required
def study_dashboard(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_for_researcher(user=request.user, slug=slug)
    form = FilterForm(request.GET, study=study)
    if not form.is_valid():
        return render(request, "evalhub/dashboard.html", {"study": study, "form": form}, status=400)
    result = study_analysis_cached(study=study, options=form.options(charts_wanted=True))
    context = {"study": study, "form": form, "query": request.GET.urlencode(), "tables": list(TABLE_COLUMNS),
               **dashboard_context(result),
               "verdict": verdict_context(result, epsilon=study.alt_epsilon,
                                          can_set_epsilon=may_set_epsilon(user=request.user, study=study))}
    return render(request, "evalhub/dashboard.html", context)


@login_required
def study_analysis_json(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_for_researcher(user=request.user, slug=slug)
    options = _options_or_400(request, study, charts_wanted=True)
    if isinstance(options, HttpResponse):
        return options
    return JsonResponse(study_analysis_cached(study=study, options=options), json_dumps_params={"allow_nan": False})


@login_required
def study_ratings_csv(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_for_researcher(user=request.user, slug=slug)
    return _csv_response(csv_lines(rating_rows([study])), f"{study.slug}-ratings.csv")


@login_required
def study_table_csv(request: HttpRequest, slug: str, table: str) -> HttpResponse:
    study = study_for_researcher(user=request.user, slug=slug)
    if table != "all" and table not in TABLE_COLUMNS:
        raise Http404("no such table")
    options = _options_or_400(request, study, charts_wanted=False)
    if isinstance(options, HttpResponse):
        return options
    rows = table_rows(study_analysis_cached(study=study, options=options), None if table == "all" else table)
    return _csv_response(csv_lines(rows), f"{study.slug}-{table}.csv")


def _csv_response(lines: Any, filename: str) -> StreamingHttpResponse:
    response = StreamingHttpResponse(lines, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


# ---------------------------------------------------------------------------
# Presentation


def dashboard_context(result: dict[str, Any]) -> dict[str, Any]:
    """Rows and charts of the dashboard from an analysis result (with charts)."""
    study = result["study"]
    pools = [p["name"] for p in result["pools"]]
    labels = result_pool_labels(result)
    pool_colours = {name: charts.colour(i) for i, name in enumerate(pools)}
    groups = [g for g in [*study["groups"], ALL_GROUPS] if any(c["group"] == g for c in result["cells"])]
    questions = study["questions"]
    columns = [(q, g) for q in questions for g in groups]
    cells = {(c["question"], c["group"], c["pool"]): c for c in result["cells"]}

    # Significant Welch contrasts mark the preferred group's cell, as the paper marks its table 1.
    marks: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    # Issue 19: Benjamini-Hochberg adjusted over the analysis's contrasts (raw p when a cached result lacks it).
    for w in result["welch"]:
        p = w.get("p_adjusted", w["p"])
        if p is not None and p < SIGNIFICANCE:
            high, low = (w["group_a"], w["group_b"]) if w["mean_diff"] > 0 else (w["group_b"], w["group_a"])
            marks[(w["question"], high, w["pool"])].append(f"{stars(p)} over {low} (BH-adjusted {p_text(p)})")

    personal = []
    for entry in result.get("personal", []):
        base = {r["rater"]: r for r in (entry["baseline"] or {}).get("raters", [])}
        rows = [{**r, "base_accuracy": base.get(r["rater"], {}).get("accuracy"),
                 "base_mae": base.get(r["rater"], {}).get("mae")} for r in entry["raters"]]
        personal.append({**entry, "rows": rows})

    table1 = []
    for pool in pools:
        row = []
        for q, g in columns:
            c = cells.get((q, g, pool))
            mark = marks.get((q, g, pool), [])
            row.append({"cell": c, "stars": max((m.split(" ")[0] for m in mark), key=len, default=""),
                        "mark_title": "; ".join(mark)})
        table1.append({"pool": pool, "label": pool_label(pool, labels), "colour": pool_colours[pool], "cells": row})
    level = result["settings"]["ci_level"]
    for row in table1:
        for item in row["cells"]:
            item["alpha"] = item["cell"]["alpha"][level] if item["cell"] else None

    majority = {(m["question"], m["group"], m["pool"]): m for m in result.get("majority", [])}

    kendall = {(k["question"], k["group"], k["pool"]): k for k in result["kendall"]}
    llm_pools = [p["name"] for p in result["pools"] if p["kind"] == "llm"]
    kendall_rows = [{"pool": pool, "label": labels[pool], "colour": pool_colours[pool],
                     "cells": [kendall.get((q, g, pool)) for q, g in columns]} for pool in llm_pools]

    welch = [{"sentence": welch_sentence(w, labels), "significant": w.get("p_adjusted", w["p"]) is not None
              and w.get("p_adjusted", w["p"]) < SIGNIFICANCE,
              "row": w} for w in result["welch"]]

    pairwise = {(r["question"], r["group"], r["pool"]): r for r in result["pairwise_kendall"]}
    pairwise_rows = [{"pool": pool, "label": labels[pool], "cells": [pairwise.get((q, g, pool)) for q, g in columns]}
                     for pool in pools]

    rater_columns = [(q, g) for q, g in columns if g != ALL_GROUPS]
    rater_means: dict[tuple[str, str], dict[tuple[str, str], dict]] = defaultdict(dict)
    for r in result["rater_means"]:
        rater_means[(r["pool"], r["rater"])][(r["question"], r["group"])] = r
    rater_rows = [{"pool": pool, "label": labels.get(pool, pool), "rater": rater,
                   "cells": [values.get(col) for col in rater_columns]}
                  for (pool, rater), values in list(rater_means.items())[:60]]

    return {
        "result": result,
        "pools": result["pools"],
        "personal": personal,
        "ablations": result.get("ablations", []),
        "questions": questions,
        "groups": groups,
        "n_groups": len(groups),
        "columns": columns,
        "table1": table1,
        "kendall_rows": kendall_rows,
        "nominal": result["settings"].get("measurement") == "nominal",
        "not_computed": result.get("not_computed", {}),
        "majority_rows": [{"pool": pool, "label": labels[pool], "colour": pool_colours[pool],
                           "cells": [majority.get((q, g, pool)) for q, g in columns]} for pool in llm_pools]
        if majority else [],
        "welch": welch,
        "pairwise_rows": pairwise_rows,
        "rater_columns": rater_columns,
        "rater_rows": rater_rows,
        "rater_rows_cut": len(rater_means) > 60,
        "distribution_charts": _distribution_charts(result, groups, pool_colours),
        "scatter_charts": _scatter_charts(result, groups, labels),
        "alpha_charts": _alpha_charts(result, groups, pools, pool_colours, labels),
        **evidence_context(result, pool_colours),  # issue 19
        "undefined": sorted({f"{c['question']} / {c['group']} / {labels.get(c['pool'], c['pool'])}: {k} — {v}"
                             for c in result["cells"]
                             for k, v in c["notes"].items()})[:40],
    }


def _distribution_charts(result: dict[str, Any], groups: list[str], pool_colours: dict[str, str]) -> list[dict]:
    by_key: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for d in result.get("distributions", []):
        by_key[(d["question"], d["group"])].append(d)
    out = []
    for question in result["study"]["questions"]:
        row = []
        for group in groups:
            series = [s for s in by_key.get((question, group), []) if s["n"]]
            if not series:
                continue
            row.append(charts.distribution_chart(title=f"{question} · {group}", bins=series[0]["bins"],
                                                 series=series, pool_colours=pool_colours))
        out.append({"question": question, "charts": row})
    return out


def _scatter_charts(result: dict[str, Any], groups: list[str], labels: dict[str, str]) -> list[dict]:
    scale = (result["study"]["scale"]["min"], result["study"]["scale"]["max"])
    kendall = {(k["question"], k["group"], k["pool"]): k for k in result["kendall"]}
    by_key: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for s in result.get("scatter", []):
        if s["group"] != ALL_GROUPS:
            by_key[(s["question"], s["pool"])].append(s)
    group_colours = {g: charts.colour(i + 3) for i, g in enumerate(groups)}
    out = []
    for pool in [p["name"] for p in result["pools"] if p["kind"] == "llm"]:
        row = []
        for question in result["study"]["questions"]:
            series = [{"group": s["group"], "colour": group_colours[s["group"]], "points": s["points"]}
                      for s in by_key.get((question, pool), []) if s["points"]]
            if not series:
                continue
            for entry in series:
                tau = kendall.get((question, entry["group"], pool))
                if tau and tau["tau"] is not None:
                    entry["group"] = f"{entry['group']} (τ {tau['tau']:.2f})"
            row.append(charts.scatter_chart(title=question, scale=scale, series=series,
                                            x_label="human raters: mean per item",
                                            y_label=f"{labels[pool]}: mean per item"))
        if row:
            out.append({"pool": labels[pool], "charts": row})
    return out


def _alpha_charts(result: dict[str, Any], groups: list[str], pools: list[str],
                  pool_colours: dict[str, str], labels: dict[str, str]) -> list[dict]:
    cells = {(c["question"], c["group"], c["pool"]): c for c in result["cells"]}
    level = result["settings"]["ci_level"]
    out = []
    for question in result["study"]["questions"]:
        rows = []
        for group in groups:
            for pool in pools:
                c = cells.get((question, group, pool))
                if c is None or not c["n_ratings"]:
                    continue
                rows.append({"label": f"{group} · {labels[pool] if pool != HUMAN else 'human raters'}",
                             "colour": pool_colours[pool], "alpha": c["alpha"][level], "ci": c["alpha_ci95"],
                             "note": c["notes"].get(f"alpha.{level}", "")})
        if rows:
            out.append({"question": question,
                        "chart": charts.alpha_chart(title=f"{question}: Krippendorff's alpha ({level}), 95% CI",
                                                    rows=rows)})
    return out
