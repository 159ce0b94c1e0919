"""The meta-evaluation study (paper appendix C.3.2): a study for human raters made of one judge run's answers.

It reads LLM ratings and writes a study, items and all, so it lives in evalhub, the layer that sees both.
"""
from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from annotations.models import Item, Study
from llmjudge.models import LLMRating


@transaction.atomic
def meta_study_create(
    *, slug: str, run_id: int, question_key: str, owner: AbstractBaseUser | None = None, limit: int | None = None
) -> Study:
    """A meta-evaluation study (paper appendix C.3.2) from one judge run's answers to one question.

    Each item is one LLM answer, shown as coming from "another rater": the story (and the other source
    fields), the question, the score and the explanation. The run, judge and model stay hidden; the
    LLMRating id is kept in the item's fields under a name raters are never shown.
    """
    ratings = (
        LLMRating.objects.filter(run_id=run_id, question__key=question_key, status=LLMRating.Status.OK)
        .select_related("item", "question", "run__study")
        .order_by("item__position", "item_id", "sample")
    )
    if limit is not None:
        ratings = ratings[:limit]
    ratings = list(ratings)
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
                "rating": source.label_for(int(r.score)) if r.score == int(r.score) else f"{r.score:g}",
                "explanation": (r.rationale or r.raw).strip(),
                "source_llm_rating": r.pk,
            },
        )
        for n, r in enumerate(ratings)
    )
    return study
