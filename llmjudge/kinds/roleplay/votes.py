"""A panel's answer read into one vote per role, and the votes aggregated (DRPE steps 4 and 5).

Confidence (paper eq. 3): ``c_j = exp((1/K) * sum_k log p(t_k))`` over the K answer tokens of role
j's block (its heading, reason and vote), i.e. the length-normalised probability of that role's
answer. Pairwise aggregation (eq. 4): ``S_A = sum_j [a_j = A] c_j`` and ``S_B`` likewise; the
panel's choice is the larger, ``tie`` when equal; without log-probabilities every ``c_j = 1``,
which is a plain majority vote. Pointwise: the confidence-weighted mean ``sum_j c_j s_j / sum_j c_j``.
Roles whose answer is missing or unparseable abstain.
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from llmjudge.kinds.common.templates import check_scale, parse_after_marker
from llmjudge.kinds.roleplay.roles import Role
from llmjudge.parsing import OK, UNPARSEABLE

MISSING = "missing"


@dataclass(frozen=True)
class RoleVote:
    role: Role
    choice: str | None  # "A" (item 1) | "B" (item 2) | "tie" | None; pairwise panels
    score: float | None  # pointwise panels
    status: str  # "ok" | "unparseable" | "missing" (the answer has no block for this role)
    reason: str
    span: tuple[int, int] | None  # the role's block in the answer text, for its confidence
    confidence: float | None = None


@dataclass(frozen=True)
class TokenLogprob:
    token: str
    logprob: float


@dataclass(frozen=True)
class PanelResult:
    choice: str | None  # "A" | "B" | "tie" | None (no role voted)
    score_a: float  # S_A of eq. 4
    score_b: float
    share_b: float | None  # S_B / (S_A + S_B); None when no role voted
    n_a: int
    n_b: int
    n_abstain: int
    weighted: bool  # True when confidences came from log-probabilities


@dataclass(frozen=True)
class PanelScore:
    score: float | None
    n: int  # roles whose score entered the mean
    n_abstain: int
    weighted: bool


_DECOR = r"[ \t#>*_\-\[\]().\d]*"
_VOTE = re.compile(
    r"(?:^|\n|(?<=[.;!?])[ \t]+)[ \t*_-]*(?:vote|choice|verdict|preferred|winner|answer)[*_]*\s*:[*_]*\s*\[?\s*"
    r"(?:(?:story|summary|response|text|item|option|candidate|[a-z]+)\s+)?(?P<c>1|2|a|b|tie|neither|both|equal)\b",
    re.IGNORECASE,
)
_REASON = re.compile(
    r"reason(?:ing)?[*_]*\s*:[*_]*\s*(?P<r>.*?)\s*"
    r"(?=\s[ \t*_-]*(?:vote|choice|verdict|preferred|winner|score|rating|answer)[*_]*\s*:|\Z)",
    re.IGNORECASE | re.DOTALL,
)
_SCORE_MARK = re.compile(r"(?:^|\n)[ \t*_-]*(?:score|rating|answer)[*_]*\s*:[*_]*", re.IGNORECASE)


def _headings(text: str, roles: Sequence[Role]) -> list[tuple[int, int, int]]:
    """(role index, heading start, heading end) for every role found, in text order.

    A heading is a line that starts, after decoration (#, *, numbering, "Role 2:"), with the role's
    name. Roles are searched in the given order after the previous one's heading, because the
    prompt asks for them in order and a name may recur inside another role's reason.
    """
    found = []
    pos = 0
    for i, role in enumerate(roles):
        pattern = re.compile(
            rf"(?:^|\n)(?P<h>{_DECOR}(?:role\s*\d*\s*[:.\-]\s*)?[*_]*{re.escape(role.name)}\b[*_\]]*[ \t]*:?)",
            re.IGNORECASE,
        )
        match = pattern.search(text, pos) or pattern.search(text)
        if match:
            found.append((i, match.start("h"), match.end("h")))
            pos = max(pos, match.end("h"))
    found.sort(key=lambda f: f[1])
    # A role found twice at one place (one name a prefix of another) keeps the first role only.
    unique, seen = [], set()
    for f in found:
        if f[1] not in seen:
            unique.append(f)
            seen.add(f[1])
    return unique


def parse_panel(text: str, roles: Sequence[Role], *, scale: tuple[int, int] | None = None) -> list[RoleVote]:
    """One vote per role, in ``roles`` order, from a panel answer.

    Pairwise (``scale`` None): ``Vote: Story 1`` -> ``"A"``, ``Story 2`` -> ``"B"`` (also ``A``/``B``,
    ``tie``/``both``/``neither``/``equal`` -> ``"tie"``). Pointwise (``scale`` given): ``Score: n``
    via ``parse_score``. A role without a block is ``missing``; a block without a readable vote is
    ``unparseable``. ``span`` is the block's [start, end) in ``text`` as given (not stripped), so
    token log-probabilities can be matched to it.
    """
    text = text or ""
    heads = _headings(text, roles)
    blocks: dict[int, tuple[int, int, int]] = {}
    for n, (i, start, head_end) in enumerate(heads):
        end = heads[n + 1][1] if n + 1 < len(heads) else len(text)
        blocks[i] = (start, head_end, end)
    votes = []
    for i, role in enumerate(roles):
        if i not in blocks:
            votes.append(RoleVote(role, None, None, MISSING, "", None))
            continue
        start, head_end, end = blocks[i]
        body = text[head_end:end]
        reason_match = _REASON.search(body)
        reason = " ".join(reason_match.group("r").split()) if reason_match else ""
        if scale is None:
            vote = _VOTE.search(body)
            choice = None
            if vote:
                token = vote.group("c").lower()
                choice = {"1": "A", "a": "A", "2": "B", "b": "B"}.get(token, "tie")
            status = OK if choice else UNPARSEABLE
            votes.append(RoleVote(role, choice, None, status, reason, (start, end)))
        else:
            parsed = parse_after_marker(body, _SCORE_MARK, scale=check_scale(scale))
            if not _SCORE_MARK.search(body):
                parsed = replace(parsed, score=None, status=UNPARSEABLE)  # no "Score:" line: not this role's score
            status = OK if parsed.status == OK else UNPARSEABLE
            votes.append(RoleVote(role, None, parsed.score, status, reason, (start, end)))
    return votes


def token_logprobs(entries: Sequence[Mapping[str, Any] | TokenLogprob]) -> list[TokenLogprob]:
    """Tokens from a backend's log-probabilities (OpenAI's ``logprobs.content``: dicts with
    ``token`` and ``logprob``) or already typed ones."""
    out = []
    for n, entry in enumerate(entries):
        if isinstance(entry, TokenLogprob):
            out.append(entry)
            continue
        token, logprob = entry.get("token"), entry.get("logprob")
        if not isinstance(token, str) or not isinstance(logprob, (int, float)) or isinstance(logprob, bool):
            raise ValueError(f"log-probability entry {n} needs a text 'token' and a numeric 'logprob': {entry!r}")
        out.append(TokenLogprob(token, float(logprob)))
    return out


def with_confidences(
    votes: Sequence[RoleVote], logprobs: Sequence[Mapping[str, Any] | TokenLogprob], *, text: str | None = None
) -> list[RoleVote]:
    """Set each vote's confidence to exp(mean log-probability of the tokens overlapping its span).

    The tokens, concatenated, are the answer text; with ``text`` given that is checked, because a
    mismatch (a backend that stripped the answer) would attach the wrong tokens to a role.
    """
    tokens = token_logprobs(logprobs)
    joined = "".join(t.token for t in tokens)
    if text is not None and joined != text:
        raise ValueError("the log-probability tokens do not spell the answer text; cannot place role spans")
    starts = []
    pos = 0
    for t in tokens:
        starts.append(pos)
        pos += len(t.token)
    out = []
    for vote in votes:
        if vote.span is None:
            out.append(vote)
            continue
        lo, hi = vote.span
        if hi > pos:
            raise ValueError(f"role {vote.role.name!r} ends at character {hi}, after the last token ({pos})")
        picked = [
            t.logprob for t, s in zip(tokens, starts, strict=True) if s < hi and s + len(t.token) > lo and t.token
        ]
        confidence = math.exp(sum(picked) / len(picked)) if picked else None
        out.append(replace(vote, confidence=confidence))
    return out


def aggregate_votes(
    votes: Sequence[RoleVote],
    logprobs: Sequence[Mapping[str, Any] | TokenLogprob] | None = None,
    *,
    text: str | None = None,
) -> PanelResult:
    """DRPE's eq. 4 over a pairwise panel (module docstring). Weights are the confidences from
    ``logprobs`` when given, else 1 per vote (a vote's own ``confidence`` is ignored then, so a
    result is either fully weighted or a plain count, never a mix)."""
    weighted = logprobs is not None
    if logprobs is not None:
        votes = with_confidences(votes, logprobs, text=text)
    score_a = score_b = 0.0
    n_a = n_b = n_abstain = 0
    for vote in votes:
        if vote.status != OK or vote.choice not in ("A", "B"):
            n_abstain += 1
            continue
        weight = 1.0
        if weighted:
            if vote.confidence is None:
                n_abstain += 1
                continue
            weight = vote.confidence
        if vote.choice == "A":
            score_a += weight
            n_a += 1
        else:
            score_b += weight
            n_b += 1
    total = score_a + score_b
    if n_a + n_b == 0:
        return PanelResult(None, 0.0, 0.0, None, 0, 0, n_abstain, weighted)
    choice = "A" if score_a > score_b else "B" if score_b > score_a else "tie"
    return PanelResult(choice, score_a, score_b, score_b / total if total > 0 else None, n_a, n_b, n_abstain, weighted)


def aggregate_scores(
    votes: Sequence[RoleVote],
    logprobs: Sequence[Mapping[str, Any] | TokenLogprob] | None = None,
    *,
    text: str | None = None,
) -> PanelScore:
    """Confidence-weighted mean score of a pointwise panel (weights 1 without ``logprobs``)."""
    weighted = logprobs is not None
    if logprobs is not None:
        votes = with_confidences(votes, logprobs, text=text)
    num = den = 0.0
    n = n_abstain = 0
    for vote in votes:
        weight = vote.confidence if weighted else 1.0
        if vote.status != OK or vote.score is None or weight is None:
            n_abstain += 1
            continue
        num += weight * vote.score
        den += weight
        n += 1
    return PanelScore(num / den if den > 0 else None, n, n_abstain, weighted)
