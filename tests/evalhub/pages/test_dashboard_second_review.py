"""The second review of the small study's dashboard (issue 25; 6 items, 3 raters, 4 questions, one LLM pool):
findings U1, U2, U3, U6, U8 and U9. Each test reads the page (or the chart, the JSON, the text report) as a reader
does and names the finding it answers.
"""
from __future__ import annotations

import io
import re
from html import unescape

import pytest
from django.core.management import call_command

from evalhub.analysis.result import CeilingRater
from evalhub.pages import charts, svg
from evalhub.pages.evidence import ceiling_chart
from tests.evalhub.factories import import_long
from tests.support.small_study import small_study_rows

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_cache")]

SVG = re.compile(r"<svg [^>]*viewBox=\"0 0 (\d+) (\d+)\"[^>]*>(.*?)</svg>", flags=re.S)
# A legend entry: its swatch (10 x 10), then its text.
LEGEND_ENTRY = re.compile(r'<rect x="[-\d.]+" y="[-\d.]+" width="10" height="10" rx="2" fill="[^"]+"/>'
                          r'<text x="([-\d.]+)" y="([-\d.]+)"[^>]*>([^<]*)</text>')


@pytest.fixture
def small_study(story_study, tmp_path):
    import_long(story_study, small_study_rows(), tmp_path)
    return story_study


def _page(client, researcher, study, query: str = "") -> str:
    client.force_login(researcher)
    response = client.get(f"/studies/{study.slug}/{query}")
    assert response.status_code == 200
    return response.content.decode()


def _report(study, *args: str) -> str:
    out = io.StringIO()
    call_command("analyze", study.slug, "--format", "table", "--n-boot", "200", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def _legend_entries_outside(markup: str) -> list[tuple[str, float, float, int, int]]:
    """Every legend text whose line (baseline y, 10 px type) or estimated width falls outside its SVG's viewBox."""
    outside = []
    for width, height, body in SVG.findall(markup):
        for x, y, name in LEGEND_ENTRY.findall(body):
            text = unescape(name)
            if float(y) - 10 < 0 or float(y) + 3 > int(height) or float(x) + 6.5 * len(text) > int(width):
                outside.append((text, float(x), float(y), int(width), int(height)))
    return outside


def test_u1_every_legend_entry_of_the_dashboards_charts_lies_inside_its_svg(small_study, client, researcher):
    html = _page(client, researcher, small_study)
    entries = [e for _, _, body in SVG.findall(html) for e in LEGEND_ENTRY.findall(body)]
    # Both kinds of legend are there: the scatter's (groups, with tau) and the distributions' (pools, with n).
    assert any(name.startswith("group “") for _, _, name in entries)
    assert any(name.startswith("Human raters (n = ") for _, _, name in entries)
    assert not _legend_entries_outside(html)


def test_u1_a_chart_grows_with_its_legend_lines_and_wraps_a_long_entry_within_its_width():
    names = [f"group “g{k}” (τ withheld: too few items, n = 3)" for k in range(4)]
    series = [charts.ScatterSeries(name, svg.colour(k), [(2.0, 3.0, 1)]) for k, name in enumerate(names)]
    scatter = charts.scatter_chart(title="relevance", scale=(1, 5), series=series, x_label="x", y_label="y")
    lines, reach = svg.legend_extent(names, 270)
    # Each entry wraps onto 2 lines of its own within the plot's width (the fourth review, C2: no 681 px chart).
    assert lines == 8 and reach <= 270
    assert 'viewBox="0 0 320 ' in scatter
    found = LEGEND_ENTRY.findall(scatter)
    assert len(found) == 4 and all(names[k].startswith(unescape(name)) for k, (_, _, name) in enumerate(found))
    assert scatter.count('class="legend-more"') == 4
    assert not _legend_entries_outside(scatter)
    # One short entry: the chart keeps its former size.
    short = [charts.ScatterSeries("group “a”", svg.colour(0), [(2.0, 3.0, 1)])]
    one = charts.scatter_chart(title="q", scale=(1, 5), series=short, x_label="x", y_label="y")
    assert 'viewBox="0 0 320 320"' in one


def test_u2_a_withheld_ceiling_draws_no_score_and_says_why_in_the_chart(small_study, client, researcher):
    html = _page(client, researcher, small_study)
    figures = re.findall(r'<figure class="evidence-chart ceiling">(.*?)</figure>', html, flags=re.S)
    assert figures
    for figure in figures:
        lines = re.findall(r'<text class="ceiling-withheld"[^>]*>([^<]*)</text>', figure)  # two lines: a phone's width
        assert lines == ["withheld: too few items (n = 3)", "no scores are drawn: they would not be a result"]
        # Review 18, M: grey dots on a scaled axis still read "the judge far below every rater"; none now.
        assert "<circle" not in figure and "withheld (3 items)" in figure
        assert svg.colour(1) not in figure  # the pool's colour (gpt-4o's) paints no dot, no legend
        assert "ceiling-summary withheld" in figure  # and the caption says it in words


def test_u2_a_ceiling_that_is_not_withheld_keeps_its_colours():
    raters = [CeilingRater("r1", 6, -0.8, (-1.0, -0.6), -0.5, (-0.7, -0.3), True, None)]
    shown = ceiling_chart(title="t", scoring="neg_rmse", raters=raters, judge_colour="#cf222e")
    assert "#cf222e" in shown and "not a result" not in shown
    withheld = ceiling_chart(title="t", scoring="neg_rmse", raters=raters, judge_colour="#cf222e",
                             withheld="too few items (n = 3)")
    assert "#cf222e" not in withheld and "withheld: too few items (n = 3)" in withheld


def test_u3_welchs_d_stands_beside_the_n_of_each_side_and_its_unit(small_study, client, researcher):
    html = _page(client, researcher, small_study)
    lines = re.findall(r'<li class="(?:sig|ns|withheld)">(.*?)</li>', html, flags=re.S)
    tested = [unescape(line) for line in lines if "cannot be tested" not in line]
    # 3 items per group: the test compares 3 item means with 3 (withheld as too few, and saying on how many).
    assert tested and all("; n = 3 “human” and 3 “gpt2” items" in line for line in tested)
    html = _page(client, researcher, small_study, "?welch=ratings")
    lines = [unescape(line) for line in re.findall(r'<li class="(?:sig|ns|withheld)">(.*?)</li>', html, flags=re.S)]
    # On all ratings (withheld on 3 items a side, the fourth review's M1, but saying on how many): 3 teachers x 3 items per group, and gpt-4o's 3 samples x 3 items.
    humans = [line for line in lines if line.startswith("Human raters")]
    assert humans and all("; n = 9 “human” and 9 “gpt2” ratings" in line for line in humans)
    # An LLM pool's n on all ratings counts its samples' answers, never "ratings" (review 15).
    judges = [line for line in lines if not line.startswith("Human raters")]
    assert judges and all("; n = 9 “human” and 9 “gpt2” answers" in line for line in judges)
    # The text report's table names the unit of its n column, and its sentences are the page's.
    report = _report(small_study)
    header = report[report.index("== Welch's t-test"):].splitlines()[1]
    assert re.search(r" Cohen's d +n \(items\)$", header.rstrip())
    assert "; n = 3 “human” and 3 “gpt2” items" in report


def test_u6_tau_below_the_minimum_is_withheld_as_alpha_and_the_json_keeps_it_with_the_reason(
        small_study, client, researcher):
    client.force_login(researcher)
    kendall = client.get(f"/studies/{small_study.slug}/analysis.json").json()["kendall"]
    defined = [k for k in kendall if k["tau"] is not None]
    assert defined and all(k["n"] == 3 and k["notes"]["tau"] == "too few items (n = 3)" for k in defined)
    html = _page(client, researcher, small_study)
    notes = unescape(html[html.index("<h2>Notes</h2>"):])
    assert "Kendall's τ vs the human raters — too few items (n = 3)" in notes
    # The text report prints the note in place of tau, and neither its p nor its band.
    report = _report(small_study)
    table2 = report[report.index("== Kendall's tau-b"):]
    rows = table2[:table2.index("\n\n")].splitlines()[2:]
    withheld = [row for row in rows if "too few items, n = 3" in row]
    assert len(withheld) == len(defined)
    assert all(re.search(r"too few items, n = 3\s+–\s+–\s+3\s+–$", row) for row in withheld)  # p, p method
    # From 5 items on tau is shown: all groups together have 6.
    pooled = client.get(f"/studies/{small_study.slug}/analysis.json?group=(all)").json()["kendall"]
    pooled = [k for k in pooled if k["group"] == "(all)" and k["tau"] is not None]
    assert pooled and all(k["n"] == 6 and "tau" not in k["notes"] for k in pooled)
    html = _page(client, researcher, small_study, "?group=(all)")
    table2 = html[html.index('id="kendall"'):html.index("</table>", html.index('id="kendall"'))]
    assert "tau-note" not in table2 and len(re.findall(r'<span class="band ', table2)) == len(pooled)


def test_u8_no_tooltip_describes_an_interval_that_is_withheld(small_study, client, researcher):
    client.force_login(researcher)
    data = client.get(f"/studies/{small_study.slug}/analysis.json").json()
    # The result does describe some of these intervals (so the page has something to leave out) ...
    described = [c for c in data["cells"] if c["notes"].get("alpha_ci95") and "alpha" in c["notes"]]
    kappa_described = [k for k in data["kappa"] if k["notes"].get("ci95") and "kappa" in k["notes"]]
    assert described or kappa_described
    html = _page(client, researcher, small_study)
    table1 = html[html.index('id="table1"'):html.index("</table>", html.index('id="table1"'))]
    tooltips = [unescape(t) for t in re.findall(r'<td class="[^"]*" title="([^"]*)"', table1)]
    assert tooltips and all("α 95% CI withheld: too few items, n = 3" in t for t in tooltips)
    assert not any("bootstrap" in t or "α 95% CI:" in t or "no variation" in t for t in tooltips)
    kappa = [unescape(t) for t in re.findall(r'<td data-label="κ" class="kappa-value" title="([^"]*)"', html)]
    assert kappa and not any("95% CI" in t or "bootstrap" in t for t in kappa)


def test_u9_each_rater_mean_gives_the_n_of_ratings_it_rests_on(small_study, client, researcher):
    html = _page(client, researcher, small_study)
    table = html[html.index('id="raters"'):html.index("</table>", html.index('id="raters"'))]
    cells = re.findall(r"<td title=\"[^\"]*\">(.*?)</td>", table)
    # 3 teachers and 3 samples, 4 questions x 2 groups; each mean rests on the group's 3 items. A sample's n counts
    # answers, as table 1 words an LLM pool's (sixth review, C: "n = 3 ratings" for a sample).
    assert len(cells) == 6 * 8
    units = [re.fullmatch(r'\d\.\d\d<span class="second rater-n">n = 3 (ratings|answers)</span>', cell) for cell in cells]
    assert all(units)
    assert [m.group(1) for m in units if m].count("answers") == 3 * 8
    assert "with the n of ratings it rests on" in html


def test_an_axis_that_ends_at_zero_reads_0_not_minus_0():
    # Seen beside U2: the ceiling strip's negative-RMSE axis (-1 to 0) ended on a tick labelled "-0".
    assert [f"{tick:g}" for tick in svg.ticks(-1.0, 0.0, 5)] == ["-1", "-0.8", "-0.6", "-0.4", "-0.2", "0"]
    raters = [CeilingRater("r1", 6, -0.8, (-1.0, -0.6), -0.5, (-0.7, -0.3), True, None)]
    strip = ceiling_chart(title="t", scoring="neg_rmse", raters=raters, judge_colour="#cf222e")
    assert ">0</text>" in strip and ">-0</text>" not in strip
