"""The position-bias probe (issue 19.4): a pairwise run with a swap share re-asks a share of the items with A
and B swapped, as extra samples marked swapped whose choice is stored mapped back; the analysis reports the
flip rate and the first-position share, keeps the swapped samples out of every other statistic, and the
verdict card says when the judge prefers a position."""
from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotations.models import HumanRating, Item, Rater
from annotations.studies import study_create_from_template
from evalhub.analysis import AnalysisOptions, study_analysis
from evalhub.analysis.text_report import text_report
from evalhub.imports.exports import table_rows
from llmjudge.models import Judge, LLMRating
from llmjudge.runs import lifecycle as judging
from llmjudge.runs.reparse import study_reparse
from tests.support.openai_server import Behaviour, OpenAIServer, first_position_answer

pytestmark = pytest.mark.django_db

N_CLEAR, N_EVEN = 3, 9  # items whose A is clearly better ("GOOD" vs "BAD"), items of two equal responses


def _judge_answer(prompt: str, request: dict) -> str:
    # Reads the responses when one is clearly better; otherwise picks the position shown first.
    if "GOOD" in prompt and "BAD" in prompt:
        return "Answer: A" if prompt.index("GOOD") < prompt.index("BAD") else "Answer: B"
    return first_position_answer(prompt, request)


@pytest.fixture
def pairs(researcher):
    study = study_create_from_template(slug="pairs", template="story-pairwise", owner=researcher)
    question = study.questions.get()
    texts = [("GOOD story", "BAD story")] * N_CLEAR + [(f"even story {n}", f"level story {n}") for n in range(N_EVEN)]
    items = [Item.objects.create(study=study, external_id=f"p{n}", group="pairs", position=n,
                                 fields={"prompt": "p", "response_a": a, "response_b": b})
             for n, (a, b) in enumerate(texts)]
    for r in range(3):
        rater = Rater.objects.create(study=study, external_id=f"r{r}")
        for item in items:
            HumanRating.objects.create(rater=rater, item=item, question=question, score=1)
    return study


def _run(study, researcher, *, samples: int = 2, share: float = 1.0):
    with OpenAIServer(Behaviour(answer=_judge_answer)) as server:
        judge = Judge.objects.create(name="local", owner=researcher, backend=Judge.Backend.OPENAI_COMPATIBLE,
                                     base_url=f"{server.url}/v1", model="test-model", samples=samples)
        run = judging.judge_run_start(study=study, judge=judge, enqueue=False, overrides={"swap_share": share})
        judging.judge_run_execute_inline(run=run)
    return run


def test_swapped_samples_follow_the_judges_own_show_the_pair_swapped_and_store_the_choice_mapped_back(
        pairs, researcher):
    run = _run(pairs, researcher)
    rows = LLMRating.objects.filter(run=run)
    assert run.params["swap_share"] == 1.0
    assert set(rows.values_list("status", flat=True)) == {"ok"}
    assert sorted(set(rows.values_list("sample", "swapped"))) == [(0, False), (1, False), (2, True)]
    swapped = rows.get(item__external_id="p0", swapped=True)
    # Response B's text is shown under A: "BAD" comes first, the judge answers B, stored as the original A.
    assert swapped.prompt.index("BAD") < swapped.prompt.index("GOOD") and swapped.raw == "Answer: B"
    assert swapped.score == 1.0
    # An even pair: the judge answers "A" (the original B, shown first), stored as B: a flip.
    assert rows.get(item__external_id="p5", swapped=True).score == 2.0
    assert rows.get(item__external_id="p5", sample=0).score == 1.0


def test_the_analysis_reports_the_flip_rate_and_the_verdict_card_notes_the_first_position_preference(
        pairs, researcher, client):
    run = _run(pairs, researcher)
    result = study_analysis(study=pairs, options=AnalysisOptions(n_boot=20))
    [row] = result.position_bias
    # Even pairs flip (the judge answers A both times), clear pairs do not: 9 of 12.
    assert (row.n_pairs, row.n_flips) == (N_CLEAR + N_EVEN, N_EVEN)
    assert row.flip_rate == pytest.approx(N_EVEN / (N_CLEAR + N_EVEN))
    assert row.flip_ci95_low < 0.75 < row.flip_ci95_high
    # First position: a clear pair once of its two answers, an even pair both times: (3 + 18) / 24.
    assert (row.n_first, row.n_decisive) == (N_CLEAR + 2 * N_EVEN, 2 * (N_CLEAR + N_EVEN))
    assert row.first_position_ci95_low > 0.5 and row.prefers_first and not row.prefers_second
    assert "position bias: the judge chose the response shown first" in row.notes[0]
    # Swapped samples count nowhere else: the pool holds its 2 ordinary samples of the 12 items.
    [cell] = [c for c in result.cells if c.pool != "human"]
    assert cell.n_ratings == 2 * (N_CLEAR + N_EVEN) and cell.n_raters == 2
    [pool] = [p for p in result.pools if p.kind == "llm"]
    assert pool.status_counts == {"ok": 2 * (N_CLEAR + N_EVEN)}

    client.force_login(researcher)
    html = client.get(f"/studies/{pairs.slug}/").content.decode()
    assert f'<p class="position-note" data-pool="{row.pool}"' in html
    assert "the judge chose the response shown first beyond chance" in html
    assert run.pk


def test_a_run_without_swapping_has_no_position_rows_and_no_note(pairs, researcher, client):
    _run(pairs, researcher, share=0.0)
    assert not LLMRating.objects.filter(swapped=True).exists()
    assert study_analysis(study=pairs, options=AnalysisOptions(n_boot=20)).position_bias == ()
    client.force_login(researcher)
    html = client.get(f"/studies/{pairs.slug}/").content.decode()
    assert 'class="verdict-card' in html and '<p class="position-note"' not in html


def test_a_share_picks_that_many_items_with_the_fake_backend(pairs, researcher):
    judge = Judge.objects.create(name="fake", owner=researcher, backend=Judge.Backend.FAKE, model="m", samples=3)
    run = judging.judge_run_start(study=pairs, judge=judge, enqueue=False, overrides={"swap_share": 0.5})
    assert LLMRating.objects.filter(run=run, swapped=True, sample=3).count() == 6
    assert LLMRating.objects.filter(run=run, swapped=False).count() == 3 * 12
    assert run.calls_total == 3 * 12 + 6


@pytest.mark.parametrize(("share", "message"), [(1.5, "between 0 and 1"), (-0.2, "between 0 and 1")])
def test_a_bad_share_is_refused_and_starts_nothing(pairs, researcher, share, message):
    judge = Judge.objects.create(name="fake", owner=researcher, backend=Judge.Backend.FAKE, model="m", samples=1)
    with pytest.raises(judging.RunError, match=message):
        judging.judge_run_start(study=pairs, judge=judge, enqueue=False, overrides={"swap_share": share})
    assert not LLMRating.objects.exists()


def test_only_a_pairwise_study_can_be_swapped(story_study, researcher):
    judge = Judge.objects.create(name="fake", owner=researcher, backend=Judge.Backend.FAKE, model="m", samples=1)
    Item.objects.create(study=story_study, external_id="s1", position=1, fields={"story": "x"})
    with pytest.raises(judging.RunError, match="not pairwise"):
        judging.judge_run_start(study=story_study, judge=judge, enqueue=False, overrides={"swap_share": 0.5})


def test_the_command_takes_a_swap_share(pairs, researcher, capsys):
    Judge.objects.create(name="fake", owner=researcher, backend=Judge.Backend.FAKE, model="m", samples=1)
    call_command("run_judge", "pairs", "fake", "--swap-share", "0.25", "--inline")
    assert LLMRating.objects.filter(swapped=True).count() == 3
    with pytest.raises(CommandError, match="between 0 and 1"):
        call_command("run_judge", "pairs", "fake", "--swap-share", "2")


def test_the_text_report_and_the_csv_carry_the_position_rows(pairs, researcher):
    _run(pairs, researcher, samples=1)
    result = study_analysis(study=pairs, options=AnalysisOptions(n_boot=20))
    report = text_report(result)
    assert "== Position bias" in report and "0.75 [" in report
    header, *lines = list(table_rows(result, "position_bias"))
    assert len(lines) == 1 and dict(zip(header, lines[0], strict=True))["n_flips"] == N_EVEN


def test_reparse_reads_a_swapped_answer_in_the_original_orientation_too(pairs, researcher):
    run = _run(pairs, researcher, samples=1)
    before = dict(LLMRating.objects.filter(run=run).values_list("pk", "score"))
    report = study_reparse(study=pairs)
    assert report.n_read == len(before) and report.n_changed == 0
    assert dict(LLMRating.objects.filter(run=run).values_list("pk", "score")) == before
