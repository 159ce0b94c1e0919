"""The role-player panel kind's registry entry."""
from __future__ import annotations

from llmjudge.kinds.common.spec import JudgeKind
from llmjudge.kinds.roleplay.builder import RoleplayBuilder
from llmjudge.kinds.roleplay.options import roleplay_options
from llmjudge.kinds.roleplay.plan import roleplay_steps, roleplay_study_check
from llmjudge.kinds.roleplay.preparation import roleplay_prepare

KIND = JudgeKind(
    "roleplay",
    roleplay_options,
    RoleplayBuilder(),
    study_check=roleplay_study_check,
    planned_steps=roleplay_steps,
    prepare=roleplay_prepare,
)
