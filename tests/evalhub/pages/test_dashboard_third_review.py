"""The third review of the small study's dashboard (issue 25), the page's side: symbols defined in words (U3), one
unit for an LLM pool's counts (U5), the tables' numbering explained (U6), a verdict that counts only the tests that
ran (C6), the PPI note said once and the docs as links (C7), chart titles whole (C1) and a shared y scale (C8).

The browser-measured points (titles inside their SVG, text at least 10 px at 390 px, tables that fit at 1280 px) are
in tests/e2e/test_phone_width_browser.py.
"""
from __future__ import annotations

import re
from html import unescape

import pytest

from evalhub.analysis.result import Distribution
from evalhub.pages import charts, svg
from tests.evalhub.pages.test_dashboard_review import _read, small_study  # noqa: F401 - the fixture

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_cache")]


def _verdict(html: str) -> str:
    start = html.index('id="verdict"')
    return html[start:html.index("</section>", start)]


def test_the_verdict_defines_its_symbols_in_words_and_counts_only_tests_that_ran(small_study, client, researcher):  # noqa: F811
    html, _ = _read(client, researcher, small_study)
    verdict = unescape(_verdict(html))
    words = re.sub(r"<[^>]+>", "", verdict[verdict.index('id="verdict-words"'):])
    words = words[:words.index("ranks the pools.")]
    assert "winning rate ω is the share of human raters the judge beats" in words
    assert "passes when ω ≥ 0.5" in words
    assert "advantage probability ρj is the share of rater j's ratings the judge won" in words
    assert "the judge wins that rating (Wllm = 1) when it scores at least as well as j" in words
    assert 'href="/studies/docs/alt-test.md"' in verdict
    assert "ranked by their advantage probability ρ)" in verdict
    # Not one test of the 10 can run at 12 ratings per rater: the summary says so, with the reason, not "(10 tests)".
    # Sixth review, U5: the unit is the question and group, not the human.
    summary = re.search(r'<summary>(.*?) <span class="tests-ran">\((.*?)\)</span></summary>', verdict)
    assert summary and summary.group(1) == "Per question and group, each with its raters"
    # Eighth review: the 8 question × group rows and the 2 over all questions counted apart.
    assert summary.group(2) == "8 question × group tests and 2 over all questions, none could run: no human gave 30 " \
                               "usable ratings: add items, or ratings per rater"
    # A bare ω, ρ or W is never shown: each row names it.
    assert "· ω =" not in verdict and "· ρ =" not in verdict and "= mean W" not in verdict


def test_table_numbers_are_explained_once_and_the_docs_are_links(small_study, client, researcher):  # noqa: F811
    html, reader = _read(client, researcher, small_study)
    seen = re.sub(r"\s+", " ", " ".join(reader.parts))
    assert seen.count("the numbers of the tables they reproduce in Chiang & Lee (ACL 2023)") == 1
    assert html.count('<a href="/studies/docs/analysis.md">docs/analysis.md</a>') >= 2  # the tables and PPI
    assert "docs/analysis.md)" not in seen.replace("docs/analysis.md, “Prediction", "")  # no plain-text reference
    note = re.search(r'<p class="note" id="ppi-note">(.*?)</p>', html, flags=re.S)
    assert note and unescape(note.group(1)).count("random subset") == 1
    assert unescape(note.group(1)).lower().count("no ppi figure") == 1


def test_table_1_says_what_an_llm_pools_n_and_std_count(small_study, client, researcher):  # noqa: F811
    html, reader = _read(client, researcher, small_study)
    seen = " ".join(reader.parts)
    assert "3 items, 9 answers (3 samples of 3 items); mean (std) over the 9 answers" in seen
    assert "3 items, 9 ratings; mean (std) over the 9 ratings" in seen  # the human raters' cell


def test_the_docs_page_serves_a_doc_and_nothing_else(client, researcher):
    client.force_login(researcher)
    response = client.get("/studies/docs/alt-test.md")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/plain")
    assert "winning rate ω" in response.content.decode()
    assert client.get("/studies/docs/nothing-here.md").status_code == 404
    assert client.get("/studies/docs/..%2Fsettings.md").status_code == 404


def test_a_long_chart_title_wraps_inside_its_chart():
    title = "grammaticality · group “a group with a long name” · a judge with a long label: confusion"
    chart = charts.alpha_chart(title=title, rows=[])
    lines = re.findall(r'<g class="chart-title">(.*?)</g>', chart)[0]
    shown = [unescape(t) for t in re.findall(r">([^<]+)</text>", lines)]
    assert " ".join(shown) == title and len(shown) >= 2
    width = float(re.search(r'viewBox="0 0 ([0-9.]+)', chart).group(1))
    assert all(len(line) * svg.TITLE_CHAR <= width - 8 for line in shown)  # each line within the generous estimate


def test_the_distribution_charts_of_a_question_share_their_y_scale():
    low = Distribution("q", "a", "human", 10, (1.0, 2.0), (6, 4))
    high = Distribution("q", "b", "human", 10, (1.0, 2.0), (8, 2))
    peak = charts.distribution_peak([low, high])
    kwargs = {"bins": (1.0, 2.0), "pool_colours": {"human": "#000"}, "pool_labels": {}, "answer_pools": {}}
    one = charts.distribution_chart(title="q · a", series=[low], peak=peak, **kwargs)
    two = charts.distribution_chart(title="q · b", series=[high], peak=peak, **kwargs)
    top = [max(float(v) for v in re.findall(r">([0-9.]+)%</text>", c)) for c in (one, two)]
    assert peak == 80.0 and top[0] == top[1] >= 80
