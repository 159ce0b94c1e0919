"""Views filtered by group: the rater pools' counts follow every filter the tables below them follow (review 13, M1:
under a group filter, "ratings counted" stayed the whole study's), and a table empty by design in the all-groups view
says why where it is exported (review 13, U)."""
from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from evalhub.analysis import ALL_GROUPS, AnalysisOptions, study_analysis
from tests.evalhub.analysis.test_withheld_exports import dashboard_html
from tests.evalhub.factories import import_long, live_run

# Items h0-h3 in group "human", g0-g1 in group "gpt2"; raters r0, r1 rate every human item, r2 only the gpt2 items.
HUMAN_ROWS = ([(f"h{i}", "human", "relevance", "human", f"r{r}", 1 + (i + r) % 5) for i in range(4) for r in range(2)]
              + [(f"g{i}", "gpt2", "relevance", "human", "r2", 2 + i) for i in range(2)])
# Two samples an item; on the gpt2 items one refused and one unparseable, on the human items one error.
LLM_ROWS = ([(f"h{i}", "relevance", s, None, "error") if (i, s) == (0, 1) else (f"h{i}", "relevance", s, 3.0, "ok")
             for i in range(4) for s in range(2)]
            + [("g0", "relevance", 0, None, "refused"), ("g0", "relevance", 1, 4.0, "ok"),
               ("g1", "relevance", 0, 2.0, "ok"), ("g1", "relevance", 1, None, "unparseable")])


@pytest.fixture
def two_groups(story_study, tmp_path):
    import_long(story_study, HUMAN_ROWS, tmp_path)
    live_run(story_study, "judge", LLM_ROWS)
    return story_study


def _pools(study, groups):
    result = study_analysis(study=study, options=AnalysisOptions(n_boot=20, groups=groups, questions=("relevance",)))
    return {p.name: p for p in result.pools}


@pytest.mark.django_db
def test_a_group_filter_narrows_every_pool_count_to_its_items(two_groups):
    pools = _pools(two_groups, ("gpt2",))
    human, judge = pools["human"], pools["judge"]
    assert (human.n_raters, human.n_ratings) == (1, 2)  # r2 on g0, g1
    assert (judge.n_raters, judge.n_ratings, judge.n_item_questions) == (2, 2, 2)  # g0 sample 1, g1 sample 0
    assert judge.status_counts == {"ok": 2, "refused": 1, "unparseable": 1}

    pools = _pools(two_groups, ("human",))
    human, judge = pools["human"], pools["judge"]
    assert (human.n_raters, human.n_ratings) == (2, 8)
    assert (judge.n_raters, judge.n_ratings, judge.n_item_questions) == (2, 7, 4)
    assert judge.status_counts == {"ok": 7, "error": 1}


@pytest.mark.django_db
@pytest.mark.parametrize("groups", [None, ("human", "gpt2"), (ALL_GROUPS,), ("gpt2", ALL_GROUPS)])
def test_every_group_or_the_pooled_cell_counts_every_item(two_groups, groups):
    pools = _pools(two_groups, groups)
    human, judge = pools["human"], pools["judge"]
    assert (human.n_raters, human.n_ratings) == (3, 10)
    assert (judge.n_raters, judge.n_ratings, judge.n_item_questions) == (2, 9, 6)
    assert judge.status_counts == {"ok": 9, "error": 1, "refused": 1, "unparseable": 1}


def _export(study, *args):
    out, err = io.StringIO(), io.StringIO()
    call_command("export", study.slug, "--what", "tables", "--n-boot", "20", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.mark.django_db
def test_an_all_groups_export_says_why_welch_and_rater_means_have_no_rows(two_groups):
    out, err = _export(two_groups, "--table", "welch", "--group", ALL_GROUPS)
    assert out.count("\n") == 1  # the header alone
    assert err.startswith("welch has no rows: this view pools the groups, and Welch's t-test compares one group "
                          "with another")
    out, err = _export(two_groups, "--table", "rater_means", "--group", ALL_GROUPS)
    assert out.count("\n") == 1 and err.startswith("rater_means has no rows: per-rater means are given per group")
    _, err = _export(two_groups, "--group", ALL_GROUPS)
    assert "welch has no rows" in err and "rater_means has no rows" in err
    # A group beside "(all)", or no filter: both tables have rows, and nothing is said.
    for args in (("--group", ALL_GROUPS, "--group", "gpt2"), ()):
        for table in ("welch", "rater_means"):
            out, err = _export(two_groups, "--table", table, *args)
            assert out.count("\n") > 1 and err == "", (args, table)


@pytest.mark.django_db
def test_the_dashboard_offers_no_csv_of_a_table_it_leaves_empty(two_groups, client, researcher):
    links = ("/export/welch.csv", "/export/rater_means.csv")
    pooled = dashboard_html(client, researcher, two_groups, f"?group={ALL_GROUPS}")
    assert 'id="welch-none"' in pooled and 'id="raters-empty"' in pooled
    assert not any(link in pooled for link in links)
    page = dashboard_html(client, researcher, two_groups)
    assert all(link in page for link in links)


@pytest.mark.django_db
def test_a_ceiling_csv_line_carries_no_other_raters_interval_notes():
    # Review 14: in the demo's all-groups view demo-rater-1's line said "demo-rater-2, judge's score: the t
    # interval is cut above at 0.000 ...".
    from evalhub.demo.loader import demo_judge_load, demo_load
    from evalhub.imports.exports import table_rows
    from llmjudge.runs.lifecycle import judge_run_execute_inline, judge_run_start

    study = next(s for s in demo_load() if s.slug == "demo-story")
    judge_run_execute_inline(run=judge_run_start(study=study, judge=demo_judge_load(owner=study.owner),
                                                 enqueue=False))
    result = study_analysis(study=study, options=AnalysisOptions(n_boot=50, groups=(ALL_GROUPS,)))
    header, *rows = list(table_rows(result, "ceiling"))
    lines = [dict(zip(header, row, strict=True)) for row in rows]
    blocks = {(row.question, row.group, row.pool): row for row in result.ceiling}
    assert any("'s score: the t interval" in note for row in result.ceiling for note in row.notes)  # some to check
    for line in lines:
        block = blocks[(line["question"], line["group"], line["pool"])]
        for note in (n for n in block.notes if "'s score: the t interval" in n):
            own = note.startswith(f"{line['rater']}, ")
            assert (note in str(line["notes"])) == own, (line["rater"], note)


@pytest.mark.django_db
def test_a_mixed_view_has_a_verdict_headline_for_each_group_shown_and_all_groups(two_groups, client, researcher):
    # Review 16: with group "human" and "(all)" asked for, the verdict gave the pooled headline alone.
    import re

    def headlines(query):
        page = dashboard_html(client, researcher, two_groups, query)
        return re.findall(r'<p class="headline[^"]*"[^>]*>(.*?)</p>', page, flags=re.S)

    mixed = headlines(f"?group=gpt2&group={ALL_GROUPS}")
    assert len(mixed) == 2
    assert "group “gpt2”" in mixed[0] and "all groups" in mixed[1]
    assert len(headlines(f"?group={ALL_GROUPS}")) == 1 and len(headlines("")) == 2


@pytest.mark.django_db
def test_the_scatter_says_which_items_it_draws_in_a_mixed_view(two_groups, client, researcher):
    # Review 15: beside group "gpt2" and "(all)" it said the pooled points "are the same items" as the bubbles drawn,
    # while the other group's items were drawn nowhere.
    import re

    def said(query):
        page = dashboard_html(client, researcher, two_groups, query)
        found = re.search(r'<span id="scatter-pooled">(.*?)</span>', page)
        return found.group(1) if found else ""

    assert said(f"?group=gpt2&group={ALL_GROUPS}") == (
        "All groups together are not drawn: only group “gpt2” is; the other groups&#x27; items are in no chart "
        "here, and table 2 gives τ over all groups.")
    assert said(f"?group=gpt2&group=human&group={ALL_GROUPS}").startswith(
        "All groups together are not drawn over the groups&#x27; own bubbles")
    assert said(f"?group={ALL_GROUPS}") == "" and said("") == ""
