"""The scripts' API: per-researcher tokens, own studies only, the same validation as the commands."""
from __future__ import annotations

import io

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotations.models import Item, Study


@pytest.fixture
def owner_api(researcher):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    return client


@pytest.fixture
def other_api(other_researcher):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=other_researcher).key}")
    return client


@pytest.mark.django_db
def test_anonymous_and_bad_tokens_are_refused():
    assert APIClient().get("/api/studies/").status_code == 401
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert client.get("/api/studies/").status_code == 401


def test_create_a_study_from_a_template_and_see_it_listed(owner_api, researcher):
    response = owner_api.post("/api/studies/", {"slug": "stories", "template": "story-likert"}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["questions"][0] == {
        "key": "grammaticality",
        "text": "How grammatically correct is the text of the story fragment? (on a scale of 1-5, with 1 being the lowest)",
    }
    assert Study.objects.get(slug="stories").owner == researcher
    assert [s["slug"] for s in owner_api.get("/api/studies/").json()] == ["stories"]


def test_create_a_study_from_a_json_spec_and_refuse_a_bad_one(owner_api):
    spec = {"title": "T", "item_fields": ["text"], "llm_template": "{text}\n{question}",
            "scale": {"min": 1, "max": 7}, "questions": [{"key": "q", "text": "Q?"}]}
    assert owner_api.post("/api/studies/", {"slug": "custom", "spec": spec}, format="json").status_code == 201
    bad = owner_api.post("/api/studies/", {"slug": "bad", "spec": {**spec, "llm_template": "{text}"}}, format="json")
    assert bad.status_code == 400 and "must contain {question}" in bad.json()["detail"]
    both = owner_api.post("/api/studies/", {"slug": "x", "spec": spec, "template": "story-likert"}, format="json")
    assert both.status_code == 400
    assert list(Study.objects.values_list("slug", flat=True)) == ["custom"]


def test_a_researcher_never_sees_another_researchers_study(owner_api, other_api, story_study):
    assert other_api.get("/api/studies/").json() == []
    assert other_api.get("/api/studies/story/").status_code == 404
    upload = other_api.post("/api/studies/story/items/", {"items": [{"id": "a"}]}, format="json")
    assert upload.status_code == 404
    assert owner_api.get("/api/studies/story/").json()["slug"] == "story"
    assert Item.objects.count() == 0


def test_upload_items_as_json_or_as_a_file(owner_api, story_study):
    items = [{"id": "a", "group": "human", "story": "S", "prompt": "P"}]
    response = owner_api.post("/api/studies/story/items/", {"items": items}, format="json")
    assert (response.status_code, response.json()) == (201, {"created_items": 1})
    csv_file = io.BytesIO(b"id,group,story,prompt\nb,gpt2,S2,P2\n")
    csv_file.name = "items.csv"
    response = owner_api.post("/api/studies/story/items/", {"file": csv_file}, format="multipart")
    assert response.status_code == 201, response.content
    assert sorted(Item.objects.values_list("external_id", "group")) == [("a", "human"), ("b", "gpt2")]


def test_bad_items_are_refused_with_the_line_and_nothing_changes(owner_api, story_study):
    items = [{"id": "a", "group": "human", "story": "S", "prompt": "P"},
             {"id": "b", "group": "robots", "story": "S", "prompt": "P"}]
    response = owner_api.post("/api/studies/story/items/", {"items": items}, format="json")
    assert response.status_code == 400
    assert response.json()["detail"] == ("line 2: unknown group 'robots'; the study's groups are gpt2, human; "
                                         "nothing was imported")
    assert Item.objects.count() == 0


@pytest.mark.django_db
def test_the_openapi_schema_describes_the_endpoints(client):
    response = client.get("/api/schema/")
    assert response.status_code == 200
    text = response.content.decode()
    assert "/api/studies/{slug}/items/" in text and "tokenAuth" in text


@pytest.fixture
def judged(story_study):
    from llmjudge.models import Judge

    for n, group in enumerate(["human", "gpt2"]):
        Item.objects.create(study=story_study, external_id=f"s{n}", group=group, position=n,
                            fields={"story": f"Story {n}.", "prompt": "Prompt."})
    return Judge.objects.create(name="fake-judge", backend="fake", model="fake", samples=2, owner=story_study.owner)


def test_invitation_links_are_created_for_the_owner_only(owner_api, other_api, story_study):
    response = owner_api.post("/api/studies/story/invitations/", {"count": 3}, format="json")
    links = response.json()["links"]
    assert response.status_code == 201 and len(set(links)) == 3
    assert all(link.startswith("http://127.0.0.1:8000/r/") for link in links)
    assert other_api.post("/api/studies/story/invitations/", {"count": 3}, format="json").status_code == 404
    assert story_study.raters.count() == 3


def test_a_run_is_started_paused_resumed_and_cancelled_through_the_api(owner_api, other_api, judged, monkeypatch):
    from llmjudge.runs import lifecycle as judging

    monkeypatch.setattr(judging, "judge_run_enqueue", lambda run_id: 0)  # no worker in this test: nothing sent
    response = owner_api.post("/api/studies/story/runs/", {"judge": "fake-judge"}, format="json")
    assert response.status_code == 201, response.content
    run = response.json()
    assert (run["status"], run["total"], run["pending"]) == ("running", 2 * 4 * 2, 16)
    assert other_api.get(f"/api/runs/{run['id']}/").status_code == 404
    assert owner_api.post(f"/api/runs/{run['id']}/pause/").json()["status"] == "paused"
    assert owner_api.post(f"/api/runs/{run['id']}/resume/").json()["status"] == "running"
    assert owner_api.post(f"/api/runs/{run['id']}/cancel/").json()["status"] == "cancelled"
    assert owner_api.post(f"/api/runs/{run['id']}/explode/").status_code == 404
    assert owner_api.post("/api/studies/story/runs/", {"judge": "nobody"}, format="json").status_code == 400


def test_another_researchers_private_judge_cannot_be_used(owner_api, judged, other_researcher):
    judged.owner = other_researcher
    judged.save()
    response = owner_api.post("/api/studies/story/runs/", {"judge": "fake-judge"}, format="json")
    assert response.status_code == 400 and "no judge" in response.json()["detail"]


def test_analysis_json_and_ratings_csv_for_the_owner_only(owner_api, other_api, judged, story_study):
    from llmjudge.runs import lifecycle as judging

    run = judging.judge_run_start(study=story_study, judge=judged, enqueue=False)
    judging.judge_run_execute_inline(run=run)
    analysis = owner_api.get("/api/studies/story/analysis/").json()
    judge_cells = [c for c in analysis["cells"] if c["pool"] == "fake-judge"]
    assert len(judge_cells) == 4 * 2  # questions x groups
    assert sum(c["n_ratings"] for c in judge_cells) == 16
    response = owner_api.get("/api/studies/story/ratings.csv")
    lines = b"".join(response.streaming_content).decode().splitlines()
    assert response["Content-Type"].startswith("text/csv")
    assert len(lines) == 1 + 16 and lines[0].startswith("study,item,group,question,pool,rater,score")
    assert other_api.get("/api/studies/story/analysis/").status_code == 404
    assert other_api.get("/api/studies/story/ratings.csv").status_code == 404


def test_api_runs_list_and_detail_obey_the_same_rule_as_the_study_pages(
    django_user_model, researcher, other_researcher, story_study, judged, client
):
    """One access rule: for every persona and every run, the API's runs list and run detail answer
    exactly when the study's runs page and the run's page do (200 or 404), and list the same runs."""
    from annotations.studies import study_create_from_template
    from llmjudge.runs import lifecycle as judging

    others = study_create_from_template(slug="others", template="story-likert", owner=other_researcher)
    Item.objects.create(study=others, external_id="o0", group="human", position=0,
                        fields={"story": "Story.", "prompt": "Prompt."})
    runs = {study.slug: judging.judge_run_start(study=study, judge=judged, enqueue=False)
            for study in (story_study, others)}
    from django.contrib.auth.models import Permission

    # The role model (issue 18): being staff grants nothing; the view_all_studies permission reads all.
    staff = django_user_model.objects.create_user(username="staff", password="pw-staff-123", is_staff=True)
    viewer = django_user_model.objects.create_user(username="viewer", password="pw-viewer-123", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_all_studies"))
    root = django_user_model.objects.create_superuser(username="root", password="pw-root-123")
    expected = {"owner": {"story"}, "other": {"others"}, "staff": set(), "viewer": {"story", "others"},
                "root": {"story", "others"}}
    for user in (researcher, other_researcher, staff, viewer, root):
        client.force_login(user)
        api = APIClient()
        api.force_authenticate(user=user)
        seen = set()
        for slug, run in runs.items():
            page = client.get(f"/llm/studies/{slug}/").status_code
            run_page = client.get(f"/llm/runs/{run.pk}/").status_code
            listed = api.get(f"/api/studies/{slug}/runs/")
            detail = api.get(f"/api/runs/{run.pk}/")
            assert page in (200, 404) and run_page == page, (user.username, slug)
            assert (listed.status_code, detail.status_code) == (page, page), (user.username, slug)
            if page == 200:
                seen.add(slug)
                assert [r["id"] for r in listed.json()] == [run.pk]
                assert detail.json()["study"] == slug
        assert seen == expected[user.username]


def test_resuming_a_run_with_nothing_to_resume_is_reported_not_answered_200(owner_api, judged, story_study):
    from llmjudge.models import JudgeRun

    run = JudgeRun.objects.create(study=story_study, judge=judged, status=JudgeRun.Status.DONE)
    response = owner_api.post(f"/api/runs/{run.pk}/resume/")
    assert response.status_code == 409
    assert response.json()["detail"] == f"run {run.pk} is done: nothing to resume"
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.DONE


def test_open_and_close_through_the_api_with_409_for_what_cannot_happen(owner_api, story_study):
    from tests.support.raterkit import add_story_items

    refused = owner_api.post("/api/studies/story/open/")
    assert refused.status_code == 409
    assert refused.json() == {"detail": "study 'story' has no item: import items before opening it"}
    add_story_items(story_study)
    opened = owner_api.post("/api/studies/story/open/")
    assert opened.status_code == 200 and opened.json()["status"] == "open"
    assert owner_api.post("/api/studies/story/open/").json() == {"detail": "study 'story' is already open"}
    closed = owner_api.post("/api/studies/story/close/")
    assert closed.status_code == 200 and closed.json()["status"] == "closed"
    again = owner_api.post("/api/studies/story/close/")
    assert again.status_code == 409 and "nothing to close" in again.json()["detail"]
    assert owner_api.post("/api/studies/story/open/").json()["status"] == "open"  # reopen


def test_another_researcher_cannot_open_or_close_a_study(other_api, story_study):
    from tests.support.raterkit import add_story_items

    add_story_items(story_study)
    assert other_api.post("/api/studies/story/open/").status_code == 404
    story_study.refresh_from_db()
    assert story_study.status == Study.Status.DRAFT


def test_the_schema_documents_the_lifecycle_actions_and_their_statuses(owner_api):
    import yaml

    schema = yaml.safe_load(owner_api.get("/api/schema/").content)
    for action in ("open", "close"):
        responses = schema["paths"][f"/api/studies/{{slug}}/{action}/"]["post"]["responses"]
        assert {"200", "404", "409"} <= set(responses), action


@pytest.mark.django_db
def test_a_taken_slug_gets_the_same_answer_whoever_owns_it(owner_api, other_api, story_study):
    """POST /api/studies/ must not confirm that another researcher's slug exists (GET answers 404 for it)."""
    body = {"slug": story_study.slug, "template": "story-likert"}
    theirs = other_api.post("/api/studies/", body, format="json")
    mine = owner_api.post("/api/studies/", body, format="json")
    assert theirs.status_code == mine.status_code == 409
    assert theirs.json() == mine.json() == {"detail": "slug 'story' is not available: choose another"}
    assert other_api.get(f"/api/studies/{story_study.slug}/").status_code == 404
    assert Study.objects.count() == 1


def test_an_items_file_above_the_task_threshold_is_a_413_and_changes_nothing(owner_api, story_study, settings):
    settings.IMPORT_TASK_THRESHOLD_BYTES = 30
    csv_file = io.BytesIO(b"id,group,story,prompt\nb,gpt2,S2,P2\nc,gpt2,S3,P3\n")
    csv_file.name = "items.csv"
    response = owner_api.post("/api/studies/story/items/", {"file": csv_file}, format="multipart")
    assert response.status_code == 413 and "study's page" in response.json()["detail"]
    assert not Item.objects.exists()
    # JSON items are capped by API_ITEMS_PER_REQUEST instead, and still import.
    items = [{"id": "a", "group": "human", "story": "S", "prompt": "P"}]
    assert owner_api.post("/api/studies/story/items/", {"items": items}, format="json").status_code == 201


def test_the_human_subset_is_set_in_the_spec_drawn_as_items_arrive_and_changed_by_patch(owner_api, other_api):
    spec = {"title": "T", "item_fields": ["text"], "llm_template": "{text}\n{question}", "groups": ["a", "b"],
            "scale": {"min": 1, "max": 5}, "questions": [{"key": "q", "text": "Q?"}],
            "human_subset": {"share": 0.25, "seed": 1}}
    created = owner_api.post("/api/studies/", {"slug": "sub", "spec": spec}, format="json")
    assert created.status_code == 201 and created.json()["human_subset"] == {"share": 0.25, "seed": 1}
    items = [{"id": f"{g}{k}", "group": g, "text": "x"} for g in "ab" for k in range(8)]
    assert owner_api.post("/api/studies/sub/items/", {"items": items}, format="json").status_code == 201
    study = Study.objects.get(slug="sub")
    assert sorted(study.items.filter(in_human_subset=True).values_list("group", flat=True)) == ["a", "a", "b", "b"]

    assert other_api.patch("/api/studies/sub/", {"human_subset": {"count": 3}}, format="json").status_code == 404
    changed = owner_api.patch("/api/studies/sub/", {"human_subset": {"count": 3}}, format="json")
    assert changed.status_code == 200 and changed.json()["human_subset"] == {"count": 3, "seed": 0}
    assert study.items.filter(in_human_subset=True).count() == 6
    bad = owner_api.patch("/api/studies/sub/", {"human_subset": {"count": 3, "share": 0.5}}, format="json")
    assert bad.status_code == 400 and "exactly one of share and count" in bad.json()["human_subset"][0]

    rater = study.raters.create(external_id="r")
    item = study.items.filter(in_human_subset=True).first()
    rater.ratings.create(item=item, question=study.questions.get(), score=3)
    locked = owner_api.patch("/api/studies/sub/", {"human_subset": {"declared_random": True}}, format="json")
    assert locked.status_code == 409 and "already rated" in locked.json()["detail"]
    study.refresh_from_db()
    assert study.human_subset == {"count": 3, "seed": 0}
