"""Researcher pages: start a run from the browser, watch its progress, pause/resume/cancel, preview prompts."""
from __future__ import annotations

import pytest
from django.urls import reverse

from llmjudge.models import Experiment, JudgeRun
from llmjudge.runs import lifecycle as judging
from tests.llmjudge.conftest import work_off

pytestmark = pytest.mark.django_db


def test_pages_require_login(client, story_with_items):
    response = client.get(reverse("llmjudge:study_runs", args=["story"]))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_another_researcher_cannot_see_or_touch_the_runs(client, other_researcher, story_with_items, make_judge):
    run = judging.judge_run_start(study=story_with_items, judge=make_judge(), enqueue=False)
    client.force_login(other_researcher)
    for url in (
        reverse("llmjudge:study_runs", args=["story"]),
        reverse("llmjudge:preview", args=["story"]),
        reverse("llmjudge:run_detail", args=[run.pk]),
        reverse("llmjudge:run_progress", args=[run.pk]),
    ):
        assert client.get(url).status_code == 404, url
    assert client.post(reverse("llmjudge:run_control", args=[run.pk, "cancel"])).status_code == 404
    assert client.post(reverse("llmjudge:run_start", args=["story"]), {"judge": run.judge.pk}).status_code == 404
    run.refresh_from_db()
    assert run.status == "running"


def test_staff_see_another_study_only_with_the_permission_and_read_only(client, other_researcher, story_with_items,
                                                                         make_judge):
    from django.contrib.auth.models import Permission

    other_researcher.is_staff = True
    other_researcher.save()
    client.force_login(other_researcher)
    assert client.get(reverse("llmjudge:study_runs", args=["story"])).status_code == 404  # staff alone: nothing
    other_researcher.user_permissions.add(Permission.objects.get(codename="view_all_studies"))
    assert client.get(reverse("llmjudge:study_runs", args=["story"])).status_code == 200
    judge = make_judge("theirs", owner=other_researcher)
    response = client.post(reverse("llmjudge:run_start", args=["story"]), {"judge": judge.pk})
    assert response.status_code == 404 and not JudgeRun.objects.exists()  # read-only


def test_run_judge_button_starts_a_run_and_the_progress_reaches_100_percent(
    owner_client, story_with_items, make_judge, sent, django_capture_on_commit_callbacks
):
    judge = make_judge("browser")
    page = owner_client.get(reverse("llmjudge:study_runs", args=["story"]))
    assert b'id="run-form"' in page.content and b"browser" in page.content

    with django_capture_on_commit_callbacks(execute=True):
        response = owner_client.post(reverse("llmjudge:run_start", args=["story"]), {"judge": judge.pk})
    run = JudgeRun.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("llmjudge:run_detail", args=[run.pk])
    assert sent and all(run_id == run.pk for run_id, _ in sent)

    before = owner_client.get(reverse("llmjudge:run_progress", args=[run.pk])).json()
    assert (before["done"], before["total"], before["percent"], before["status"]) == (0, 36, 0.0, "running")
    detail = owner_client.get(reverse("llmjudge:run_detail", args=[run.pk]))
    assert b'role="progressbar"' in detail.content
    assert reverse("llmjudge:run_progress", args=[run.pk]).encode() in detail.content

    work_off(sent)
    after = owner_client.get(reverse("llmjudge:run_progress", args=[run.pk])).json()
    assert (after["done"], after["total"], after["percent"], after["status"]) == (36, 36, 100.0, "done")
    assert after["ok"] + after["unparseable"] + after["refused"] + after["failed"] == 36
    assert after["calls"] >= 36 and after["tokens_prompt"] > 0
    assert set(after) >= {"calls_per_second", "cost_usd", "elapsed_seconds", "pending"}
    page = owner_client.get(reverse("llmjudge:study_runs", args=["story"]))
    assert b"36/36 (100.0 %)" in page.content
    # Review 13: each figure of the run page is said in words, calls above the ratings included.
    detail = owner_client.get(reverse("llmjudge:run_detail", args=[run.pk])).content.decode()
    legend = detail[detail.index('id="figures-legend"'):]
    legend = " ".join(legend[:legend.index("</p>")].split())
    for words in ("An answer is one item × question × sample", "Refused: still refusing after its re-asks",
                  "Preparation: the calls a persona or panel judge makes", "so they can exceed the answers"):
        assert words in legend


def test_progress_json_reports_cost_from_the_price_table(owner_client, story_with_items, make_judge):
    judge = make_judge("priced", model="gpt-4o-mini")
    run = judging.judge_run_start(study=story_with_items, judge=judge, enqueue=False)
    judging.judge_run_execute_inline(run=run)
    data = owner_client.get(reverse("llmjudge:run_progress", args=[run.pk])).json()
    expected = (data["tokens_prompt"] * 0.15 + data["tokens_completion"] * 0.60) / 1_000_000
    assert data["cost_usd"] == pytest.approx(expected, abs=1e-6)
    run.refresh_from_db()
    assert float(run.cost_usd) == pytest.approx(expected, abs=1e-6)


def test_pause_resume_and_cancel_buttons(owner_client, story_with_items, make_judge, sent,
                                         django_capture_on_commit_callbacks):
    run = judging.judge_run_start(study=story_with_items, judge=make_judge(), enqueue=False)
    control = lambda action: owner_client.post(reverse("llmjudge:run_control", args=[run.pk, action]))  # noqa: E731

    assert control("pause").status_code == 302
    run.refresh_from_db()
    assert run.status == "paused"
    with django_capture_on_commit_callbacks(execute=True):
        control("resume")
    run.refresh_from_db()
    assert run.status == "running" and len(sent) == 1
    control("cancel")
    run.refresh_from_db()
    assert run.status == "cancelled"
    response = owner_client.post(reverse("llmjudge:run_control", args=[run.pk, "resume"]), follow=True)
    assert b"cannot be resumed" in response.content
    assert owner_client.post(reverse("llmjudge:run_control", args=[run.pk, "explode"])).status_code == 404


def test_preview_shows_the_rater_page_next_to_the_judge_prompts(owner_client, story_with_items, make_judge):
    item = story_with_items.items.get(external_id="s1")
    judge = make_judge("persona", variant="persona")
    response = owner_client.get(reverse("llmjudge:preview", args=["story"]), {"item": item.pk, "judge": judge.pk})
    html = response.content.decode()
    assert response.status_code == 200
    assert 'id="rater-view"' in html and 'id="judge-view"' in html
    assert "NOTE: Please take the time" in html and "Note: Please take the time" in html
    assert html.count("(You are a human worker hired to rate the story fragment.)") == 4
    assert item.fields["story"] in html


def test_preview_of_a_chat_judge_shows_the_conversation_turns(owner_client, story_with_items, make_judge):
    judge = make_judge("chatty", mode="chat")
    html = owner_client.get(reverse("llmjudge:preview", args=["story"]), {"judge": judge.pk}).content.decode()
    assert "conversation (user turns)" in html
    assert html.count("Please rate the story fragment") == 2  # once for the rater, once in the first turn


def test_experiment_form_launches_one_run_per_grid_cell(owner_client, story_with_items, make_judge, sent,
                                                        django_capture_on_commit_callbacks):
    judge = make_judge("grid")
    with django_capture_on_commit_callbacks(execute=True):
        response = owner_client.post(
            reverse("llmjudge:experiment_start", args=["story"]),
            {"judges": [judge.pk], "temperatures": ["1.0", "0.7", "0.3", "0.0"],
             "variants": ["original", "persona", "explain"]},
            follow=True,
        )
    experiment = Experiment.objects.get()
    assert experiment.runs.count() == 12
    assert b"Launched 12 runs" in response.content
    assert len({run_id for run_id, _ in sent}) == 12


def test_admin_action_starts_a_run_on_the_chosen_study(client, story_with_items, make_judge, sent, django_user_model,
                                                       django_capture_on_commit_callbacks):
    admin = django_user_model.objects.create_superuser("root", "root@example.org", "pw")
    client.force_login(admin)
    judge = make_judge("admin-run")
    url = reverse("admin:llmjudge_judge_changelist")
    form = client.post(url, {"action": "run_on_study", "_selected_action": [judge.pk]})
    assert b"Start runs" in form.content
    with django_capture_on_commit_callbacks(execute=True):
        client.post(url, {"action": "run_on_study", "_selected_action": [judge.pk], "apply": "1",
                          "study": story_with_items.pk})
    run = JudgeRun.objects.get()
    assert (run.judge, run.study) == (judge, story_with_items) and sent


def test_the_demo_has_an_offline_judge_that_judges_a_demo_study_from_the_browser(
    client, sent, django_capture_on_commit_callbacks
):
    from django.core.management import call_command

    from evalhub.demo.loader import DEMO_JUDGE
    from llmjudge.models import Judge

    call_command("load_demo", "--demo-superuser")  # tests run with DEBUG off
    client.login(username="demo", password="demo")
    judge = Judge.objects.get(name=DEMO_JUDGE)
    judge.options = {**judge.options, "fake_latency": 0}
    judge.save()
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("llmjudge:run_start", args=["demo-meaning"]), {"judge": judge.pk})
    run = JudgeRun.objects.get(study__slug="demo-meaning")
    work_off(sent)
    data = client.get(reverse("llmjudge:run_progress", args=[run.pk])).json()
    assert data["percent"] == 100.0 and data["status"] == "done"


def test_a_judge_on_a_localhost_openai_compatible_server_runs_from_the_browser(
    owner_client, story_with_items, server_judge, openai_server, sent, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        owner_client.post(reverse("llmjudge:run_start", args=["story"]), {"judge": server_judge.pk})
    run = JudgeRun.objects.get()
    work_off(sent)
    data = owner_client.get(reverse("llmjudge:run_progress", args=[run.pk])).json()
    assert (data["percent"], data["status"], data["ok"]) == (100.0, "done", 36)
    assert openai_server.stats.requests == 36
    page = owner_client.get(reverse("llmjudge:run_detail", args=[run.pk])).content.decode()
    assert "I would rate it" in page


def test_resuming_a_finished_run_changes_nothing(owner_client, story_with_items, make_judge):
    run = judging.judge_run_start(study=story_with_items, judge=make_judge(), enqueue=False)
    judging.judge_run_execute_inline(run=run)
    run.refresh_from_db()
    finished = run.finished_at
    assert judging.judge_run_resume(run=run) == 0
    run.refresh_from_db()
    assert (run.status, run.finished_at) == ("done", finished)


@pytest.mark.parametrize("action", ["resume", "retry"])
def test_a_resume_or_retry_that_cannot_happen_is_reported_to_the_researcher(
    owner_client, story_with_items, make_judge, action
):
    run = judging.judge_run_start(study=story_with_items, judge=make_judge(), enqueue=False)
    judging.judge_run_execute_inline(run=run)  # done, no errors: nothing to resume or retry
    response = owner_client.post(reverse("llmjudge:run_control", args=[run.pk, action]), follow=True)
    assert f"Run {run.pk} is done: cannot {action} it." in response.content.decode()


def _preview(owner_client, study, judge) -> str:
    response = owner_client.get(reverse("llmjudge:preview", args=[study.slug]), {"judge": judge.pk})
    assert response.status_code == 200
    return response.content.decode()


def test_the_preview_of_a_rubric_judge_shows_the_prometheus_prompt_it_is_sent(
    owner_client, story_with_items, make_judge
):
    html = _preview(owner_client, story_with_items, make_judge("prometheus", kind="rubric"))
    judge_view = html.split('id="judge-view"')[1]
    assert "###Score Rubrics:" in judge_view
    assert "Please rate the story fragment" not in judge_view  # not the plain protocol prompt


def test_the_preview_of_a_role_player_panel_shows_the_panel_prompt(owner_client, story_with_items, make_judge):
    judge = make_judge("panel", kind="roleplay", options={"dynamic_roles": 0}, samples=1)
    judge_view = _preview(owner_client, story_with_items, judge).split('id="judge-view"')[1]
    assert "Play each of the following roles in turn" in judge_view


@pytest.fixture
def two_raters(story_with_items):
    """Two raters who rated every item and question; the first left a comment on each."""
    from annotations.models import HumanRating, Rater

    for position, name in enumerate(("ann", "bob")):
        rater = Rater.objects.create(study=story_with_items, external_id=name, demographics={"age": 30 + position})
        for item in story_with_items.items.all():
            for question in story_with_items.questions.all():
                HumanRating.objects.create(
                    rater=rater, item=item, question=question, score=(item.position + position) % 5 + 1,
                    comment=f"{name} liked it." if name == "ann" else "",
                )
    return story_with_items


def test_the_preview_of_a_per_rater_judge_shows_the_prompt_for_one_example_rater(
    owner_client, two_raters, make_judge
):
    judge = make_judge("perse", kind="personalized", options={"profile_size": 1}, samples=1)
    judge_view = _preview(owner_client, two_raters, judge).split('id="judge-view"')[1]
    assert "Reviewer Preference" in judge_view  # PERSE's prompt, with the example rater's profile
    assert "for rater ann" in judge_view or "for rater bob" in judge_view
    assert "Please rate the story fragment" not in judge_view


def test_the_preview_of_a_persona_judge_shows_the_prompt_for_one_example_rater(
    owner_client, two_raters, make_judge
):
    judge = make_judge("personas", kind="persona", options={"method": "personalized_judge", "training_examples": 1})
    judge_view = _preview(owner_client, two_raters, judge).split('id="judge-view"')[1]
    assert "from the perspective of a user who has the following characteristics" in judge_view
    assert "for rater ann" in judge_view or "for rater bob" in judge_view
    assert "Please rate the story fragment" not in judge_view


def test_the_preview_of_a_character_persona_judge_shows_the_character_proposal_it_asks_first(
    owner_client, two_raters, make_judge
):
    judge = make_judge("cinemetric", kind="persona", options={"training_examples": 1})
    judge_view = _preview(owner_client, two_raters, judge).split('id="judge-view"')[1]
    assert "You are a movie character matching expert" in judge_view
    assert "for rater ann" in judge_view or "for rater bob" in judge_view
