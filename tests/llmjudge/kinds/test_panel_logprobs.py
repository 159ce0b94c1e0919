"""How the pipeline's panel parser treats the log-probabilities a backend returns (or does not)."""
from __future__ import annotations

from llmjudge.kinds.roleplay.builder import panel_votes
from llmjudge.kinds.roleplay.roles import Role

ROLES = [Role("Critic", "Checks wording.", "static"), Role("Editor", "Checks flow.", "static")]
ANSWER = "### Critic\nReason: Smoother.\nVote: Story 1\n### Editor\nReason: A twist.\nVote: Story 2"


def _tokens(text: str, logprob: float) -> list[dict]:
    return [{"token": ch, "logprob": logprob} for ch in text]


def test_tokens_that_spell_the_answer_give_each_role_its_confidence():
    votes, usable, note = panel_votes(ANSWER, ROLES, None, _tokens(ANSWER, -0.5))
    assert [v.choice for v in votes] == ["A", "B"]
    assert [round(v.confidence, 4) for v in votes] == [0.6065, 0.6065]
    assert usable is not None and note == ""


def test_no_logprobs_asked_means_plain_votes_without_a_note():
    votes, usable, note = panel_votes(ANSWER, ROLES, None, None)
    assert [v.confidence for v in votes] == [None, None] and usable is None and note == ""


def test_an_empty_logprob_list_is_said_and_every_vote_weighs_one():
    votes, usable, note = panel_votes(ANSWER, ROLES, None, [])
    assert usable is None and note == "the backend returned no log-probabilities: one vote per role"


def test_tokens_that_do_not_spell_the_answer_are_not_used_and_the_rating_says_why():
    votes, usable, note = panel_votes(ANSWER, ROLES, None, _tokens(ANSWER.upper(), -0.5))
    assert usable is None and [v.confidence for v in votes] == [None, None]
    assert note.startswith("log-probabilities not used (the log-probability tokens do not spell the answer text")
