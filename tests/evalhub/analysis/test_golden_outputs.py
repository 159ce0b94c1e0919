"""The analysis's outputs stay byte for byte what they were when the analysis result became typed (issue 22).

Stored outputs (``tests/evalhub/analysis/golden/``) of the four demo studies, each answered by the offline judge: the
analysis JSON, ``--format table`` and ``--format csv``, every CSV table of ``export --what tables`` and
``export --what ratings``. For an AltTest dataset (third-party data: never stored in the repository) only the
SHA-256 of each output is stored. Regenerate after an intended change with
``EVALHUB_WRITE_GOLDEN=1 .venv/bin/python -m pytest tests/evalhub/analysis/test_golden_outputs.py`` and review the diff.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import re
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.conftest import shared_path

GOLDEN = Path(__file__).with_name("golden")
WRITE = os.environ.get("EVALHUB_WRITE_GOLDEN") == "1"
DEMO_SLUGS = ("demo-story", "demo-meaning", "demo-fluency", "demo-pairwise")
# A fixed bootstrap size keeps the golden outputs quick to compute; the seed is the command's default (0).
N_BOOT = ["--n-boot", "200"]


# The ratings export's `created` column is the time the demo was loaded: the one value that must differ.
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?\+00:00")


def _command_output(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return TIMESTAMP.sub("<created>", out.getvalue())


def _outputs(slug: str) -> dict[str, str]:
    from evalhub.imports.exports import TABLE_COLUMNS

    outputs = {
        "analysis.json": _command_output("analyze", slug, "--format", "json", *N_BOOT),
        "analysis.txt": _command_output("analyze", slug, "--format", "table", *N_BOOT),
        "analysis.csv": _command_output("analyze", slug, "--format", "csv", *N_BOOT),
        "ratings.csv": _command_output("export", slug, "--what", "ratings"),
    }
    for table in TABLE_COLUMNS:
        outputs[f"table-{table}.csv"] = _command_output("export", slug, "--what", "tables", "--table", table, *N_BOOT)
    return outputs


def _compare_or_write(folder: Path, outputs: dict[str, str], *, hashed: bool) -> None:
    stored = {name: hashlib.sha256(text.encode()).hexdigest() if hashed else text for name, text in outputs.items()}
    if WRITE:
        folder.mkdir(parents=True, exist_ok=True)
        if hashed:
            (folder / "sha256.json").write_text(json.dumps(stored, indent=1, sort_keys=True) + "\n")
        else:
            for name, text in stored.items():
                (folder / name).write_bytes(text.encode())
        return
    if hashed:
        expected = json.loads((folder / "sha256.json").read_text())
    else:
        expected = {p.name: p.read_bytes().decode() for p in folder.iterdir()}
    assert sorted(stored) == sorted(expected)
    for name in expected:
        assert stored[name] == expected[name], f"{folder.name}/{name} differs from the stored output"


@pytest.fixture
def demo_answered(django_db_reset_sequences):
    """The demo studies, each answered by the offline judge (ids from 1: the outputs name runs by id)."""
    from evalhub.demo.loader import demo_judge_load, demo_load
    from llmjudge.runs.lifecycle import judge_run_execute_inline, judge_run_start

    studies = demo_load()
    judge = demo_judge_load(owner=studies[0].owner)
    judge.options = {}  # no latency, no refusals: deterministic answers
    judge.save()
    for study in studies:
        judge_run_execute_inline(run=judge_run_start(study=study, judge=judge, enqueue=False))
    return {s.slug: s for s in studies}


@pytest.mark.usefixtures("fresh_cache")
@pytest.mark.parametrize("slug", DEMO_SLUGS)
def test_demo_study_outputs_are_unchanged(demo_answered, slug):
    assert slug in demo_answered
    _compare_or_write(GOLDEN / slug, _outputs(slug), hashed=False)


@pytest.mark.usefixtures("fresh_cache")
def test_an_alttest_dataset_outputs_are_unchanged(django_db_reset_sequences):
    folder = shared_path("data", "AltTest", "data", "summeval")
    call_command("import_annotations", "alttest-summeval", "--humans", str(folder / "human_annotations.json"),
                 "--llm", str(folder / "llm_annotations.json"), "--create", "--questions", "auto",
                 stdout=io.StringIO())
    _compare_or_write(GOLDEN / "alttest-summeval", _outputs("alttest-summeval"), hashed=True)
