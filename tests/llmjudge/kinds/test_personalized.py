"""Personalized (PERSE) judge: seeded splits, clear errors, the paper's prompt structure, parsing."""

from __future__ import annotations

import pytest

from llmjudge.kinds.personalized.prompts import (
    ProfileEntry,
    ProfileSplit,
    parse_personalized,
    personalized_prompt,
    split_profile,
)
from llmjudge.parsing import OK, UNPARSEABLE, ParsedScore

RATINGS = {
    "w1": {f"s{i}": 3 for i in range(10)},
    "w2": {f"s{i}": 4 for i in range(5, 12)},
    "w3": ["s1", "s2", "s3"],
}


def test_split_is_deterministic_for_a_seed_and_covers_every_item_once():
    a = split_profile(RATINGS, k=2, seed=7)
    b = split_profile(RATINGS, k=2, seed=7)
    assert a == b and isinstance(a, ProfileSplit)
    for rater, items in RATINGS.items():
        assert len(a.profile[rater]) == 2
        assert sorted(a.profile[rater] + a.held_out[rater]) == sorted(items)


def test_split_changes_with_the_seed():
    splits = {tuple(split_profile(RATINGS, k=2, seed=s).profile["w1"]) for s in range(10)}
    assert len(splits) > 1


def test_a_raters_split_does_not_depend_on_the_other_raters_or_the_dict_order():
    alone = split_profile({"w1": RATINGS["w1"]}, k=3, seed=1)
    reordered = split_profile({"w2": RATINGS["w2"], "w1": dict(reversed(list(RATINGS["w1"].items())))}, k=3, seed=1)
    assert alone.profile["w1"] == reordered.profile["w1"]
    assert alone.held_out["w1"] == reordered.held_out["w1"]


def test_held_out_can_be_capped():
    split = split_profile(RATINGS, k=2, seed=0, n_held_out=3)
    assert [len(split.held_out[r]) for r in RATINGS] == [3, 3, 1]


def test_raters_with_too_few_ratings_are_named():
    with pytest.raises(ValueError) as err:
        split_profile(RATINGS, k=5, seed=0)
    assert str(err.value) == (
        "profile size k=5 needs at least 6 ratings per rater (k for the profile, 1 to predict); w3 has 3"
    )
    with pytest.raises(ValueError, match="w3 has 3"):
        split_profile(RATINGS, k=3, seed=0)
    split_profile(RATINGS, k=2, seed=0)


@pytest.mark.parametrize("k", [0, -1, 1.5, True, "2"])
def test_profile_size_must_be_a_positive_integer(k):
    with pytest.raises(ValueError, match="profile size k must be a positive integer"):
        split_profile(RATINGS, k=k, seed=0)


PROFILE = [
    ProfileEntry("The phone was on the table. I looked at the phone.", "Repetitive and aimless.", 2),
    ProfileEntry("Marta still climbs the hundred and twelve steps each evening.", "", 4.5),
]


def test_prompt_has_perses_sections_in_order():
    prompt = personalized_prompt(
        profile=PROFILE, item_text="Someone knocked.", question="How enjoyable do you find the story fragment?", scale=(1, 5)
    )
    sections = [
        "[Instruction] You will be presented with several stories, each accompanied by a review from the same critic.",
        "discern the reviewer's preferences",
        "Each review answers the question: How enjoyable do you find the story fragment?",
        "Each score is an integer between 1 and 5.",
        "Reviewer Preference",
        "[The Start of Story 0]\nThe phone was on the table. I looked at the phone.\n[The End of Story 0]\n[Review] Repetitive and aimless.\n[Score] 2",
        "[The Start of Story 1]\nMarta still climbs the hundred and twelve steps each evening.\n[The End of Story 1]\n[Score] 4.5",
        "Story Query",
        "Please follow the above critic and give a review for the given story.\n[The Start of Story]\nSomeone knocked.\n[The End of Story]",
        "Answer in this format: [Review] (the review this critic would write) [Score] (an integer between 1 and 5)",
    ]
    positions = [prompt.index(s) for s in sections]
    assert positions == sorted(positions)
    assert prompt.endswith(sections[-1])


def test_prompt_without_any_comment_speaks_of_scores():
    prompt = personalized_prompt(
        profile=[ProfileEntry("A", "", 3)], item_text="B", question="Q?", scale=(1, 5), noun="plot", noun_plural="plot summaries"
    )
    assert prompt.startswith("[Instruction] You will be presented with several plot summaries, each accompanied by a score")
    assert "Each score answers the question: Q?" in prompt
    assert "[Review]" not in prompt.split("Plot Query")[0]
    assert "[The Start of Plot 0]\nA\n[The End of Plot 0]\n[Score] 3" in prompt


def test_prompt_refuses_an_empty_profile_and_a_bad_scale():
    with pytest.raises(ValueError, match="at least one profile entry"):
        personalized_prompt(profile=[], item_text="B", question="Q?", scale=(1, 5))
    with pytest.raises(ValueError, match="minimum below maximum"):
        personalized_prompt(profile=PROFILE, item_text="B", question="Q?", scale=(5, 1))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "[Review] A chilling thriller that keeps you guessing till the very end. [Score] 4",
            ParsedScore(4.0, OK, "A chilling thriller that keeps you guessing till the very end."),
        ),
        (
            "[Review] Not one of the better efforts; the 3 brothers are flat.\n[Score] 2\n\nThis reflects the critic's taste.",
            ParsedScore(2.0, OK, "Not one of the better efforts; the 3 brothers are flat."),
        ),
        ("[Review]: Lovely.\n[Score]: 5/5", ParsedScore(5.0, OK, "Lovely.")),
        ("[Review] Solid pacing. [Score] [3]", ParsedScore(3.0, OK, "Solid pacing.")),
        ("[Review] Fine. [Score] 8", ParsedScore(None, UNPARSEABLE, "Fine.")),
        ("[Review] Fine. [Score] 7/10", ParsedScore(None, UNPARSEABLE, "Fine.")),
        ("[Review] I rated a 3 but cannot decide. [Score]", ParsedScore(None, UNPARSEABLE, "I rated a 3 but cannot decide.")),
        ("The critic would enjoy it. Score: 4", ParsedScore(4.0, OK, "The critic would enjoy it. Score: 4")),
        ("", ParsedScore(None, UNPARSEABLE, "")),
    ],
)
def test_parse_personalized(text, expected):
    assert parse_personalized(text, scale=(1, 5)) == expected
