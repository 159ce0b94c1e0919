"""Each judge kind end to end on the story study against the localhost OpenAI-compatible server.

The server's ``answer`` callable plays a model that follows each paper's output format per step
(Prometheus feedback and [RESULT], PERSE review and [Score], CINEMETRIC character lists, VALID and
"Answer:", DRPE role lists and panel blocks), so every stored prompt, answer and parse status can be
checked, and a rerun can be shown to make no new call.
"""
from __future__ import annotations

import re

import pytest

from tests.llmjudge.factories import openai_judge as _judge
from tests.llmjudge.factories import run_inline as _run
from tests.llmjudge.kinds_integration.conftest import RATERS
from tests.support.extras import EMBEDDER, require_extra
from tests.support.openai_server import Behaviour

pytestmark = pytest.mark.django_db(transaction=True)



def scripted_answer(prompt: str, body: dict) -> str:
    """A realistic answer for whichever step ``prompt`` is."""
    if "###Score Rubrics:" in prompt or "[RESULT]" in prompt:
        return "Feedback: The response is coherent but the ending is abrupt. [RESULT] 4"
    if "[Instruction]" in prompt and "Reviewer Preference" in prompt:
        return "[Review] Too short for this critic, who likes endings that land. [Score] 3"
    if "movie character matching expert" in prompt:
        return (
            "Character Name:[Atticus Finch]\nMovie Title:[To Kill a Mockingbird]\nReasoning:[Measured and fair.]\n\n"
            "Character Name:[Mulan]\nMovie Title:[Mulan]\nReasoning:[Values courage.]\n\n"
            "Character Name:[Zorblax the Unreal]\nMovie Title:[No Such Film]\nReasoning:[Made up.]\n\n"
            "Character Name:[Marge Gunderson]\nMovie Title:[Fargo]\nReasoning:[Plain-spoken.]\n\n"
            "Character Name:[Evelyn Wang]\nMovie Title:[Everything Everywhere All at Once]\nReasoning:[Resilient.]"
        )
    if "You are a movie expert" in prompt:
        return "INVALID" if "Zorblax" in prompt else "VALID"
    if "role-play the following movie character" in prompt:
        score = 2 if "Mulan" in prompt else 4
        return f"Reasoning: From this character's view the story is uneven.\nAnswer: {score}"
    if "Think about the people who would read this" in prompt:
        return (
            "1. Teacher: Reads stories to judge clarity for students.\n"
            "2. School teacher: Reads stories to judge how clear they are for pupils.\n"
            "3. Horror Fan: Wants suspense and dread.\n"
            "4. Editor: Looks for tight prose.\n"
            "5. Child: Likes simple, fun stories."
        )
    if "Play each of the following roles in turn" in prompt:
        names = re.findall(r"^\d+\. ([^:\n]+):", prompt, flags=re.MULTILINE)
        return "\n".join(f"### {name}\nReason: Readable.\nScore: {3 + i % 2}" for i, name in enumerate(names))
    return "Answer: 3"


@pytest.fixture
def scripted_server(openai_server):
    openai_server.behaviour = Behaviour(answer=scripted_answer)
    return openai_server


def _rerun_makes_no_call(run, server) -> None:
    from llmjudge.runs.lifecycle import judge_run_execute_inline, judge_run_resume

    before = server.stats.requests
    assert judge_run_resume(run=run, enqueue=False) == 0
    summary = judge_run_execute_inline(run=run)
    assert summary.calls == 0
    assert server.stats.requests == before


def test_rubric_judge_sends_the_prometheus_prompt_and_stores_the_feedback(rated_study, scripted_server):
    judge = _judge(scripted_server, "prometheus", "rubric", {}, samples=2)
    run = _run(rated_study, judge)
    ratings = list(run.ratings.all())
    assert run.status == "done"
    assert len(ratings) == 3 * 4 * 2
    first = ratings[0]
    assert first.status == "ok" and first.score == 4
    assert first.rationale.startswith("The response is coherent")
    # The seed paper's absolute-grading structure, in order.
    marks = ["###Task Description:", "###The instruction to evaluate:", "###Response to evaluate:",
             "###Score Rubrics:", "###Feedback:"]
    positions = [first.prompt.find(m) for m in marks]
    assert -1 not in positions and positions == sorted(positions)
    assert "Score 5:" in first.prompt
    assert first.prompt_hash and first.raw.endswith("[RESULT] 4")
    _rerun_makes_no_call(run, scripted_server)


def test_personalized_judge_predicts_each_rater_on_held_out_items_from_their_profile(rated_study, scripted_server):
    from llmjudge.models import LLMRating

    judge = _judge(scripted_server, "perse", "personalized", {"profile_size": 2, "split_seed": 7})
    run = _run(rated_study, judge)
    split = run.params["split"]
    assert set(split) == {str(r.pk) for r in rated_study.raters.all()}
    rows = LLMRating.objects.filter(run=run)
    # 3 items, k=2 -> one held-out item per rater, 4 questions, 1 sample.
    assert rows.count() == len(RATERS) * 1 * 4
    for row in rows:
        assert row.target_rater_id is not None and row.status == "ok" and row.score == 3
        assert row.rationale.startswith("Too short for this critic")
        assert row.item_id in split[str(row.target_rater_id)]["held_out"]
        order = [row.prompt.find(m) for m in ("[Instruction]", "Reviewer Preference", "[The Start of Story 0]",
                                              "\n[Score] ", "Story Query", "[The Start of Story]")]
        assert -1 not in order and order == sorted(order)
    ann_prompt = rows.filter(target_rater__external_id="ann").first().prompt
    assert "[Review] Liked the ending." in ann_prompt
    assert "[Review]" not in rows.filter(target_rater__external_id="bob").first().prompt.split("Story Query")[0]
    _rerun_makes_no_call(run, scripted_server)


def test_personalized_judge_names_the_rater_with_too_few_ratings(rated_study, scripted_server):
    from llmjudge.runs.lifecycle import RunError, judge_run_start

    judge = _judge(scripted_server, "perse-big", "personalized", {"profile_size": 3})
    with pytest.raises(RunError, match=r"k=3 needs at least 4 ratings.*rater ann \(id \d+\) has 3"):
        judge_run_start(study=rated_study, judge=judge, enqueue=False)


def test_persona_judge_proposes_verifies_and_role_plays_three_characters(rated_study, scripted_server):
    from evalhub.analysis.per_rater import per_rater_predictions
    from llmjudge.models import JudgeCall

    judge = _judge(scripted_server, "cinemetric", "persona", {"training_examples": 2, "held_out": 1})
    run = _run(rated_study, judge)
    proposals = JudgeCall.objects.filter(run=run, step="propose")
    assert proposals.count() == len(RATERS) * 4  # one round per rater and question sufficed
    assert all(c.status == "ok" and len(c.parsed["characters"]) == 5 for c in proposals)
    assert "USER'S PROFILE" in proposals[0].prompt and "Answer:" in proposals[0].prompt
    verifications = JudgeCall.objects.filter(run=run, step="verify")
    assert verifications.count() == len(RATERS) * 4 * 5
    assert verifications.filter(parsed__valid=False).count() == len(RATERS) * 4
    ratings = run.ratings.order_by("target_rater", "item", "question", "sample")
    assert ratings.count() == len(RATERS) * 1 * 4 * 3
    assert all(r.status == "ok" for r in ratings)
    first_three = list(ratings[:3])
    assert ["Atticus Finch" in first_three[0].prompt, "Mulan" in first_three[1].prompt,
            "Marge Gunderson" in first_three[2].prompt] == [True, True, True]
    assert [r.score for r in first_three] == [4, 2, 4]
    first = first_three[0]  # the analysis's prediction for this rater and item: the characters' majority
    assert per_rater_predictions(run_id=run.pk)[(first.item_id, first.question_id, first.target_rater_id)] == 4
    _rerun_makes_no_call(run, scripted_server)


def test_roleplay_panel_dedupes_roles_and_asks_them_in_one_prompt(rated_study, scripted_server):
    require_extra(EMBEDDER, why="the role-player panel's role de-duplication")
    from llmjudge.models import JudgeCall

    judge = _judge(scripted_server, "drpe", "roleplay", {})
    run = _run(rated_study, judge)
    roles = JudgeCall.objects.filter(run=run, step="roles")
    assert roles.count() == 3 and all(c.status == "ok" for c in roles)
    kept = [r["name"] for r in roles[0].parsed["kept"]]
    assert ("Teacher" in kept) != ("School teacher" in kept)  # near-duplicates merged
    rating = run.ratings.first()
    assert rating.status == "ok" and rating.score is not None
    assert all(f"{name}:" in rating.prompt for name in kept)
    assert run.ratings.count() == 3 * 4 and run.status == "done"
    _rerun_makes_no_call(run, scripted_server)


def test_after_migration_0004_scores_stay_on_scale_and_rows_stay_unique_with_or_without_a_target_rater(
    rated_study, make_judge
):
    from django.db import IntegrityError, transaction

    from llmjudge.models import LLMRating
    from llmjudge.runs.lifecycle import judge_run_start

    run = judge_run_start(study=rated_study, judge=make_judge(samples=1), enqueue=False)
    item, question = rated_study.items.first(), rated_study.questions.first()
    rater = rated_study.raters.first()
    with pytest.raises(IntegrityError), transaction.atomic():
        LLMRating.objects.filter(run=run).update(status="ok", score=9)  # the scale trigger survived
    with pytest.raises(IntegrityError), transaction.atomic():
        LLMRating.objects.create(run=run, item=item, question=question, sample=0)  # plain: NULL rater
    LLMRating.objects.create(run=run, item=item, question=question, sample=0, target_rater=rater)
    with pytest.raises(IntegrityError), transaction.atomic():
        LLMRating.objects.create(run=run, item=item, question=question, sample=0, target_rater=rater)
    with pytest.raises(IntegrityError), transaction.atomic():
        LLMRating.objects.create(run=run, item=item, question=question, sample=0, target_rater=rater,
                                 status="ok", score=0)


def test_a_persona_rerun_asks_only_the_missing_steps_and_ratings(rated_study, scripted_server):
    from llmjudge.models import JudgeCall, JudgeRun
    from llmjudge.runs.lifecycle import judge_run_execute_inline, judge_run_resume

    judge = _judge(scripted_server, "cinemetric", "persona", {"training_examples": 2, "held_out": 1})
    run = _run(rated_study, judge)
    # Lose one verification and one role-play answer, as a crash before their write would.
    JudgeCall.objects.filter(run=run, step="verify").order_by("id").first().delete()
    lost = run.ratings.filter(sample=0).order_by("id").first()
    run.ratings.filter(pk=lost.pk).update(status="pending", score=None, raw="")
    JudgeRun.objects.filter(pk=run.pk).update(status="running")
    run.refresh_from_db()
    before = scripted_server.stats.requests

    assert judge_run_resume(run=run, enqueue=False) == 1
    judge_run_execute_inline(run=run)
    assert scripted_server.stats.requests - before == 2  # the verification, then the role-play
    run.refresh_from_db()
    assert run.status == "done" and run.ratings.filter(status="ok").count() == run.ratings.count()
    assert JudgeCall.objects.filter(run=run, step="verify").count() == len(RATERS) * 4 * 5
