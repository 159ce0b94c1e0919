"""The demo's offline judge: the fake backend, slowed down a little so the progress bar visibly moves."""
from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser

from llmjudge.models import Judge

DEMO_JUDGE = "demo-fake"


def demo_judge_load(*, owner: AbstractBaseUser | None) -> Judge:
    judge, _ = Judge.objects.get_or_create(
        name=DEMO_JUDGE,
        defaults={
            "backend": Judge.Backend.FAKE,
            "model": "fake-model",
            "samples": 3,
            "concurrency": 4,
            "owner": owner,
            # A few refusals so the demo shows the re-ask and the refused status.
            "options": {"fake_latency": 0.15, "fake_refusal_rate": 0.05},
        },
    )
    return judge
