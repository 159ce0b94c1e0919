"""The meta-evaluation study (paper appendix C.3.2): a study for human raters made of one judge run's answers.

It reads LLM ratings and writes a study, items and all, so it lives in evalhub, the layer that sees both.
"""
from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction

from annotations.models import Item, Study
from llmjudge.models import LLMRating


@transaction.atomic
def meta_study_create(
    *, slug: str, run_id: int, question_key: str, owner: User | None = None, limit: int | None = None
) -> Study:
    """A meta-evaluation study (paper appendix C.3.2) from one judge run's answers to one question.

    Each item is one LLM answer, shown as coming from "another rater": the story (and the other source
    fields), the question, the score and the explanation. The run, judge and model stay hidden; the
    LLMRating id is kept in the item's fields under a name raters are never shown.
    """
    found = (
        LLMRating.objects.filter(run_id=run_id, question__key=question_key, status=LLMRating.Status.OK)
        .select_related("item", "question", "run__study")
        .order_by("item__position", "item_id", "sample")
    )
    ratings = list(found if limit is None else found[:limit])
    if not ratings:
        raise ValueError(f"run {run_id} has no parsed answers to question {question_key!r}")
    source = ratings[0].run.study
    shown = [*source.item_fields, "question", "rating", "explanation"]
    study = Study.objects.create(
        slug=slug,
        title=f"Do you agree with another rater? ({source.title})",
        kind=Study.Kind.META,
        instruction=(
            "Another rater read the text below and answered the question. Read the text, their rating and "
            "their explanation, then tell us whether you agree with them, and why."
        ),
        llm_template="{question}",
        item_fields=shown,
        field_labels={
            **source.field_labels,
            "question": "The question",
            "rating": "Their rating",
            "explanation": "Their explanation",
        },
        groups=source.groups,
        scale_min=source.scale_min,
        scale_max=source.scale_max,
        scale_labels=source.scale_labels,
        ordering=Study.Ordering.MIXED,
        raters_per_item=1,
        owner=owner,
    )
    Item.objects.bulk_create(
        Item(
            study=study,
            external_id=f"{r.item.external_id}:{r.question.key}:{r.sample}",
            group=r.item.group,
            position=n,
            fields={
                **{name: r.item.fields.get(name, "") for name in source.item_fields},
                "question": r.question.text,
                "rating": _shown_score(source, r.score),
                "explanation": (r.rationale or r.raw).strip(),
                "source_llm_rating": r.pk,
            },
        )
        for n, r in enumerate(ratings)
    )
    return study


def _shown_score(source: Study, score: float | None) -> str:
    """The score as raters of the source study saw it: its label when whole, else the number."""
    assert score is not None  # only parsed ratings are read: status ok has a score (llm_rating_score_exactly_when_ok)
    return source.label_for(int(score)) if score == int(score) else f"{score:g}"
