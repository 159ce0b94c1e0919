"""Pairwise (A/B) studies through the judge pipeline against the localhost OpenAI-compatible server,
with the real openai SDK: Prometheus relative grading, DRPE panels voting on pairs, and the panel's
log-probability confidence weighting changing an outcome.
"""
from __future__ import annotations

import json
import re

import pytest

from tests.llmjudge.factories import openai_judge as _judge
from tests.llmjudge.factories import run_inline as _run
from tests.support.openai_server import Behaviour

pytestmark = pytest.mark.django_db(transaction=True)

PAIRS = [
    ("p1", "A dragon learns to knit.", "The dragon's claws tore every scarf until she learned patience.",
     "Dragon knit. It was a dragon. The dragon was knitting a dragon."),
    ("p2", "The last train of the night.", "The train was late and the train was a train at night.",
     "Only one passenger rode the last train, and the conductor swore she had boarded yesterday."),
]


@pytest.fixture
def pairwise_study(researcher):
    from annotations.models import HumanRating, Item, Rater
    from annotations.studies import study_create_from_template

    study = study_create_from_template(slug="pairs", template="story-pairwise", owner=researcher)
    question = study.questions.get()
    raters = [Rater.objects.create(study=study, external_id=name) for name in ("ann", "bob", "cy")]
    for position, (external_id, prompt, a, b) in enumerate(PAIRS):
        item = Item.objects.create(study=study, external_id=external_id, group="pairs", position=position,
                                   fields={"prompt": prompt, "response_a": a, "response_b": b})
        better = 1 if external_id == "p1" else 2  # the humans prefer the written-out story
        for n, rater in enumerate(raters):
            HumanRating.objects.create(rater=rater, item=item, question=question, score=better if n < 2 else 3 - better)
    return study


def _prometheus_answer(prompt: str, body: dict) -> str:
    if "only one passenger" in prompt.lower():
        return "Feedback: Response B builds a mystery in one sentence; Response A repeats itself. [RESULT] B"
    return "Response A shows a change in the dragon; Response B only repeats words.\n[RESULT] A"


def test_rubric_judge_on_a_pairwise_study_sends_prometheus_relative_grading(pairwise_study, openai_server):
    from llmjudge.kinds.rubric import prompts as rubric

    openai_server.behaviour = Behaviour(answer=_prometheus_answer)
    run = _run(pairwise_study, _judge(openai_server, "prometheus-ab", "rubric", {"instruction": "{prompt}"}))

    assert run.status == "done"
    ratings = {r.item.external_id: r for r in run.ratings.select_related("item")}
    assert {k: (r.status, r.score) for k, r in ratings.items()} == {"p1": ("ok", 1.0), "p2": ("ok", 2.0)}
    assert ratings["p2"].rationale == "Response B builds a mystery in one sentence; Response A repeats itself."
    # What was sent: prometheus-eval's relative system message, then the relative prompt (stored as sent).
    messages = json.loads(ratings["p2"].prompt)
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"] == rubric.system_prompt("relative")
    user = messages[1]["content"]
    sections = ["###Task Description:", "###Instruction:\nThe last train of the night.",
                f"###Response A:\n{PAIRS[1][2]}", f"###Response B:\n{PAIRS[1][3]}",
                "###Score Rubric:\n[Which story is more coherent, more engaging and closer to the prompt?]",
                "###Feedback: "]
    positions = [user.find(s) for s in sections]
    assert -1 not in positions and positions == sorted(positions)
    assert user.endswith("###Feedback: ") and "Score 1:" not in user
    assert '"(write a feedback for criteria) [RESULT] (A or B)"' in user
    bodies = [b for b in openai_server.stats.bodies if b.get("messages")]
    assert all(b["messages"][0]["role"] == "system" for b in bodies)


def test_rubric_judge_on_a_likert_study_sends_the_absolute_system_prompt(story_with_items, openai_server):
    from llmjudge.kinds.rubric import prompts as rubric

    openai_server.behaviour = Behaviour(answer=lambda prompt, body: "Feedback: Clear. [RESULT] 4")
    run = _run(story_with_items, _judge(openai_server, "prometheus", "rubric", {}))

    rating = run.ratings.first()
    assert rating.status == "ok" and rating.score == 4
    messages = json.loads(rating.prompt)
    assert messages[0] == {"role": "system", "content": rubric.system_prompt("absolute")}
    assert messages[1]["content"].startswith("###Task Description:")


def test_rubric_judge_without_system_prompt_sends_the_prompt_alone(story_with_items, openai_server):
    openai_server.behaviour = Behaviour(answer=lambda prompt, body: "Feedback: Clear. [RESULT] 4")
    run = _run(story_with_items, _judge(openai_server, "prometheus-nosys", "rubric", {"system_prompt": False}))

    rating = run.ratings.first()
    assert rating.prompt.startswith("###Task Description:")  # one user message is stored as its text
    assert all(m["role"] == "user" for b in openai_server.stats.bodies for m in b["messages"])


def _panel_answer(prompt: str, body: dict) -> str:
    """The first two roles vote for story 1, the last one for story 2."""
    names = re.findall(r"^\d+\. ([^:\n]+):", prompt, flags=re.MULTILINE)
    blocks = [
        f"### {name}\nReason: {'The first reads more smoothly.' if i < len(names) - 1 else 'The second has a twist.'}"
        f"\nVote: Story {1 if i < len(names) - 1 else 2}"
        for i, name in enumerate(names)
    ]
    return "\n".join(blocks)


def _unsure_about_story_1(text: str, offset: int, token: str) -> float:
    """Tokens of a block that votes for story 1 are unlikely (p ~ 0.14); the rest are sure (p ~ 0.95)."""
    start = max(text.rfind("###", 0, offset + len(token)), 0)
    end = text.find("###", start + 3)
    block = text[start: end if end != -1 else len(text)]
    return -2.0 if "Vote: Story 1" in block else -0.05


@pytest.mark.parametrize(("use_logprobs", "expected"), [(False, 1.0), (True, 2.0)])
def test_confidence_weighting_lets_a_sure_minority_outvote_an_unsure_majority(
    pairwise_study, openai_server, use_logprobs, expected
):
    openai_server.behaviour = Behaviour(answer=_panel_answer, logprob=_unsure_about_story_1)
    judge = _judge(openai_server, f"panel-{use_logprobs}", "roleplay",
                   {"dynamic_roles": 0, "use_logprobs": use_logprobs})
    run = _run(pairwise_study, judge)

    assert run.status == "done"
    ratings = list(run.ratings.order_by("item__position"))
    # Two of three roles vote A: a plain majority picks A (1); weighted, about 0.14 + 0.16 < 0.95: B (2) wins.
    assert [(r.status, r.score) for r in ratings] == [("ok", expected), ("ok", expected)]
    asked = [b for b in openai_server.stats.bodies if "Play each of the following roles" in b["messages"][-1]["content"]]
    assert len(asked) == 2 and all(bool(b.get("logprobs")) is use_logprobs for b in asked)
    details = ratings[0].history[-1]["details"]
    assert [v["role"] for v in details["panel"]] == ["General Public", "Critic", "Editor"]
    assert [v["choice"] for v in details["panel"]] == ["A", "A", "B"]
    assert details["weighted"] is use_logprobs
    if use_logprobs:
        confidences = [v["confidence"] for v in details["panel"]]
        assert confidences[0] == pytest.approx(0.1353, abs=1e-3) and confidences[2] == pytest.approx(0.9512, abs=1e-3)
        # The critic's block ends in the newline of the editor's "\n###" token, a sure one: a token
        # on a boundary counts for both blocks (roleplay.with_confidences).
        assert 0.1353 < confidences[1] < 0.2
        assert details["score_a"] == pytest.approx(confidences[0] + confidences[1])
        assert details["score_b"] == pytest.approx(confidences[2]) and details["choice"] == "B"
        assert "Editor: B (confidence 0.951)" in ratings[0].rationale
        assert "weighted by log-probability confidence" in ratings[0].rationale
    else:
        assert [v["confidence"] for v in details["panel"]] == [None, None, None]
        assert (details["score_a"], details["score_b"], details["choice"]) == (2.0, 1.0, "A")
        assert "one vote per role" in ratings[0].rationale


def test_a_tied_panel_on_a_forced_choice_study_is_no_choice(pairwise_study, openai_server):
    two_roles = [{"name": "Critic", "description": "Checks wording."}, {"name": "Editor", "description": "Checks flow."}]
    openai_server.behaviour = Behaviour(answer=_panel_answer)
    judge = _judge(openai_server, "panel-tie", "roleplay",
                   {"dynamic_roles": 0, "use_logprobs": False, "static_roles": two_roles})
    run = _run(pairwise_study, judge)

    rating = run.ratings.first()
    assert (rating.status, rating.score) == ("unparseable", None)
    assert "A 1.000 vs B 1.000 -> tie" in rating.rationale
    assert "[tie: not a choice this study offers]" in rating.rationale


def test_a_pointwise_panel_is_refused_on_a_pairwise_study_naming_the_mode(pairwise_study, openai_server):
    from llmjudge.runs.lifecycle import RunError, judge_run_start

    judge = _judge(openai_server, "panel-pointwise", "roleplay", {"dynamic_roles": 0, "mode": "pointwise"})
    with pytest.raises(RunError, match="needs mode=pairwise"):
        judge_run_start(study=pairwise_study, judge=judge, enqueue=False)
    assert not judge.runs.exists()


def test_a_pairwise_rerun_asks_nothing_again(pairwise_study, openai_server):
    from llmjudge.runs.lifecycle import judge_run_execute_inline, judge_run_resume

    openai_server.behaviour = Behaviour(answer=_prometheus_answer)
    run = _run(pairwise_study, _judge(openai_server, "prometheus-again", "rubric", {}))
    before = openai_server.stats.requests

    assert judge_run_resume(run=run, enqueue=False) == 0
    assert judge_run_execute_inline(run=run).calls == 0
    assert openai_server.stats.requests == before


def test_a_plain_judge_on_a_pairwise_study_reads_the_raters_text_and_stores_its_choice(pairwise_study, openai_server):
    from annotations.rendering import llm_prompt

    openai_server.behaviour = Behaviour(answer=lambda prompt, body: "Story B is tighter. [[B]]"
                                        if "Only one passenger" in prompt else "A")
    run = _run(pairwise_study, _judge(openai_server, "plain-ab", "plain", {}))

    ratings = {r.item.external_id: r for r in run.ratings.select_related("item", "question")}
    assert {k: (r.status, r.score) for k, r in ratings.items()} == {"p1": ("ok", 1.0), "p2": ("ok", 2.0)}
    for rating in ratings.values():
        assert rating.prompt == llm_prompt(study=pairwise_study, item=rating.item, question=rating.question)
