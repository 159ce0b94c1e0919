"""Cost per rating, human beside judge: in the analysis JSON and on the study's page, only for a study published
on Prolific. The expected numbers are worked out by hand in the comments."""
from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from annotations.models import HumanRating, ProlificBonus, ProlificStudy, ProlificSubmission, Rater
from evalhub.analysis import study_analysis
from tests.evalhub.factories import live_run
from tests.support.raterkit import add_story_items

pytestmark = pytest.mark.django_db


@pytest.fixture
def published(story_study, settings):
    settings.PROLIFIC_SERVICE_FEE = 0.25
    add_story_items(story_study)
    question = story_study.questions.get(key="cohesiveness")
    items = list(story_study.items.all())
    ann, ben = (Rater.objects.create(study=story_study, external_id=pid) for pid in ("pid-ann", "pid-ben"))
    for rater in (ann, ben):
        for item in items:
            HumanRating.objects.create(rater=rater, item=item, question=question, score=3)
    link = ProlificStudy.objects.create(study=story_study, prolific_id="p1", internal_name="x", token_env="T",
                                        places=2, reward_cents=150, minutes=10, completion_code="C",
                                        published_at=datetime(2026, 1, 1, tzinfo=UTC))
    ProlificSubmission.objects.create(link=link, submission_id="s-ann", participant_id="pid-ann", rater=ann,
                                      status="APPROVED")
    ProlificSubmission.objects.create(link=link, submission_id="s-ben", participant_id="pid-ben", rater=ben,
                                      status="AWAITING REVIEW")  # not paid yet: not counted
    ProlificBonus.objects.create(link=link, key="k1", submission_id="s-ann", participant_id="pid-ann",
                                 amount_cents=50, state="paid", paid_cents=50, fees_cents=Decimal("16.67"),
                                 created_by="owner")
    ProlificBonus.objects.create(link=link, key="k2", submission_id="s-ann", participant_id="pid-ann",
                                 amount_cents=80, state="unknown", created_by="owner")  # not known paid: not counted
    run = live_run(story_study, "cheap", [(i.external_id, "cohesiveness", 0, 3.0, "ok") for i in items])
    run.cost_usd = Decimal("0.02")
    run.save()
    return story_study, run


def test_the_analysis_json_sets_the_human_cost_per_rating_beside_each_judges(published):
    study, run = published
    cost = study_analysis(study=study).to_json()["cost"]
    # ann: reward 150, fee 150 x 0.25 = 37.5, bonus 50 and its fee 16.67: 254.17 cents over her 4 ratings.
    assert cost == {
        "human_rewards_cents": 150, "human_reward_fee_cents": 37.5, "human_bonuses_cents": 50,
        "human_bonus_fee_cents": 16.67, "human_total_cents": 254.17, "human_ratings": 4,
        "human_per_rating_cents": 63.5425,
        # $0.02 over 4 answered ratings.
        "judges": [{"pool": "cheap", "cost_usd": 0.02, "ratings": 4, "per_rating_usd": 0.005}],
    }


def test_a_study_never_published_on_prolific_has_no_cost_key(story_study):
    add_story_items(story_study)
    assert "cost" not in study_analysis(study=story_study).to_json()


def test_the_study_page_shows_both_costs(client, published, researcher):
    study, _ = published
    client.force_login(researcher)
    html = client.get(f"/studies/{study.slug}/home/").content.decode()
    assert 'id="human-per-rating">63.54 cents' in html and "$0.005000" in html


@pytest.mark.usefixtures("fresh_cache")
def test_the_cached_analysis_follows_an_approval_although_no_rating_changed(published):
    from evalhub.analysis.cache import study_analysis_cached

    study, _ = published
    before = study_analysis_cached(study=study).to_json()["cost"]["human_rewards_cents"]
    ProlificSubmission.objects.filter(submission_id="s-ben").update(status="APPROVED",
                                                                    updated_at=datetime(2030, 1, 1, tzinfo=UTC))
    assert (before, study_analysis_cached(study=study).to_json()["cost"]["human_rewards_cents"]) == (150, 300)
