"""The registry of judge kinds: one entry per Judge.Kind, each with what the pipeline needs."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from llmjudge.kinds import PER_RATER_KINDS, is_per_rater, kind_for, kind_names, registry
from llmjudge.models import Judge

REPO_ROOT = Path(__file__).resolve().parents[3]


def test_the_registry_lists_exactly_the_kinds_a_judge_can_have():
    assert kind_names() == tuple(Judge.Kind.values)
    assert all(name == kind.name for name, kind in registry().items())


def test_per_rater_kinds_are_the_personalized_and_persona_judges():
    assert {name for name in kind_names() if is_per_rater(name)} == {"personalized", "persona"}
    assert not is_per_rater("no-such-kind")


def test_the_per_rater_list_the_analysis_reads_agrees_with_the_kinds_entries():
    assert {name for name, kind in registry().items() if kind.per_rater} == PER_RATER_KINDS


def test_asking_whether_a_kind_is_per_rater_imports_no_kind():
    code = """
import sys
sys.path.insert(0, sys.argv[1])
from llmjudge.kinds import is_per_rater
assert is_per_rater("persona") and not is_per_rater("plain")
loaded = sorted(m for m in sys.modules if m.endswith(".kind") or m.startswith("llmjudge.backends"))
assert not loaded, loaded
"""
    completed = subprocess.run(
        [sys.executable, "-c", code, str(REPO_ROOT)], capture_output=True, text=True, timeout=120, check=False
    )
    assert completed.returncode == 0, completed.stderr


def test_an_unknown_kind_is_refused_naming_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown judge kind 'checklist' \(known: plain, rubric, "):
        kind_for("checklist")


def test_importing_the_kinds_package_registers_nothing_and_imports_no_django():
    code = """
import sys
sys.path.insert(0, sys.argv[1])
import llmjudge.kinds, llmjudge.kinds.persona.prompts
assert "llmjudge.kinds.plain.kind" not in sys.modules  # the registry imports the kinds when first used
leaked = sorted(m for m in sys.modules if m.split(".")[0] == "django")
assert not leaked, leaked
"""
    completed = subprocess.run(
        [sys.executable, "-c", code, str(REPO_ROOT)], capture_output=True, text=True, timeout=120, check=False
    )
    assert completed.returncode == 0, completed.stderr


@pytest.mark.django_db
def test_a_plain_judge_runs_with_options_left_from_another_kind(story_with_items, make_judge):
    from llmjudge.runs import lifecycle as judging

    judge = make_judge("was-persona", options={"method": "plain", "batch_size": 4})  # kind changed in the admin
    run = judging.judge_run_start(study=story_with_items, judge=judge, enqueue=False)
    assert run.calls_total == story_with_items.items.count() * story_with_items.questions.count() * 3
