"""A panel run's preparation: each item's dynamic roles (``JudgeCall`` step ``roles``), generated
once and de-duplicated against the static roles, before the panel is asked."""
from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from llmjudge.engine.conversation import RunView
from llmjudge.kinds.common.calls import Ask, Progress, calls_for, execute_calls, reset_errors
from llmjudge.kinds.common.items import item_text
from llmjudge.kinds.common.option_values import without_backend_keys
from llmjudge.kinds.common.plan import Pending
from llmjudge.kinds.roleplay.clustering import dedupe_roles
from llmjudge.kinds.roleplay.embedding import minilm_embedder
from llmjudge.kinds.roleplay.options import RoleplayOptions, roleplay_options, static_role_options
from llmjudge.kinds.roleplay.prompts import dynamic_roles_prompt
from llmjudge.kinds.roleplay.roles import Role, parse_roles, static_roles
from llmjudge.models import JudgeCall, JudgeRun
from llmjudge.runs.config import JudgeConfig


@functools.cache
def _embedder() -> Callable:
    return minilm_embedder()


def panel_roles(run: RunView, item_id: int) -> list[Role]:
    options = roleplay_options(without_backend_keys(run.params.get("options")))
    static = panel_roles_static(options)
    if not options.dynamic_roles:
        return static
    # run_id: a preview passes a run not yet started (no pk, no calls).
    call = JudgeCall.objects.filter(run_id=run.pk, step="roles", key=str(item_id)).first()
    kept = (call.parsed or {}).get("kept") if call else None
    if kept is None:
        return static
    return [Role(**r) for r in kept]


def roleplay_prepare(
    *, run: JudgeRun, config: JudgeConfig, pending: list[Pending], on_progress: Progress = None
) -> str:
    options = roleplay_options(without_backend_keys(config.options))
    if not options.dynamic_roles:
        return ""
    study = run.study
    static = panel_roles_static(options)
    calls = calls_for(run, "roles", (str(item) for item, _, _ in pending))
    items = {i.pk: i for i in study.items.filter(pk__in=[int(k) for k in calls])}

    def parser(text: str) -> dict[str, Any]:
        found = parse_roles(text)
        if not found:
            return {"status": "unparseable", "roles": [], "kept": [asdict(r) for r in static]}
        # The panel finds each role's answer by its name: a generated role named like an earlier one
        # (e.g. a dynamic "Editor" beside the static one) is the same reader and is left out.
        seen = {r.name.casefold() for r in static}
        unique = []
        for role in found:
            if role.name.casefold() not in seen:
                seen.add(role.name.casefold())
                unique.append(role)
        kept = dedupe_roles(
            [*static, *unique], eps=options.eps, min_samples=options.min_samples, embed=_embedder()
        )
        return {"status": "ok", "roles": [asdict(r) for r in found], "kept": [asdict(r) for r in kept]}

    asks: list[Ask] = []
    for key, call in calls.items():
        if call.status in ("pending", "error"):
            item = items[int(key)]
            context = str(item.fields.get(options.context_field, "")) if options.context_field else ""
            prompt = dynamic_roles_prompt(
                item_text(study, item),
                options.dynamic_roles,
                style=options.dynamic_style,
                context=context,
                noun=options.noun,
            )
            asks.append((call, prompt, parser))
    reset_errors([a[0] for a in asks])
    return execute_calls(run, config, asks, on_progress)


def panel_roles_static(options: RoleplayOptions) -> list[Role]:
    return static_roles(static_role_options(options))
