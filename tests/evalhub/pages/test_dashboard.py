"""The dashboard and its JSON/CSV endpoints: who may see them, what they show, streaming exports."""
from __future__ import annotations

import csv
import io
import json
import re

import pytest
from django.contrib.auth.models import Permission
from django.http import StreamingHttpResponse

from annotations.models import HumanRating
from evalhub.analysis import AnalysisOptions, study_analysis
from evalhub.analysis.result_json import analysis_json
from evalhub.imports.exports import RATING_COLUMNS, TABLE_COLUMNS
from tests.evalhub.factories import import_long

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_cache")]


@pytest.fixture
def rated(story_study, tmp_path):
    rows = [(f"{g}-{i}", g, q, "human", f"r{r}", 1 + (i * (r + 1) + (3 if g == "human" else 0)) % 5)
            for g in ("human", "gpt2") for i in range(6) for q in ("cohesiveness", "relevance") for r in range(3)]
    rows += [(f"{g}-{i}", g, q, "judge <b>x</b>", str(s), 1 + (i + s + (2 if g == "human" else 0)) % 5)
             for g in ("human", "gpt2") for i in range(6) for q in ("cohesiveness", "relevance") for s in range(3)]
    import_long(story_study, rows, tmp_path)
    return story_study


def url(study, suffix: str = "") -> str:
    return f"/studies/{study.slug}/{suffix}"


def test_anonymous_visitors_are_sent_to_log_in(client, rated):
    for suffix in ("", "analysis.json", "export/ratings.csv", "export/cells.csv"):
        response = client.get(url(rated, suffix))
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_another_researcher_gets_404_and_staff_and_the_owner_get_the_page(client, rated, other_researcher,
                                                                         researcher, django_user_model):
    client.force_login(other_researcher)
    for suffix in ("", "analysis.json", "export/ratings.csv", "export/kendall.csv"):
        assert client.get(url(rated, suffix)).status_code == 404
    staff = django_user_model.objects.create_user("staff", password="x", is_staff=True)
    client.force_login(staff)
    assert client.get(url(rated)).status_code == 404  # being staff grants nothing (issue 18's role model)
    staff.user_permissions.add(Permission.objects.get(codename="view_all_studies"))
    assert client.get(url(rated)).status_code == 200
    client.force_login(researcher)
    assert client.get(url(rated)).status_code == 200
    assert client.get("/studies/no-such-study/").status_code == 404


def test_the_dashboard_shows_the_tables_words_and_charts(client, rated, researcher):
    client.force_login(researcher)
    response = client.get(url(rated))
    html = response.content.decode()
    assert response.status_code == 200
    for anchor in ('id="table1"', 'id="kendall"', 'id="pairwise"', 'id="raters"', 'id="welch"'):
        assert anchor in html
    before, rest = html.split('<section id="evidence">')
    evidence, after = rest.split("</section>", 1)
    # distributions (question x group), scatters, alpha charts; the evidence section (issue 19) apart
    assert (before + after).count("<svg") == 2 * 2 + 2 + 2
    blocks = evidence.count('class="evidence-block"')
    confusion_maps = len(re.findall(r'<svg [^>]*aria-label="[^"]*: confusion"', evidence))
    ceiling_strips = len(re.findall(r'<svg [^>]*aria-label="[^"]*: human ceiling"', evidence))
    assert blocks > 0 and confusion_maps == blocks and evidence.count("<svg") == blocks + ceiling_strips
    assert "Human raters prefer" in html or "Human raters show no significant preference" in html
    # Data-derived names are escaped in tables and inside the SVG charts.
    assert "judge <b>x</b>" not in html and "judge &lt;b&gt;x&lt;/b&gt;" in html
    result = study_analysis(study=rated, options=AnalysisOptions())
    cell = next(c for c in result.cells if (c.question, c.group, c.pool) == ("relevance", "human", "human"))
    assert f"{cell.mean:.2f} ({cell.std:.2f})" in html


def test_filters_narrow_the_page_and_bad_filters_are_a_400(client, rated, researcher):
    client.force_login(researcher)
    html = client.get(url(rated), {"question": "relevance", "group": "human"}).content.decode()
    assert "relevance · group “human”" in html and "cohesiveness · group “human”" not in html
    assert client.get(url(rated), {"question": "nope"}).status_code == 400
    assert client.get(url(rated, "analysis.json"), {"run": "999"}).status_code == 400


def test_the_json_endpoint_mirrors_the_analysis_with_chart_data(client, rated, researcher):
    client.force_login(researcher)
    run = rated.judge_runs.get()
    data = json.loads(client.get(url(rated, "analysis.json"), {"run": run.pk, "question": "relevance"}).content)
    expected = study_analysis(study=rated, options=AnalysisOptions(runs=(run.pk,), questions=("relevance",),
                                                                   charts=True))
    assert data == json.loads(json.dumps(analysis_json(expected)))
    assert {"distributions", "scatter"} <= set(data)
    scatter = data["scatter"][0]
    assert sum(n for _, _, n in scatter["points"]) == scatter["n_items"]


def test_csv_buttons_stream_the_ratings_and_each_table(client, rated, researcher):
    client.force_login(researcher)
    response = client.get(url(rated, "export/ratings.csv"))
    assert isinstance(response, StreamingHttpResponse)
    assert response["Content-Disposition"] == 'attachment; filename="story-ratings.csv"'
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert tuple(rows[0]) == RATING_COLUMNS and len(rows) == 1 + 72 + 72
    for table, columns in TABLE_COLUMNS.items():
        response = client.get(url(rated, f"export/{table}.csv"))
        header = next(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
        assert tuple(header) == columns
    assert client.get(url(rated, "export/nope.csv")).status_code == 404


def test_the_admin_action_streams_the_ratings_of_the_selected_studies(client, rated, meaning_study, django_user_model):
    admin_user = django_user_model.objects.create_superuser("root", password="x")
    client.force_login(admin_user)
    response = client.post("/admin/annotations/study/", {"action": "export_ratings_csv",
                                                          "_selected_action": [rated.pk, meaning_study.pk]})
    assert isinstance(response, StreamingHttpResponse)
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert tuple(rows[0]) == RATING_COLUMNS
    assert {r[0] for r in rows[1:]} == {"story"} and len(rows) == 1 + 72 + 72
    page = client.get(f"/admin/annotations/study/{rated.pk}/change/").content.decode()
    assert f'href="/studies/{rated.slug}/"' in page


def test_the_cached_analysis_is_reused_until_a_rating_changes(client, rated, researcher,
                                                              django_assert_max_num_queries):
    client.force_login(researcher)
    first = json.loads(client.get(url(rated, "analysis.json")).content)
    # session, study, form choices, fingerprint (with the Prolific ledger's, issue 26): no rating rows
    with django_assert_max_num_queries(13):
        again = json.loads(client.get(url(rated, "analysis.json")).content)
    assert again == first
    rating = HumanRating.objects.filter(item__study=rated, question__key="relevance").first()
    rating.score = 5 if rating.score != 5 else 1
    rating.save()
    changed = json.loads(client.get(url(rated, "analysis.json")).content)
    assert changed != first
    assert changed == json.loads(json.dumps(analysis_json(study_analysis(study=rated, options=AnalysisOptions(charts=True)))))


def test_a_study_without_items_or_ratings_renders_with_dashes_and_notes(client, story_study, researcher):
    client.force_login(researcher)
    response = client.get(url(story_study))
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="table1"' in html and "No LLM pool on this study yet." in html
    data = json.loads(client.get(url(story_study, "analysis.json")).content)
    assert data["study"]["n_items"] == 0 and data["cells"] == [] and data["kendall"] == []
