"""What the kinds read of a study: an item's text under the rater's field labels, a pair's two
candidates, the human ratings and a rater's demographics."""
from __future__ import annotations

from collections import defaultdict
from typing import Any

from annotations.models import HumanRating, Item, Study
from annotations.selectors import counted_items
from llmjudge.kinds.common.errors import KindError


def item_text(study: Study, item: Item) -> str:
    """What per-rater and panel prompts show of an item: its one field, or each field under its label."""
    fields = [f for f in (study.item_fields or list(item.fields)) if f in item.fields]
    if len(fields) == 1:
        return str(item.fields[fields[0]])
    return "\n\n".join(_labelled(study, item, fields))


def _labelled(study: Study, item: Item, fields: list[str]) -> list[str]:
    # The label the rater's page shows (annotations/rendering.py): the judge reads the same words.
    return [f"{study.field_label(f)}: {item.fields[f]}" for f in fields]


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


def human_ratings(study: Study) -> dict[int, dict[int, dict[int, tuple[float, str]]]]:
    """rater id -> item id -> question id -> (score, comment); only the items that count, as in the analysis."""
    out: dict[int, dict[int, dict[int, tuple[float, str]]]] = defaultdict(lambda: defaultdict(dict))
    rows = HumanRating.objects.filter(rater__study=study, item__in=counted_items(study=study)).values_list(
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
