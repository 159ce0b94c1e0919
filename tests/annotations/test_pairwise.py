"""Pairwise (A/B) studies: the spec's rules, the rater's side-by-side page, choices stored as 1 = A,
2 = B (3 = tie where allowed), bad choices refused, and the judge reading what the rater reads."""
from __future__ import annotations

import json
import re
from html import unescape

import pytest
from django.db import IntegrityError, transaction

from annotations.models import HumanRating, Item, ItemClaim, Rater, Study
from annotations.rendering import llm_prompt, oriented_item, rater_page
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
    claim = ItemClaim.objects.get(assignment__rater=invited, completed_at__isnull=True)
    first, second = ("response_b", "response_a") if claim.swapped else ("response_a", "response_b")
    pair = html[html.index('<div class="pair">'):]
    assert html.index(claim.item.fields["prompt"]) < html.index('<div class="pair">')
    assert pair.index("Story A") < pair.index(claim.item.fields[first]) < pair.index("Story B") \
        < pair.index(claim.item.fields[second])
    assert re.findall(r'data-candidate="(\w)"', html) == ["A", "B"]
    assert re.findall(r'type="radio" name="q_(\w+)" value="(\d)"', html) == [("overall", "1"), ("overall", "2")]
    assert "<span>A is better</span>" in html and "<span>B is better</span>" in html and "Tie" not in html


def test_a_fixed_order_rater_choosing_b_then_a_stores_2_then_1(client, pairwise):
    Study.objects.filter(pk=pairwise.pk).update(pair_order=Study.PairOrder.FIXED)
    invited = Rater.objects.create(study=pairwise)
    client.get(url_of(invited))
    first = _claimed(invited)
    answer(client, invited, 2)
    second = _claimed(invited)
    answer(client, invited, 1)

    stored = {i: (score, swapped) for i, score, swapped in
              HumanRating.objects.filter(rater=invited).values_list("item__external_id", "score", "swapped")}
    assert stored == {first.external_id: (2.0, False), second.external_id: (1.0, False)}


def test_a_choice_on_a_swapped_page_is_stored_in_the_files_orientation(client, invited):
    """Counterbalanced: of the two items, the rater in seat 0 sees exactly one swapped; choosing the first
    place on both pages stores A for the unswapped item and B for the swapped one, each with its flag."""
    client.get(url_of(invited))
    shown = {}
    for _ in PAIRS:
        claim = ItemClaim.objects.get(assignment__rater=invited, completed_at__isnull=True)
        shown[claim.item.external_id] = claim.swapped
        answer(client, invited, 1)  # "A is better": the text shown first

    assert sorted(shown.values()) == [False, True]
    stored = {i: (score, swapped) for i, score, swapped in
              HumanRating.objects.filter(rater=invited).values_list("item__external_id", "score", "swapped")}
    assert stored == {i: (2.0 if swapped else 1.0, swapped) for i, swapped in shown.items()}


def test_two_raters_of_an_item_see_it_in_opposite_orders_and_each_half_swapped(client, researcher):
    study = open_study(study_create_from_template(slug="pairs4", template="story-pairwise", owner=researcher),
                       raters_per_item=2)
    for n in range(4):
        Item.objects.create(study=study, external_id=f"p{n}", group="pairs", position=n,
                            fields={"prompt": f"prompt {n}", "response_a": f"a {n}", "response_b": f"b {n}"})
    raters = [Rater.objects.create(study=study) for _ in range(2)]
    for rater in raters:
        for _ in range(4):
            answer(client, rater, 1)
    orientation = {(r, i): s for r, i, s in HumanRating.objects.values_list("rater_id", "item__external_id",
                                                                            "swapped")}
    first, second = (r.pk for r in raters)
    assert all(orientation[first, f"p{n}"] != orientation[second, f"p{n}"] for n in range(4))
    assert sum(orientation[first, f"p{n}"] for n in range(4)) == 2
    assert sum(orientation[second, f"p{n}"] for n in range(4)) == 2
    # Both always chose the first place: two A and two B each, in the file's orientation.
    assert sorted(HumanRating.objects.filter(rater=raters[0]).values_list("score", flat=True)) == [1, 1, 2, 2]


def test_a_swapped_rater_page_and_the_swapped_judge_prompt_show_the_same_texts(pairwise):
    from llmjudge.runs.swapping import swapped_item

    question = pairwise.questions.get()
    for item in pairwise.items.all():
        shown = oriented_item(study=pairwise, item=item, swapped=True)
        page = rater_page(study=pairwise, item=shown, questions=[question])
        prompt = llm_prompt(study=pairwise, item=swapped_item(pairwise, item), question=question)
        assert page.fields == {"prompt": item.fields["prompt"], "response_a": item.fields["response_b"],
                               "response_b": item.fields["response_a"]}
        for text in [page.instruction, page.questions[0].text, *page.fields.values()]:
            assert text in prompt
        assert prompt.index(item.fields["response_b"]) < prompt.index(item.fields["response_a"])
    assert oriented_item(study=pairwise, item=item, swapped=False) is item


def test_a_fixed_order_spec_may_not_promise_a_random_order(researcher):
    spec = {**protocol_templates()["story-pairwise"], "pair_order": "fixed"}
    with pytest.raises(StudySpecError, match="pair_order 'fixed' shows every rater the file's A first"):
        study_create(slug="fixed", spec=spec, owner=researcher)
    honest = {**spec, "human_instruction": "Choose the better story.",
              "llm_template": "Choose the better story.\n{response_a}\n{response_b}\n{question}"}
    study = study_create(slug="fixed", spec=honest, owner=researcher)
    assert study.pair_order == Study.PairOrder.FIXED
    assert protocol_templates()["story-pairwise"].get("pair_order", "counterbalanced") == "counterbalanced"


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
    ({"pair_order": "random"}, "pair_order must be one of"),
    ({"kind": "likert", "pair_fields": [], "pair_order": "fixed"}, "pair_order is only for kind 'pairwise'"),
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


def test_the_admin_may_not_fix_the_order_of_a_study_whose_instruction_promises_randomness(researcher, rf):
    # Issue 25 review: the admin edits every Study field, and saved "fixed" beside "The order ... is random".
    from django.contrib import admin as django_admin
    from django.forms.models import model_to_dict

    study = study_create(slug="admin-fixed", spec=protocol_templates()["story-pairwise"], owner=researcher)
    assert "random" in study.instruction
    request = rf.post("/admin/")
    request.user = type(researcher).objects.create_superuser(username="root", password="pw-root-123")
    form_class = django_admin.site._registry[Study].get_form(request, study)
    data = {k: ("" if v is None else v) for k, v in model_to_dict(study).items() if k in form_class.base_fields}
    for key in ("field_labels", "human_subset", "demographics", "scale_labels", "contrasts", "groups", "item_fields",
                "diff_fields", "pair_fields"):
        if key in data:
            data[key] = json.dumps(data[key])
    assert form_class(data=data, instance=study).is_valid()  # as it is, the form saves
    refused = form_class(data={**data, "pair_order": "fixed"}, instance=study)
    assert not refused.is_valid()
    assert "pair_order 'fixed' shows every rater the file's A first" in refused.errors["__all__"][0]
    assert Study.objects.get(pk=study.pk).pair_order == Study.PairOrder.COUNTERBALANCED
