"""Whether a panel can run on a study (its mode follows the study) and the role calls known before
any answer (one per item, when the panel generates dynamic roles)."""
from __future__ import annotations

from annotations.models import Study
from llmjudge.kinds.common.errors import KindError
from llmjudge.kinds.common.plan import Row
from llmjudge.kinds.roleplay.options import RoleplayOptions
from llmjudge.runs.config import JudgeConfig


def panel_mode(study: Study, config: JudgeConfig, options: RoleplayOptions) -> str:
    """The study decides a panel's mode (pairwise studies vote, others score); a judge that names the
    other mode explicitly is refused rather than silently switched."""
    mode = "pairwise" if study.is_pairwise else "pointwise"
    if "mode" in (config.options or {}) and options.mode != mode:
        raise KindError(
            f"role-player judge has mode={options.mode}, but study {study.slug!r} is a "
            f"{'pairwise' if study.is_pairwise else 'Likert'} study (needs mode={mode})"
        )
    return mode


def roleplay_study_check(*, study: Study, config: JudgeConfig, options: RoleplayOptions) -> None:
    panel_mode(study, config, options)


def roleplay_steps(*, options: RoleplayOptions, rows: list[Row]) -> list[tuple[str, str]]:
    if not options.dynamic_roles:
        return []
    return [("roles", str(i)) for i in sorted({i for i, _, _, _ in rows})]
