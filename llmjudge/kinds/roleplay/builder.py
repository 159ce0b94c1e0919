"""DRPE (role-player panel) judge: every kept role answers in one batched prompt."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict

from annotations.models import Item, Question, Study
from llmjudge.engine.conversation import Conversation, RatingState, RunView
from llmjudge.kinds.common.items import item_text, pair_texts, shared_text
from llmjudge.kinds.common.option_values import without_backend_keys
from llmjudge.kinds.common.turns import pending_turns
from llmjudge.kinds.roleplay.options import roleplay_options
from llmjudge.kinds.roleplay.plan import panel_mode
from llmjudge.kinds.roleplay.preparation import panel_roles
from llmjudge.kinds.roleplay.prompts import panel_prompt
from llmjudge.kinds.roleplay.roles import Role
from llmjudge.kinds.roleplay.votes import RoleVote, aggregate_scores, aggregate_votes, parse_panel, with_confidences
from llmjudge.parsing import OK, UNPARSEABLE, ParsedChoice, ParsedScore
from llmjudge.prompting.study_prompt import choice_score
from llmjudge.runs.config import JudgeConfig


class _PanelTexts(TypedDict, total=False):
    """What a panel prompt shows of the item: a pair (pairwise) or one text and the scale (pointwise)."""

    item_a: str
    item_b: str
    item: str
    scale: tuple[int, int]


def panel_details(votes: list[RoleVote], weighted: bool, note: str = "") -> dict[str, Any]:
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


def panel_votes(
    text: str, roles: list[Role], scale: tuple[int, int] | None, logprobs: list[dict[str, Any]] | None
) -> tuple[list[RoleVote], list[dict[str, Any]] | None, str]:
    """(the roles' votes, with confidences when usable; the log-probabilities to weigh by or None; a note).

    Tokens that do not spell the answer (a server that post-processed the text) cannot be placed on
    the roles' blocks: the panel then counts every vote as 1 and says so, rather than guessing.
    """
    votes = parse_panel(text, roles, scale=scale)
    if logprobs is None:
        return votes, None, ""
    if not logprobs:
        return votes, None, "the backend returned no log-probabilities: one vote per role"
    try:
        return with_confidences(votes, logprobs, text=text), logprobs, ""
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
        ratings: dict[int, RatingState],
        run: RunView | None = None,
        target_rater_id: int | None = None,
    ) -> list[Conversation]:
        assert run is not None  # a panel's roles are the run's (a started run, or the preview's planned one)
        options = roleplay_options(without_backend_keys(config.options))
        mode = panel_mode(study, config, options)
        scale = (study.scale_min, study.scale_max)
        roles = panel_roles(run, item.pk)
        context = str(item.fields.get(options.context_field, "")) if options.context_field else ""
        if mode == "pairwise" and not options.context_field:
            context = shared_text(study, item)
        seed = config.sample_seed(sample)

        def confidence(v: RoleVote) -> str:
            return f" (confidence {v.confidence:.3f})" if v.confidence is not None else ""

        def vote_parse(text: str, logprobs: list[dict[str, Any]] | None = None) -> ParsedScore:
            votes, usable, note = panel_votes(text, roles, None, logprobs)
            result = aggregate_votes(votes, usable, text=text)
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
            votes, usable, note = panel_votes(text, roles, scale, logprobs)
            result = aggregate_scores(votes, usable, text=text)
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
                texts: _PanelTexts = {"item_a": item_a, "item_b": item_b}
            else:
                texts = {"item": item_text(study, item), "scale": scale}
            prompt = panel_prompt(
                roles,
                question=question.text,
                context=context,
                noun=options.noun,
                noun_plural=options.noun_plural,
                **texts,
            )
            return prompt, parse

        return pending_turns(ratings, questions, make, scale, sample, seed, with_logprobs=options.use_logprobs)
