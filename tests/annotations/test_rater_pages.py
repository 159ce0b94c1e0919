"""The rater's pages over HTTP: the story protocol's two steps, idempotent submissions, access, escaping."""
from __future__ import annotations

import re
from datetime import timedelta

import pytest

from annotations.models import Assignment, HumanRating, ItemClaim, Rater
from tests.support.raterkit import add_story_items, answer, open_study, page_key, url_of


@pytest.fixture
def invited(study):
    return Rater.objects.create(study=study)


def _claimed_item(rater: Rater):
    return ItemClaim.objects.get(assignment__rater=rater, completed_at__isnull=True).item


def test_first_story_page_asks_three_questions_and_hides_the_prompt(client, invited):
    html = client.get(url_of(invited)).content.decode()
    item = _claimed_item(invited)
    assert item.fields["story"] in html
    assert item.fields["prompt"] not in html
    assert "Prompt" not in html and "PROMPT" not in html
    assert re.findall(r'type="radio" name="q_(\w+)"', html)[::5] == ["grammaticality", "cohesiveness", "likability"]


def test_prompt_and_relevance_appear_after_the_first_three_answers_are_saved(client, invited):
    client.get(url_of(invited))
    item = _claimed_item(invited)
    response = answer(client, invited, 4)
    html = response.content.decode()
    assert set(HumanRating.objects.filter(rater=invited).values_list("question__key", flat=True)) == {
        "grammaticality", "cohesiveness", "likability"}
    assert item.fields["prompt"] in html
    assert "Now read the PROMPT based on which the story fragment was written." in html
    assert set(re.findall(r'type="radio" name="q_(\w+)"', html)) == {"relevance"}
    assert item.fields["story"] in html


def test_likert_radios_carry_the_protocol_labels(client, invited):
    html = client.get(url_of(invited)).content.decode()
    assert "<span>1 (lowest)</span>" in html and "<span>5 (highest)</span>" in html
    assert "<span>3</span>" in html


def test_a_page_with_a_missing_answer_is_refused_and_saves_nothing(client, invited):
    html = client.get(url_of(invited)).content.decode()
    response = client.post(url_of(invited), {"page": page_key(html), "q_grammaticality": "3", "q_cohesiveness": "3"})
    assert response.status_code == 200
    assert "Please choose an answer to this question." in response.content.decode()
    assert HumanRating.objects.count() == 0


def test_an_off_scale_value_is_refused(client, invited):
    html = client.get(url_of(invited)).content.decode()
    data = {"page": page_key(html), "q_grammaticality": "9", "q_cohesiveness": "3", "q_likability": "3"}
    assert client.post(url_of(invited), data).status_code == 200
    assert HumanRating.objects.count() == 0


def test_posting_the_same_page_twice_neither_duplicates_nor_skips(client, invited):
    html = client.get(url_of(invited)).content.decode()
    first_item = _claimed_item(invited)
    data = {"page": page_key(html), "q_grammaticality": "2", "q_cohesiveness": "2", "q_likability": "2"}
    client.post(url_of(invited), data)
    data_again = {**data, "q_grammaticality": "5"}
    response = client.post(url_of(invited), data_again)
    assert response.status_code == 302
    assert HumanRating.objects.filter(rater=invited).count() == 3
    assert set(HumanRating.objects.values_list("score", flat=True)) == {2}
    # still on the same item, now at its relevance step: nothing was skipped
    assert _claimed_item(invited) == first_item
    assert page_key(client.get(url_of(invited)).content.decode()) == f"item:{first_item.pk}:1"


def test_going_back_and_resubmitting_an_answered_item_changes_nothing(client, invited):
    old_page = client.get(url_of(invited)).content.decode()
    first_item = _claimed_item(invited)
    answer(client, invited, 3)
    answer(client, invited, 3)  # relevance: the first item is done
    second_item = _claimed_item(invited)
    assert second_item != first_item
    stale = {"page": page_key(old_page), "q_grammaticality": "1", "q_cohesiveness": "1", "q_likability": "1"}
    client.post(url_of(invited), stale)
    assert HumanRating.objects.filter(rater=invited).count() == 4
    assert not HumanRating.objects.filter(score=1).exists()
    assert _claimed_item(invited) == second_item


def test_reloading_shows_the_same_page_without_writing(client, invited):
    first = client.get(url_of(invited)).content.decode()
    second = client.get(url_of(invited)).content.decode()
    assert page_key(first) == page_key(second)
    assert ItemClaim.objects.count() == 1
    assert HumanRating.objects.count() == 0


def test_a_rater_finishes_with_a_completion_code_and_exactly_sixteen_ratings(client, invited):
    for _ in range(8):  # 4 items x 2 pages
        response = answer(client, invited, 4)
    html = response.content.decode()
    assignment = Assignment.objects.get(rater=invited)
    assert assignment.completed_at is not None
    assert re.fullmatch(r"[0-9A-F]{8}", assignment.completion_code)
    assert assignment.completion_code in html
    assert HumanRating.objects.filter(rater=invited).count() == 16
    assert assignment.position == 4


def test_completion_page_offers_the_configured_redirect_with_the_code(client, study, invited):
    study.completion_redirect_url = "https://app.prolific.com/submissions/complete?cc=C0DE&r={code}"
    study.save()
    for _ in range(8):
        response = answer(client, invited)
    code = Assignment.objects.get(rater=invited).completion_code
    assert f'href="https://app.prolific.com/submissions/complete?cc=C0DE&amp;r={code}"' in response.content.decode()


def test_the_comment_is_offered_on_the_last_page_and_stored(client, invited):
    first = client.get(url_of(invited)).content.decode()
    assert 'name="comment"' not in first
    answer(client, invited, 3)
    assert 'name="comment"' in client.get(url_of(invited)).content.decode()
    answer(client, invited, 3, comment="Nice twist.")
    assert HumanRating.objects.get(rater=invited, question__key="relevance").comment == "Nice twist."


def test_story_text_with_html_is_shown_as_text(client, study):
    study.items.all().delete()
    add_story_items(study, [("x", "human", "<script>alert('pwned')</script> <b>bold</b> & more", "p")])
    rater = Rater.objects.create(study=study)
    html = client.get(url_of(rater)).content.decode()
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt; &lt;b&gt;bold&lt;/b&gt; &amp; more" in html


def _without_random_tokens(html: str, rater: Rater) -> str:
    """The page less its per-request random strings (CSP nonce, CSRF token, the rater's own link), which
    can contain any short identifier by chance."""
    html = re.sub(r'nonce="[^"]*"', "", html)
    html = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", html)
    return html.replace(rater.token, "")


def test_raters_never_see_the_group_or_external_id(client, invited):
    html = _without_random_tokens(client.get(url_of(invited)).content.decode(), invited)
    item = _claimed_item(invited)
    assert item.group not in html.replace(item.fields["story"], "")
    assert item.external_id not in html


def test_an_unknown_token_is_not_found(client, invited):
    assert client.get("/r/not-a-real-token/").status_code == 404
    assert client.get(url_of(invited)[:-5] + "xxxx/").status_code == 404


def test_a_rater_cannot_answer_another_raters_item(client, study, invited):
    study.raters_per_item = 1
    study.save()
    other = Rater.objects.create(study=study)
    other_key = page_key(client.get(url_of(other)).content.decode())
    my_key = page_key(client.get(url_of(invited)).content.decode())
    assert other_key != my_key  # one seat per item: they hold different items
    data = {"page": other_key, "q_grammaticality": "1", "q_cohesiveness": "1", "q_likability": "1"}
    response = client.post(url_of(invited), data)  # the other rater's page, posted with my token
    assert response.status_code == 302
    assert HumanRating.objects.count() == 0


def test_a_token_of_another_study_only_reaches_that_study(client, study, meaning_study):
    open_study(meaning_study)
    from annotations.models import Item

    Item.objects.create(study=meaning_study, external_id="m", group="bae",
                        fields={"benign_title": "A b c", "adversarial_title": "A x c"})
    meaning_rater = Rater.objects.create(study=meaning_study)
    html = client.get(url_of(meaning_rater)).content.decode()
    assert "News title 1" in html
    for item in study.items.all():
        assert item.fields["story"] not in html
    # posting a story item's page key with the meaning rater's token writes nothing
    story_item = study.items.first()
    client.post(url_of(meaning_rater), {"page": f"item:{story_item.pk}:0", "q_grammaticality": "3",
                                        "q_cohesiveness": "3", "q_likability": "3"})
    assert HumanRating.objects.count() == 0


def test_a_revoked_link_no_longer_opens(client, invited):
    from annotations.services import rater_revoke

    client.get(url_of(invited))
    rater_revoke(rater=invited)
    response = client.get(url_of(invited))
    assert response.status_code == 410
    assert ItemClaim.objects.count() == 0  # the seat went back to the pool


def test_a_draft_study_does_not_open_for_raters(client, study, invited):
    study.status = study.Status.DRAFT
    study.save()
    assert client.get(url_of(invited)).status_code == 403
    assert not Assignment.objects.exists()


def test_imported_raters_have_no_rater_pages(client, study):
    imported = Rater.objects.create(study=study, external_id="t1", source=Rater.Source.IMPORTED)
    assert client.get(url_of(imported)).status_code == 404


def test_meaning_study_shows_the_differing_words_in_bold_and_agree_labels(client, meaning_study):
    from annotations.models import Item

    open_study(meaning_study)
    Item.objects.create(study=meaning_study, external_id="m1", group="textfooler", fields={
        "benign_title": "Oil prices climb as storm threatens Gulf refineries",
        "adversarial_title": "Oil costs rise as tempest threatens Gulf refineries"})
    rater = Rater.objects.create(study=meaning_study)
    html = client.get(url_of(rater)).content.decode()
    assert "Oil <strong>prices</strong> <strong>climb</strong> as <strong>storm</strong> threatens" in html
    assert "Oil <strong>costs</strong> <strong>rise</strong> as <strong>tempest</strong> threatens" in html
    assert "<span>1 (strongly disagree)</span>" in html and "<span>5 (strongly agree)</span>" in html
    assert "benign" not in html.lower() and "adversarial" not in html.lower() and "textfooler" not in html


def test_consent_and_demographics_come_first_and_are_stored(client, study, invited):
    study.consent_text = "You will rate stories. Your answers are anonymous."
    study.ask_demographics = True
    study.save()
    html = client.get(url_of(invited)).content.decode()
    assert "Your answers are anonymous." in html and 'name="agree"' in html
    assert not ItemClaim.objects.exists()
    client.post(url_of(invited), {"page": "consent"})  # box not ticked
    invited.refresh_from_db()
    assert invited.consented_at is None
    client.post(url_of(invited), {"page": "consent", "agree": "on"})
    invited.refresh_from_db()
    assert invited.consented_at is not None
    assert 'name="age_band"' in client.get(url_of(invited)).content.decode()
    client.post(url_of(invited), {"page": "demographics", "age_band": "25-34", "gender": "prefer-not",
                                  "region": "europe", "education": "master", "native_language": "Dutch"})
    invited.refresh_from_db()
    assert invited.demographics == {"age_band": "25-34", "gender": "prefer-not", "region": "europe",
                                    "education": "master", "native_language": "Dutch"}
    assert 'name="q_grammaticality"' in client.get(url_of(invited)).content.decode()


def test_demographics_have_no_preselected_answer(client, study, invited):
    study.ask_demographics = True
    study.save()
    client.post(url_of(invited), {"page": "demographics", "native_language": "Dutch"})
    invited.refresh_from_db()
    assert invited.demographics == {}
    assert 'value="" selected' in client.get(url_of(invited)).content.decode()


def test_rater_pages_show_the_texts_the_judge_prompt_is_made_of(client, invited):
    from html import unescape

    from annotations.rendering import llm_prompt

    first = unescape(client.get(url_of(invited)).content.decode())
    item = _claimed_item(invited)
    second = unescape(answer(client, invited, 3).content.decode())
    study = invited.study
    for question in study.questions.all():
        prompt = llm_prompt(study=study, item=item, question=question)
        assert question.text in prompt
        assert question.text in (second if question.reveals else first)
        assert item.fields["story"] in prompt and item.fields["story"] in first
        if question.context:
            context = question.context.format_map(item.fields).strip()
            assert context in prompt and context in second and context not in first


def test_without_the_browsers_measure_the_time_on_the_page_is_counted_from_when_it_was_shown(client, invited):
    html = client.get(url_of(invited)).content.decode()
    claim = ItemClaim.objects.get(assignment__rater=invited, completed_at__isnull=True)
    # The page was shown 7 s ago (moved back in the database rather than waited for).
    ItemClaim.objects.filter(pk=claim.pk).update(touched_at=claim.touched_at - timedelta(seconds=7))
    data = {"page": page_key(html), "q_grammaticality": "3", "q_cohesiveness": "4", "q_likability": "2"}
    assert client.post(url_of(invited), data).status_code == 302  # no elapsed_ms: a browser without the script
    spent = set(HumanRating.objects.filter(rater=invited).values_list("time_spent_ms", flat=True))
    assert len(spent) == 1 and 7000 <= spent.pop() < 60000
    claim.refresh_from_db()
    assert 7000 <= claim.time_spent_ms < 60000
