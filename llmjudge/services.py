"""Creating judges with checked settings (the command, the demo and tests go through here)."""
from __future__ import annotations

import re
from typing import Any, TypedDict, Unpack

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from llmjudge.backends.endpoint_rules import EndpointRefused, KeyHolder, check_base_url, check_key_variable
from llmjudge.backends.registry import BACKENDS
from llmjudge.kinds import kind_names, kind_options
from llmjudge.models import Judge
from llmjudge.runs.config import temperature_in_range

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class JudgeSpecError(ValueError):
    """A judge setting is unusable; the message names it and says what is allowed."""


class JudgeSpec(TypedDict, total=False):
    """A judge's settings (the Judge model's fields): each one left out takes the model's default."""

    kind: str
    backend: str
    base_url: str
    model: str
    api_key_env: str
    temperature: float
    top_p: float
    max_tokens: int
    samples: int
    seed: int | None
    variant: str
    instruction_prefix: str
    question_suffix: str
    mode: str
    concurrency: int
    rpm: int | None
    options: dict[str, Any]  # the kind's options, stored as JSON (llmjudge.kinds checks them)


def _check(spec: JudgeSpec, owner: User) -> None:
    backend = spec.get("backend", "fake")
    if backend not in BACKENDS:
        raise JudgeSpecError(f"--backend {backend!r}: choose one of {', '.join(BACKENDS)}")
    if backend == "openai-compatible" and not spec.get("base_url"):
        raise JudgeSpecError("--base-url is required for an openai-compatible backend (e.g. http://localhost:8000/v1)")
    if backend != "fake" and not spec.get("model"):
        raise JudgeSpecError("--model is required")
    if not temperature_in_range(float(spec.get("temperature", 1.0))):
        raise JudgeSpecError(f"--temperature {spec['temperature']}: must be between 0 and 2")
    if not 0 < float(spec.get("top_p", 0.9)) <= 1:
        raise JudgeSpecError(f"--top-p {spec['top_p']}: must be in (0, 1]")
    for value, flag in ((spec.get("samples"), "--samples"), (spec.get("concurrency"), "--concurrency"),
                        (spec.get("max_tokens"), "--max-tokens")):
        if value is not None and int(value) < 1:
            raise JudgeSpecError(f"{flag} {value}: must be at least 1")
    rpm = spec.get("rpm")
    if rpm is not None and int(rpm) < 1:
        raise JudgeSpecError(f"--rpm {rpm}: must be at least 1 (leave it out for no limit)")
    if spec.get("variant", "original") not in Judge.Variant.values:
        raise JudgeSpecError(f"--variant {spec['variant']!r}: choose one of {', '.join(Judge.Variant.values)}")
    if spec.get("mode", "completion") not in Judge.Mode.values:
        raise JudgeSpecError(f"--mode {spec['mode']!r}: choose one of {', '.join(Judge.Mode.values)}")
    if spec.get("kind", "plain") not in kind_names():
        raise JudgeSpecError(f"--kind {spec['kind']!r}: unknown judge kind (known: {', '.join(kind_names())})")
    kind = spec.get("kind", "plain")
    try:
        kind_options(kind, spec.get("options"))
    except ValueError as exc:
        raise JudgeSpecError(f"--kind {kind}: {exc}") from None
    env = spec.get("api_key_env", "")
    if env and not _ENV_NAME.match(env):
        raise JudgeSpecError(f"--api-key-env {env!r}: give the NAME of an environment variable, not the key itself")
    try:
        check_key_variable(env, KeyHolder.of(owner))  # granted to this owner (JUDGE_KEY_VARIABLES scopes)
    except EndpointRefused as exc:
        raise JudgeSpecError(f"--api-key-env: {exc}") from None
    try:
        check_base_url(spec.get("base_url", ""))
    except EndpointRefused as exc:
        raise JudgeSpecError(f"--base-url: {exc}") from None


@transaction.atomic
def judge_create(*, name: str, owner: User | None, shared: bool = False, **spec: Unpack[JudgeSpec]) -> Judge:
    """Create a judge; refuses an existing name rather than silently changing a judge with runs.

    Every judge has an owner (who alone runs it, unless ``shared``): None is refused.
    """
    if not name:
        raise JudgeSpecError("a judge needs a name")
    if owner is None:
        raise JudgeSpecError("a judge needs an owner (--owner USERNAME)")
    if Judge.objects.filter(owner=owner, name=name).exists():
        # Names are unique per owner: the words name only the owner's own judges, never another researcher's.
        raise JudgeSpecError(f"a judge named {name!r} already exists among {owner.get_username()}'s judges")
    _check(spec, owner)
    if not spec.get("model") and spec.get("backend", "fake") == "fake":
        spec["model"] = "fake-model"
    judge = Judge(name=name, owner=owner, shared=shared, **spec)
    try:
        judge.full_clean()
    except ValidationError as exc:
        raise JudgeSpecError("; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())) from None
    judge.save()
    return judge
