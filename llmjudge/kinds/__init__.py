"""The judge kinds, listed in one registry: each kind is one package ``llmjudge/kinds/<kind>/``.

* ``plain``: the paper's protocol, the study's own prompt.
* ``rubric``: Prometheus absolute (1-5 with rubric and optional reference) and relative (A/B).
* ``personalized``: PERSE, a rater's earlier ratings as the profile.
* ``persona``: CINEMETRIC, verified movie characters role-play a rater, majority vote.
* ``roleplay``: DRPE, static and dynamic roles in one batched prompt, confidence-weighted votes.

A kind's package holds its pure prompts and parsing (``prompts.py``, no ORM, no network), its
options with each default stated once (``options.py``), its prompt builder (``builder.py``), what a
run plans (``plan.py``) and, for kinds that ask calls before the ratings, its preparation
(``preparation.py``), and its registry entry (``kind.py``: a ``JudgeKind``). ``registry()`` below is
the only list of kinds: the run lifecycle, the chunks, the judge command and the preview read
everything from it. Nothing registers itself on import.

The registry imports the kinds when it is first used, not when this package is imported: importing
a kind's pure ``prompts`` module imports this package first, and it must not pull in Django.

Modules inside the kind packages import one another by full module path, never from this file or
a package's ``__init__`` (which would make every kind depend on every other). Prompt wording is data
in ``llmjudge/prompting/data/`` (see its README); docs/judge-kinds.md explains the choices and shows how to
add a kind.
"""
from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from llmjudge.kinds.common.errors import KindError
from llmjudge.kinds.common.option_values import to_json, without_backend_keys

if TYPE_CHECKING:
    from annotations.models import Study
    from llmjudge.kinds.common.plan import Pending, Progress, Row
    from llmjudge.kinds.common.spec import JudgeKind
    from llmjudge.models import JudgeRun
    from llmjudge.runs.config import JudgeConfig

__all__ = [
    "PER_RATER_KINDS", "KindError", "is_per_rater", "kind_for", "kind_names", "kind_options", "options_for",
    "planned_rows", "planned_steps", "prepare_steps", "registry", "to_json",
]


@functools.cache
def registry() -> dict[str, JudgeKind]:
    """Every judge kind by name, in the order the pages list them. Adding a kind: its package, and
    one line here."""
    from llmjudge.kinds.persona.kind import KIND as persona
    from llmjudge.kinds.personalized.kind import KIND as personalized
    from llmjudge.kinds.plain.kind import KIND as plain
    from llmjudge.kinds.roleplay.kind import KIND as roleplay
    from llmjudge.kinds.rubric.kind import KIND as rubric

    return {kind.name: kind for kind in (plain, rubric, personalized, persona, roleplay)}


def kind_names() -> tuple[str, ...]:
    return tuple(registry())


def kind_for(name: str) -> JudgeKind:
    try:
        return registry()[name]
    except KeyError:
        raise ValueError(f"unknown judge kind {name!r} (known: {', '.join(registry())})") from None


# The kinds whose every rating predicts one human rater (``JudgeKind.per_rater`` of their entries), named here
# too so that the analysis can ask without importing every kind: their builders import the engine, the
# backends and the HTTP client (0.1 s of CPU in a fresh `manage.py analyze`). tests/llmjudge/kinds/test_registry.py
# checks that the two agree.
PER_RATER_KINDS = frozenset({"personalized", "persona"})


def is_per_rater(name: str) -> bool:
    """Whether each rating of this kind predicts one human rater (personalized, persona)."""
    return name in PER_RATER_KINDS


def options_for(kind: str, raw: Mapping[str, Any] | None) -> object:
    """Validated options of a judge kind (its frozen dataclass); None for the plain judge (it has none).
    Only the kind's own functions read them, each typed with its kind's class."""
    return kind_for(kind).options(dict(raw or {}))


def kind_options(kind: str, options: Mapping[str, Any] | None) -> object:
    """A judge's options as its kind reads them: the backends' own keys left out, the rest validated."""
    return options_for(kind, without_backend_keys(options))


def planned_rows(
    *, study: Study, config: JudgeConfig, items: list[int], questions: list[int]
) -> tuple[list[Row], dict[str, Any]]:
    """Every (item, question, sample, target rater) the run predicts, and what to add to its params."""
    kind = kind_for(config.kind)
    options = kind_options(config.kind, config.options) if kind.has_options else None
    if kind.per_rater and study.is_pairwise:
        raise KindError(f"a {config.kind} judge predicts scores on a scale; study {study.slug!r} is pairwise")
    if study.is_categorical and kind.name != "plain":
        # Only the plain judge reads an answer as one of the study's labels (llmjudge.parsing.labels).
        raise KindError(f"a {config.kind} judge answers with scores or A/B choices; study {study.slug!r} is "
                        "categorical (named labels): use the plain judge")
    kind.study_check(study=study, config=config, options=options)
    return kind.planned_rows(study=study, config=config, options=options, items=items, questions=questions)


def planned_steps(*, config: JudgeConfig, rows: list[Row]) -> list[tuple[str, str]]:
    """The preparation calls known before any answer, created with the ratings so that the run's
    progress counts them from the start."""
    kind = kind_for(config.kind)
    options = kind_options(config.kind, config.options) if kind.has_options else None
    return kind.planned_steps(options=options, rows=rows)


def prepare_steps(*, run: JudgeRun, config: JudgeConfig, pending: list[Pending], on_progress: Progress = None) -> str:
    """Ask the steps the pending (item, question, target rater) rows need first; returns a fatal error.

    Stops asking as soon as the run is paused or cancelled (the caller then asks no rating).
    """
    return kind_for(config.kind).prepare(run=run, config=config, pending=pending, on_progress=on_progress)
