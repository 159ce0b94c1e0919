"""Studies, their questions and items, the raters and the human ratings.

Integrity lives in the database: one HumanRating per (rater, item, question), and scores inside the
study's scale (a trigger, see migration 0002, because a CHECK constraint cannot read the study row).
"""
from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models

# A pairwise (A/B) study stores each choice as a score on this nominal scale, so the rating
# integrity triggers, the exports and the analysis work unchanged. A study allows ties when its
# scale reaches 3 (scale 1-3); a forced-choice study has scale 1-2 and the trigger refuses a 3.
PAIRWISE_SCORES: dict[str, int] = {"A": 1, "B": 2, "tie": 3}
PAIRWISE_CHOICES: dict[int, str] = {score: choice for choice, score in PAIRWISE_SCORES.items()}
PAIRWISE_LABELS: dict[str, str] = {"1": "A is better", "2": "B is better", "3": "Tie (equally good)"}


def new_token() -> str:
    """An unguessable URL-safe token: 24 random bytes = 192 bits."""
    return secrets.token_urlsafe(24)


class Study(models.Model):
    class Kind(models.TextChoices):
        LIKERT = "likert", "Likert rating"
        META = "meta", "Meta-evaluation (rate another rater's rating)"
        PAIRWISE = "pairwise", "Pairwise (choose the better of two candidates, A or B)"
        CATEGORICAL = "categorical", "Categorical (choose one of named labels, e.g. Positive / Negative)"

    class Ordering(models.TextChoices):
        BLOCKED = "blocked", "Blocked by group"
        MIXED = "mixed", "Mixed at random (seeded per rater)"
        FIXED = "fixed", "Fixed (import order)"

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        OPEN = "open", "Open"
        CLOSED = "closed", "Closed"

    class AttentionRule(models.TextChoices):
        WARN = "warn", "Warn and continue"
        END = "end", "End the session"

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
    # --- what raters see and go through (issue 3, docs/raters.md) ---
    field_labels = models.JSONField(
        default=dict, blank=True, help_text='Headings raters see for item fields, e.g. {"story": "Story fragment"}.'
    )
    diff_fields = models.JSONField(
        default=list, blank=True, help_text="Two item fields whose differing words are shown in bold."
    )
    pair_fields = models.JSONField(
        default=list, blank=True, help_text='Pairwise: the two candidate fields, e.g. ["response_a", "response_b"].'
    )
    items_per_rater = models.PositiveIntegerField(
        null=True, blank=True, help_text="Items one rater rates at most (empty: as many as still need raters)."
    )
    open_token = models.CharField(max_length=64, unique=True, default=new_token, editable=False)
    open_link_enabled = models.BooleanField(
        default=False, help_text="Anyone with the open link (e.g. from Prolific) becomes a rater."
    )
    consent_text = models.TextField(blank=True, help_text="If set, raters must agree to it before rating.")
    ask_demographics = models.BooleanField(default=False, help_text="Ask age band, gender, region, ... first.")
    completion_redirect_url = models.URLField(
        max_length=500, blank=True, help_text="Sent here when done (e.g. Prolific's); {code} is the completion code."
    )
    attention_positions = models.JSONField(
        default=list, blank=True, help_text="Attention checks after this many rated items, e.g. [5, 20]."
    )
    attention_rule = models.CharField(max_length=10, choices=AttentionRule.choices, default=AttentionRule.WARN)
    template = models.CharField(max_length=100, blank=True, help_text="Protocol template it was created from.")
    template_version = models.CharField(max_length=50, blank=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="studies"
    )
    # The alternative annotator test's epsilon (issue 14): the advantage granted to the LLM for its lower
    # cost. The paper's guidance: 0.2 expert annotators, 0.15 skilled, 0.1 crowd workers.
    alt_epsilon = models.FloatField(
        default=0.15,
        help_text="Alt-test epsilon, strictly between 0 and 1: 0.2 experts, 0.15 skilled annotators, 0.1 crowd.",
    )
    # Which items people rate (issue 27): {} (every item), {"share": 0.2} or {"count": 300} (per group) with an
    # optional "seed" (EvalHub draws the subset: Item.in_human_subset), or {"declared_random": true} (imported
    # ratings whose human-rated items were drawn at random elsewhere). Checked by studies.human_subset_checked.
    human_subset = models.JSONField(
        default=dict, blank=True,
        help_text='People rate a random subset: {"share": 0.2} or {"count": 300} per group, optional "seed"; '
                  '{"declared_random": true} for imported ratings drawn at random elsewhere. Empty: every item.',
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "studies"
        ordering = ["-created_at"]
        # Granted in the admin to staff who read (never change) every researcher's studies
        # (annotations.selectors, the study-access rule).
        permissions = [("view_all_studies", "Can view every researcher's studies (read-only)")]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(scale_min__lt=models.F("scale_max")), name="study_scale_min_below_max"
            ),
            # The nominal A/B(/tie) encoding of PAIRWISE_SCORES: scale 1-2, or 1-3 with ties.
            models.CheckConstraint(
                condition=~models.Q(kind="pairwise") | models.Q(scale_min=1, scale_max__in=[2, 3]),
                name="study_pairwise_scale_is_a_b_or_tie",
            ),
            # A categorical study stores label k of its label list (scale_labels) as the score k, 1..n.
            models.CheckConstraint(
                condition=~models.Q(kind="categorical") | models.Q(scale_min=1),
                name="study_categorical_scale_codes_from_1",
            ),
            models.CheckConstraint(
                condition=models.Q(alt_epsilon__gt=0, alt_epsilon__lt=1), name="study_alt_epsilon_between_0_and_1"
            ),
        ]

    def __str__(self) -> str:
        return self.slug

    def scale_points(self) -> list[int]:
        return list(range(self.scale_min, self.scale_max + 1))

    def label_for(self, value: int) -> str:
        return self.scale_labels.get(str(value), str(value))

    def field_label(self, name: str) -> str:
        return self.field_labels.get(name) or name.replace("_", " ").capitalize()

    @property
    def is_pairwise(self) -> bool:
        return self.kind == self.Kind.PAIRWISE

    @property
    def is_categorical(self) -> bool:
        return self.kind == self.Kind.CATEGORICAL

    @property
    def is_nominal(self) -> bool:
        """The scores are codes of categories (A/B/tie choices, named labels), not amounts: no means,
        no ranks; agreement is nominal alpha and the majority label."""
        return self.kind in (self.Kind.PAIRWISE, self.Kind.CATEGORICAL)

    def category_labels(self) -> list[str]:
        """A categorical study's labels in code order (label k is stored as the score k); [] otherwise."""
        if not self.is_categorical:
            return []
        return [self.label_for(code) for code in self.scale_points()]

    def category_code(self, label: str) -> int | None:
        """The score a categorical study stores for `label` (exact match), None if it is not a label."""
        for code, name in zip(self.scale_points(), self.category_labels(), strict=True):
            if name == label:
                return code
        return None

    def pairwise_score(self, choice: str | None) -> int | None:
        """A choice ("A", "B", "tie") as this study stores it; None when the study cannot hold it
        (a tie on a forced-choice study, or no choice at all)."""
        score = PAIRWISE_SCORES.get(choice or "")
        return score if score is not None and self.scale_min <= score <= self.scale_max else None


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
    class Kind(models.TextChoices):
        NORMAL = "normal", "Normal"
        GOLD = "gold", "Gold (known answers; every rater gets it; excluded from analysis)"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="items")
    external_id = models.CharField(max_length=200)
    group = models.CharField(max_length=100)
    fields = models.JSONField(default=dict)
    position = models.PositiveIntegerField(default=0, help_text="Import order (used by the fixed ordering).")
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.NORMAL)
    gold_answers = models.JSONField(
        default=dict, blank=True, help_text='Known answers of a gold item, e.g. {"grammaticality": 1}.'
    )
    # The study's drawn human subset (Study.human_subset): whether people rate this item, and the probability
    # the draw gave it (None: no subset drawn). The analysis weighs by it and checks ratings against it.
    in_human_subset = models.BooleanField(default=False, editable=False)
    inclusion_probability = models.FloatField(null=True, blank=True, editable=False)

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
    external_study_id = models.CharField(max_length=200, blank=True, help_text="e.g. Prolific STUDY_ID")
    external_session_id = models.CharField(max_length=200, blank=True, help_text="e.g. Prolific SESSION_ID")
    consented_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True, help_text="A revoked link no longer opens.")
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
    ended_reason = models.CharField(
        max_length=20, blank=True, help_text='Why the session ended early ("attention"), empty if finished normally.'
    )

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.rater.study.slug}/{self.rater}"


class ItemClaim(models.Model):
    """A rater holding one of an item's N seats: in progress until completed_at is set.

    Seats make "exactly N raters per item" a database rule: (item, seat) is unique and the service hands
    out seats 0..N-1 only, so two raters racing for the last seat cannot both win. Gold items take no
    seat (every rater gets them). An unfinished claim idle longer than RATER_CLAIM_TIMEOUT_MINUTES may be
    deleted to free its seat for someone else.
    """

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="claims")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="claims")
    seat = models.PositiveIntegerField(null=True, blank=True)
    claimed_at = models.DateTimeField()
    touched_at = models.DateTimeField(help_text="Last activity; an unfinished claim idle too long is released.")
    completed_at = models.DateTimeField(null=True, blank=True)
    time_spent_ms = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["assignment", "claimed_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["assignment", "item"], name="claim_item_once_per_rater"),
            models.UniqueConstraint(fields=["item", "seat"], name="claim_seat_unique_per_item"),
            models.UniqueConstraint(
                fields=["assignment"], condition=models.Q(completed_at__isnull=True), name="claim_one_open_per_rater"
            ),
        ]
        indexes = [models.Index(fields=["item", "completed_at"])]

    def __str__(self) -> str:
        return f"{self.assignment} -> {self.item.external_id} (seat {self.seat})"


class AttentionCheck(models.Model):
    """An answered attention check ("select 2 for this item").

    Kept apart from HumanRating so analysis never mistakes a check for a rating of a real item.
    """

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="attention_checks")
    position = models.PositiveIntegerField(help_text="Shown after this many completed items.")
    expected = models.IntegerField()
    answer = models.IntegerField()
    passed = models.BooleanField()
    time_spent_ms = models.PositiveIntegerField(null=True, blank=True)
    answered_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["assignment", "position"]
        constraints = [
            models.UniqueConstraint(fields=["assignment", "position"], name="attention_check_once_per_position"),
        ]

    def __str__(self) -> str:
        return f"{self.assignment} check@{self.position}: {'pass' if self.passed else 'FAIL'}"


class MetaAnswer(models.Model):
    """A meta-evaluation answer (paper appendix C.3.2): does the rater agree with "another rater"?"""

    class Verdict(models.TextChoices):
        AGREE = "agree", "Agree"
        PARTIAL = "partial", "Partially agree"
        DISAGREE = "disagree", "Disagree"

    rater = models.ForeignKey(Rater, on_delete=models.CASCADE, related_name="meta_answers")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="meta_answers")
    verdict = models.CharField(max_length=10, choices=Verdict.choices)
    comment = models.TextField(blank=True)
    time_spent_ms = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["item", "rater"]
        constraints = [
            models.UniqueConstraint(fields=["rater", "item"], name="one_meta_answer_per_rater_item"),
        ]

    def __str__(self) -> str:
        return f"{self.rater} {self.item.external_id} {self.verdict}"


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


class ImportJob(models.Model):
    """An upload above IMPORT_TASK_THRESHOLD_BYTES, imported by a Celery task (evalhub/imports/jobs.py).

    Progress lives in this row, written outside the import's transaction during the checking reading
    (bytes read), so the study page sees it on PostgreSQL and on the embedded SQLite alike; the writing
    reading runs in one transaction, shown as "writing" until it commits.
    """

    class Kind(models.TextChoices):
        ITEMS = "items"
        RATINGS = "ratings"
        DEMOGRAPHICS = "demographics"

    class Status(models.TextChoices):
        PENDING = "pending"
        CHECKING = "checking"
        WRITING = "writing"
        DONE = "done"
        FAILED = "failed"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="import_jobs")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    file_name = models.CharField(max_length=255, help_text="The name of the uploaded file, as shown to its owner.")
    path = models.CharField(max_length=500, help_text="The file under IMPORT_UPLOAD_DIR; removed when the job ends.")
    options = models.JSONField(default=dict, blank=True)
    size_bytes = models.BigIntegerField()
    bytes_done = models.BigIntegerField(default=0)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    error = models.TextField(blank=True)
    summary = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.kind} import {self.pk} ({self.status})"

    @property
    def live(self) -> bool:
        return self.status in (self.Status.PENDING, self.Status.CHECKING, self.Status.WRITING)

    @property
    def percent(self) -> int:
        """Of the checking reading; the writing one shows 100 % and says "writing"."""
        if self.status in (self.Status.WRITING, self.Status.DONE):
            return 100
        return min(100, int(100 * self.bytes_done / self.size_bytes)) if self.size_bytes else 0
