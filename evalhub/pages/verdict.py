"""The verdict on the dashboard: may each LLM pool replace the human raters? And the study's epsilon form.

``verdict_context`` turns the analysis' ``alt_test`` rows into one card per LLM pool, ranked by the
average advantage probability rho (a pure function). ``study_alt_epsilon`` is the small form view that
sets the study's epsilon: the owner only (staff see other researchers' studies read-only).
"""

from __future__ import annotations

import math
from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotations.models import Study
from annotations.selectors import studies_for_researcher, study_for_researcher
from evalhub.analysis.alt_test_rows import ALL_QUESTIONS
from evalhub.analysis.reading import ALL_GROUPS
from evalhub.analysis.text_report import result_pool_labels
from evalhub.stats.alt_test import EPSILON_GUIDANCE, MIN_INSTANCES_PER_HUMAN


class EpsilonForm(forms.Form):
    epsilon = forms.FloatField(label="ε")

    def clean_epsilon(self) -> float:
        value = self.cleaned_data["epsilon"]
        if not (math.isfinite(value) and 0.0 < value < 1.0):
            raise forms.ValidationError(f"ε must be strictly between 0 and 1, got {value}")
        return value


def may_set_epsilon(*, user: AbstractBaseUser | AnonymousUser, study: Study) -> bool:
    """Whoever may change the study (the one access rule: its owner, a superuser); a read-only viewer may not."""
    return studies_for_researcher(user=user, for_change=True).filter(pk=study.pk).exists()


def study_alt_epsilon_set(*, study: Study, epsilon: float) -> Study:
    """Set the study's alt-test epsilon (0 < epsilon < 1; a check constraint repeats the rule)."""
    if not (math.isfinite(epsilon) and 0.0 < epsilon < 1.0):
        raise ValueError(f"epsilon must be strictly between 0 and 1, got {epsilon}")
    study.alt_epsilon = epsilon
    study.save(update_fields=["alt_epsilon"])
    return study


@login_required
@require_POST
def study_alt_epsilon(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_for_researcher(user=request.user, slug=slug, for_change=True)
    form = EpsilonForm(request.POST)
    if not form.is_valid():
        # A bad value changes nothing and says why in one line (the form's select offers only good ones).
        return HttpResponse(" ".join(form.errors["epsilon"]), status=400, content_type="text/plain; charset=utf-8")
    study_alt_epsilon_set(study=study, epsilon=form.cleaned_data["epsilon"])
    return redirect(reverse("study_dashboard", args=[study.slug]) + "#verdict")


# ---------------------------------------------------------------------------
# Presentation


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _where(row: dict[str, Any], n_groups: int) -> str:
    question = "all questions" if row["question"] == ALL_QUESTIONS else row["question"]
    if n_groups <= 1:
        return question
    group = "all groups" if row["group"] == ALL_GROUPS else f"the {row['group']} items"
    return f"{question}, {group}"


def _headline(row: dict[str, Any], n_groups: int, label: str) -> dict[str, Any]:
    """One verdict sentence for one alt-test row (the pool named by its label), with what would change it."""
    where = _where(row, n_groups)
    humans = row["humans"]
    beaten = [h for h in humans if h["rejected"]]
    numbers = f"ρ = {_fmt(row['advantage_probability'])}, ε = {row['epsilon']:g}"
    change: list[str] = []
    if row["passed"] is None:
        status, text = "none", f"{label}: no verdict yet on {where}"
        missing = [n for n in row["notes"] if "the test needs" in n or "cannot run" in n or "no verdict" in n]
        change = missing or list(row["notes"]) or [
            f"the test needs at least 3 humans with {MIN_INSTANCES_PER_HUMAN} instances each"]
    else:
        passed = bool(row["passed"])
        status = "pass" if passed else "fail"
        verb = "can replace your raters" if passed else "cannot yet replace your raters"
        text = f"{label} {verb} on {where}: it beat {len(beaten)} of {len(humans)} raters, {numbers}"
        if not passed:
            needed = math.ceil(len(humans) / 2)
            not_beaten = [h for h in humans if not h["rejected"]]
            change.append(f"it must beat {needed} of {len(humans)} raters (ω ≥ 0.5); it did not beat "
                          + ", ".join(f"{h['rater']} (ρ_j = {_fmt(h['advantage'])})" for h in not_beaten))
            change.append("a larger ε grants the LLM more advantage for its lower cost; choose it by who your "
                          "raters are (below), not by the result")
    return {"status": status, "text": text, "change": change, "row": row, "beaten": len(beaten),
            "tested": len(humans)}


def verdict_context(result: dict[str, Any], *, can_set_epsilon: bool, epsilon: float) -> dict[str, Any]:
    """The verdict cards, one per LLM pool, ranked by rho (pools without a verdict last)."""
    rows = result.get("alt_test", [])
    n_groups = len({r["group"] for r in rows if r["group"] != ALL_GROUPS})
    multi_question = any(r["question"] == ALL_QUESTIONS for r in rows)
    labels = result_pool_labels(result)
    cards: dict[str, dict[str, Any]] = {}
    for row in rows:
        card = cards.setdefault(row["pool"], {"pool": row["pool"], "label": labels.get(row["pool"], row["pool"]),
                                              "rows": [], "summary": []})
        card["rows"].append(row)
        # The summary pools every question (and every group when the (all) group was asked for).
        if (row["question"] == ALL_QUESTIONS) == multi_question:
            card["summary"].append(row)
    for card in cards.values():
        if any(r["group"] == ALL_GROUPS for r in card["summary"]):
            card["summary"] = [r for r in card["summary"] if r["group"] == ALL_GROUPS]
        card["headlines"] = [_headline(r, n_groups, card["label"]) for r in card["summary"]]
        rhos = [r["advantage_probability"] for r in card["summary"] if r["advantage_probability"] is not None]
        card["rho"] = max(rhos) if rhos else None
        card["status"] = ("pass" if all(h["status"] == "pass" for h in card["headlines"]) else
                          "none" if all(h["status"] == "none" for h in card["headlines"]) else "fail")
    # A pairwise judge that prefers a position beyond its CI (evalhub/analysis/position_rows.py): said on its card.
    for row in result.get("position_bias", []):
        if row["pool"] in cards and (row["prefers_first"] or row["prefers_second"]):
            cards[row["pool"]].setdefault("position_notes", []).extend(row["notes"])
    ranked = sorted(cards.values(), key=lambda c: (c["rho"] is None, -(c["rho"] or 0.0), c["pool"]))
    for rank, card in enumerate(ranked, start=1):
        card["rank"] = rank
    settings = result.get("settings", {}).get("alt_test", {})
    choices = [(g.epsilon, f"{g.epsilon:g} — {g.description}") for g in EPSILON_GUIDANCE]
    if all(not math.isclose(epsilon, value) for value, _ in choices):
        choices.append((epsilon, f"{epsilon:g} — this study's own choice"))
    return {
        "cards": ranked,
        "settings": settings,
        "epsilon": epsilon,
        "analysed_epsilon": settings.get("epsilon", epsilon),
        "guidance": EPSILON_GUIDANCE,
        "choices": [{"value": value, "label": label, "selected": math.isclose(value, epsilon)}
                    for value, label in choices],
        "can_set_epsilon": can_set_epsilon,
        "min_instances": MIN_INSTANCES_PER_HUMAN,
    }
