"""The fourth review of the small study's dashboard (issue 25), the page's side: the evidence intro speaks of what the
page shows (U2), % full agreement says what it is a share of (U3), the pools' counts name their unit (U4), each table-1
cell shows its n (C3), a filtered view counts its items and names its group (C6), and the headline blocks are not
repeated by the cards (C7).

The browser-measured points (scrollWidth, a wrapped legend, values reachable by tap) are in
tests/e2e/test_phone_width_browser.py.
"""
from __future__ import annotations

import re
from html import unescape

import pytest

from tests.evalhub.pages.test_dashboard_review import _read, small_study  # noqa: F401 - the fixture

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_cache")]


def _seen(reader) -> str:
    return re.sub(r"\s+", " ", " ".join(reader.parts))


def test_full_agreement_says_what_share_it_is_and_an_llms_is_among_its_samples(small_study, client, researcher):  # noqa: F811
    html, reader = _read(client, researcher, small_study)
    seen = _seen(reader)
    assert re.search(r"· \d+% \(\d of 3 items\)", seen)
    assert re.search(r"· \d+% \(\d of 3 items among its own samples\)", seen)
    assert "% full agreement, the share of items on which all of a pool's raters gave the same score, for an LLM " \
           "pool all its own samples" in seen
    # Each share agrees with its percentage.
    for pct, agree, total in re.findall(r"· (\d+)% \((\d) of (\d) items", seen):
        assert round(100 * int(agree) / int(total)) == int(pct)


def test_each_table_1_cell_shows_its_n_not_only_in_a_tooltip(small_study, client, researcher):  # noqa: F811
    html, _ = _read(client, researcher, small_study)
    table = html[html.index('id="table1"'):html.index("</table>", html.index('id="table1"'))]
    shown = re.findall(r'<span class="second cell-n">(n = \d+ (?:ratings|answers))</span>', table)
    assert "n = 9 ratings" in shown and "n = 9 answers" in shown
    assert len(shown) == table.count('class="second"')  # every filled cell


def test_the_pools_ratings_counted_name_their_unit_in_every_cell(small_study, client, researcher):  # noqa: F811
    _, reader = _read(client, researcher, small_study)
    seen = _seen(reader)
    assert re.search(r"\b\d+ \(rater × item × question\)", seen)
    assert re.search(r"\b\d+ \(item × question; \d+ answers of its samples\)", seen)


def test_the_evidence_intro_speaks_only_of_what_the_page_shows(small_study, client, researcher):  # noqa: F811
    html, _ = _read(client, researcher, small_study)
    start = html.index('id="evidence"')
    intro = re.sub(r"<[^>]+>", "", html[start:html.index("</p>", start)])
    # Every ceiling is withheld at 3 items per group: no "better", no ceiling interval to read.
    assert "better" not in intro and "Student's t" not in intro
    assert "The human ceiling of every block here is withheld, its summary and intervals with it: each has fewer " \
           "than 5 items" in intro


def test_a_filtered_view_counts_its_items_and_its_verdict_names_the_group(small_study, client, researcher):  # noqa: F811
    client.force_login(researcher)
    html = client.get(f"/studies/{small_study.slug}/?question=grammaticality&group=human").content.decode()
    assert '<span id="filter-items">3 items of 6 (the groups filtered: human)</span>' in html
    headlines = re.findall(r'<p class="headline[^"]*"[^>]*>.*?<strong>(.*?)</strong>', html, flags=re.S)
    assert headlines and all("the items of group “human”" in h for h in headlines)
    unfiltered = client.get(f"/studies/{small_study.slug}/").content.decode()
    assert 'id="filter-items"' not in unfiltered and "· 6 items ·" in unfiltered


def test_the_cards_details_link_to_the_headline_instead_of_repeating_its_lines(small_study, client, researcher):  # noqa: F811
    html, _ = _read(client, researcher, small_study)
    verdict = html[html.index('id="verdict"'):html.index("</section>", html.index('id="verdict"'))]
    for card in re.findall(r"<article.*?</article>", verdict, flags=re.S):
        head, details = card.split("<details>")
        lines = re.findall(r"<li>(.*?)</li>", head)
        assert lines, "a headline that cannot run says why and what would change it"
        assert not any(f"<li>{line}</li>" in details for line in lines)  # said once
        anchor = re.search(r'<p class="headline [a-z]+" id="([^"]+)"', head)
        assert anchor and f'<a href="#{anchor.group(1)}">the headline above</a>' in details


def test_a_long_legend_entry_wraps_inside_a_phone_wide_scatter():
    """C2: the "τ undefined: ..." entry made a 681 px chart; it wraps within the plot, every line inside the SVG."""
    from evalhub.pages import charts, svg

    long = "group “human” (τ undefined: the human raters' item means are all equal (4.33) on the 3 items)"
    series = [charts.ScatterSeries(long, svg.colour(0), [(4.33, 3.0, 3)]),
              charts.ScatterSeries("group “gpt2” (τ withheld: too few items (n = 3))", svg.colour(1), [(2.0, 3.0, 3)])]
    chart = charts.scatter_chart(title="grammaticality", scale=(1, 5), series=series, x_label="x", y_label="y")
    width, height = map(int, re.search(r'viewBox="0 0 (\d+) (\d+)"', chart).groups())
    assert width == 320
    texts = re.findall(r'<text (?:class="legend-more" )?x="([\d.]+)" y="([\d.]+)" text-anchor="start"[^>]*>([^<]*)</text>',
                       chart)
    legend = [(float(x), float(y), unescape(t)) for x, y, t in texts]
    assert " ".join(t for _, _, t in legend) == f"{long} {series[1].group}"
    assert all(x + 6.5 * len(t) <= width and y + 3 <= height for x, y, t in legend)
    assert len({y for _, y, _ in legend}) >= 4  # the long entry's lines, then the other entry's


def test_an_alpha_chart_with_every_row_withheld_is_one_line_of_text(small_study, client, researcher):  # noqa: F811
    """C1: four empty α charts, each "too few items" label on the zero gridline; now one line per question."""
    html, _ = _read(client, researcher, small_study)
    section = html[html.index('id="charts-alpha"'):]
    section = section[:section.index("<h2", 10)]
    assert "Krippendorff&#x27;s alpha (" not in section and "<svg" not in section
    lines = re.findall(r'<p class="muted alpha-withheld">(.*?)</p>', section)
    assert len(lines) == 4
    assert all(line.endswith(": α withheld on all 4 rows (group × pool): too few items (n = 3).") for line in lines)


def test_an_alpha_chart_with_one_row_drawn_keeps_its_notes_off_the_gridlines():
    from evalhub.pages import charts

    rows = [charts.AlphaBar("human · Human raters", "#0969da", 0.43, (0.1, 0.7), ""),
            charts.AlphaBar("gpt2 · Human raters", "#0969da", None, None, "too few items (n = 3)")]
    chart = charts.alpha_chart(title="q: Krippendorff's alpha (ordinal), 95% CI", rows=rows)
    # The note's halo (a box of the row's colour) comes after every gridline, right before the note.
    halo = re.search(r'<rect x="[\d.]+" y="[\d.]+" width="[\d.]+" height="14" fill="#fff"/><text [^>]*>too few items', chart)
    gridlines = [m.start() for m in re.finditer(r'<line x1="[\d.]+" x2="[\d.]+" y1="24" ', chart)]
    assert halo and len(gridlines) >= 5 and max(gridlines) < halo.start()


def test_every_bar_and_bubble_chart_has_its_values_under_it_in_a_details_table(small_study, client, researcher):  # noqa: F811
    """C3: the bars' and bubbles' values were in tooltips only; each chart now has a "values" table under it."""
    html, _ = _read(client, researcher, small_study)
    figures = re.findall(r'<figure class="chart">(.*?)</figure>', html, flags=re.S)
    drawn = [f for f in figures if "% of each pool" in f or "mean per item" in f]
    assert len(drawn) == 12  # 8 distributions (4 questions x 2 groups) and 4 scatters
    for figure in drawn:
        values = re.search(r'<details class="chart-values"><summary>values</summary>(.*?)</details>', figure, re.S)
        assert values, figure[:200]
        cells = re.findall(r"<td>([^<]*)</td>", values.group(1))
        if "% of each pool" in figure:  # each bar's tooltip "x% of n scored s" is a cell "x% (k of n)"
            bars = re.findall(r"<title>[^<:]*: ([\d.]+)% of (\d+) [^<]*? scored ([\d.]+)</title>", figure)
            assert bars
            for share, n, score in bars:
                assert any(c.startswith(f"{share}% (") and c.endswith(f" of {n})") for c in cells), (share, n, score)
        else:  # each bubble's tooltip "k items, human x, LLM y" is a row
            bubbles = re.findall(r"<title>[^<]*: (\d+) items?, human ([\d.]+), LLM ([\d.]+)</title>", figure)
            assert bubbles
            for n, x, y in bubbles:
                assert re.search(rf"<td>{x}</td><td>{y}</td><td>{n}</td>", values.group(1))
