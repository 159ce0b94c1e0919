"""The demographics export: one row per rater with the external ids and the answers, never a rater's link token;
the same rows from the command, the raters page's button and the API."""
from __future__ import annotations

import csv
import io

import pytest
from django.core.management import call_command

from annotations.models import Rater
from annotations.services import demographics_save

pytestmark = pytest.mark.django_db


@pytest.fixture
def raters(story_study):
    prolific = Rater.objects.create(study=story_study, external_id="5f00aa", external_study_id="st-1",
                                    external_session_id="se-1", source=Rater.Source.OPEN)
    demographics_save(rater=prolific, answers={"age": "25-34", "gender": "woman"})
    invited = Rater.objects.create(study=story_study)
    demographics_save(rater=invited, answers={"age": "45-54", "region": "=cmd()"})
    Rater.objects.create(study=story_study, external_id="no-answers")
    return [prolific, invited]


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_one_row_per_rater_with_external_ids_and_every_answer_column(story_study, raters):
    out = io.StringIO()
    call_command("export", story_study.slug, "--what", "demographics", stdout=out)
    text = out.getvalue()
    rows = _rows(text)
    assert text.splitlines()[0] == ("study,rater,source,external_id,external_study_id,external_session_id,"
                                    "prolific_submission_id,prolific_status,consented_at,created,age,gender,region")
    assert [(r["rater"], r["external_id"], r["external_study_id"], r["external_session_id"], r["age"], r["gender"],
             r["region"]) for r in rows] == [
        ("5f00aa", "5f00aa", "st-1", "se-1", "25-34", "woman", ""),
        (f"rater-{raters[1].pk}", "", "", "", "45-54", "", "'=cmd()"),  # a formula is defused
        ("no-answers", "no-answers", "", "", "", "", ""),
    ]
    for rater in Rater.objects.all():
        assert rater.token not in text


def test_the_page_and_the_api_give_the_same_rows_to_the_owner_only(client, story_study, raters, researcher,
                                                                    other_researcher):
    out = io.StringIO()
    call_command("export", story_study.slug, "--what", "demographics", stdout=out)
    client.force_login(researcher)
    raters_page = client.get(f"/studies/{story_study.slug}/raters/").content.decode()
    assert f'href="/studies/{story_study.slug}/export/demographics.csv"' in raters_page
    page = b"".join(client.get(f"/studies/{story_study.slug}/export/demographics.csv").streaming_content).decode()
    api = b"".join(client.get(f"/api/studies/{story_study.slug}/demographics.csv").streaming_content).decode()
    assert _rows(page) == _rows(api) == _rows(out.getvalue())
    client.force_login(other_researcher)
    assert client.get(f"/studies/{story_study.slug}/export/demographics.csv").status_code == 404
    assert client.get(f"/api/studies/{story_study.slug}/demographics.csv").status_code == 404
