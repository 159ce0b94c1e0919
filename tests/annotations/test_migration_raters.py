"""Migration 0003 on a database that already holds studies and ratings."""
from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("annotations", "0002_rating_scale_trigger")]


@pytest.mark.django_db(transaction=True)
def test_existing_studies_get_their_own_open_tokens_and_labels_and_triggers_survive():
    executor = MigrationExecutor(connection)
    # Every app back to its latest: later migrations (llmjudge 0004) depend on annotations 0003.
    latest = executor.loader.graph.leaf_nodes()
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    study_model = old.get_model("annotations", "Study")
    for slug, template in (("a", "adversarial-meaning"), ("b", "story-likert")):
        study_model.objects.create(slug=slug, title=slug, instruction="i", llm_template="{question}",
                                   template=template)
    executor = MigrationExecutor(connection)
    executor.migrate(latest)
    new = MigrationExecutor(connection).loader.project_state(latest).apps
    studies = {s.slug: s for s in new.get_model("annotations", "Study").objects.all()}
    assert studies["a"].open_token != studies["b"].open_token and len(studies["a"].open_token) == 32
    assert studies["a"].field_labels["benign_title"] == "News title 1"
    assert studies["a"].diff_fields == ["benign_title", "adversarial_title"]
    # the scale trigger still guards ratings after SQLite rebuilt the tables it refers to
    study = new.get_model("annotations", "Study").objects.get(slug="b")
    question = new.get_model("annotations", "Question").objects.create(study=study, key="q", text="q")
    item = new.get_model("annotations", "Item").objects.create(study=study, external_id="i", group="g")
    rater = new.get_model("annotations", "Rater").objects.create(study=study)
    rating = new.get_model("annotations", "HumanRating")
    with pytest.raises(IntegrityError), transaction.atomic():
        rating.objects.create(rater=rater, item=item, question=question, score=9)
    assert not rating.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_migration_0011_numbers_existing_raters_from_1_in_each_study_and_the_triggers_survive():
    before = [("annotations", "0008_import_job")]
    executor = MigrationExecutor(connection)
    latest = executor.loader.graph.leaf_nodes()
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    studies = [old.get_model("annotations", "Study").objects.create(slug=slug, title=slug, instruction="i",
                                                                    llm_template="{question}") for slug in "ab"]
    rater_model = old.get_model("annotations", "Rater")
    for study in (studies[0], studies[1], studies[0], studies[1], studies[0]):
        rater_model.objects.create(study=study)
    executor = MigrationExecutor(connection)
    executor.migrate(latest)
    new = MigrationExecutor(connection).loader.project_state(latest).apps
    raters = new.get_model("annotations", "Rater").objects.order_by("id")
    assert [(r.study.slug, r.number) for r in raters] == [("a", 1), ("b", 1), ("a", 2), ("b", 2), ("a", 3)]
    study = new.get_model("annotations", "Study").objects.get(slug="a")
    question = new.get_model("annotations", "Question").objects.create(study=study, key="q", text="q")
    item = new.get_model("annotations", "Item").objects.create(study=study, external_id="i", group="g")
    rating = new.get_model("annotations", "HumanRating")
    with pytest.raises(IntegrityError), transaction.atomic():
        rating.objects.create(rater=raters[0], item=item, question=question, score=9)
    assert not rating.objects.exists()
