"""A categorical study end to end: created from a file, rated by raters in the browser-like test client,
judged by LLMs answering with label words (the offline fake backend and the local OpenAI-protocol server),
and analysed as nominal data: nominal alpha and the majority table, no Kendall or Welch."""
from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from annotations.models import HumanRating, Item, Rater, Study
from evalhub.analysis import AnalysisOptions, study_analysis
from evalhub.stats import krippendorff_alpha
from llmjudge.kinds import KindError
from llmjudge.models import Judge, LLMRating
from llmjudge.runs import lifecycle as judging
from tests.annotations.test_categorical import SPEC
from tests.support.openai_server import Behaviour, OpenAIServer
from tests.support.raterkit import answer, open_study

pytestmark = pytest.mark.django_db

REVIEWS = ["The pasta was wonderful.", "Cold soup, rude waiter.", "We only had drinks."]
# The raters' labels per review (1 = Positive, 2 = Negative, 3 = unknown): unanimous, 2-1, unanimous.
CHOICES = {"r0": [1, 1, 1], "r1": [2, 2, 1], "r2": [3, 3, 3]}


def _server_answer(prompt: str, request: dict) -> str:
    # Label words as models write them: in prose, after a keyed line, in bold.
    if "wonderful" in prompt:
        return "The reviewer loves the dish, so the sentiment toward the food is positive."
    if "Cold soup" in prompt:
        return "The soup was served cold.\nAnswer: **Negative**"
    return "Nothing is said about the food: unknown"


@pytest.fixture
def rated(tmp_path, client, researcher):
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({**SPEC, "ordering": "fixed", "raters_per_item": 3}), encoding="utf-8")
    call_command("create_study", "sentiment", "--file", str(spec), "--owner", "owner")
    study = open_study(Study.objects.get(slug="sentiment"))
    for n, text in enumerate(REVIEWS):
        Item.objects.create(study=study, external_id=f"r{n}", group="reviews", position=n, fields={"review": text})
    for k in range(3):
        rater = Rater.objects.create(study=study, external_id=f"rater-{k}")
        for item in ("r0", "r1", "r2"):  # fixed ordering: the items come in import order
            answer(client, rater, CHOICES[item][k])
    return study


def test_raters_labels_are_stored_as_the_codes_they_chose(rated):
    stored = {(r, i): s for r, i, s in HumanRating.objects.values_list("rater__external_id", "item__external_id",
                                                                         "score")}
    assert stored == {(f"rater-{k}", item): float(codes[k]) for item, codes in CHOICES.items() for k in range(3)}


def test_a_judge_answering_label_words_is_read_as_the_labels_and_analysed_as_nominal(rated, researcher):
    with OpenAIServer(Behaviour(answer=_server_answer)) as server:
        judge = Judge.objects.create(name="local", owner=researcher, backend=Judge.Backend.OPENAI_COMPATIBLE,
                                     base_url=f"{server.url}/v1", model="test-model", samples=1)
        run = judging.judge_run_start(study=rated, judge=judge, enqueue=False)
        judging.judge_run_execute_inline(run=run)
    ratings = dict(LLMRating.objects.filter(run=run).values_list("item__external_id", "score"))
    assert ratings == {"r0": 1.0, "r1": 2.0, "r2": 3.0}
    assert set(LLMRating.objects.filter(run=run).values_list("status", flat=True)) == {"ok"}

    result = study_analysis(study=rated, options=AnalysisOptions(n_boot=20))
    assert result.settings.measurement == "nominal" and result.settings.value_domain == (1.0, 2.0, 3.0)
    human = next(c for c in result.cells if c.pool == "human")
    matrix = [CHOICES["r0"], CHOICES["r1"], CHOICES["r2"]]
    assert human.alpha["nominal"] == pytest.approx(krippendorff_alpha(matrix, level="nominal").value)
    # The judge's label equals the human majority on every item (r1's majority is Negative, 2-1).
    assert [(m.pool, m.n_items, m.n_agree, m.agreement_pct) for m in result.majority] == [
        ("local", 3, 3, 100.0)]
    assert result.kendall == result.welch == result.pairwise_kendall == ()
    assert result.not_computed["kendall"].startswith("categorical study: labels are nominal")


def test_the_offline_fake_judge_answers_with_the_labels_and_every_answer_parses(rated, researcher):
    judge = Judge.objects.create(name="fake", owner=researcher, backend=Judge.Backend.FAKE, model="m", samples=4)
    run = judging.judge_run_start(study=rated, judge=judge, enqueue=False)
    judging.judge_run_execute_inline(run=run)
    rows = list(LLMRating.objects.filter(run=run).values_list("status", "score", "raw"))
    assert len(rows) == 12 and {status for status, _, _ in rows} == {"ok"}
    labels = ["Positive", "Negative", "unknown"]
    for _, score, raw in rows:
        assert labels[int(score) - 1] in raw  # the stored code is the label the answer names


def test_only_the_plain_judge_runs_on_a_categorical_study(rated, researcher):
    judge = Judge.objects.create(name="rubric", owner=researcher, backend=Judge.Backend.FAKE, model="m",
                                 kind="rubric")
    with pytest.raises((KindError, judging.RunError), match="categorical"):
        judging.judge_run_start(study=rated, judge=judge, enqueue=False)


def test_the_dashboard_names_the_labels_and_shows_the_majority_table(client, rated, researcher):
    client.force_login(researcher)
    html = client.get(f"/studies/{rated.slug}/").content.decode()
    assert "Categorical study: each label is stored as its number (1 = Positive, 2 = Negative, 3 = unknown)" in html
    assert "Pairwise study" not in html and 'id="table-majority"' in html
    assert "Not shown for a categorical study" in html and "Labels are nominal" in html
    assert 'id="kendall"' not in html and 'id="welch"' not in html
