"""Judge names are unique per owner (issue 23, finding 8): "A judge named 'bob-fake' already exists" told one
researcher the names of another's judges, and imported pools shared that namespace, so names could be squatted.
The database holds the rule (two conditional unique constraints); the service, the web form, the admin, the
commands, the API and the ratings import each resolve or refuse a name within one owner's judges."""
from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction
from rest_framework.authtoken.models import Token

from annotations.studies import study_create_from_template
from llmjudge.models import Judge, JudgeRun
from llmjudge.services import JudgeSpecError, judge_create
from tests.support.import_files import write

pytestmark = pytest.mark.django_db

RATINGS = "item,group,question,pool,rater,score,rationale\ns1,human,cohesiveness,{pool},0,3,\n"


def test_two_researchers_may_each_have_a_judge_named_alike(researcher, other_researcher):
    mine = judge_create(name="bob-fake", owner=researcher)
    theirs = judge_create(name="bob-fake", owner=other_researcher)
    assert mine.pk != theirs.pk and Judge.objects.filter(name="bob-fake").count() == 2


def test_a_taken_name_is_refused_in_words_that_name_only_ones_own_judges(researcher, other_researcher, client):
    judge_create(name="bob-fake", owner=other_researcher)
    judge_create(name="mine", owner=researcher)
    with pytest.raises(JudgeSpecError) as refused:
        judge_create(name="mine", owner=researcher)
    assert str(refused.value) == "a judge named 'mine' already exists among owner's judges"
    story = study_create_from_template(slug="story", template="story-likert", owner=researcher)
    client.force_login(researcher)
    page = client.post(f"/llm/studies/{story.slug}/judges/new/", {"name": "bob-fake", "kind": "plain",
                                                                  "backend": "fake"})
    assert page.status_code == 302 and Judge.objects.filter(name="bob-fake", owner=researcher).exists()
    again = client.post(f"/llm/studies/{story.slug}/judges/new/", {"name": "bob-fake", "kind": "plain",
                                                                   "backend": "fake"}).content.decode()
    assert "already exists among owner&#x27;s judges" in again and "other" not in again.split("<main")[-1]


def test_the_admin_checks_the_name_within_the_owner(researcher, other_researcher, client, django_user_model):
    from django.contrib.auth.models import Permission

    judge_create(name="bob-fake", owner=other_researcher)
    staffer = django_user_model.objects.create_user(username="staffer", password="pw-staffer-1", is_staff=True)
    staffer.user_permissions.set(Permission.objects.filter(content_type__app_label="llmjudge"))
    client.force_login(staffer)
    form = {"name": "bob-fake", "kind": "plain", "backend": "fake", "model": "m", "temperature": "1.0",
            "top_p": "0.9", "max_tokens": "256", "samples": "1", "variant": "original", "mode": "completion",
            "concurrency": "4", "options": "{}"}
    assert client.post("/admin/llmjudge/judge/add/", form).status_code == 302
    assert Judge.objects.get(name="bob-fake", owner=staffer)
    again = client.post("/admin/llmjudge/judge/add/", form)
    assert again.status_code == 200
    assert "a judge named &#x27;bob-fake&#x27; already exists among staffer&#x27;s judges" in again.content.decode()


def test_the_database_refuses_a_second_name_per_owner_and_without_owner(researcher):
    Judge.objects.create(name="x", owner=researcher)
    Judge.objects.create(name="y")
    for owner in (researcher, None):
        with pytest.raises(IntegrityError), transaction.atomic():
            Judge.objects.create(name="x" if owner else "y", owner=owner)


def test_an_imported_pool_neither_squats_nor_reveals_another_researchers_judge(researcher, other_researcher,
                                                                               tmp_path):
    theirs = study_create_from_template(slug="theirs", template="story-likert", owner=other_researcher)
    mine = study_create_from_template(slug="mine", template="story-likert", owner=researcher)
    judge_create(name="gpt4", owner=researcher, backend="fake")
    # Their pool "gpt4" is theirs; my live judge "gpt4" neither blocks nor is named in it.
    call_command("import_ratings", theirs.slug, str(write(tmp_path, "r.csv", RATINGS.format(pool="gpt4"))))
    pool = JudgeRun.objects.get(study=theirs).judge
    assert (pool.owner, pool.backend) == (other_researcher, "imported")
    # A pool they imported first does not squat the name for me.
    call_command("import_ratings", theirs.slug, str(write(tmp_path, "r2.csv", RATINGS.format(pool="gpt5"))))
    assert judge_create(name="gpt5", owner=researcher).owner == researcher
    # My own live judge still keeps my pool from taking its name.
    with pytest.raises(CommandError, match="name of one of the study owner's live judges"):
        call_command("import_ratings", mine.slug, str(write(tmp_path, "r3.csv", RATINGS.format(pool="gpt4"))))


def test_run_judge_resolves_the_name_within_the_study_owners_judges(researcher, other_researcher,
                                                                    django_user_model):
    story = study_create_from_template(slug="story", template="story-likert", owner=researcher)
    from annotations.models import Item

    Item.objects.create(study=story, external_id="s1", group="human", fields={"story": "s", "prompt": "p"})
    mine = judge_create(name="same", owner=researcher, backend="fake", samples=1)
    theirs = judge_create(name="same", owner=other_researcher, backend="fake", samples=1, shared=True)
    call_command("run_judge", "story", "same", "--inline")
    call_command("run_judge", "story", "same", "--inline", "--owner", "other")
    assert list(JudgeRun.objects.order_by("pk").values_list("judge", flat=True)) == [mine.pk, theirs.pk]
    third = django_user_model.objects.create_user(username="third", password="pw-third-1")
    study_create_from_template(slug="third", template="story-likert", owner=third)
    with pytest.raises(CommandError, match=r"several judges are named 'same' \(owners: other, owner\): name the "
                                           r"owner with --owner"):
        call_command("run_judge", "third", "same")
    with pytest.raises(CommandError, match="no judge 'same' of third"):
        call_command("run_judge", "story", "same", "--owner", "third")


def test_create_judge_if_missing_looks_within_the_owner(researcher, other_researcher):
    judge_create(name="preset", owner=other_researcher)
    call_command("create_judge", "preset", "--owner", "owner", "--if-missing")
    assert Judge.objects.filter(name="preset", owner=researcher).exists()


def test_the_api_runs_the_callers_own_judge_of_a_name(researcher, other_researcher, client):
    story = study_create_from_template(slug="story", template="story-likert", owner=researcher)
    from annotations.models import Item

    Item.objects.create(study=story, external_id="s1", group="human", fields={"story": "s", "prompt": "p"})
    judge_create(name="same", owner=other_researcher, backend="fake", shared=True)
    mine = judge_create(name="same", owner=researcher, backend="fake")
    token = Token.objects.create(user=researcher)
    response = client.post(f"/api/studies/{story.slug}/runs/", {"judge": "same"}, content_type="application/json",
                           HTTP_AUTHORIZATION=f"Token {token.key}")
    assert response.status_code == 201 and JudgeRun.objects.get().judge == mine
