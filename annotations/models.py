"""Studies, their questions and items, the raters and the human ratings.

Integrity lives in the database: one HumanRating per (rater, item, question), and scores inside the
study's scale (a trigger, see migration 0002, because a CHECK constraint cannot read the study row).
"""
from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models


def new_token() -> str:
    """An unguessable URL-safe token: 24 random bytes = 192 bits."""
    return secrets.token_urlsafe(24)


class Study(models.Model):
    class Kind(models.TextChoices):
        LIKERT = "likert", "Likert rating"
        META = "meta", "Meta-evaluation (rate another rater's rating)"

    class Ordering(models.TextChoices):
        BLOCKED = "blocked", "Blocked by group"
        MIXED = "mixed", "Mixed at random (seeded per rater)"
        FIXED = "fixed", "Fixed (import order)"

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        OPEN = "open", "Open"
        CLOSED = "closed", "Closed"

    slug = models.SlugField(max_length=100, unique=True)
    title = models.CharField(max_length=200)
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.LIKERT)
    instruction = models.TextField(help_text="What the human rater reads at the top of every page.")
    llm_template = models.TextField(
        help_text="The judge's prompt: item fields as {field}, plus {context} and {question}."
    )
    item_fields = models.JSONField(default=list, help_text='Item field names, e.g. ["story", "prompt"].')
    groups = models.JSONField(default=list, blank=True, help_text="Allowed item groups, in blocked order.")
    contrasts = models.JSONField(
        default=list, blank=True, help_text='Group pairs to compare, e.g. [["human", "gpt2"]]. Empty: all pairs.'
    )
    scale_min = models.IntegerField(default=1)
    scale_max = models.IntegerField(default=5)
    scale_labels = models.JSONField(default=dict, blank=True, help_text='e.g. {"1": "1 (lowest)"}')
    ordering = models.CharField(max_length=20, choices=Ordering.choices, default=Ordering.BLOCKED)
    raters_per_item = models.PositiveIntegerField(default=3)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.DRAFT)
    template = models.CharField(max_length=100, blank=True, help_text="Protocol template it was created from.")
    template_version = models.CharField(max_length=50, blank=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="studies"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "studies"
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(scale_min__lt=models.F("scale_max")), name="study_scale_min_below_max"
            ),
        ]

    def __str__(self) -> str:
        return self.slug

    def scale_points(self) -> list[int]:
        return list(range(self.scale_min, self.scale_max + 1))

    def label_for(self, value: int) -> str:
        return self.scale_labels.get(str(value), str(value))


class Question(models.Model):
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="questions")
    key = models.SlugField(max_length=100)
    text = models.TextField()
    context = models.TextField(
        blank=True, help_text="Shown right before the question; may use item fields as {field}."
    )
    reveals = models.CharField(
        max_length=100, blank=True, help_text="Item field first shown with this question (e.g. prompt)."
    )
    order = models.PositiveIntegerField(default=0)
    rubric = models.JSONField(default=dict, blank=True, help_text="Optional score rubric for rubric judges.")

    class Meta:
        ordering = ["study", "order", "id"]
        constraints = [models.UniqueConstraint(fields=["study", "key"], name="question_key_unique_in_study")]

    def __str__(self) -> str:
        return f"{self.study.slug}:{self.key}"


class Item(models.Model):
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="items")
    external_id = models.CharField(max_length=200)
    group = models.CharField(max_length=100)
    fields = models.JSONField(default=dict)
    position = models.PositiveIntegerField(default=0, help_text="Import order (used by the fixed ordering).")

    class Meta:
        ordering = ["study", "position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["study", "external_id"], name="item_external_id_unique_in_study")
        ]
        indexes = [models.Index(fields=["study", "group"])]

    def __str__(self) -> str:
        return f"{self.study.slug}:{self.external_id}"


class Rater(models.Model):
    """A participant of one study: invited by link, arrived through an open link, or imported."""

    class Source(models.TextChoices):
        INVITED = "invited", "Invitation link"
        OPEN = "open", "Open link"
        IMPORTED = "imported", "Imported ratings"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="raters")
    external_id = models.CharField(max_length=200, blank=True, help_text="e.g. a Prolific participant id")
    token = models.CharField(max_length=64, unique=True, default=new_token, editable=False)
    source = models.CharField(max_length=20, choices=Source.choices, default=Source.INVITED)
    demographics = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "external_id"],
                condition=~models.Q(external_id=""),
                name="rater_external_id_unique_in_study",
            )
        ]

    def __str__(self) -> str:
        return self.external_id or f"rater-{self.pk}"


class Assignment(models.Model):
    """One rater's work on one study: the persisted item order and where they are in it."""

    rater = models.OneToOneField(Rater, on_delete=models.CASCADE, related_name="assignment")
    item_order = models.JSONField(default=list, help_text="Item ids in the order this rater sees them.")
    seed = models.BigIntegerField(default=0)
    position = models.PositiveIntegerField(default=0)
    completion_code = models.CharField(max_length=64, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.rater.study.slug}/{self.rater}"


class HumanRating(models.Model):
    rater = models.ForeignKey(Rater, on_delete=models.CASCADE, related_name="ratings")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="human_ratings")
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="human_ratings")
    score = models.FloatField()
    comment = models.TextField(blank=True)
    time_spent_ms = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["item", "question", "rater"]
        constraints = [
            models.UniqueConstraint(
                fields=["rater", "item", "question"], name="one_human_rating_per_rater_item_question"
            ),
        ]
        indexes = [models.Index(fields=["question", "item"])]

    def __str__(self) -> str:
        return f"{self.rater} {self.item.external_id} {self.question.key}={self.score:g}"
