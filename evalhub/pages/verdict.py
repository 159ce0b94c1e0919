"""The verdict on the dashboard: may each LLM pool replace the human raters? (the presentation)

``verdict_context`` turns the result's ``alt_test`` rows into one card per LLM pool, ranked by the average
advantage probability rho, and the choices of the study's epsilon form: a pure function. The form is
``forms.EpsilonForm``, the service that sets epsilon ``annotations.studies.study_alt_epsilon_set``, the view
``dashboard.study_alt_epsilon``; who may set it is ``annotations.selectors.study_changeable``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from django.utils.text import slugify

from evalhub.analysis.alt_test_rows import ALL_QUESTIONS
from evalhub.analysis.reading import ALL_GROUPS, HUMAN
from evalhub.analysis.result import AltTestRow, AltTestSettings, AnalysisResult, PositionRow
from evalhub.analysis.trust_notes import group_title
from evalhub.stats.alt_test import EPSILON_GUIDANCE, MIN_INSTANCES_PER_HUMAN, EpsilonGuide

Status = Literal["pass", "fail", "none"]
CANNOT_RUN = "the test cannot run: "  # how alt_test's note starts when no rater has enough ratings on this design


@dataclass(frozen=True)
class Headline:
    """One verdict sentence for one alt-test row, with what would change it."""

    status: Status
    text: str
    change: tuple[str, ...]
    row: AltTestRow
    beaten: int  # humans the pool beat
    tested: int  # humans tested
    anchor: str = ""  # the headline's id: the card's details link to it instead of repeating its notes


@dataclass(frozen=True)
class VerdictCard:
    """One LLM pool: its headlines (the summary rows), every row of its test, its rank by rho."""

    pool: str
    label: str
    rank: int  # 1, 2, ... among the pools with a verdict; 0 for a pool without one (it gets no rank)
    status: Status
    rho: float | None  # the highest advantage probability of the summary rows
    headlines: tuple[Headline, ...]
    rows: tuple[AltTestRow, ...]
    position_notes: tuple[str, ...]  # a pairwise judge that prefers a position says so on its card
    n_ran: int = 0  # rows whose test ran (passed or failed): "(10 tests)" counted none (issue 25 review, C6)
    cannot_run: str = ""  # why, when no row's test could run and they all say the same

    @property
    def tests_ran(self) -> str:
        """What the details' tests are and how many ran, each kind counted apart (issue 25, eighth review: "(10
        question × group tests ran)" counted 8 per-question rows and 2 rows over all questions as one kind):
        "8 question × group tests and 2 over all questions ran", "7 of 8 question × group tests and ... ran"."""
        per_question = [r for r in self.rows if r.question != ALL_QUESTIONS]
        pooled = [r for r in self.rows if r.question == ALL_QUESTIONS]
        if len(self.rows) == 1 and not self.n_ran:
            return "the test could not run" + (f": {self.cannot_run}" if self.cannot_run else "")

        def count(rows: list[AltTestRow]) -> str:  # how many ran ("7 of 8"), or how many there are when none ran
            n = sum(r.test.passed is not None for r in rows)
            return str(len(rows)) if not self.n_ran or n == len(rows) else f"{n} of {len(rows)}"

        parts = [f"{count(per_question)} question × group test{'' if len(per_question) == 1 else 's'}"
                 ] if per_question else []
        parts += [f"{count(pooled)} over all questions"] if pooled else []
        if self.n_ran:
            return f"{' and '.join(parts)} ran"
        return f"{' and '.join(parts)}, none could run" + (f": {self.cannot_run}" if self.cannot_run else "")

    @property
    def detail_rows(self) -> tuple[tuple[AltTestRow, str], ...]:
        """Each row of the details, with the id of the headline that already gives its notes ("" for none): the
        details link to it rather than repeat it word for word (issue 25 fourth review, C7)."""
        said = {(h.row.question, h.row.group): h.anchor for h in self.headlines
                if h.row.test.notes and all(n in h.change or n.startswith(CANNOT_RUN) for n in h.row.test.notes)}
        return tuple((row, said.get((row.question, row.group), "")) for row in self.rows)


@dataclass(frozen=True)
class EpsilonChoice:
    value: float
    label: str
    selected: bool


@dataclass(frozen=True)
class PositionLine:
    """A row of the dashboard's position-bias table: a pool's first-position share on one question."""

    label: str  # the pool as a reader sees it
    row: PositionRow


@dataclass(frozen=True)
class Verdict:
    cards: tuple[VerdictCard, ...]
    settings: AltTestSettings
    epsilon: float  # the study's, as it is now
    analysed_epsilon: float  # the one the result was computed with
    guidance: tuple[EpsilonGuide, ...]
    choices: tuple[EpsilonChoice, ...]
    can_set_epsilon: bool
    min_instances: int
    position: tuple[PositionLine, ...] = ()  # pairwise studies: judges' position bias and the raters' own share


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _where(row: AltTestRow, n_groups: int) -> str:
    question = "all questions" if row.question == ALL_QUESTIONS else row.question
    if n_groups <= 1:
        return question
    # A group named as trust_notes names it (issue 25, ninth review: "the human items" read as items humans rated).
    group = group_title(row.group) if row.group == ALL_GROUPS else f"the items of {group_title(row.group)}"
    return f"{question}, {group}"


def _headline(row: AltTestRow, n_groups: int, label: str) -> Headline:
    """One verdict sentence for one alt-test row (the pool named by its label), with what would change it."""
    where = _where(row, n_groups)
    test = row.test
    humans = test.humans
    beaten = [h for h in humans if h.rejected]
    numbers = f"advantage probability ρ = {_fmt(test.advantage_probability)}, ε = {test.epsilon:g}"
    change: list[str] = []
    status: Status
    cannot = next((n for n in test.notes if n.startswith(CANNOT_RUN)), None)
    if test.passed is None and cannot:
        # Not "no verdict yet": more raters of the same design will not bring one (issue 25 review).
        why = cannot.removeprefix(CANNOT_RUN)
        status, text = "none", f"{label}: the test cannot run on this design ({where}): {why}"
        change = [n for n in test.notes if n != cannot]
    elif test.passed is None:
        status, text = "none", f"{label}: no verdict yet on {where}"
        missing = [n for n in test.notes if "the test needs" in n or "cannot run" in n or "no verdict" in n]
        change = missing or list(test.notes) or [
            f"the test needs at least 3 humans with {MIN_INSTANCES_PER_HUMAN} ratings each"]
    else:
        passed = bool(test.passed)
        status = "pass" if passed else "fail"
        verb = "can replace your raters" if passed else "cannot yet replace your raters"
        text = f"{label} {verb} on {where}: it beat {len(beaten)} of {len(humans)} raters, {numbers}"
        if not passed:
            needed = math.ceil(len(humans) / 2)
            not_beaten = [h for h in humans if not h.rejected]
            change.append(f"it must beat {needed} of {len(humans)} raters (winning rate ω ≥ 0.5); it did not beat "
                          + ", ".join(f"{h.rater} (ρ_j = {_fmt(h.advantage)})" for h in not_beaten))
            change.append("a larger ε grants the LLM more advantage for its lower cost; choose it by who your "
                          "raters are (below), not by the result")
    return Headline(status=status, text=text, change=tuple(change), row=row, beaten=len(beaten), tested=len(humans))


def _summary_rows(rows: Sequence[AltTestRow], multi_question: bool) -> list[AltTestRow]:
    """The rows a card's headlines read: every question pooled, one per group shown, all groups pooled included
    (review 16: a view of group "human" and "(all)" gave the pooled headline alone)."""
    return [r for r in rows if (r.question == ALL_QUESTIONS) == multi_question]


def _card(pool: str, label: str, rows: list[AltTestRow], multi_question: bool, n_groups: int,
          position: Sequence[PositionRow]) -> VerdictCard:
    headlines = tuple(replace(_headline(r, n_groups, label), anchor=f"headline-{slugify(pool)}-{n}")
                      for n, r in enumerate(_summary_rows(rows, multi_question), start=1))
    rhos = [rho for h in headlines if (rho := h.row.test.advantage_probability) is not None]
    status: Status = ("pass" if all(h.status == "pass" for h in headlines) else
                      "none" if all(h.status == "none" for h in headlines) else "fail")
    # A pairwise judge that prefers a position beyond its CI (evalhub/analysis/position_rows.py): said on its card.
    notes = tuple(note for p in position if p.pool == pool and (p.prefers_first or p.prefers_second)
                  for note in p.notes)
    # Beside it, the raters' own share on the same questions (a counterbalanced study: rows of the human pool).
    questions = {p.question for p in position if p.pool == pool and (p.prefers_first or p.prefers_second)}
    notes += tuple(note for p in position if p.pool == HUMAN and p.question in questions for note in p.notes)
    # The rows' reasons differ only in their counts ("(at most 3 per rater)"): the card gives the shared reason.
    reasons = {re.sub(r" \([^)]*\)", "", n.removeprefix(CANNOT_RUN)) for r in rows for n in r.test.notes
               if n.startswith(CANNOT_RUN)}
    n_ran = sum(r.test.passed is not None for r in rows)
    return VerdictCard(pool=pool, label=label, rank=0, status=status, rho=max(rhos) if rhos else None,
                       headlines=headlines, rows=tuple(rows), position_notes=notes, n_ran=n_ran,
                       cannot_run=reasons.pop() if not n_ran and len(reasons) == 1 else "")


def verdict_cards(result: AnalysisResult) -> tuple[VerdictCard, ...]:
    """One card per LLM pool with alt-test rows, ranked by rho; pools without a verdict last, with no rank."""
    rows = result.alt_test
    # A view filtered to one group still names it (issue 25 fourth review, C6): count the study's groups too.
    n_groups = max(len({r.group for r in rows if r.group != ALL_GROUPS}), len(result.study.groups))
    multi_question = any(r.question == ALL_QUESTIONS for r in rows)
    labels = result.pool_labels()
    by_pool: dict[str, list[AltTestRow]] = {}
    for row in rows:
        by_pool.setdefault(row.pool, []).append(row)
    cards = [_card(pool, labels.get(pool, pool), pool_rows, multi_question, n_groups, result.position_bias)
             for pool, pool_rows in by_pool.items()]
    ranked = sorted(cards, key=lambda c: (c.status == "none", c.rho is None, -(c.rho or 0.0), c.pool))
    with_verdict = [card for card in ranked if card.status != "none"]
    return (*(replace(card, rank=rank) for rank, card in enumerate(with_verdict, start=1)),
            *(card for card in ranked if card.status == "none"))


def verdict_context(result: AnalysisResult, *, can_set_epsilon: bool, epsilon: float) -> Verdict:
    """The verdict cards and the epsilon form's choices (the paper's guidance, and the study's own value)."""
    # Short labels, so that a phone shows them whole (review C2); the guidance beside the form gives the rest.
    choices = [(g.epsilon, f"{g.epsilon:g} — {g.description.split(':')[0]}") for g in EPSILON_GUIDANCE]
    if all(not math.isclose(epsilon, value) for value, _ in choices):
        choices.append((epsilon, f"{epsilon:g} — this study's own choice"))
    settings = result.settings.alt_test
    return Verdict(
        cards=verdict_cards(result),
        settings=settings,
        epsilon=epsilon,
        analysed_epsilon=settings.epsilon,
        guidance=tuple(EPSILON_GUIDANCE),
        choices=tuple(EpsilonChoice(value, label, math.isclose(value, epsilon)) for value, label in choices),
        can_set_epsilon=can_set_epsilon,
        min_instances=MIN_INSTANCES_PER_HUMAN,
        position=tuple(PositionLine(result.pool_labels().get(p.pool, p.pool), p) for p in result.position_bias),
    )
