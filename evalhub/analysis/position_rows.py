"""Position bias of pairwise judges (issue 19): the ``position_bias`` rows of the analysis.

Runs started with a swap share (llmjudge/runs/swapping.py) asked some items once more with A and B
swapped; those samples are marked ``swapped`` and their choice is stored mapped back to the original
orientation. Per question and LLM pool with swapped samples, each swapped item pairs the swapped
choice (its lowest swapped sample) with the original choice (its lowest ordinary sample, both ok):
the flip rate and the first-position share (evalhub/stats/position.py) with their Wilson intervals.
Swapped samples count nowhere else (``reading.llm_rows_sql`` leaves them out).
"""
from __future__ import annotations

import numpy as np

from annotations.models import HumanRating
from evalhub.analysis.reading import HUMAN, StudyData
from evalhub.analysis.result import PositionRow
from evalhub.stats.position import PositionBias, Proportion, first_position_share, position_bias
from llmjudge.models import JudgeRun, LLMRating

CONFIDENCE = 0.95


def position_rows(data: StudyData) -> list[PositionRow]:
    """One row per pairwise question x LLM pool whose run asked swapped samples, then the raters' own rows
    when some of them saw pairs swapped (``rater_position_rows``); [] for other studies."""
    if not data.study.is_pairwise:
        return []
    return _judge_rows(data) + rater_position_rows(data)


def rater_position_rows(data: StudyData) -> list[PositionRow]:
    """The human pool's first-position share per question, when raters saw some pairs swapped (a
    counterbalanced study, annotations.rendering.pair_swapped); [] when every rater saw the file's order, where
    the share would only be the share of A choices. No flip rate: a person sees each pair once."""
    questions = {q.pk: q.key for q in data.questions}
    ratings = HumanRating.objects.filter(rater__study=data.study, question_id__in=list(questions),
                                         item_id__in=data.item_ids.tolist())
    if not ratings.filter(swapped=True).exists():
        return []
    by_question: dict[int, list[tuple[bool, float]]] = {}
    for question_id, swapped, score in ratings.values_list("question_id", "swapped", "score").order_by():
        by_question.setdefault(question_id, []).append((swapped, score))
    rows = []
    for question_id, key in questions.items():
        answers = by_question.get(question_id, [])
        share = first_position_share(np.array([score for _, score in answers], dtype=float),
                                     np.array([swapped for swapped, _ in answers], dtype=bool),
                                     confidence=CONFIDENCE)
        n_swapped = sum(swapped for swapped, _ in answers)
        result = PositionBias(n_pairs=0, flip=Proportion(k=0, n=0, value=None, low=None, high=None),
                              first_position=share, prefers_first=share.low is not None and share.low > 0.5,
                              prefers_second=share.high is not None and share.high < 0.5)
        note = (f"the raters' own first-position share: {_pct(share.value)} of {share.n} decisive choices chose "
                f"the response shown first ({n_swapped} of {len(answers)} answers were given on swapped pairs); "
                "people see each pair once, so there is no flip rate")
        rows.append(_row(key, HUMAN, result, notes=[note]))
    return rows


def _judge_rows(data: StudyData) -> list[PositionRow]:
    pools = {p.run_id: p for p in data.pools if p.kind == "llm" and p.run_id is not None}
    # The run's params say whether it swapped: no scan of the ratings of runs that did not.
    swapping = [pk for pk, params in JudgeRun.objects.filter(pk__in=list(pools)).values_list("pk", "params")
                if (params or {}).get("swap_share")]
    if not swapping:
        return []
    questions = {q.pk: q.key for q in data.questions}
    regular = set(data.item_ids.tolist())
    # (run, question, item) -> (lowest ordinary sample's choice, lowest swapped sample's choice)
    first: dict[tuple[int, int, int], list[float | None]] = {}
    ok = LLMRating.objects.filter(run_id__in=swapping, status=LLMRating.Status.OK, question_id__in=list(questions))
    ratings = (ok.order_by("sample").values_list("run_id", "question_id", "item_id", "swapped", "score"))
    for run_id, question_id, item_id, swapped, score in ratings:
        if item_id not in regular:
            continue
        pair = first.setdefault((run_id, question_id, item_id), [None, None])
        if pair[int(swapped)] is None:
            pair[int(swapped)] = score
    grouped: dict[tuple[int, int], list[list[float | None]]] = {}
    for (run_id, question_id, _), pair in first.items():
        if pair[1] is not None:  # an item asked swapped (or answered ok swapped) only
            grouped.setdefault((run_id, question_id), []).append(pair)
    rows = []
    for question_id, key in questions.items():
        for run_id in swapping:
            pairs = grouped.get((run_id, question_id), [])
            original = np.array([np.nan if a is None else a for a, _ in pairs], dtype=float)
            swapped_choice = np.array([b for _, b in pairs], dtype=float)
            rows.append(_row(key, pools[run_id].name, position_bias(original, swapped_choice, confidence=CONFIDENCE)))
    return rows


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.0f}%"


def _ci(p: Proportion) -> tuple[float | None, float | None]:
    return p.low, p.high


def _row(question: str, pool: str, result: PositionBias, notes: list[str] | None = None) -> PositionRow:
    """A row; ``notes`` given: the raters' row (no flip rate), otherwise a judge's."""
    flip, share = result.flip, result.first_position
    judge = notes is None
    notes = [] if notes is None else list(notes)
    if judge and result.n_pairs == 0:
        notes.append("no swapped item has an ok answer in both orientations")
    elif result.prefers_first or result.prefers_second:
        where = "first" if result.prefers_first else "second"
        flipped = f"; it flipped on {flip.k} of {flip.n} swapped items" if judge else ""
        notes.append(f"position bias: {'the judge' if judge else 'the raters'} chose the response shown {where} "
                     f"beyond chance on {question} (first position in {_pct(share.value)} of {share.n} answers, "
                     f"95% CI {_pct(share.low)}–{_pct(share.high)}){flipped}")
    (flip_low, flip_high), (share_low, share_high) = _ci(flip), _ci(share)
    return PositionRow(
        question, pool, n_pairs=result.n_pairs, n_flips=flip.k, flip_rate=flip.value, flip_ci95_low=flip_low,
        flip_ci95_high=flip_high, n_decisive=share.n, n_first=share.k, first_position_share=share.value,
        first_position_ci95_low=share_low, first_position_ci95_high=share_high, prefers_first=result.prefers_first,
        prefers_second=result.prefers_second, notes=tuple(notes),
    )
