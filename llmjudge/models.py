"""LLM judges, their runs on a study, and the ratings they produce.

One LLMRating per (run, item, question, sample), enforced by the database, so a redelivered or
retried task updates its row instead of adding a second one. A judge's samples act as raters.
"""
from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from annotations.models import Item, Question, Rater, Study
from llmjudge.backends.endpoint_rules import EndpointRefused, check_base_url, check_key_variable


# The field validators run in full_clean: the admin's form, the judge-creation service and the command
# all reach them, and the backend repeats both checks at call time (llmjudge/backends/endpoint_rules.py).
def validate_base_url(value: str) -> None:
    try:
        check_base_url(value)
    except EndpointRefused as exc:
        raise ValidationError(str(exc)) from None


def validate_key_variable(value: str) -> None:
    try:
        check_key_variable(value)
    except EndpointRefused as exc:
        raise ValidationError(str(exc)) from None


# The temperature rule, in one place: the judge's check constraint below, the judge command and
# form (llmjudge.runs.config.temperature_in_range) and the experiment grid all allow this closed range.
TEMPERATURE_MIN, TEMPERATURE_MAX = 0, 2


class Judge(models.Model):
    class Kind(models.TextChoices):
        PLAIN = "plain", "Plain (the paper's protocol)"
        RUBRIC = "rubric", "Rubric (Prometheus)"
        PERSONALIZED = "personalized", "Personalized (PERSE)"
        PERSONA = "persona", "Persona (CINEMETRIC)"
        ROLEPLAY = "roleplay", "Role-player panel (DRPE)"

    class Backend(models.TextChoices):
        FAKE = "fake", "Fake (offline, deterministic)"
        OPENAI = "openai", "OpenAI API"
        OPENAI_COMPATIBLE = "openai-compatible", "OpenAI-compatible server (vLLM, llama.cpp, Ollama, TGI)"
        TRANSFORMERS = "transformers", "Local transformers worker"
        IMPORTED = "imported", "Imported ratings (no calls)"

    class Variant(models.TextChoices):
        ORIGINAL = "original", "Original"
        PERSONA = "persona", "Persona prefix"
        EXPLAIN = "explain", "Ask for an explanation"
        CUSTOM = "custom", "Custom prefix/suffix"

    class Mode(models.TextChoices):
        COMPLETION = "completion", "One query per question"
        CHAT = "chat", "One conversation per item, questions in order"

    # Unique per owner (the constraints below), not across the site: a global name told one researcher the
    # names of another's judges and let an imported pool squat them (issue 23, finding 8).
    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.PLAIN)
    backend = models.CharField(max_length=30, choices=Backend.choices, default=Backend.FAKE)
    # Not a URLField: its validator wants a dotted host name, and servers are often reached by a
    # single-label name on an internal network (http://vllm:8000/v1 in docker compose).
    base_url = models.CharField(max_length=500, blank=True, validators=[validate_base_url])
    model = models.CharField(max_length=200, blank=True)
    api_key_env = models.CharField(
        max_length=100,
        blank=True,
        validators=[validate_key_variable],
        help_text="Name of the environment variable holding the API key (NAME or NAME_FILE), one that "
        "JUDGE_KEY_VARIABLES allows. The key itself is never stored.",
    )
    temperature = models.FloatField(default=1.0)
    top_p = models.FloatField(default=0.9)
    max_tokens = models.PositiveIntegerField(default=256)
    samples = models.PositiveIntegerField(default=3)
    seed = models.BigIntegerField(null=True, blank=True)
    variant = models.CharField(max_length=20, choices=Variant.choices, default=Variant.ORIGINAL)
    instruction_prefix = models.TextField(blank=True)
    question_suffix = models.TextField(blank=True)
    mode = models.CharField(max_length=20, choices=Mode.choices, default=Mode.COMPLETION)
    concurrency = models.PositiveIntegerField(default=64)
    rpm = models.PositiveIntegerField(null=True, blank=True, help_text="Requests per minute, all workers.")
    options = models.JSONField(default=dict, blank=True, help_text="Kind-specific settings.")
    # Every judge is created with an owner (the command's --owner, the admin's user). Only the owner runs
    # it unless it is shared; a judge whose owner was deleted runs for superusers only, or when shared.
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="judges"
    )
    shared = models.BooleanField(default=False, help_text="Every researcher may run this judge (its settings "
                                 "and key variable stay the owner's).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=models.Q(samples__gte=1), name="judge_samples_at_least_one"),
            models.CheckConstraint(
                condition=models.Q(temperature__gte=TEMPERATURE_MIN, temperature__lte=TEMPERATURE_MAX),
                name="judge_temperature_0_2",
            ),
            models.CheckConstraint(condition=models.Q(top_p__gt=0, top_p__lte=1), name="judge_top_p_0_1"),
            # Two conditional constraints: NULLs are distinct in a unique index, so one constraint over (owner,
            # name) would let two judges without an owner (a deleted user's) share a name.
            models.UniqueConstraint(fields=["owner", "name"], condition=models.Q(owner__isnull=False),
                                    name="judge_name_unique_per_owner"),
            models.UniqueConstraint(fields=["name"], condition=models.Q(owner__isnull=True),
                                    name="judge_name_unique_without_owner"),
        ]

    def __str__(self) -> str:
        return self.name


class Experiment(models.Model):
    """A grid of runs launched together: judges x temperatures x instruction variants (the paper's table 3)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="experiments")
    name = models.CharField(max_length=200)
    grid = models.JSONField(default=dict, blank=True, help_text="judges, temperatures and variants launched.")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="experiments"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.name


class JudgeRun(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        PAUSED = "paused", "Paused"
        CANCELLED = "cancelled", "Cancelled"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="judge_runs")
    judge = models.ForeignKey(Judge, on_delete=models.PROTECT, related_name="runs")
    experiment = models.ForeignKey(
        Experiment, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    params = models.JSONField(default=dict, blank=True, help_text="The judge's settings when the run started.")
    calls_total = models.PositiveIntegerField(default=0)
    calls_done = models.PositiveIntegerField(default=0)
    calls_failed = models.PositiveIntegerField(default=0)
    tokens_prompt = models.BigIntegerField(default=0)
    tokens_completion = models.BigIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.judge.name} on {self.study.slug} (run {self.pk})"


class LLMRating(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        OK = "ok", "OK"
        UNPARSEABLE = "unparseable", "Unparseable"
        REFUSED = "refused", "Refused"
        ERROR = "error", "Error"

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="ratings")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="llm_ratings")
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="llm_ratings")
    sample = models.PositiveIntegerField()
    # A position-bias probe (issue 19): asked with the pair's A and B swapped. Swapped samples take the
    # sample indexes after the judge's own (sample >= the run's ``samples``), so the unique key stays
    # (run, item, question, sample); the stored score is mapped back to the original orientation.
    swapped = models.BooleanField(default=False)
    # Personalized and persona judges predict one human rater's scores: the rater predicted.
    target_rater = models.ForeignKey(
        Rater, null=True, blank=True, on_delete=models.CASCADE, related_name="predicted_ratings"
    )
    prompt = models.TextField(blank=True)
    prompt_hash = models.CharField(max_length=64, blank=True)
    template_version = models.CharField(max_length=50, blank=True)
    raw = models.TextField(blank=True, help_text="The model's final answer, verbatim (its reasoning trace apart).")
    # The model's reasoning: what an OpenAI-protocol server sent beside the answer (``reasoning_content``,
    # ``reasoning``) and a trace the parser split off the answer (<think>...</think>, gpt-oss channels). Shown
    # folded on the run page, never scored.
    reasoning = models.TextField(blank=True, default="", help_text="The model's reasoning trace, never scored.")
    history = models.JSONField(default=list, blank=True, help_text="Every attempt's raw answer or error.")
    score = models.FloatField(null=True, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    rationale = models.TextField(blank=True)
    # Why the rating has its status when that is not the parser's ordinary reading: "parser error" (the parser
    # raised on the answer), "storage error" (the database refused it), ...; "" when the answer was read as usual.
    reason = models.CharField(max_length=200, blank=True, default="")
    attempts = models.PositiveIntegerField(default=0)
    # A person's reading of an answer the parser could not read (llmjudge/runs/review.py): when and by whom. Such a
    # rating is ok with the person's score, counted apart, and ``reparse`` leaves it alone. The time marks it: the
    # reader's account may be deleted later (read_by NULL), the reading stays a person's.
    read_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    read_at = models.DateTimeField(null=True, blank=True)
    model = models.CharField(max_length=200, blank=True)
    params = models.JSONField(default=dict, blank=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    tokens_prompt = models.PositiveIntegerField(null=True, blank=True)
    tokens_completion = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["run", "item", "question", "sample"]
        constraints = [
            # Two conditional constraints: PostgreSQL treats NULLs as distinct, so one constraint over
            # target_rater would let a plain judge's row be inserted twice.
            models.UniqueConstraint(
                fields=["run", "item", "question", "sample"],
                condition=models.Q(target_rater__isnull=True),
                name="one_llm_rating_per_run_item_question_sample",
            ),
            models.UniqueConstraint(
                fields=["run", "item", "question", "sample", "target_rater"],
                condition=models.Q(target_rater__isnull=False),
                name="one_llm_rating_per_run_item_question_sample_rater",
            ),
            models.CheckConstraint(
                condition=models.Q(status="ok", score__isnull=False)
                | (~models.Q(status="ok") & models.Q(score__isnull=True)),
                name="llm_rating_score_exactly_when_ok",
            ),
        ]
        indexes = [
            models.Index(fields=["run", "status"]),
            models.Index(fields=["question", "item"]),
            # The analysis counts the ratings a person read per run on every dashboard view: few rows, found through
            # this partial index instead of a scan of every ok rating of the study's runs.
            models.Index(fields=["run"], condition=models.Q(read_at__isnull=False), name="llm_rating_read_by_person"),
        ]

    def __str__(self) -> str:
        return f"run {self.run_id} {self.item_id}/{self.question_id}#{self.sample}: {self.status}"


class JudgeCall(models.Model):
    """One step of a multi-step judge that is not itself a rating (persona: propose, verify; panel: roles).

    Unique per (run, step, key), so a rerun asks only the steps that have no stored answer.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        OK = "ok", "OK"
        UNPARSEABLE = "unparseable", "Unparseable"
        REFUSED = "refused", "Refused"
        ERROR = "error", "Error"

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="calls")
    step = models.CharField(max_length=20, help_text="propose | verify | roles")
    key = models.CharField(max_length=200, help_text="e.g. rater id and round, or item id")
    prompt = models.TextField(blank=True)
    prompt_hash = models.CharField(max_length=64, blank=True)
    template_version = models.CharField(max_length=50, blank=True)
    raw = models.TextField(blank=True)
    parsed = models.JSONField(default=dict, blank=True, help_text="What the step's parser made of the answer.")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    history = models.JSONField(default=list, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    model = models.CharField(max_length=200, blank=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    tokens_prompt = models.PositiveIntegerField(null=True, blank=True)
    tokens_completion = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["run", "step", "key"]
        constraints = [models.UniqueConstraint(fields=["run", "step", "key"], name="one_judge_call_per_run_step_key")]

    def __str__(self) -> str:
        return f"run {self.run_id} {self.step}:{self.key}: {self.status}"
