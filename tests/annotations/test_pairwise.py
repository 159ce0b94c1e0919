"""Pairwise (A/B) studies: the spec's rules, the rater's side-by-side page, choices stored as 1 = A,
2 = B (3 = tie where allowed), bad choices refused, and the judge reading what the rater reads."""
from __future__ import annotations

import re
from html import unescape

import pytest
from django.db import IntegrityError, transaction

from annotations.models import HumanRating, Item, ItemClaim, Rater, Study
from annotations.rendering import llm_prompt, rater_page
from annotations.studies import StudySpecError, protocol_templates, study_create, study_create_from_template
from tests.support.raterkit import answer, open_study, page_key, url_of

PAIRS = [
    ("p1", "A lighthouse keeper's last night.", "Marta lit the lamp one final time and waited for no ship.",
     "The light was a light. The keeper kept it."),
    ("p2", "A dragon opens a bakery.", "The bread was bread and the dragon was there.",
     "Her first loaves came out charcoal; by spring the village queued at dawn."),
]


@pytest.fixture
def pairwise(researcher):
    study = open_study(study_create_from_template(slug="pairs", template="story-pairwise", owner=researcher))
    for n, (external_id, prompt, a, b) in enumerate(PAIRS):
        Item.objects.create(study=study, external_id=external_id, group="pairs", position=n,
                            fields={"prompt": prompt, "response_a": a, "response_b": b})
    return study


@pytest.fixture
def invited(pairwise):
    return Rater.objects.create(study=pairwise)


def _claimed(rater: Rater) -> Item:
    return ItemClaim.objects.get(assignment__rater=rater, completed_at__isnull=True).item


def test_the_template_makes_a_forced_choice_pairwise_study(pairwise):
    assert (pairwise.kind, pairwise.pair_fields) == ("pairwise", ["response_a", "response_b"])
    assert (pairwise.scale_min, pairwise.scale_max) == (1, 2)
    assert [pairwise.label_for(v) for v in pairwise.scale_points()] == ["A is better", "B is better"]
    assert (pairwise.pairwise_score("A"), pairwise.pairwise_score("B"), pairwise.pairwise_score("tie")) == (1, 2, None)


def test_the_page_shows_both_candidates_side_by_side_under_the_prompt(client, invited):
    html = unescape(client.get(url_of(invited)).content.decode())
    item = _claimed(invited)
    pair = html[html.index('<div class="pair">'):]
    assert html.index(item.fields["prompt"]) < html.index('<div class="pair">')
    assert pair.index("Story A") < pair.index(item.fields["response_a"]) < pair.index("Story B") \
        < pair.index(item.fields["response_b"])
    assert re.findall(r'data-candidate="(\w)"', html) == ["A", "B"]
    assert re.findall(r'type="radio" name="q_(\w+)" value="(\d)"', html) == [("overall", "1"), ("overall", "2")]
    assert "<span>A is better</span>" in html and "<span>B is better</span>" in html and "Tie" not in html


def test_a_rater_choosing_b_then_a_stores_2_then_1(client, invited):
    client.get(url_of(invited))
    first = _claimed(invited)
    answer(client, invited, 2)
    second = _claimed(invited)
    answer(client, invited, 1)

    stored = dict(HumanRating.objects.filter(rater=invited).values_list("item__external_id", "score"))
    assert stored == {first.external_id: 2.0, second.external_id: 1.0}


def test_a_choice_outside_a_and_b_is_refused_and_changes_nothing(client, invited):
    html = client.get(url_of(invited)).content.decode()
    for bad in ("3", "0", "A", ""):
        response = client.post(url_of(invited), {"page": page_key(html), "q_overall": bad})
        assert response.status_code == 200
    assert HumanRating.objects.count() == 0
    assert ItemClaim.objects.filter(assignment__rater=invited, completed_at__isnull=False).count() == 0
    # Past the form, the database refuses a tie on a forced-choice study too.
    with pytest.raises(IntegrityError), transaction.atomic():
        HumanRating.objects.create(rater=invited, item=_claimed(invited), question=invited.study.questions.get(),
                                   score=3)
    assert HumanRating.objects.count() == 0


def test_a_study_with_ties_offers_and_stores_a_tie_as_3(client, researcher):
    spec = {**protocol_templates()["story-pairwise"], "scale": {"min": 1, "max": 3}}
    study = open_study(study_create(slug="pairs-tie", spec=spec, owner=researcher))
    Item.objects.create(study=study, external_id="p1", group="pairs",
                        fields={"prompt": "p", "response_a": "a", "response_b": "b"})
    rater = Rater.objects.create(study=study)

    html = client.get(url_of(rater)).content.decode()
    assert "<span>Tie (equally good)</span>" in html
    answer(client, rater, 3)
    assert list(HumanRating.objects.values_list("score", flat=True)) == [3.0]
    assert study.pairwise_score("tie") == 3


@pytest.mark.parametrize(("change", "message"), [
    ({"scale": {"min": 1, "max": 5}}, "a pairwise study's scale is 1-2"),
    ({"pair_fields": ["response_a", "story"]}, "pair_fields must name two different item fields"),
    ({"pair_fields": ["response_a", "response_a"]}, "pair_fields must name two different item fields"),
    ({"kind": "ranking"}, "kind must be 'likert' or 'pairwise'"),
])
def test_bad_pairwise_specs_are_refused_and_create_nothing(researcher, change, message):
    spec = {**protocol_templates()["story-pairwise"], **change}
    with pytest.raises(StudySpecError, match=message):
        study_create(slug="bad", spec=spec, owner=researcher)
    assert not Study.objects.filter(slug="bad").exists()


def test_the_database_refuses_a_pairwise_study_on_a_likert_scale(pairwise):
    with pytest.raises(IntegrityError), transaction.atomic():
        Study.objects.filter(pk=pairwise.pk).update(scale_max=5)


def test_the_judge_prompt_holds_every_text_the_rater_reads(pairwise):
    question = pairwise.questions.get()
    for item in pairwise.items.all():
        page = rater_page(study=pairwise, item=item, questions=[question])
        prompt = llm_prompt(study=pairwise, item=item, question=question)
        for text in [page.instruction, page.questions[0].text, *page.fields.values()]:
            assert text in prompt
        assert prompt.index(item.fields["response_a"]) < prompt.index(item.fields["response_b"])
