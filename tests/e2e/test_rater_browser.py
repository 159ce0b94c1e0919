"""A rater in real headless Chromium: invitation link, the story protocol, the meaning diff, resume,
an attention check, the completion code, and the pages without JavaScript."""
from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from annotations.models import Assignment, HumanRating, Item, Rater, Study
from annotations.services import attention_expected
from tests.support.raterkit import STORIES, add_story_items, open_study

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def story(story_study):
    open_study(story_study)
    add_story_items(story_study)
    return story_study


def _invite(slug: str, live_server) -> str:  # noqa: ANN001
    out = io.StringIO()
    call_command("invite", slug, "--base-url", live_server.url, stdout=out)
    return out.getvalue().strip()


def _click_answers(page, values: list[int]) -> None:  # noqa: ANN001
    for n, value in enumerate(values):
        page.locator("fieldset.question").nth(n).locator("label").nth(value - 1).click()


def _next(page) -> None:  # noqa: ANN001
    with page.expect_navigation():
        page.get_by_role("button", name="Next").click()


def _story_shown(page) -> str:  # noqa: ANN001
    return page.locator(".passage .text").first.inner_text()


def test_invited_rater_completes_a_story_study_in_blocked_order_with_the_prompt_revealed_last(story, page, live_server,
                                                                                                shoot):
    url = _invite("story", live_server)
    page.goto(url)
    stories = {s: (i, p) for i, _, s, p in STORIES}
    seen = []
    for n in range(4):
        text = _story_shown(page)
        item_id, prompt = stories[text]
        seen.append(item_id)
        assert prompt not in page.content()  # not even in the page source
        assert page.locator("fieldset.question").count() == 3
        assert page.get_by_text(f"{n} of 4").is_visible()
        if n == 0:
            shoot(page, "story-step1")
        if n % 2:  # half the items by keyboard, half by mouse
            page.keyboard.press("2")
            page.keyboard.press("3")
            page.keyboard.press("4")
            with page.expect_navigation():
                page.keyboard.press("Enter")
        else:
            _click_answers(page, [5, 4, 3])
            _next(page)
        assert page.get_by_text(prompt).is_visible()
        assert page.get_by_text("Now read the PROMPT based on which the story fragment was written.").is_visible()
        assert page.locator("fieldset.question").count() == 1
        assert _story_shown(page) == text
        if n == 0:
            shoot(page, "story-step2")
        _click_answers(page, [4])
        page.locator("textarea[name=comment]").fill("fine")
        _next(page)
    assert seen == ["g1", "g2", "h1", "h2"]  # gpt2 first, then human: the paper's blocked order
    code = page.locator("#completion-code").inner_text()
    shoot(page, "done")
    assignment = Assignment.objects.get()
    assert code == assignment.completion_code and len(code) == 8
    assert HumanRating.objects.count() == 16
    assert HumanRating.objects.filter(item__external_id="g2", question__key="cohesiveness").get().score == 3


def test_all_questions_are_required_before_next(story, page, live_server):
    page.goto(_invite("story", live_server))
    _click_answers(page, [3, 3])
    page.get_by_role("button", name="Next").click()
    page.wait_for_timeout(200)
    assert page.locator("fieldset.question").count() == 3  # still on the first step
    assert HumanRating.objects.count() == 0


def test_meaning_study_shows_the_differing_words_in_bold(meaning_study, page, live_server, shoot):
    open_study(meaning_study)
    Item.objects.create(study=meaning_study, external_id="m1", group="pwws", fields={
        "benign_title": "Tech shares rally after strong quarterly earnings",
        "adversarial_title": "Tech shares rally after potent quarterly net"})
    page.goto(_invite("meaning", live_server))
    titles = page.locator(".passage .text")
    assert titles.nth(0).locator("strong").all_inner_texts() == ["strong", "earnings"]
    assert titles.nth(1).locator("strong").all_inner_texts() == ["potent", "net"]
    assert page.get_by_role("heading", name="News title 1").is_visible()
    assert page.locator("label", has_text="1 (strongly disagree)").is_visible()
    shoot(page, "meaning")
    _click_answers(page, [2])
    _next(page)
    assert page.locator("#completion-code").is_visible()
    assert HumanRating.objects.get().score == 2


def test_a_rater_resumes_where_they_left_off_after_closing_the_browser(story, browser, live_server):
    url = _invite("story", live_server)
    first = browser.new_context()
    page = first.new_page()
    page.goto(url)
    text = _story_shown(page)
    _click_answers(page, [2, 2, 2])
    _next(page)
    first.close()  # the browser goes away mid-item, after the first three answers
    again = browser.new_context()
    page = again.new_page()
    page.goto(url)
    assert _story_shown(page) == text
    assert page.locator("fieldset.question").count() == 1  # straight back to the relevance question
    assert page.get_by_text("0 of 4").is_visible()
    _click_answers(page, [5])
    _next(page)
    assert page.get_by_text("1 of 4").is_visible()
    assert _story_shown(page) != text
    again.close()
    assert HumanRating.objects.count() == 4


def test_an_attention_check_appears_at_its_position_and_is_recorded(story, page, live_server, shoot):
    story.attention_positions = [1]
    story.save()
    page.goto(_invite("story", live_server))
    _click_answers(page, [3, 3, 3])
    _next(page)
    _click_answers(page, [3])
    _next(page)
    assignment = Assignment.objects.get()
    expected = attention_expected(study=story, seed=assignment.seed, position=1)
    assert page.get_by_text(f"For this item, please select {expected}.", exact=True).is_visible()
    shoot(page, "attention-check")
    page.keyboard.press(str(expected))
    with page.expect_navigation():
        page.keyboard.press("Enter")
    check = assignment.attention_checks.get()
    assert check.passed and check.answer == expected
    assert page.locator("fieldset.question").count() == 3  # back to the next story


def test_consent_and_demographics_pages(story, page, live_server, shoot):
    story.consent_text = "You will rate four short stories. Your answers are stored without your name."
    story.ask_demographics = True
    story.save()
    page.goto(_invite("story", live_server))
    shoot(page, "consent")
    page.get_by_label("I have read the information above and agree to take part.").check()
    with page.expect_navigation():
        page.get_by_role("button", name="Start").click()
    page.get_by_label("Age", exact=True).select_option("25-34")
    page.get_by_label("Gender").select_option("prefer-not")
    page.get_by_label("Where do you live?").select_option("europe")
    page.get_by_label("Highest completed education").select_option("bachelor")
    page.get_by_label("Native language(s)").fill("English")
    shoot(page, "demographics")
    with page.expect_navigation():
        page.get_by_role("button", name="Continue").click()
    assert page.locator("fieldset.question").count() == 3
    assert Rater.objects.get().demographics["native_language"] == "English"


def test_the_pages_work_without_javascript(story, browser, live_server):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(_invite("story", live_server))
    _click_answers(page, [1, 2, 3])
    _next(page)
    _click_answers(page, [4])
    _next(page)
    context.close()
    assert sorted(HumanRating.objects.values_list("score", flat=True)) == [1, 2, 3, 4]


def test_researcher_raters_page(story, page, live_server, researcher, shoot):
    researcher.is_staff = True  # the admin's login form (LOGIN_URL) admits staff accounts only
    researcher.save()
    Study.objects.filter(pk=story.pk).update(open_link_enabled=True)
    for n in range(3):
        Rater.objects.create(study=story, external_id=f"teacher-{n}")
    page.goto("/admin/login/?next=/studies/story/raters/")
    page.get_by_label("Username").fill("owner")
    page.get_by_label("Password").fill("pw-owner-123")
    with page.expect_navigation():
        page.get_by_role("button", name="Log in").click()
    assert page.get_by_text("teacher-2").is_visible()
    shoot(page, "researcher-raters")


def test_meta_evaluation_page_shows_another_raters_answer(story, page, live_server, shoot):
    from evalhub.imports.meta_study import meta_study_create
    from llmjudge.models import Judge, JudgeRun, LLMRating

    run = JudgeRun.objects.create(study=story, judge=Judge.objects.create(name="hidden-judge", model="m"))
    item = story.items.get(external_id="h1")
    LLMRating.objects.create(run=run, item=item, question=story.questions.get(key="cohesiveness"), sample=0,
                             status=LLMRating.Status.OK, score=5, raw="5",
                             rationale="Every sentence follows from the one before it.")
    open_study(meta_study_create(slug="meta", run_id=run.pk, question_key="cohesiveness"))
    page.goto(_invite("meta", live_server))
    assert page.get_by_text("Every sentence follows from the one before it.").is_visible()
    assert page.get_by_text("5 (highest)").is_visible()
    shoot(page, "meta")
    page.get_by_text("Partially agree").click()
    page.locator("textarea[name=comment]").fill("Mostly, but the ending jumps.")
    _next(page)
    assert page.locator("#completion-code").is_visible()


def test_a_pairwise_rater_sees_both_stories_side_by_side_and_chooses_b_by_keyboard(page, live_server, researcher):
    from annotations.studies import study_create_from_template

    study = open_study(study_create_from_template(slug="pairs", template="story-pairwise", owner=researcher))
    Item.objects.create(study=study, external_id="p1", group="pairs",
                        fields={"prompt": "A lighthouse keeper retires.", "response_a": "Marta lit the lamp once more.",
                                "response_b": "The light was a light."})
    page.goto(_invite("pairs", live_server))

    a, b = page.locator(".pair .candidate").nth(0).bounding_box(), page.locator(".pair .candidate").nth(1).bounding_box()
    assert a["x"] + a["width"] <= b["x"] and abs(a["y"] - b["y"]) < 1  # side by side, A on the left
    assert page.locator(".pair .candidate h2").all_text_contents() == ["Story A", "Story B"]  # shown in capitals by CSS
    second = page.locator(".pair .candidate .text").nth(1).inner_text()
    page.keyboard.press("2")  # the story shown second, stored as the file's letter of that story
    _next(page)
    swapped = second == "Marta lit the lamp once more."  # counterbalanced: the file's A may be shown second
    assert list(HumanRating.objects.filter(item__study=study).values_list("score", "swapped")) == [
        (1.0 if swapped else 2.0, swapped)]
