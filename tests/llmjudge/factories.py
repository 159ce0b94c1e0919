"""Small builders for judging tests: a judge on the localhost OpenAI-compatible server, a run executed inline."""
from __future__ import annotations

from typing import Any

from annotations.models import Study
from llmjudge.models import Judge, JudgeRun
from llmjudge.runs import lifecycle as judging
from tests.support.openai_server import OpenAIServer


def openai_judge(server: OpenAIServer, name: str, kind: str, options: dict[str, Any] | None = None,
                 **fields: Any) -> Judge:
    """A judge of ``kind`` that calls ``server`` (one sample unless ``samples`` is given)."""
    fields.setdefault("samples", 1)
    fields.setdefault("shared", True)  # unowned: runnable by every researcher only when shared
    return Judge.objects.create(
        name=name, kind=kind, options=options or {}, backend=Judge.Backend.OPENAI_COMPATIBLE,
        base_url=f"{server.url}/v1", model="test-model", **fields,
    )


def run_inline(study: Study, judge: Judge, **overrides: Any) -> JudgeRun:
    """A run started without the broker and executed in this process, read back from the database."""
    run = judging.judge_run_start(study=study, judge=judge, overrides=overrides or None, enqueue=False)
    judging.judge_run_execute_inline(run=run)
    run.refresh_from_db()
    return run
