"""A persona run's preparation: characters per (rater, question), proposed and verified in rounds
(``JudgeCall`` rows ``propose`` and ``verify``), before any rating is asked."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict
from typing import Any

from django.utils import timezone

from annotations.models import Item, Question, Rater, Study
from llmjudge.engine.conversation import RunView
from llmjudge.kinds.common.calls import Ask, Progress, calls_for, execute_calls, reset_errors, run_is_running
from llmjudge.kinds.common.items import human_ratings, item_text, rater_demographics
from llmjudge.kinds.common.option_values import without_backend_keys
from llmjudge.kinds.common.plan import Pending
from llmjudge.kinds.persona import prompts as persona
from llmjudge.kinds.persona.options import PersonaOptions, persona_options
from llmjudge.models import JudgeCall, JudgeRun, LLMRating
from llmjudge.runs.config import JudgeConfig


def _parse_characters(text: str) -> dict[str, Any]:
    chars = persona.parse_characters(text)
    return {"status": "ok" if chars else "unparseable", "characters": [asdict(c) for c in chars]}


def _parse_verification(text: str) -> dict[str, Any]:
    verdict = persona.parse_verification(text)
    return {"status": "ok" if verdict is not None else "unparseable", "valid": verdict}


def persona_characters(run: RunView, rater_id: int, question_id: int) -> list[persona.Character]:
    """The verified characters of one rater and question, from the stored calls (first ones first)."""
    options = persona_options(without_backend_keys(run.params.get("options")))
    rows = JudgeCall.objects.filter(run_id=run.pk, key__startswith=f"{rater_id}:{question_id}:")
    proposals = {c.key: c for c in rows if c.step == "propose"}
    verdicts = {c.key: (c.parsed or {}).get("valid") for c in rows if c.step == "verify"}
    chosen: list[persona.Character] = []
    for attempt in range(options.proposal_attempts):
        key = f"{rater_id}:{question_id}:{attempt}"
        call = proposals.get(key)
        if call is None:
            break
        candidates = [persona.Character(**c) for c in (call.parsed or {}).get("characters", [])]
        candidates = candidates[: options.characters_proposed]
        found = [verdicts.get(f"{key}:{i}") for i in range(len(candidates))]
        chosen += persona.select_characters(candidates, found, n=options.characters_used - len(chosen))
    return chosen


def proposal_prompt(
    *,
    study: Study,
    options: PersonaOptions,
    rater: Rater,
    question: Question,
    split: dict[str, dict[str, list[int]]],
    ratings: dict[int, dict[int, dict[int, tuple[float, str]]]] | None = None,
    items: dict[int, Item] | None = None,
) -> str:
    """The character proposal for one rater and question: the rater's demographics and, when the
    method uses them, the rater's training ratings (``ratings`` and ``items`` save queries in a loop)."""
    examples = None
    if persona.method(options.method).training_examples:
        profile = split[str(rater.pk)]["profile"]
        ratings = human_ratings(study) if ratings is None else ratings
        items = {i.pk: i for i in study.items.filter(pk__in=profile)} if items is None else items
        examples = [
            persona.TrainingExample(item_text(study, items[i]), ratings[rater.pk][i][question.pk][0])
            for i in profile
            if question.pk in ratings[rater.pk][i]
        ] or None
    return persona.character_proposal_prompt(
        demographics=rater_demographics(rater.demographics),
        training_examples=examples,
        question=question.text,
        n=options.characters_proposed,
        noun=options.noun,
        noun_plural=options.noun_plural,
    )


def persona_prepare(
    *, run: JudgeRun, config: JudgeConfig, pending: list[Pending], on_progress: Progress = None
) -> str:
    """Propose and verify characters for every (rater, question) the pending rows need."""
    options = persona_options(without_backend_keys(config.options))
    spec = persona.method(options.method)
    if not spec.characters:
        return ""
    study = run.study
    ratings = human_ratings(study)
    questions = {q.pk: q for q in study.questions.all()}
    items = {i.pk: i for i in study.items.all()}
    raters = {r.pk: r for r in study.raters.all()}
    split = run.params.get("split", {})
    # Every persona row predicts a rater (a per-rater kind): a row without one needs no characters.
    needs = sorted({(rater, question) for _, question, rater in pending if rater is not None})
    # Verify what earlier rounds proposed first: which characters are chosen (and so which one is
    # sample i) must not change because a verification was lost and a later round filled in.
    stored = [f"{r}:{q}:{a}" for r, q in needs for a in range(options.proposal_attempts)]
    if fatal := _verify_proposals(run, config, options, stored, on_progress):
        return fatal
    for attempt in range(options.proposal_attempts):
        if not run_is_running(run):
            return ""  # paused or cancelled: unanswered calls stay pending for the resume
        lacking = [(r, q) for r, q in needs if len(persona_characters(run, r, q)) < options.characters_used]
        if not lacking:
            return ""
        proposals = calls_for(run, "propose", (f"{r}:{q}:{attempt}" for r, q in lacking))
        asks: list[Ask] = []
        for r, q in lacking:
            call = proposals[f"{r}:{q}:{attempt}"]
            if call.status not in ("pending", "error"):
                continue
            prompt = proposal_prompt(
                study=study, options=options, rater=raters[r], question=questions[q], split=split,
                ratings=ratings, items=items,
            )
            asks.append((call, prompt, _parse_characters))
        reset_errors([a[0] for a in asks])
        if fatal := execute_calls(run, config, asks, on_progress):
            return fatal
        if fatal := _verify_proposals(run, config, options, proposals, on_progress):
            return fatal
    if not run_is_running(run):
        return ""  # a round cut short by a pause is not a round that found too few characters
    # Raters still lacking characters after every round: their rows end in error, saying why.
    for r, q in needs:
        found = len(persona_characters(run, r, q))
        if found < options.characters_used:
            LLMRating.objects.filter(run=run, target_rater_id=r, question_id=q, status="pending").update(
                status="error",
                rationale=f"rater {raters[r].external_id or r}: {found} verified character(s) of "
                f"{options.characters_used} needed after {options.proposal_attempts} proposal round(s)",
                updated_at=timezone.now(),
            )
    return ""


def _verify_proposals(
    run: JudgeRun, config: JudgeConfig, options: PersonaOptions, keys: Iterable[str], on_progress: Progress = None
) -> str:
    """Ask the missing verifications of the stored proposals among ``keys``; returns a fatal error."""
    proposals = JudgeCall.objects.filter(run=run, step="propose", key__in=list(keys))
    characters = [
        (f"{call.key}:{i}", persona.Character(**c))
        for call in proposals
        for i, c in enumerate((call.parsed or {}).get("characters", [])[: options.characters_proposed])
    ]
    if not characters:
        return ""
    verifications = calls_for(run, "verify", (k for k, _ in characters))
    asks = [
        (verifications[key], persona.verification_prompt(character), _parse_verification)
        for key, character in characters
        if verifications[key].status in ("pending", "error")
    ]
    reset_errors([a[0] for a in asks])
    return execute_calls(run, config, asks, on_progress)
