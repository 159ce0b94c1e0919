"""Issue 24 in headless Chromium: the run's owner opens an unparseable answer's folded trace on the run page, records
the score they read in it, and sees the reading counted apart on the study's dashboard.

The run is stored beforehand by the local OpenAI-protocol server: its reasoning model answers the lighthouse story
with prose that names no score (the trace beside it in ``reasoning_content``), and the other stories with a score.
"""
from __future__ import annotations

import pytest

from annotations.models import Item
from annotations.studies import study_create_from_template
from llmjudge.models import Judge, JudgeRun, LLMRating
from llmjudge.runs import lifecycle as judging
from tests.e2e.conftest import SCREENSHOTS
from tests.evalhub.factories import import_long
from tests.support.browser import log_in
from tests.support.openai_answers import default_answer, default_reasoning
from tests.support.openai_server import Behaviour, OpenAIServer

NO_SCORE = "The keeper's loneliness comes through, though the ending feels rushed."
STORIES = [
    ("s1", "human", "The lighthouse keeper counted the ships. None came back.", "Write about a lighthouse."),
    ("s2", "gpt2", "The dog was a dog and it was a good dog. The end was near.", "A dog finds a door."),
    ("s3", "human", "Rain fell on the city for a hundred days; nobody minded.", "Endless rain."),
]


def _answer(prompt_text: str, request_json: dict) -> str:
    return NO_SCORE if "lighthouse" in prompt_text else default_answer(prompt_text, request_json)


@pytest.fixture
def unread_run(transactional_db, django_user_model, tmp_path):
    """Created before the browser starts: Playwright's loop would make Django refuse the ORM calls."""
    owner = django_user_model.objects.create_user(username="owner", password="pw-owner-123")
    study = study_create_from_template(slug="story", template="story-likert", owner=owner)
    for position, (external_id, group, story, prompt) in enumerate(STORIES):
        Item.objects.create(study=study, external_id=external_id, group=group, position=position,
                            fields={"story": story, "prompt": prompt})
    import_long(study, [(external_id, group, q.key, "human", f"r{r}", 1 + (n + r) % 5)
                        for n, (external_id, group, *_) in enumerate(STORIES)
                        for q in study.questions.all() for r in range(2)], tmp_path)
    with OpenAIServer(Behaviour(answer=_answer, reasoning_field="reasoning_content")) as server:
        judge = Judge.objects.create(name="thinker", backend=Judge.Backend.OPENAI_COMPATIBLE, owner=owner,
                                     base_url=f"{server.url}/v1", model="test-model", samples=1)
        run = judging.judge_run_start(study=study, judge=judge, enqueue=False)
        judging.judge_run_execute_inline(run=run)
    run.refresh_from_db()
    return run


@pytest.mark.e2e
def test_the_owner_reads_an_unparseable_answer_and_the_dashboard_counts_the_reading(page, unread_run: JudgeRun):
    unread = list(unread_run.ratings.filter(status="unparseable").order_by("item__position", "question__order"))
    assert len(unread) == 4  # the lighthouse story's four questions
    first = unread[0]
    log_in(page, f"/llm/runs/{unread_run.pk}/", "owner", "pw-owner-123")

    assert "4 unparseable, by reason:" in page.locator("#unparseable-reasons").inner_text()
    row = page.locator(f"#review-{first.pk}")
    assert NO_SCORE in row.locator("pre.answer").inner_text()
    trace = row.locator("details.trace pre")
    assert not trace.is_visible()  # folded
    row.locator("details.trace summary").click()
    assert trace.is_visible() and trace.inner_text() == default_reasoning(first.prompt, {})

    row.locator("input[name=score]").fill("4")
    row.locator("button", has_text="Record reading").click()
    page.wait_for_load_state()
    assert page.locator(f"#review-{first.pk}").count() == 0
    assert page.locator("#f-read").inner_text() == "1"
    assert "Read by a person: 1" in page.locator("#read-count").inner_text()
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "run-review.png"), full_page=True)

    page.goto("/studies/story/")
    pools = page.locator("table.pools")
    judge_row = pools.locator("tbody tr", has_text="thinker")
    assert "(read by a person: 1)" in judge_row.inner_text()
    # Eight of the twelve were read by the parser, one by a person: nine count; three are still unparseable.
    cells = judge_row.locator("td")
    assert cells.nth(3).inner_text().startswith("9") and cells.nth(5).inner_text() == "3"
    page.screenshot(path=str(SCREENSHOTS / "run-review-dashboard.png"), full_page=True)

    stored = LLMRating.objects.get(pk=first.pk)
    assert (stored.status, stored.score, stored.read_by.get_username()) == ("ok", 4.0, "owner")
