"""Persona (CINEMETRIC) judge: appendix-B prompt structure per method, character and verification
parsing on real-looking answers, the answer parser and the majority vote's tie rule."""

from __future__ import annotations

import pytest

from llmjudge.kinds.persona import prompts as pe
from llmjudge.kinds.persona.prompts import Character, TrainingExample
from llmjudge.parsing import OK, REFUSED, UNPARSEABLE, ParsedScore

DEMOGRAPHICS = {"gender": "female", "age": "55-64", "education": "some college, no degree", "parent": "yes", "race": ""}
EXAMPLES = [TrainingExample("The phone was on the table.", 2), TrainingExample("Marta still climbs the steps.", 4.5)]
Q = "How enjoyable do you find the story fragment?"
MULAN = Character("Mulan", "Mulan (1998)", "A disciplined, honor-driven woman aligned with the user's parenting role.")


def _in_order(text, sections):
    positions = [text.index(s) for s in sections]
    assert positions == sorted(positions), positions


def test_proposal_prompt_with_training_examples_follows_b11():
    prompt = pe.character_proposal_prompt(demographics=DEMOGRAPHICS, training_examples=EXAMPLES, question=Q)
    _in_order(
        prompt,
        [
            "GOAL:\nYou are a movie character matching expert. Your goal is to suggest 5 well-known movie characters that match a user profile.",
            "USER'S PROFILE:\n- gender: female\n- age: 55-64\n- education: some college, no degree\n- parent: yes\n\n",
            "TRAINING EXAMPLES:\nHere are some examples of how this user rated stories:\n",
            "Story:\nThe phone was on the table.\nQuestion: How enjoyable do you find the story fragment?\nAnswer: 2\n\nStory:\nMarta still climbs the steps.",
            "Answer: 4.5",
            "TASK:\nBased on both the user's profile AND the examples shown above, suggest 5 movie characters who would likely have similar perspectives on the question \"How enjoyable do you find the story fragment?\".",
            "IMPORTANT RULES:\n- Only suggest real characters from real, widely known movies.",
            "- Make sure all 5 characters are DIFFERENT.",
            "OUTPUT FORMAT\nFormat your response EXACTLY as follows:\nCharacter Name:[character name 1]\nMovie Title:[movie title 1]\nReasoning:[",
        ],
    )
    assert "race" not in prompt


def test_proposal_prompt_without_training_examples_follows_b12():
    prompt = pe.character_proposal_prompt(demographics=DEMOGRAPHICS, training_examples=None, question=Q, n=4)
    _in_order(prompt, ["GOAL:", "suggest 4 well-known", "TASK:\nBased on the following user profile", "- gender: female", "IMPORTANT RULES:", "OUTPUT FORMAT"])
    assert "TRAINING EXAMPLES" not in prompt and "Reasoning" not in prompt
    assert prompt.endswith("Character Name:[character name 1]\nMovie Title:[movie title 1]")


def test_proposal_prompt_errors():
    with pytest.raises(ValueError, match="has no demographics"):
        pe.character_proposal_prompt(demographics={}, training_examples=None, question=Q)
    with pytest.raises(ValueError, match="pass None for the 'without training examples' ablation"):
        pe.character_proposal_prompt(demographics=DEMOGRAPHICS, training_examples=[], question=Q)


GPT_LINES = """1. Character Name: Mulan
Movie Title: Mulan (1998)
Reasoning: A disciplined, honor-driven Asian woman with strong moral values.

2. Character Name: Helen Parr / Elastigirl
Movie Title: The Incredibles
Reasoning: A pragmatic parent and protector.
"""
ONE_LINE = "Character Name:[Evelyn Wang] Movie Title:[Everything Everywhere All at Once] Reasoning:[A resilient immigrant navigating family.]"
MARKDOWN = """**Character Name:** Atticus Finch
**Movie Title:** To Kill a Mockingbird
**Reasoning:** Principled father who values fairness.

**Character Name:** Marge Gunderson
**Movie Title:** *Fargo*
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            GPT_LINES,
            [
                Character("Mulan", "Mulan (1998)", "A disciplined, honor-driven Asian woman with strong moral values."),
                Character("Helen Parr / Elastigirl", "The Incredibles", "A pragmatic parent and protector."),
            ],
        ),
        (ONE_LINE, [Character("Evelyn Wang", "Everything Everywhere All at Once", "A resilient immigrant navigating family.")]),
        (
            MARKDOWN,
            [
                Character("Atticus Finch", "To Kill a Mockingbird", "Principled father who values fairness."),
                Character("Marge Gunderson", "Fargo", ""),
            ],
        ),
        ("Character Name: Mulan\nMovie Title: Mulan\nCharacter Name: mulan\nMovie Title: MULAN", [Character("Mulan", "Mulan", "")]),
        ("Character Name: Nobody\nReasoning: no movie given", []),
        ("I cannot suggest characters for a real person.", []),
        ("", []),
    ],
)
def test_parse_characters(text, expected):
    assert pe.parse_characters(text) == expected


def test_verification_prompt_follows_b13():
    prompt = pe.verification_prompt(MULAN)
    assert prompt.startswith('TASK:\nYou are a movie expert. You should verify if the character "Mulan" is a character from the movie "Mulan (1998)".')
    assert prompt.endswith("3. Do not provide any explanation, just respond with VALID or INVALID.")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("VALID", True),
        ("Valid.", True),
        ("**VALID**", True),
        ("INVALID", False),
        ("invalid - the character is from a different movie", False),
        ("Not valid.", False),
        ("VALID or INVALID", None),
        ("I am not sure.", None),
        ("", None),
    ],
)
def test_parse_verification(text, expected):
    assert pe.parse_verification(text) is expected


def test_select_characters_keeps_the_first_three_confirmed():
    chars = [Character(str(i), "M", "w") for i in range(5)]
    assert pe.select_characters(chars, [True, None, False, True, True]) == [chars[0], chars[3], chars[4]]
    assert pe.select_characters(chars, [True, True, True, True, True]) == chars[:3]
    assert pe.select_characters(chars, [False, None, False, True, None]) == [chars[3]]
    with pytest.raises(ValueError, match="5 candidates but 2 verdicts"):
        pe.select_characters(chars, [True, True])


def test_roleplay_prompt_with_reasoning_follows_b21():
    prompt = pe.roleplay_prompt(character=MULAN, item_text="Someone knocked.", question=Q, scale=(1, 5))
    _in_order(
        prompt,
        [
            "### GOAL: ###\nYou should role-play the following movie character",
            "### MOVIE CHARACTER: ###\nYou should role-play Mulan from the movie Mulan (1998).",
            "You must fully embody the role of Mulan throughout the entire evaluation process.",
            "### CHARACTER SELECTION RATIONALE: ###\nThe reason why this character was chosen is as follows:\n" + MULAN.why,
            "### TASK: ###\nAs Mulan, evaluate the following story.\nQuestion: How enjoyable do you find the story fragment?\nStory:\nSomeone knocked.\n(End of story)\nYour choice is an integer between 1 and 5.",
            "### INSTRUCTION: ###\nConsider the character selection rationale above",
            "### OUTPUT FORMAT: ###\nYour output should have the following format:\nReasoning: [",
            "Character's aspect: [",
            "Answer: [Your choice]",
        ],
    )


def test_roleplay_prompt_without_reasoning_follows_b22():
    prompt = pe.roleplay_prompt(character=Character("Mulan", "Mulan", ""), item_text="x", question=Q, scale=(1, 5), with_reasoning=False)
    _in_order(prompt, ["### GOAL: ###", "### MOVIE CHARACTER: ###", "### TASK: ###\nAs Mulan, evaluate", "### OUTPUT FORMAT: ###", "Answer: [Your choice]"])
    assert "RATIONALE" not in prompt and "### INSTRUCTION" not in prompt


def test_roleplay_prompt_without_names_follows_b23_and_hides_the_character():
    prompt = pe.roleplay_prompt(
        character=MULAN, item_text="x", question=Q, scale=(1, 5), with_name=False, demographics=DEMOGRAPHICS
    )
    _in_order(
        prompt,
        [
            "### TASK: ###\nYour task is to evaluate the following story from the perspective of a user who has the following characteristics: - gender: female",
            "Question: How enjoyable",
            "### USER RATIONALE: ###\n" + MULAN.why,
            "### OUTPUT FORMAT: ###\nReasoning: [",
            "User's aspect: [",
            "Answer: [Your choice]",
        ],
    )
    assert "Mulan" not in prompt


def test_roleplay_prompt_errors():
    with pytest.raises(ValueError, match="needs the rater's demographics"):
        pe.roleplay_prompt(character=MULAN, item_text="x", question=Q, scale=(1, 5), with_name=False)
    with pytest.raises(ValueError, match="has no selection rationale"):
        pe.roleplay_prompt(character=Character("A", "B", ""), item_text="x", question=Q, scale=(1, 5))


def test_baseline_prompts_follow_b24_and_b25():
    personalized = pe.personalized_judge_prompt(demographics=DEMOGRAPHICS, item_text="x", question=Q, scale=(0, 4))
    _in_order(personalized, ["### TASK: ###\nYour task is to evaluate the following story from the perspective of a user", "- age: 55-64", "Your choice is an integer between 0 and 4.", "### OUTPUT FORMAT: ###\nAnswer: [Your choice]"])
    plain = pe.plain_judge_prompt(item_text="x", question=Q, scale=(1, 5), noun="comment")
    assert plain == (
        "### TASK: ###\nEvaluate the following comment.\nQuestion: How enjoyable do you find the story fragment?\n"
        "Comment:\nx\n(End of comment)\nYour choice is an integer between 1 and 5.\n### OUTPUT FORMAT: ###\nAnswer: [Your choice]"
    )


def test_methods_are_the_papers_table_rows():
    assert list(pe.METHODS) == ["cinemetric", "no_training_examples", "no_character_names", "personalized_judge", "plain"]
    assert pe.method("no_character_names") == pe.MethodSpec(
        characters=True, training_examples=True, with_name=False, with_reasoning=True, demographics=True
    )
    with pytest.raises(ValueError, match="unknown persona method 'x' \\(known: cinemetric, "):
        pe.method("x")


MULAN_ANSWER = (
    "Reasoning: As a soldier who values honor, Mulan finds the 3 a.m. messages gripping.\n"
    "Character's aspect: Courage and loyalty.\n"
    "Answer: 4"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            MULAN_ANSWER,
            ParsedScore(4.0, OK, "As a soldier who values honor, Mulan finds the 3 a.m. messages gripping.\nCharacter's aspect: Courage and loyalty."),
        ),
        ("Reasoning: Dull.\nAnswer: [2]", ParsedScore(2.0, OK, "Dull.")),
        ("**Reasoning:** Warm ending.\n**Answer:** 5 (highest)", ParsedScore(5.0, OK, "Warm ending.")),
        ("Reasoning: Fine.\nAnswer: 3.5", ParsedScore(3.5, OK, "Fine.")),
        ("Reasoning: Would not care.\nAnswer:", ParsedScore(None, UNPARSEABLE, "Would not care.")),
        ("Reasoning: Loves it.\nAnswer: 9", ParsedScore(None, UNPARSEABLE, "Loves it.")),
        ("Answer: 1", ParsedScore(1.0, OK, "")),
        ("I would rate it 4.", ParsedScore(4.0, OK, "I would rate it 4.")),
        (
            "I'm sorry, but I can't role-play a real person.",
            ParsedScore(None, REFUSED, "I'm sorry, but I can't role-play a real person."),
        ),
    ],
)
def test_parse_answer(text, expected):
    assert pe.parse_answer(text, scale=(1, 5)) == expected
