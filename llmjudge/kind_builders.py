"""Issue 6's judge kinds in the pipeline: which rating rows a run creates, the steps asked before the
ratings (persona characters, panel roles), and the prompt builders registered in ``prompts.BUILDERS``.

Prompt texts, parsers and aggregation are the pure functions of ``llmjudge/kinds``; this module only
reads the database and hands them plain values. Rules kept from issue 4:

- a rating is one ``LLMRating`` row asked through the engine (same backends, limits, retries and
  exactly-once writes). Personalized and persona rows carry the human rater they predict
  (``target_rater``); a persona row's ``sample`` is the index of the character that role-plays it,
  and the prediction for the rater is the majority vote over those samples (``persona_vote``);
- a call that is not a rating (``propose``, ``verify``, ``roles``) is one ``JudgeCall`` row, unique
  per (run, step, key), asked only while it has no stored answer: a rerun fills only what is missing.
"""

from __future__ import annotations

import functools
import hashlib
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import asdict
from typing import Any

from django.utils import timezone

from annotations.models import HumanRating, Item, Question, Study
from llmjudge.config import JudgeConfig
from llmjudge.kinds import persona, personalized, roleplay, rubric
from llmjudge.kinds.options import (
    KindOptions,
    PersonalizedOptions,
    PersonaOptions,
    RoleplayOptions,
    RubricOptions,
    options_for,
)
from llmjudge.parsing import OK, UNPARSEABLE, ParsedChoice, ParsedScore
from llmjudge.prompts import BUILDERS, Conversation, Turn, choice_score, study_choices

# Judge.options keys read by the backends or the pricing, not by a kind.
BACKEND_OPTION_KEYS = frozenset({"endpoint", "fake_refusal_rate", "fake_latency", "logprobs", "price_per_mtok"})
PER_RATER_KINDS = frozenset({"personalized", "persona"})
Progress = Callable[[], None] | None


class KindError(ValueError):
    """A kind cannot run on this study (too few ratings, no rubric, a scale Prometheus lacks)."""


def kind_options(kind: str, options: dict[str, Any] | None) -> KindOptions | None:
    return options_for(kind, {k: v for k, v in (options or {}).items() if k not in BACKEND_OPTION_KEYS})


def item_text(study: Study, item: Item) -> str:
    """What per-rater and panel prompts show of an item: its one field, or each field under its label."""
    fields = [f for f in (study.item_fields or list(item.fields)) if f in item.fields]
    if len(fields) == 1:
        return str(item.fields[fields[0]])
    return "\n\n".join(_labelled(study, item, fields))


def _labelled(study: Study, item: Item, fields: list[str]) -> list[str]:
    labels = study.field_labels or {}
    return [f"{labels.get(f, f.capitalize())}: {item.fields[f]}" for f in fields]


def pair_fields(study: Study) -> tuple[str, str]:
    if len(study.pair_fields) != 2:
        raise KindError(f"pairwise study {study.slug!r} names no two candidate fields (pair_fields)")
    return study.pair_fields[0], study.pair_fields[1]


def pair_texts(study: Study, item: Item) -> tuple[str, str]:
    """The two candidates of a pairwise item (A, B), from the study's ``pair_fields``."""
    first, second = pair_fields(study)
    return str(item.fields.get(first, "")), str(item.fields.get(second, ""))


def shared_text(study: Study, item: Item) -> str:
    """What a pairwise item shows besides its two candidates (e.g. the prompt), each under its label."""
    names = [f for f in (study.item_fields or list(item.fields)) if f in item.fields and f not in study.pair_fields]
    return "\n".join(_labelled(study, item, names))


def pairwise_criteria(question: Question) -> rubric.Criteria:
    """Prometheus relative grading shows only the rubric's criteria: the question's, else its text."""
    criteria = (question.rubric or {}).get("criteria") if isinstance(question.rubric, dict) else None
    try:
        return rubric.Criteria(question.text.strip() if criteria is None else criteria.strip())
    except (ValueError, AttributeError):
        raise KindError(f"question {question.key!r}: rubric 'criteria' must be a non-empty text") from None


def panel_mode(study: Study, config: JudgeConfig, options: RoleplayOptions) -> str:
    """The study decides a panel's mode (pairwise studies vote, others score); a judge that names the
    other mode explicitly is refused rather than silently switched."""
    mode = "pairwise" if study.is_pairwise else "pointwise"
    if "mode" in (config.options or {}) and options.mode != mode:
        raise KindError(
            f"role-player judge has mode={options.mode}, but study {study.slug!r} is a "
            f"{'pairwise' if study.is_pairwise else 'Likert'} study (needs mode={mode})"
        )
    return mode


# --- the split (personalized, persona) ---------------------------------------------------------


def human_ratings(study: Study) -> dict[int, dict[int, dict[int, tuple[float, str]]]]:
    """rater id -> item id -> question id -> (score, comment); gold items left out as in the analysis."""
    out: dict[int, dict[int, dict[int, tuple[float, str]]]] = defaultdict(lambda: defaultdict(dict))
    rows = HumanRating.objects.filter(rater__study=study, item__kind=Item.Kind.NORMAL).values_list(
        "rater_id", "item_id", "question_id", "score", "comment"
    )
    for rater_id, item_id, question_id, score, comment in rows:
        out[rater_id][item_id][question_id] = (score, comment)
    return out


def rater_demographics(stored: dict[str, Any] | None) -> dict[str, Any]:
    """A rater's demographics as the prompts list them: fields in alphabetical order.

    PostgreSQL's jsonb does not keep the order the rater form or the imported file gave (it puts
    shorter keys first), so that order cannot be kept; sorting makes a prompt, and its hash, the same
    on SQLite and PostgreSQL.
    """
    return dict(sorted((stored or {}).items()))


def run_split(study: Study, kind: str, options: KindOptions | None) -> dict[str, dict[str, list[int]]]:
    """{rater id: {"profile": item ids, "held_out": item ids}} as stored in ``JudgeRun.params``."""
    from annotations.models import Rater

    if isinstance(options, PersonalizedOptions):
        k, seed, n_held = options.profile_size, options.split_seed, options.held_out
    elif isinstance(options, PersonaOptions):
        k, seed, n_held = options.training_examples, options.split_seed, options.held_out
    else:
        raise KindError(f"a {kind} judge has no per-rater split")
    ratings = human_ratings(study)
    if not ratings:
        raise KindError(f"study {study.slug!r} has no human ratings to personalize on")
    try:
        split = personalized.split_profile(
            {r: list(items) for r, items in ratings.items()}, k=k, seed=seed, n_held_out=n_held
        )
    except ValueError as exc:
        # The pure split names raters by id; the researcher knows them by external id.
        names = dict(Rater.objects.filter(pk__in=ratings).values_list("pk", "external_id"))
        message = str(exc)
        for pk, name in names.items():
            message = message.replace(f"{pk} has ", f"rater {name or pk} (id {pk}) has ", 1)
        raise KindError(f"{kind} judge with k={k}: {message}") from None
    return {str(r): {"profile": list(split.profile[r]), "held_out": list(split.held_out[r])} for r in split.profile}


def planned_rows(
    *, study: Study, config: JudgeConfig, items: list[int], questions: list[int]
) -> tuple[list[tuple[int, int, int, int | None]], dict[str, Any]]:
    """Every (item, question, sample, target rater) the run predicts, and what to add to its params."""
    options = kind_options(config.kind, config.options) if config.kind != "plain" else None
    if config.kind in PER_RATER_KINDS and study.is_pairwise:
        raise KindError(f"a {config.kind} judge predicts scores on a scale; study {study.slug!r} is pairwise")
    if config.kind == "rubric" and study.is_pairwise:
        pair_fields(study)
        for question in study.questions.all():
            pairwise_criteria(question)
    elif config.kind == "rubric":
        rubric.check_study_scale((study.scale_min, study.scale_max))
        for question in study.questions.all():
            question_rubric(question)  # fails now, naming the question, rather than per call
    if config.kind == "roleplay":
        assert isinstance(options, RoleplayOptions)
        panel_mode(study, config, options)
    if config.kind not in PER_RATER_KINDS:
        rows = [(i, q, s, None) for i in items for s in range(config.samples) for q in questions]
        return rows, {"kind_options": asdict(options) if options else {}}
    split = run_split(study, config.kind, options)
    ratings = human_ratings(study)
    if isinstance(options, PersonaOptions):
        spec = persona.method(options.method)
        samples = options.characters_used if spec.characters else 1
        if spec.demographics:
            missing = sorted(
                name or str(pk)
                for pk, name, demographics in study.raters.filter(pk__in=[int(r) for r in split]).values_list(
                    "pk", "external_id", "demographics"
                )
                if not demographics
            )
            if missing:
                raise KindError(
                    f"persona judge ({options.method}) needs demographics of every rater; none for: "
                    f"{', '.join(missing)} (rater form or an imported demographics file)"
                )
    else:
        samples = config.samples
    allowed = set(items)
    rows = [
        (item, question, sample, int(rater))
        for rater, parts in split.items()
        for item in parts["held_out"]
        if item in allowed
        for question in questions
        if question in ratings[int(rater)][item]
        for sample in range(samples)
    ]
    return rows, {"kind_options": asdict(options), "split": split}


def question_rubric(question: Question) -> rubric.Rubric:
    if question.rubric:
        try:
            return rubric.Rubric.from_json(question.rubric, default_criteria=question.text)
        except ValueError as exc:
            raise KindError(f"question {question.key!r}: {exc}") from None
    shipped = rubric.shipped_rubrics()
    if question.key in shipped:
        return shipped[question.key]
    raise KindError(f"question {question.key!r} has no rubric (set Question.rubric) and none ships for it")


# --- steps that are not ratings (JudgeCall) ----------------------------------------------------


def _running(run: Any) -> bool:
    from llmjudge.models import JudgeRun

    return JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.Status.RUNNING).exists()


def _execute_calls(
    run: Any, config: JudgeConfig, asks: list[tuple[Any, str, Callable[[str], dict]]], on_progress: Progress = None
) -> str:
    """Ask each (JudgeCall, prompt, parser) through the engine; store answers on rows still pending.

    Returns the fatal error, if any. Runs like a chunk of ratings (``judging._execute``): answers are
    written as they come with ``UPDATE ... WHERE status='pending'``, so two chunks preparing the same
    step store one answer, and a pause or cancel stops new calls within a second, leaving the
    unanswered rows pending for the resume. Nothing is asked once the run is no longer running.
    """
    from llmjudge.judging import _execute
    from llmjudge.models import JudgeCall

    if not asks or not _running(run):
        return ""
    by_id = {call.pk: (call, prompt, parser) for call, prompt, parser in asks}

    def status_only(parser: Callable[[str], dict]) -> Callable[[str], ParsedScore]:
        def parse(text: str) -> ParsedScore:
            parsed = parser(text)
            return ParsedScore(None, parsed.get("status", "ok"), "")

        return parse

    conversations = [
        Conversation(
            turns=[
                Turn(
                    rating_id=call.pk,
                    prompt=prompt,
                    user_text=prompt,
                    parse=status_only(parser),
                    scale=(1, 5),
                    prior_attempts=call.attempts,
                    prior_history=list(call.history or []),
                )
            ],
            chat=False,
            sample=0,
            seed=config.seed,
        )
        for call, prompt, parser in asks
    ]

    def store(results: list[Any]) -> int:
        now = timezone.now()
        written = 0
        for r in results:
            _, _, parser = by_id[r.rating_id]
            parsed = parser(r.raw) if r.status != "error" else {"status": "error", "error": r.rationale}
            written += JudgeCall.objects.filter(pk=r.rating_id, status=JudgeCall.Status.PENDING).update(
                status=parsed.get("status", r.status) if r.status != "error" else "error",
                raw=r.raw,
                prompt=r.prompt,
                prompt_hash=hashlib.sha256(r.prompt.encode("utf-8")).hexdigest(),
                parsed=parsed,
                history=r.history,
                attempts=r.attempts,
                model=r.model,
                latency_ms=r.latency_ms,
                tokens_prompt=r.tokens_prompt,
                tokens_completion=r.tokens_completion,
                updated_at=now,
            )
        return written

    outcome, _ = _execute(run, config, conversations, on_progress, write=store)
    return outcome.fatal


def planned_steps(*, config: JudgeConfig, rows: list[tuple[int, int, int, int | None]]) -> list[tuple[str, str]]:
    """The preparation calls known before any answer: (step, key) of a persona run's first proposal
    round per (rater, question) and of a panel's role call per item. Created with the ratings, so the
    run's progress counts them from the start; later rounds and verifications are added as they arise.
    """
    options = kind_options(config.kind, config.options) if config.kind in ("persona", "roleplay") else None
    if isinstance(options, PersonaOptions) and persona.method(options.method).characters:
        return [("propose", f"{r}:{q}:0") for r, q in sorted({(t, q) for _, q, _, t in rows})]
    if isinstance(options, RoleplayOptions) and options.dynamic_roles:
        return [("roles", str(i)) for i in sorted({i for i, _, _, _ in rows})]
    return []


def steps_create(*, run: Any, steps: Iterable[tuple[str, str]]) -> None:
    """Pending JudgeCall rows for ``steps``; existing ones are kept (unique per run, step and key)."""
    from llmjudge.models import JudgeCall

    version = run.params.get("kind_version", "1")
    JudgeCall.objects.bulk_create(
        [JudgeCall(run=run, step=step, key=key, template_version=version) for step, key in dict.fromkeys(steps)],
        ignore_conflicts=True,
    )


def _calls(run: Any, step: str, keys: Iterable[str]) -> dict[str, Any]:
    """The run's JudgeCall rows of ``step`` for ``keys``, created pending when missing."""
    from llmjudge.models import JudgeCall

    keys = list(dict.fromkeys(keys))
    steps_create(run=run, steps=((step, key) for key in keys))
    return {c.key: c for c in JudgeCall.objects.filter(run=run, step=step, key__in=keys)}


def _todo(calls: dict[str, Any]) -> list[Any]:
    return [c for c in calls.values() if c.status in ("pending", "error")]


def _reset_errors(calls: list[Any]) -> None:
    from llmjudge.models import JudgeCall

    JudgeCall.objects.filter(pk__in=[c.pk for c in calls], status=JudgeCall.Status.ERROR).update(status="pending")


# Persona: characters per (rater, question), proposed and verified in rounds.


def _parse_characters(text: str) -> dict:
    chars = persona.parse_characters(text)
    return {"status": "ok" if chars else "unparseable", "characters": [asdict(c) for c in chars]}


def _parse_verification(text: str) -> dict:
    verdict = persona.parse_verification(text)
    return {"status": "ok" if verdict is not None else "unparseable", "valid": verdict}


def persona_characters(run: Any, rater_id: int, question_id: int) -> list[persona.Character]:
    """The verified characters of one rater and question, from the stored calls (first ones first)."""
    from llmjudge.models import JudgeCall

    options = kind_options("persona", run.params.get("options"))
    assert isinstance(options, PersonaOptions)
    rows = JudgeCall.objects.filter(run=run, key__startswith=f"{rater_id}:{question_id}:")
    proposals = {c.key: c for c in rows if c.step == "propose"}
    verdicts = {c.key: (c.parsed or {}).get("valid") for c in rows if c.step == "verify"}
    chosen: list[persona.Character] = []
    for attempt in range(options.proposal_attempts):
        key = f"{rater_id}:{question_id}:{attempt}"
        call = proposals.get(key)
        if call is None:
            break
        for i, c in enumerate((call.parsed or {}).get("characters", [])[: options.characters_proposed]):
            if verdicts.get(f"{key}:{i}") is True:
                chosen.append(persona.Character(**c))
    return chosen[: options.characters_used]


def _prepare_persona(
    run: Any, config: JudgeConfig, pending: list[tuple[int, int, int]], on_progress: Progress = None
) -> str:
    """Propose and verify characters for every (rater, question) the pending rows need."""
    from llmjudge.models import LLMRating

    options = kind_options("persona", config.options)
    assert isinstance(options, PersonaOptions)
    spec = persona.method(options.method)
    if not spec.characters:
        return ""
    study = run.study
    ratings = human_ratings(study)
    questions = {q.pk: q for q in study.questions.all()}
    items = {i.pk: i for i in study.items.all()}
    raters = {r.pk: r for r in study.raters.all()}
    split = run.params.get("split", {})
    needs = sorted({(rater, question) for _, question, rater in pending})
    # Verify what earlier rounds proposed first: which characters are chosen (and so which one is
    # sample i) must not change because a verification was lost and a later round filled in.
    stored = [f"{r}:{q}:{a}" for r, q in needs for a in range(options.proposal_attempts)]
    if fatal := _verify_proposals(run, config, options, stored, on_progress):
        return fatal
    for attempt in range(options.proposal_attempts):
        if not _running(run):
            return ""  # paused or cancelled: unanswered calls stay pending for the resume
        lacking = [(r, q) for r, q in needs if len(persona_characters(run, r, q)) < options.characters_used]
        if not lacking:
            return ""
        proposals = _calls(run, "propose", (f"{r}:{q}:{attempt}" for r, q in lacking))
        asks = []
        for r, q in lacking:
            call = proposals[f"{r}:{q}:{attempt}"]
            if call.status not in ("pending", "error"):
                continue
            examples = None
            if spec.training_examples:
                examples = [
                    persona.TrainingExample(item_text(study, items[i]), ratings[r][i][q][0])
                    for i in split[str(r)]["profile"]
                    if q in ratings[r][i]
                ] or None
            prompt = persona.character_proposal_prompt(
                demographics=rater_demographics(raters[r].demographics),
                training_examples=examples,
                question=questions[q].text,
                n=options.characters_proposed,
                noun=options.noun,
                noun_plural=options.noun_plural,
            )
            asks.append((call, prompt, _parse_characters))
        _reset_errors([a[0] for a in asks])
        if fatal := _execute_calls(run, config, asks, on_progress):
            return fatal
        if fatal := _verify_proposals(run, config, options, proposals, on_progress):
            return fatal
    if not _running(run):
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
    run: Any, config: JudgeConfig, options: PersonaOptions, keys: Iterable[str], on_progress: Progress = None
) -> str:
    """Ask the missing verifications of the stored proposals among ``keys``; returns a fatal error."""
    from llmjudge.models import JudgeCall

    proposals = JudgeCall.objects.filter(run=run, step="propose", key__in=list(keys))
    characters = [
        (f"{call.key}:{i}", persona.Character(**c))
        for call in proposals
        for i, c in enumerate((call.parsed or {}).get("characters", [])[: options.characters_proposed])
    ]
    if not characters:
        return ""
    verifications = _calls(run, "verify", (k for k, _ in characters))
    asks = [
        (verifications[key], persona.verification_prompt(character), _parse_verification)
        for key, character in characters
        if verifications[key].status in ("pending", "error")
    ]
    _reset_errors([a[0] for a in asks])
    return _execute_calls(run, config, asks, on_progress)


# Role-player panel: dynamic roles per item, de-duplicated with the static ones.


@functools.cache
def _embedder() -> Callable:
    return roleplay.minilm_embedder()


def panel_roles(run: Any, item_id: int) -> list[roleplay.Role]:
    from llmjudge.models import JudgeCall

    options = kind_options("roleplay", run.params.get("options"))
    assert isinstance(options, RoleplayOptions)
    static = roleplay.static_roles(
        {
            "static_roles_preset": options.static_roles_preset,
            **({"static_roles": list(options.static_roles)} if options.static_roles else {}),
        }
    )
    if not options.dynamic_roles:
        return static
    call = JudgeCall.objects.filter(run=run, step="roles", key=str(item_id)).first()
    kept = (call.parsed or {}).get("kept") if call else None
    if kept is None:
        return static
    return [roleplay.Role(**r) for r in kept]


def _prepare_roleplay(
    run: Any, config: JudgeConfig, pending: list[tuple[int, int, int]], on_progress: Progress = None
) -> str:
    options = kind_options("roleplay", config.options)
    assert isinstance(options, RoleplayOptions)
    if not options.dynamic_roles:
        return ""
    study = run.study
    static = panel_roles_static(options)
    calls = _calls(run, "roles", (str(item) for item, _, _ in pending))
    items = {i.pk: i for i in study.items.filter(pk__in=[int(k) for k in calls])}

    def parser(text: str) -> dict:
        found = roleplay.parse_roles(text)
        if not found:
            return {"status": "unparseable", "roles": [], "kept": [asdict(r) for r in static]}
        # The panel finds each role's answer by its name: a generated role named like an earlier one
        # (e.g. a dynamic "Editor" beside the static one) is the same reader and is left out.
        seen = {r.name.casefold() for r in static}
        unique = []
        for role in found:
            if role.name.casefold() not in seen:
                seen.add(role.name.casefold())
                unique.append(role)
        kept = roleplay.dedupe_roles(
            [*static, *unique], eps=options.eps, min_samples=options.min_samples, embed=_embedder()
        )
        return {"status": "ok", "roles": [asdict(r) for r in found], "kept": [asdict(r) for r in kept]}

    asks = []
    for key, call in calls.items():
        if call.status in ("pending", "error"):
            item = items[int(key)]
            context = str(item.fields.get(options.context_field, "")) if options.context_field else ""
            prompt = roleplay.dynamic_roles_prompt(
                item_text(study, item),
                options.dynamic_roles,
                style=options.dynamic_style,
                context=context,
                noun=options.noun,
            )
            asks.append((call, prompt, parser))
    _reset_errors([a[0] for a in asks])
    return _execute_calls(run, config, asks, on_progress)


def panel_roles_static(options: RoleplayOptions) -> list[roleplay.Role]:
    raw: dict[str, Any] = {"static_roles_preset": options.static_roles_preset}
    if options.static_roles:
        raw["static_roles"] = list(options.static_roles)
    return roleplay.static_roles(raw)


def prepare_steps(
    *, run: Any, config: JudgeConfig, pending: list[tuple[int, int, int]], on_progress: Progress = None
) -> str:
    """Ask the steps the pending (item, question, target rater) rows need first; returns a fatal error.

    Stops asking as soon as the run is paused or cancelled (the caller then asks no rating).
    """
    if config.kind == "persona":
        return _prepare_persona(run, config, pending, on_progress)
    if config.kind == "roleplay":
        return _prepare_roleplay(run, config, pending, on_progress)
    return ""


# --- builders ----------------------------------------------------------------------------------


def _turns(
    ratings: dict[int, Any],
    questions: list[Question],
    make: Callable[[Question], tuple[str, Callable]],
    scale: tuple[int, int],
    sample: int,
    seed: int | None,
    *,
    system: str = "",
    with_logprobs: bool = False,
    choices: tuple[str, ...] = (),
) -> list[Conversation]:
    """One single-turn conversation per pending rating. With ``with_logprobs`` the parser ``make``
    returns takes (text, log-probabilities or None) and the backend is asked for them."""
    out = []
    for question in questions:
        rating = ratings.get(question.pk)
        if rating is None or rating.status != "pending":
            continue
        prompt, parse = make(question)
        turn = Turn(
            rating_id=rating.pk,
            prompt=prompt,
            user_text=prompt,
            parse=functools.partial(parse, logprobs=None) if with_logprobs else parse,
            scale=scale,
            prior_attempts=rating.attempts,
            prior_history=list(rating.history or []),
            parse_logprobs=(lambda text, logprobs, parse=parse: parse(text, logprobs=logprobs))
            if with_logprobs
            else None,
            choices=choices,
        )
        out.append(Conversation(turns=[turn], chat=False, sample=sample, seed=seed, system=system))
    return out


class RubricBuilder:
    """Prometheus: absolute grading (one call per item, question and sample), or on a pairwise study
    relative grading of the item's two candidates, the choice stored as the study encodes it.

    On the chat endpoint prometheus-eval's system message for the grading mode goes first
    (``RubricOptions.system_prompt``); the completions endpoint has no system role.
    """

    def conversations(
        self,
        *,
        study: Study,
        config: JudgeConfig,
        item: Item,
        questions: list[Question],
        sample: int,
        ratings: dict[int, Any],
        run: Any = None,
        target_rater_id: int | None = None,
    ) -> list[Conversation]:
        options = kind_options("rubric", config.options)
        assert isinstance(options, RubricOptions)
        mapping = rubric.ItemMapping(options.instruction, options.response, options.reference_field)
        fields = {k: str(v) for k, v in item.fields.items()}
        scale = (study.scale_min, study.scale_max)
        mode = "relative" if study.is_pairwise else "absolute"
        system = ""
        if options.system_prompt and config.options.get("endpoint", "chat") == "chat":
            system = rubric.system_prompt(mode)
        seed = config.sample_seed(sample)
        if study.is_pairwise:
            # The response template names a Likert field ({story}); a pair has its own two.
            instruction, _, reference = rubric.ItemMapping(
                options.instruction, "", options.reference_field
            ).apply(fields)
            response_a, response_b = pair_texts(study, item)

            def relative(question: Question) -> tuple[str, Callable]:
                prompt = rubric.relative_prompt(
                    instruction=instruction,
                    response_a=response_a,
                    response_b=response_b,
                    rubric=pairwise_criteria(question),
                    reference_answer=reference,
                )
                return prompt, lambda text: choice_score(study, rubric.parse_relative(text))

            return _turns(
                ratings, questions, relative, scale, sample, seed, system=system, choices=study_choices(study)
            )
        instruction, response, reference = mapping.apply(fields)

        def make(question: Question) -> tuple[str, Callable]:
            prompt = rubric.absolute_prompt(
                instruction=instruction,
                response=response,
                rubric=question_rubric(question),
                reference_answer=reference,
                version=options.version,
            )
            return prompt, rubric.parse_absolute

        return _turns(ratings, questions, make, scale, sample, seed, system=system)


class PersonalizedBuilder:
    """PERSE: the target rater's profile ratings of the question, then the held-out item."""

    def conversations(
        self,
        *,
        study: Study,
        config: JudgeConfig,
        item: Item,
        questions: list[Question],
        sample: int,
        ratings: dict[int, Any],
        run: Any = None,
        target_rater_id: int | None = None,
    ) -> list[Conversation]:
        options = kind_options("personalized", config.options)
        assert isinstance(options, PersonalizedOptions)
        scale = (study.scale_min, study.scale_max)
        profile_ids = run.params["split"][str(target_rater_id)]["profile"]
        # Only the profile's ratings: a query per conversation stays small on a 1,000-item study.
        human: dict[int, dict[int, tuple[float, str]]] = defaultdict(dict)
        for item_id, question_id, score, comment in HumanRating.objects.filter(
            rater_id=target_rater_id, item_id__in=profile_ids
        ).values_list("item_id", "question_id", "score", "comment"):
            human[item_id][question_id] = (score, comment)
        profile_items = {i.pk: i for i in Item.objects.filter(pk__in=profile_ids)}
        text = item_text(study, item)

        def make(question: Question) -> tuple[str, Callable]:
            profile = [
                personalized.ProfileEntry(
                    item_text(study, profile_items[i]), human[i][question.pk][1], human[i][question.pk][0]
                )
                for i in profile_ids
                if question.pk in human.get(i, {})
            ]
            prompt = personalized.personalized_prompt(
                profile=profile,
                item_text=text,
                question=question.text,
                scale=scale,
                noun=options.noun,
                noun_plural=options.noun_plural,
            )
            return prompt, functools.partial(personalized.parse_personalized, scale=scale)

        return _turns(ratings, questions, make, scale, sample, config.sample_seed(sample))


class PersonaBuilder:
    """CINEMETRIC: sample i is the i-th verified character role-playing the target rater."""

    def conversations(
        self,
        *,
        study: Study,
        config: JudgeConfig,
        item: Item,
        questions: list[Question],
        sample: int,
        ratings: dict[int, Any],
        run: Any = None,
        target_rater_id: int | None = None,
    ) -> list[Conversation]:
        options = kind_options("persona", config.options)
        assert isinstance(options, PersonaOptions)
        spec = persona.method(options.method)
        scale = (study.scale_min, study.scale_max)
        text = item_text(study, item)
        demographics = rater_demographics(study.raters.get(pk=target_rater_id).demographics)

        def make(question: Question) -> tuple[str, Callable]:
            kw: dict[str, Any] = {"item_text": text, "question": question.text, "scale": scale, "noun": options.noun}
            if spec.characters:
                character = persona_characters(run, target_rater_id, question.pk)[sample]  # type: ignore[arg-type]
                prompt = persona.roleplay_prompt(
                    character=character,
                    with_name=spec.with_name,
                    with_reasoning=spec.with_reasoning and bool(character.why),
                    demographics=demographics,
                    **kw,
                )
            elif spec.demographics:
                prompt = persona.personalized_judge_prompt(demographics=demographics, **kw)
            else:
                prompt = persona.plain_judge_prompt(**kw)
            return prompt, functools.partial(persona.parse_answer, scale=scale)

        if spec.characters:
            # Rows whose rater lacks characters were set to error by the preparation.
            ratings = {q: r for q, r in ratings.items() if len(persona_characters(run, target_rater_id, q)) > sample}  # type: ignore[arg-type]
        return _turns(ratings, questions, make, scale, sample, config.sample_seed(sample))


def panel_details(votes: list[roleplay.RoleVote], weighted: bool, note: str = "") -> dict[str, Any]:
    """What the rating's history keeps of a panel answer: each role's vote or score and confidence."""
    details: dict[str, Any] = {
        "panel": [
            {"role": v.role.name, "kind": v.role.kind, "choice": v.choice, "score": v.score, "status": v.status,
             "confidence": v.confidence}
            for v in votes
        ],
        "weighted": weighted,
    }
    if note:
        details["logprobs_note"] = note
    return details


def _panel_votes(
    text: str, roles: list[roleplay.Role], scale: tuple[int, int] | None, logprobs: list[dict[str, Any]] | None
) -> tuple[list[roleplay.RoleVote], list[dict[str, Any]] | None, str]:
    """(the roles' votes, with confidences when usable; the log-probabilities to weigh by or None; a note).

    Tokens that do not spell the answer (a server that post-processed the text) cannot be placed on
    the roles' blocks: the panel then counts every vote as 1 and says so, rather than guessing.
    """
    votes = roleplay.parse_panel(text, roles, scale=scale)
    if logprobs is None:
        return votes, None, ""
    if not logprobs:
        return votes, None, "the backend returned no log-probabilities: one vote per role"
    try:
        return roleplay.with_confidences(votes, logprobs, text=text), logprobs, ""
    except ValueError as exc:
        return votes, None, f"log-probabilities not used ({exc}): one vote per role"


class RoleplayBuilder:
    """DRPE: every kept role answers in one batched prompt. Pointwise (Likert studies): the score is
    the roles' mean; pairwise (pairwise studies): the roles vote A or B and ``aggregate_votes`` picks
    (eq. 4), weighted by each role's confidence from log-probabilities when ``use_logprobs`` is on and
    the backend returns them (eq. 3), else a plain majority. Votes and confidences go to the rating's
    history (``details``) and, readable, to its rationale.
    """

    def conversations(
        self,
        *,
        study: Study,
        config: JudgeConfig,
        item: Item,
        questions: list[Question],
        sample: int,
        ratings: dict[int, Any],
        run: Any = None,
        target_rater_id: int | None = None,
    ) -> list[Conversation]:
        options = kind_options("roleplay", config.options)
        assert isinstance(options, RoleplayOptions)
        mode = panel_mode(study, config, options)
        scale = (study.scale_min, study.scale_max)
        roles = panel_roles(run, item.pk)
        context = str(item.fields.get(options.context_field, "")) if options.context_field else ""
        if mode == "pairwise" and not options.context_field:
            context = shared_text(study, item)
        seed = config.sample_seed(sample)

        def confidence(v: roleplay.RoleVote) -> str:
            return f" (confidence {v.confidence:.3f})" if v.confidence is not None else ""

        def vote_parse(text: str, logprobs: list[dict[str, Any]] | None = None) -> ParsedScore:
            votes, usable, note = _panel_votes(text, roles, None, logprobs)
            result = roleplay.aggregate_votes(votes, usable, text=text)
            weighted = result.weighted
            lines = [f"{v.role.name}: {v.choice or v.status}{confidence(v)}" for v in votes]
            lines.append(
                f"panel: A {result.score_a:.3f} vs B {result.score_b:.3f} -> {result.choice or 'no vote'}"
                f" ({'weighted by log-probability confidence' if weighted else 'one vote per role'})"
            )
            if note:
                lines.append(note)
            details = {**panel_details(votes, weighted, note), "score_a": result.score_a, "score_b": result.score_b,
                       "choice": result.choice}
            parsed = choice_score(study, ParsedChoice(result.choice, OK if result.choice else UNPARSEABLE, ""))
            return ParsedScore(parsed.score, parsed.status, "\n".join(lines) + parsed.rationale, details)

        def score_parse(text: str, logprobs: list[dict[str, Any]] | None = None) -> ParsedScore:
            votes, usable, note = _panel_votes(text, roles, scale, logprobs)
            result = roleplay.aggregate_scores(votes, usable, text=text)
            weighted = result.weighted
            lines = "\n".join(
                f"{v.role.name}: {v.score:g}{confidence(v)}" if v.score is not None else f"{v.role.name}: {v.status}"
                for v in votes
            )
            details = panel_details(votes, weighted, note)
            if result.score is None:
                return ParsedScore(None, "unparseable", lines, details)
            return ParsedScore(result.score, "ok", lines, details)

        parse = vote_parse if mode == "pairwise" else score_parse

        def make(question: Question) -> tuple[str, Callable]:
            if mode == "pairwise":
                item_a, item_b = pair_texts(study, item)
                texts: dict[str, Any] = {"item_a": item_a, "item_b": item_b}
            else:
                texts = {"item": item_text(study, item), "scale": scale}
            prompt = roleplay.panel_prompt(
                roles,
                question=question.text,
                context=context,
                noun=options.noun,
                noun_plural=options.noun_plural,
                **texts,
            )
            return prompt, parse

        return _turns(ratings, questions, make, scale, sample, seed, with_logprobs=options.use_logprobs)


def persona_vote(scores: list[float | None]) -> float | None:
    """A persona prediction: the characters' majority vote in sample order (first breaks ties)."""
    return persona.majority_vote(scores)


BUILDERS.update(
    {
        "rubric": RubricBuilder(),
        "personalized": PersonalizedBuilder(),
        "persona": PersonaBuilder(),
        "roleplay": RoleplayBuilder(),
    }
)
