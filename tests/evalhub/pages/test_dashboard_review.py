"""A review of every number and word on the dashboard of a small study (issue 25, item 6): 6 items (3 per group),
3 raters who each rated 6 items x 4 questions, and one judge with 3 samples. What a reader sees (the page's
text, tooltips and the charts' text) is read as a reader reads it:

- no number stands without its label, none claims more than it can (too few items, not significant, no rank
  without a verdict, no zero-width interval);
- one word for one thing: ratings (not instances), pools in legends, groups in titles (never bare);
- no internal key (JSON keys, table keys, "MSB") and no wrong plural ("1 items", "item(s)").
"""
from __future__ import annotations

import csv
import re
from html import unescape
from html.parser import HTMLParser

import pytest

from annotations.models import HumanRating, Item, Rater
from annotations.studies import study_create_from_template
from llmjudge.models import JudgeRun
from tests.evalhub.factories import import_long
from tests.support.small_study import ITEMS, QUESTIONS, small_study_rows

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_cache")]

INTERNAL_KEYS = ("pairwise_kendall", "kendall, welch", "icc1k", "alpha_ci95", "alpha.ordinal", "full_agreement_pct",
                 "mean_tau", "n_items", "cohens_d", "MSB", "rater-1", "None")


class _Reader(HTMLParser):
    """What a reader sees: text outside scripts and styles, tooltips (title attributes, SVG titles), aria labels."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.svg_texts: list[str] = []
        self._skip = 0
        self._in_svg_text = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self._skip += 1
        self._in_svg_text = tag == "text"
        self.parts.extend(v for k, v in attrs if k in ("title", "aria-label") and v)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._skip -= 1
        self._in_svg_text = False

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        self.parts.append(data)
        if self._in_svg_text:
            self.svg_texts.append(data.strip())


@pytest.fixture
def small_study(story_study, tmp_path):
    import_long(story_study, small_study_rows(), tmp_path)
    return story_study


def _read(client, researcher, study) -> tuple[str, _Reader]:
    client.force_login(researcher)
    response = client.get(f"/studies/{study.slug}/")
    assert response.status_code == 200
    reader = _Reader()
    html = response.content.decode()
    reader.feed(html)
    return html, reader


def test_every_number_and_word_on_a_six_item_three_rater_dashboard_is_labelled_and_not_misleading(
        small_study, client, researcher):
    html, reader = _read(client, researcher, small_study)
    seen = re.sub(r"\s+", " ", " ".join(reader.parts))

    # The study line: counts with their nouns, plurals right.
    assert "· 6 items · scale 1–5 · questions: grammaticality, cohesiveness, likability, relevance" in seen
    assert not re.search(r"\b1 (items|ratings|raters|pairs|notes|questions|tests)\b", seen)
    assert "(s)" not in seen

    # A withheld alpha withholds its interval in the tooltip too (issue 25 review: "α 95% CI [-0.33, 0.48]; α: too
    # few items (n = 3)"), and says so and why (the second review, U8: "α 95% CI –" beside a note on its bootstrap
    # replicates).
    withheld = [t for t in reader.parts if "α: too few items" in t]
    assert withheld and all("α 95% CI withheld: too few items, n = 3" in t for t in withheld)
    assert not any("bootstrap" in t or "α 95% CI:" in t for t in withheld)

    # Internal keys never reach the page, not even a tooltip.
    for key in INTERNAL_KEYS:
        assert key not in seen, key

    # One word for an item x question: ratings. The paper's "instances" stays in docs/alt-test.md.
    assert "instance" not in seen.lower()
    # Per group: 3 items x 4 questions = 12 ratings per rater.
    assert "teacher-1 gave 12 usable ratings; the test needs 30: skipped" in seen

    # No verdict (24 ratings per rater < 30): no rank either.
    assert 'class="rank"' not in html and "#1" not in seen
    # ... and not "no verdict yet": on this design the test cannot run at all (issue 25 review).
    assert "gpt-4o: the test cannot run on this design (all questions, the items of group “gpt2”): no human gave 30 usable " \
           "ratings (at most 12 per rater): add items, or ratings per rater" in seen
    assert "no verdict yet" not in seen

    # Alpha on 3 items per group: the note, never a number or a zero-width interval.
    table1 = html[html.index('id="table1"'):html.index("</table>", html.index('id="table1"'))]
    assert table1.count("α <span class=\"undef alpha-note\">too few items, n = 3</span>") == 2 * 4 * 2
    assert not re.search(r"\"second\">α -?\d", table1)
    assert not re.search(r"\[(-?\d+\.\d+), \1\]", seen)  # no interval whose bounds are equal

    # Kappa and Fleiss' kappa on 3 items: the note in place of the value, no interval.
    kappa_cells = re.findall(r'<td data-label="κ" class="kappa-value"[^>]*>(.*?)</td>', html)
    # (against the majority, tied items leave fewer: n = 1 or 2; one rater used one category only: no variation)
    assert kappa_cells and all(re.fullmatch(r'<span class="undef">(too few items, n = [0-3]|no variation)</span>',
                                            cell) for cell in kappa_cells)

    # ... and no p-value or star beside a kappa that is not shown.
    rows = re.findall(r'<tr class="kappa-row".*?</tr>', html, flags=re.S)
    assert rows and not any(re.search(r"p [=<]|\*", row) for row in rows)

    # Kendall's tau on 3 items is withheld as alpha and kappa are (the second review, U6: "τ -1.00" beside their "too
    # few items (n = 3)"): the note in its place, no band, no p. (Where tau is defined on 3 items and shown: 0 of 8.)
    table2 = html[html.index('id="kendall"'):html.index("</table>", html.index('id="kendall"'))]
    tau_cells = re.findall(r'<td class="[^"]*" title="[^"]*">(.*?)</td>', table2)
    assert len(tau_cells) == 2 * 4
    assert all(re.fullmatch(r'<span class="undef( tau-note)?">[^<]*</span>', cell) for cell in tau_cells), tau_cells
    assert 'class="undef tau-note">too few items, n = 3</span>' in table2
    assert not re.findall(r'<span class="band [^"]*">', html)

    # Charts: legends name pools by their labels, titles name groups as groups.
    # With their n in its unit: a human pool's ratings, an LLM pool's answers (issue 25 third review, U5).
    assert "Human raters (n = 9 ratings)" in reader.svg_texts
    assert "gpt-4o (n = 9 answers of its 3 samples)" in reader.svg_texts
    assert "human" not in reader.svg_texts  # never the bare key as a legend
    # A long title wraps over several texts (issue 25 third review, C1): read whole from the chart's label.
    labels = [unescape(t) for t in re.findall(r'<svg [^>]*role="img" aria-label="([^"]+)"', html)]
    titles = [t for t in labels if " · " in t and t.split(" · ")[0] in QUESTIONS]
    assert titles and all(re.fullmatch(r"\w+ · group “(human|gpt2)”( · gpt-4o: (confusion|human ceiling))?", t)
                          for t in titles)  # distributions: question · group; evidence: then the pool's label
    # The alpha charts would draw nothing at 3 items: one line says so in their place (the fourth review, C1).
    assert "α withheld on all 4 rows (group × pool): too few items (n = 3)" in seen


def test_the_notes_name_statistics_not_keys(small_study, client, researcher):
    _, reader = _read(client, researcher, small_study)
    seen = " ".join(reader.parts)
    assert "relevance / group “human” / Human raters: α — too few items (n = 3)" in seen
    assert re.search(r"ICC\(1,k\)|ICC\(1\)|α \(ratio\)|α 95% CI|standard deviation|full agreement", seen)


def test_the_plan_page_counts_ratings_per_rater_as_items_times_questions(small_study, client, researcher):
    client.force_login(researcher)
    page = client.post(f"/studies/{small_study.slug}/plan/").content.decode()
    # Each rater saw 6 items x 4 questions: 24 ratings, never "24 items per rater"; the test counts each group apart,
    # so the plan simulates the 12 of one group (issue 25 review, U5: the 24 overstated the chance to pass).
    assert "pilot: a median 3 raters per group, a median 12 ratings (one item on one question) per rater within one " \
           "group (the verdict tests the 2 groups apart)" in page
    assert "a median 24" not in page
    # The plan's panel, not the page: the settings form above it has an "Items per rater" field of its own.
    plan = page[page.index('id="alt-test-plan"'):page.index('id="human-subset"')]
    assert "items per rater" not in plan.lower()


def test_the_human_ceiling_on_three_items_carries_the_item_notes_and_quotes_no_withheld_alpha(
        small_study, client, researcher):
    html, reader = _read(client, researcher, small_study)
    seen = re.sub(r"\s+", " ", " ".join(reader.parts))
    # No "better than k of n" headline on 3 items (issue 25 review: "better than 3 of 3 of them" on noise): the note
    # stands in its place, as kappa's does.
    captions = re.findall(r'<figure class="evidence-chart ceiling">.*?</figure>', html, flags=re.S)
    assert captions and all('the human ceiling is withheld: <span class="undef">too few items (n = 3)</span>' in c
                            for c in captions)
    assert "better than" not in seen
    # The intro's promise of intervals says when they are withheld.
    assert "The human ceiling of every block here is withheld, its summary and intervals with it: each has fewer " \
        "than 5 items" in seen
    # The JSON keeps the raw per-rater values, not the summary.
    data = client.get(f"/studies/{small_study.slug}/analysis.json").json()
    assert data["ceiling"] and all(c["summary"] is None and "too few items (n = 3)" in c["notes"]
                                   for c in data["ceiling"])
    assert any(r["rater_score"] is not None for c in data["ceiling"] for r in c["raters"])
    # On 3 items the chart draws no score at all, so no tooltip gives one or its interval (review 18).
    assert not any("vs the other raters" in t for t in reader.parts)
    assert all("<circle" not in c and "withheld (3 items)" in c for c in captions)
    # Alpha is withheld in table 1 (too few items): the ceiling quotes that note, not alpha's value.
    assert not re.search(r"alpha -?\d", seen)
    assert "the raters' alpha is withheld, too few items (n = 3): comparisons with them mean little" in seen


@pytest.fixture
def counterbalanced_pairs(researcher):
    """6 pairs, 3 raters who saw the pair swapped on half of them and always chose the response shown first."""
    study = study_create_from_template(slug="counterbalanced", template="story-pairwise", owner=researcher)
    question = study.questions.get()
    items = [Item.objects.create(study=study, external_id=f"p{n}", group="pairs", position=n,
                                 fields={"prompt": "p", "response_a": f"a{n}", "response_b": f"b{n}"})
             for n in range(6)]
    for r in range(3):
        rater = Rater.objects.create(study=study, external_id=f"r{r}")
        for n, item in enumerate(items):
            swapped = (n + r) % 2 == 1  # first shown: A unswapped (choice 1), B swapped (choice 2)
            HumanRating.objects.create(rater=rater, item=item, question=question, score=2 if swapped else 1,
                                       swapped=swapped)
    return study


def test_the_raters_own_first_position_share_is_on_the_dashboard(counterbalanced_pairs, client):
    client.force_login(counterbalanced_pairs.owner)
    html = client.get(f"/studies/{counterbalanced_pairs.slug}/").content.decode()
    assert 'id="position-bias"' in html
    section = html[html.index('id="position-bias"'):]
    section = section[:section.index("</section>")]
    row = re.search(r'<tr class="position-row" data-pool="human">(.*?)</tr>', section, flags=re.S)
    assert row and "Human raters" in row.group(1) and "(human)" not in row.group(1)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), flags=re.S)
    assert cells[1] == "overall" and cells[2] == "18 of 18"  # decisive choices of the response shown first
    assert "of 18 decisive choices chose the response shown first (9 of 18 answers were given on swapped pairs)" \
        in section


def test_the_words_match_the_numbers_on_the_dashboard_and_the_plan(small_study, client, researcher):
    html, reader = _read(client, researcher, small_study)
    seen = re.sub(r"\s+", " ", " ".join(reader.parts))
    # The verdict's headers say their unit (issue 25 third review, U5): items on one question, ratings (item ×
    # question) on all questions pooled; never a bare "judge ratings", never a bare ω or ρ (U3).
    verdict = html[html.index('id="verdict"'):html.index("</section>", html.index('id="verdict"'))]
    headers = re.findall(r"<h3>.*?</h3>", verdict, flags=re.S)
    assert headers and not any("judge rating" in h for h in headers)
    # Review 14: n_instances counts items with the judge's rating and 2+ human ratings, not every item it rated.
    assert re.search(r'<span class="muted">\d+ items with the judge\'s rating and 2\+ human ratings · '
                     r'<span title="[^"]+">winning rate ω = ', verdict)
    assert re.search(r"\d+ item × question pairs with the judge's rating and 2\+ human ratings · "
                     r'<span title="[^"]+">winning rate ω', verdict)
    assert "advantage probability ρ = " in verdict and "winning rate ω" in verdict
    # A positive "weak" tau is not painted like "strong negative".
    weak = re.search(r"\.band-weak \{([^}]*)\}", html)
    negative = re.search(r"\.band-strong-negative[^{]*\{([^}]*)\}", html)
    assert weak and negative and weak.group(1) != negative.group(1)
    # The pools table shows labels, not the internal key beside them.
    assert "Human raters (human)" not in seen
    # Table 6 on 3 items: the note in place of the mean tau.
    table6 = html[html.index('id="table-pairwise"'):]
    table6 = table6[:table6.index("</table>")]
    cells = re.findall(r'<td class="[^"]*" title="[^"]*">(.*?)</td>', table6)
    assert cells and all(re.fullmatch(r'<span class="undef">too few items, n = 3</span>'
                                      r'<span class="second cell-n pairwise-n">(\d of )?\d pairs?, n = 3</span>', c)
                         for c in cells)

    page = client.post(f"/studies/{small_study.slug}/plan/").content.decode()
    found = re.search(r'<li id="plan-power">(.*?)</li>', page, flags=re.S)
    assert found
    power = found.group(1)
    # 3 raters x 24 ratings gives no verdict: the note stands in place of "0 % (± 0 %)".
    assert "this design gives no verdict" in power and "%" not in power
    assert "in the grid reach " not in page


def _welch_p_adjusted(client, study, query: str = "") -> dict[tuple[str, str], tuple[float, int]]:
    rows = client.get(f"/studies/{study.slug}/analysis.json{query}").json()["welch"]
    return {(r["question"], r["pool"]): (r["p_adjusted"], r["p_family"]) for r in rows}


def test_welchs_adjusted_p_is_the_same_filtered_or_not_and_names_its_family(small_study, client, researcher):
    # Issue 25 review: "BH-adjusted p = 0.014" on the page, 0.004 filtered to grammaticality (the family was
    # what the filter showed). The family is the whole analysis: 4 questions x 2 pools x 1 contrast.
    client.force_login(researcher)
    everything = _welch_p_adjusted(client, small_study)
    assert len(everything) == 8 and {family for _, family in everything.values()} == {8}
    for query in ("?question=grammaticality", "?question=relevance&question=likability", "?group=human",
                  f"?run={JudgeRun.objects.get(study=small_study).pk}"):
        filtered = _welch_p_adjusted(client, small_study, query)
        assert filtered and all(everything[key] == value for key, value in filtered.items()), query
    # The CSV's p_adjusted too.
    def csv_rows(query: str) -> list[list[str]]:
        response = client.get(f"/studies/{small_study.slug}/export/welch.csv{query}")
        lines = list(csv.reader(b"".join(response.streaming_content).decode().splitlines()))
        at = lines[0].index("p_adjusted"), lines[0].index("p_family")
        return [[line[0], line[1], line[at[0]], line[at[1]]] for line in lines[1:]]
    full = {tuple(r[:2]): r[2:] for r in csv_rows("")}
    one = csv_rows("?question=grammaticality")
    assert len(one) == 2 and all(full[tuple(r[:2])] == r[2:] and r[3] == "8" for r in one)
    # The page says over what the p is adjusted, filtered or not.
    for query in ("", "?question=grammaticality"):
        page = client.get(f"/studies/{small_study.slug}/{query}").content.decode()
        assert "BH-adjusted over the 8 contrasts of this analysis" in page
        assert "over the contrasts shown" not in page


def test_the_welch_option_and_sentences_on_all_ratings_say_their_p_is_optimistic(small_study, client, researcher):
    client.force_login(researcher)
    page = client.get(f"/studies/{small_study.slug}/").content.decode()
    assert "all individual ratings (treated as independent: optimistic p)" in page  # the option
    sentences = re.findall(r'<ul class="welch">(.*?)</ul>', page, flags=re.S)[0]
    # On 3 item means a side the tests are withheld (issue 25's third review, M1), and say why.
    assert "“human”" in sentences and "no test is reported, too few items (n = 3 and 3)" in sentences
    assert "optimistic" not in sentences
    page = client.get(f"/studies/{small_study.slug}/?welch=ratings").content.decode()
    # On 3 items a side the tests on all ratings are withheld too (the fourth review, M1), saying why, and table 1's
    # footnote carries the warning.
    lines = re.findall(r"<li class=\"(?:sig|ns|withheld)\">(.*?)</li>", page, flags=re.S)
    tested = [line for line in lines if "cannot be tested" not in line]
    assert tested and all("no test is reported, too few items (n = 3 and 3)" in line for line in tested)
    # A human pool's n counts ratings, an LLM pool's its samples' answers (review 15).
    assert all((" ratings)" if line.startswith("Human raters") else " answers)") in line for line in tested)
    assert "treated as independent though ratings of one item or one rater are not: an optimistic p" in page
    # The pool and the group named "human" are never confused: groups are quoted, never bare.
    assert not re.search(r"(prefer|between) (human|gpt2) ", page)


def test_icc_on_three_items_gets_alphas_too_few_items_note_in_the_cell_tooltip(small_study, client, researcher):
    # Issue 25 review: "ICC(1) -0.15 on 3 complete items" in the cell where alpha says "too few items (n = 3)".
    _, reader = _read(client, researcher, small_study)
    tooltips = [t for t in reader.parts if t.startswith("3 items, ") and "ICC(1)" in t]
    assert tooltips and all("ICC(1) withheld, too few items, n = 3" in t and t.count("complete items") == 1 for t in tooltips)
    assert not any(re.search(r"ICC\(1\) -?\d", t) for t in tooltips)
    # The JSON keeps the values and adds the reason, as for alpha.
    client.force_login(researcher)
    cells = client.get(f"/studies/{small_study.slug}/analysis.json").json()["cells"]
    assert all(c["icc1"] is not None and c["notes"]["icc"].startswith("too few items (n = 3)") for c in cells
               if c["icc_n_items"] == 3)


def test_the_verdict_and_ppi_texts_name_the_score_and_the_setting_in_words(small_study, client, researcher):
    # Issue 25 review: "scoring neg_rmse" in the verdict's heading, "human_subset" twice in the PPI text.
    html, reader = _read(client, researcher, small_study)
    seen = re.sub(r"\s+", " ", " ".join(reader.parts))
    assert "scoring: negative RMSE against the other raters (higher = closer; 0 = identical)" in seen
    for key in ("neg_rmse", "human_subset", "n_a=", "n_b="):
        assert key not in seen, key
    assert "the study's human subset setting" in seen


def _legend_entries(html: str) -> list[str]:
    """Each legend entry's whole text: its first line after the swatch, and its wrapped lines (fourth review, C2)."""
    entry = re.compile(r'width="10" height="10" rx="2" fill="[^"]+"/><text [^>]*>([^<]*)</text>'
                       r'((?:<text class="legend-more" [^>]*>[^<]*</text>)*)')
    return [unescape(" ".join([first, *re.findall(r">([^<]*)</text>", more)])) for first, more in entry.findall(html)]


def test_the_scatter_legends_give_tau_with_its_p_and_band_as_table_2(small_study, client, researcher):
    # Issue 25 review: 'group "gpt2" (tau -1.00)' in the bubble-chart legend, with no p and no "not significant".
    # On 3 items table 2 withholds tau (the second review, U6): so does the legend, with the same words.
    html, reader = _read(client, researcher, small_study)
    legends = [t for t in _legend_entries(html) if t.startswith("group “") and "(τ " in t]
    assert legends and all(re.fullmatch(r"group “(human|gpt2)” \(τ withheld: too few items, n = 3\)", t)
                           for t in legends), legends
    # Which p: scipy's, exact without ties on few items, else the normal approximation; the cell names its kind
    # (eighth review: tests/evalhub/pages/test_dashboard_eighth_review.py).
    seen = re.sub(r"\s+", " ", " ".join(reader.parts))
    assert "“exact” (the exact distribution, used when neither the human means nor the pool's have a tie and there " \
           "are at most 33 items" in seen and "“normal approx.” (the normal approximation with the tie correction" in seen


def _text_report(study) -> str:
    import io

    from django.core.management import call_command

    out = io.StringIO()
    call_command("analyze", study.slug, "--format", "table", "--n-boot", "200", stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_the_text_report_prints_no_number_the_page_withholds_and_lists_the_pages_notes(
        small_study, client, researcher):
    _, reader = _read(client, researcher, small_study)
    report = _text_report(small_study)
    # Alpha on 3 items: the page's note in place of the value, and no interval.
    cells = [line for line in report.splitlines() if line.strip().startswith("alpha ")]
    # With the share full agreement is of, in the page's words (ninth review).
    cell = r"alpha too few items, n = 3, full agreement \d+% \(\d of 3 items( among its own samples)?\)\s*"
    assert cells and all(re.fullmatch(f"({cell})+", line.strip()) for line in cells)
    # Kappa and Fleiss' kappa: the note in place of the value, "–" in place of the interval, no p.
    kappa = report[report.index("== Cohen's kappa"):]
    kappa_rows = kappa[:kappa.index("\n\n")].splitlines()[3:-1]  # the last: the columns' footnote
    assert kappa_rows and all(re.search(r"(too few items, n = [0-3]|no variation)\s+–\s+\d", row)
                              for row in kappa_rows)
    assert not any(re.search(r"-?\d\.\d{3}|p [=<]", row) for row in kappa_rows)
    # Pairwise tau: the note, not "-1.000" on 1 pair.
    table6 = report[report.index("== Mean pairwise"):]
    rows6 = table6[:table6.index("\n\n")].splitlines()[3:-1]  # the last: the columns' footnote
    assert rows6 and all("too few items, n = 3" in row for row in rows6)
    assert not re.search(r"\[(-?\d+\.\d+), \1\]", report)  # no interval whose bounds are equal
    # The Notes are the page's, line for line, and name every withheld statistic, not only alpha.
    seen = " ".join(reader.parts)
    notes = report[report.index("== Notes"):].splitlines()[1:]
    assert notes and all(line in seen for line in notes)
    for statistic in (": α — too few", ": Fleiss' κ among the raters — too few", ": κ vs teacher-1 (unweighted) — too",
                      ": κ vs the human majority (unweighted) — ", ": mean pairwise τ — too few",
                      ": human ceiling — too few items (n = 3)"):
        assert any(statistic in line for line in notes), statistic


def test_the_notes_do_not_describe_intervals_the_page_does_not_show(small_study, client, researcher):
    html, _ = _read(client, researcher, small_study)
    notes = unescape(html[html.index("<h2>Notes</h2>"):])
    # Every alpha, kappa and Fleiss' kappa is withheld on 3 items: no note may speak of their intervals or p.
    assert "bootstrap replicates" not in notes and "95% CI" not in notes and "under H0" not in notes
    assert "Fleiss' κ among the raters — too few items (n = 3)" in notes


def test_pairwise_tau_says_how_many_pairs_were_possible_and_why_the_others_are_undefined(
        story_study, client, researcher, tmp_path):
    # teacher-3 gives 3 to every item: 2 of the 3 pairs have no tau.
    rows = [(item, group, "relevance", "human", f"teacher-{r + 1}", 3 if r == 2 else 1 + (n + r) % 5)
            for n, (item, group) in enumerate(ITEMS) for r in range(3)]
    import_long(story_study, rows, tmp_path)
    note = "1 of 3 pairs; 2 undefined: teacher-3 gave one score to every item shared with another rater"
    _, reader = _read(client, researcher, story_study)
    assert any(f"rater pairs: {note}" in part for part in reader.parts)  # table 6's tooltip
    report = _text_report(story_study)
    assert f"relevance / group “human” / Human raters: rater pairs — {note}" in report  # and the Notes


def test_an_llm_pools_samples_are_samples_and_its_ratings_are_counted_in_one_unit(small_study, client, researcher):
    html, reader = _read(client, researcher, small_study)
    seen = re.sub(r"\s+", " ", " ".join(reader.parts))
    pools = html[html.index('class="paper pools cards"'):]
    pools = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", pools[:pools.index("</table>")]))
    # gpt-4o: 3 samples x 6 items x 4 questions: 24 item x question ratings, from 72 answers.
    assert "gpt-4o llm 3 samples 24 (item × question; 72 answers of its samples)" in pools
    assert "Human raters human 3 72" in pools
    assert "pool / rater (an LLM: sample)" in seen
    report = _text_report(small_study)
    assert ("Pools: Human raters (3 raters, 72 ratings); gpt-4o (3 samples; 24 item × question ratings, 72 answers, "
            "errors 0, pending 0, refused 0, unparseable 0)") in report


def test_the_plan_labels_the_chance_at_the_needed_design_and_gives_its_monte_carlo_error(
        small_study, client, researcher):
    client.force_login(researcher)
    page = client.post(f"/studies/{small_study.slug}/plan/").content.decode()
    found = [re.search(rf'<li id="plan-{key}">(.*?)</li>', page, flags=re.S) for key in ("items", "raters")]
    lines = [re.sub(r"<[^>]+>", "", m.group(1)) for m in found if m]
    needed = [line for line in lines if "for an 80 % chance to pass:" in line]
    assert needed  # the grid reaches 80 % for one of them at least
    for line in needed:  # "150 (87 %)" said nothing of what 87 % is, nor of its simulation error
        assert re.search(r"; chance to pass there: \d+ % \((± \d+ %: the Monte-Carlo standard error of \d+ replicates|"
                         r"all \d+ replicates passed: at 95 % confidence the chance is at least \d+ %)\)", line), line


def test_the_home_and_raters_pages_say_where_imported_ratings_come_from(small_study, client, researcher):
    client.force_login(researcher)
    home = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", client.get(f"/studies/{small_study.slug}/home/").content.decode()))
    # 72 human ratings from 3 imported raters, beside "0 / 0 raters finished / started" (issue 25 review).
    assert ("72 human ratings (with 3 raters from imported files, outside the links: not counted in the seats or "
            "raters figures)") in home
    assert "seats filled through the links (0 %) (a seat: one rater's place on one item; 6 items × 3 raters an item)" \
        in home.replace("&#x27;", "'")
    raters = client.get(f"/studies/{small_study.slug}/raters/").content.decode()
    assert "No raters through the links yet." in raters
    assert "3 raters from imported files: their ratings came in a ratings file, outside the links, and are not " \
           "listed here; the dashboard counts them." in raters


def test_cosmetics_counts_read_as_counts_and_nothing_prints_minus_zero(small_study, client, researcher):
    from evalhub.analysis.text_report import fmt

    assert (fmt(-0.0000004, 3), fmt(-0.0004, 3), fmt(-0.0006, 3), fmt(None)) == ("0.000", "0.000", "-0.001", "–")
    report = _text_report(small_study)
    assert not re.search(r"\b1 items\b", report) and "-0.000" not in report and "-0.00 " not in report
    html, reader = _read(client, researcher, small_study)
    # The judge's zero refusals are 0, not "–" (which means undefined elsewhere on the page).
    pools = html[html.index('class="paper pools cards"'):]
    row = re.search(r"<tr><td data-label=\"pool\" class=\"first\">[^<]*<span class=\"swatch\"[^>]*></span>gpt-4o"
                    r"</td>(.*?)</tr>", pools[:pools.index("</table>")], flags=re.S)
    assert row and re.findall(r"<td data-label=\"[^\"]+\">([^<]*)</td>", row.group(1))[-4:-1] == ["0", "0", "0 / 0"]
    # The score distributions: an axis title, n per pool, and a tick at or above the highest bar.
    assert "% of each pool's ratings (an LLM: answers; n in the legend)" in reader.svg_texts
    assert "score" in reader.svg_texts and "Human raters (n = 9 ratings)" in reader.svg_texts


def test_per_rater_kappas_adjusted_p_is_not_given_for_a_filtered_family(small_study, client, researcher):
    # As Welch's (finding 1): filtered to one question, the same per-rater test got a smaller BH-adjusted p
    # (0.386 against 0.515). Its whole family needs every cell's bootstraps, so a filtered analysis withholds it.
    client.force_login(researcher)
    def rater_rows(query: str) -> list[dict]:
        rows = client.get(f"/studies/{small_study.slug}/analysis.json{query}").json()["kappa"]
        return [r for r in rows if r["against"] == "rater"]
    whole = rater_rows("")
    assert whole and all("p_adjusted" not in r["notes"] for r in whole)
    assert any(r["p_adjusted"] is not None for r in whole)
    filtered = rater_rows("?question=grammaticality")
    assert filtered and all(r["p_adjusted"] is None and r["notes"]["p_adjusted"].startswith(
        "given on the unfiltered analysis only") for r in filtered)


def test_the_all_groups_cells_pair_every_item(small_study, client, researcher):
    # The second review: with ?group=(all) Kendall's tau paired 2 of the 6 items (-1.00 where scipy gives 0.16 on
    # all 6), because the pooled cell's items come group by group and a binary search assumed them sorted.
    client.force_login(researcher)
    result = client.get(f"/studies/{small_study.slug}/analysis.json?group=(all)").json()
    kendall = [r for r in result["kendall"] if r["group"] == "(all)"]
    assert len(kendall) == len(QUESTIONS) and all(r["n"] == 6 for r in kendall)
    confusion = [r for r in result["confusion"] if r["group"] == "(all)"]
    assert all(r["n_items"] + r["n_tied"] + r["n_unpaired"] == 6 for r in confusion)


def test_the_text_reports_welch_table_names_both_ps_and_a_withheld_ceiling_claims_no_rater(small_study):
    # The second review: a bare "p" column (raw) beside sentences with the BH-adjusted p; "judge better: yes" for
    # each rater under a ceiling heading that says "withheld"; "neg_rmse" in that heading.
    report = _text_report(small_study)
    welch = report[report.index("== Welch's t-test"):]
    assert "p (raw)" in welch.splitlines()[1] and "p (BH)" in welch.splitlines()[1]
    for block in report.split("== Human ceiling")[1:]:
        head, *rows = block.split("\n\n")[0].splitlines()
        assert "neg_rmse" not in head and "negative RMSE against the other raters" in head
        if "withheld" in head:
            assert not any(re.search(r"\s(yes|no)$", row) for row in rows)


def test_the_all_groups_page_names_no_empty_welch_family(small_study, client, researcher):
    # The second review (U7): "adjusted ... over the 0 contrasts of this analysis" on ?group=(all), which shows no
    # contrast between groups.
    client.force_login(researcher)
    page = client.get(f"/studies/{small_study.slug}/?group=(all)").content.decode()
    assert "over the 0 contrasts" not in page
    # Sixth review (C): nor a key to stars that this view cannot show, above a bare "No contrasts.": it says why.
    assert "Stars mark the group" not in page
    assert ("No contrasts: this view pools the groups, and Welch's t-test compares one group with another"
            in page.replace("&#x27;", "'"))
