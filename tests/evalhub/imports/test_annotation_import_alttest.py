"""The nine AltTest datasets (../shared/data/AltTest, never copied into the repository) import with the
documented command each, and what is stored is what the files say: every label, and the same alt-test
values as evalhub.stats.alt_test computes on the files directly (through tests.support.alt_test_data)."""
from __future__ import annotations

import pytest
from django.core.management import call_command

from annotations.models import HumanRating, Study
from evalhub.stats.alt_test import alt_test
from llmjudge.models import LLMRating
from tests.conftest import shared_path
from tests.support.alt_test_data import AUTHORS_SETTINGS, read_alt_test_dataset

pytestmark = pytest.mark.django_db

# The --questions argument of each dataset's command in docs/import-annotations.md: "auto" where every id
# ends in __<criterion or question>, none (one question, "label") where the ids are the items.
QUESTIONS = {
    "summeval": "auto", "cebab_aspects": "auto", "cebab_stars": "auto", "lesion": "auto", "lgbteen": "auto",
    "framing": "auto", "10k_prompts": "", "mtbench": "", "wax": "",
}
KINDS = {"summeval": "likert", "10k_prompts": "likert", "cebab_stars": "likert", "lesion": "likert"}


def test_the_table_covers_every_dataset_of_the_folder():
    folder = shared_path("data", "AltTest", "data")
    assert sorted(p.name for p in folder.iterdir() if p.is_dir()) == sorted(QUESTIONS) == sorted(AUTHORS_SETTINGS)


def _stored(study: Study, auto: bool) -> tuple[dict, dict]:
    """The study's ratings back as {annotator: {instance: code}} and {llm: {instance: code}}."""
    def instance(item: str, question: str) -> str:
        return f"{item}__{question}" if auto else item

    humans: dict = {}
    for rater, item, question, score in HumanRating.objects.filter(rater__study=study).values_list(
            "rater__external_id", "item__external_id", "question__key", "score"):
        humans.setdefault(rater, {})[instance(item, question)] = score
    llms: dict = {}
    for pool, item, question, sample, score in LLMRating.objects.filter(run__study=study).values_list(
            "run__judge__name", "item__external_id", "question__key", "sample", "score"):
        assert sample == 0
        llms.setdefault(pool, {})[instance(item, question)] = score
    return humans, llms


@pytest.mark.parametrize("dataset", sorted(QUESTIONS))
def test_each_dataset_imports_with_its_command_and_gives_the_files_alt_test(dataset):
    folder = shared_path("data", "AltTest", "data", dataset)
    args = ["--questions", QUESTIONS[dataset]] if QUESTIONS[dataset] else []
    call_command("import_annotations", f"alttest-{dataset}", "--humans", str(folder / "human_annotations.json"),
                 "--llm", str(folder / "llm_annotations.json"), "--create", *args)

    study = Study.objects.get(slug=f"alttest-{dataset}")
    files = read_alt_test_dataset(folder)
    assert study.kind == KINDS.get(dataset, "categorical")
    # String labels: the study's labels are the files' labels in sorted order, code k = file code k - 1.
    offset = 0.0
    if files.labels is not None:
        assert tuple(study.category_labels()) == files.labels
        offset = 1.0
    humans, llms = _stored(study, auto=bool(QUESTIONS[dataset]))
    assert set(humans) == set(files.humans) and set(llms) == set(files.llms)
    for annotator, ratings in files.humans.items():
        assert humans[annotator] == {i: v + offset for i, v in ratings.items()}, annotator
    for llm, ratings in files.llms.items():
        assert llms[llm] == {i: v + offset for i, v in ratings.items()}, llm

    # The alt-test on the stored ratings, in the files' order, equals the alt-test on the files.
    scoring, epsilon = AUTHORS_SETTINGS[dataset]
    ordered_humans = {a: {i: humans[a][i] - offset for i in r} for a, r in files.humans.items()}
    for llm, ratings in files.llms.items():
        ordered_llm = {i: llms[llm][i] - offset for i in ratings}
        stored = alt_test(ordered_humans, ordered_llm, scoring=scoring, epsilon=epsilon)
        direct = alt_test(files.humans, ratings, scoring=scoring, epsilon=epsilon)
        assert stored == direct, llm
        assert direct.humans, llm  # the test ran: at least one human was compared
