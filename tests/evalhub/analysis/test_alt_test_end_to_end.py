"""The verdict end to end on the authors' data: import_annotations, then analyze --format json, against the
independent computation of tests/evalhub/stats/test_alt_test_real.py on the raw files (issue 14's done-when)."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from tests.conftest import shared_path
from tests.evalhub.stats.test_alt_test_real import reference_alt_test
from tests.support.alt_test_data import AUTHORS_SETTINGS

pytestmark = pytest.mark.django_db

QUESTIONS = {"summeval": "auto", "framing": "auto"}


def _analysis(slug: str, scoring: str, epsilon: float) -> dict:
    out = io.StringIO()
    call_command("analyze", slug, "--format", "json", "--alt-scoring", scoring, "--alt-epsilon", str(epsilon),
                 "--n-boot", "10", stdout=out)
    return json.loads(out.getvalue())


@pytest.mark.parametrize("dataset", ["summeval", "framing"])
def test_imported_dataset_gives_the_independent_omega_and_rho_for_every_llm(dataset: str) -> None:
    folder = shared_path("data", "AltTest", "data", dataset)
    slug = f"alttest-{dataset.replace('_', '-')}"
    call_command("import_annotations", slug, "--humans", str(folder / "human_annotations.json"),
                 "--llm", str(folder / "llm_annotations.json"), "--create", "--questions", QUESTIONS[dataset],
                 stdout=io.StringIO())
    scoring, epsilon = AUTHORS_SETTINGS[dataset]
    result = _analysis(slug, scoring, epsilon)
    humans_raw = json.loads((folder / "human_annotations.json").read_text())
    llms_raw = json.loads((folder / "llm_annotations.json").read_text())
    label_of = {p["name"]: p.get("label", p["name"]) for p in result["pools"]}
    multi = len({r["question"] for r in result["alt_test"]}) > 1
    rows = [r for r in result["alt_test"] if r["question"] == "(all)" or not multi]
    seen = set()
    for row in rows:
        if row["group"] != "imported":
            continue
        name = next(n for n in llms_raw if label_of[row["pool"]].split(" · ")[0] == n)
        expected = reference_alt_test(humans_raw, llms_raw[name], scoring, epsilon)
        assert (row["scoring"], row["epsilon"]) == (scoring, epsilon)
        assert row["winning_rate"] == pytest.approx(expected["omega"], abs=1e-12), name
        assert row["advantage_probability"] == pytest.approx(expected["rho"], abs=1e-12), name
        assert row["passed"] == (expected["omega"] >= 0.5)
        assert {h["rater"] for h in row["humans"] if h["rejected"]} == expected["rejected"]
        seen.add(name)
    assert seen == set(llms_raw)
