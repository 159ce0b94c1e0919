"""The kinds' functions composed the way the pipeline will call them, with scripted model answers:
each step's output is the next step's input, so a contract mismatch shows up here first."""

from __future__ import annotations

import numpy as np
import pytest

from evalhub.stats.agreement import majority_vote
from evalhub.stats.prediction_metrics import average_metrics, per_rater_metrics
from llmjudge.kinds import options_for
from llmjudge.kinds.persona import prompts as pe
from llmjudge.kinds.personalized import prompts as ps
from llmjudge.kinds.roleplay.clustering import dedupe_roles
from llmjudge.kinds.roleplay.prompts import panel_prompt
from llmjudge.kinds.roleplay.roles import parse_roles, static_roles
from llmjudge.kinds.roleplay.votes import aggregate_scores, parse_panel
from llmjudge.kinds.rubric import prompts as rb

ITEMS = {f"s{i}": f"Story number {i}. The lighthouse stays lit." for i in range(8)}
RATINGS = {
    "w1": {"s0": 1, "s1": 2, "s2": 3, "s3": 4, "s4": 5, "s5": 2},
    "w2": {"s2": 5, "s3": 4, "s4": 4, "s5": 3, "s6": 2, "s7": 1},
}
QUESTION = "How enjoyable do you find the story fragment?"


def test_personalized_flow_from_split_to_per_rater_metrics():
    options = options_for("personalized", {"profile_size": 2, "split_seed": 3})
    split = ps.split_profile(RATINGS, k=options.profile_size, seed=options.split_seed)
    pred: dict[str, dict[str, float | None]] = {}
    for rater, held in split.held_out.items():
        profile = [ps.ProfileEntry(ITEMS[i], "", RATINGS[rater][i]) for i in split.profile[rater]]
        pred[rater] = {}
        for item in held:
            prompt = ps.personalized_prompt(profile=profile, item_text=ITEMS[item], question=QUESTION, scale=(1, 5))
            assert ITEMS[item] in prompt.split("Story Query")[1]
            # A scripted model that is right for w1 and one point off (or refuses) for w2.
            truth = RATINGS[rater][item]
            answer = f"[Review] Reads well. [Score] {truth}" if rater == "w1" else (
                f"[Review] Meh. [Score] {min(truth + 1, 5)}" if item != held[0] else "I cannot do that."
            )
            pred[rater][item] = ps.parse_personalized(answer, scale=(1, 5)).score
    true = {rater: {i: RATINGS[rater][i] for i in held} for rater, held in split.held_out.items()}
    rows = per_rater_metrics(true, pred)
    assert [(r.rater, r.n, r.n_missing, r.accuracy, r.mae) for r in rows][0] == ("w1", 4, 0, 1.0, 0.0)
    assert rows[1].n == 3 and rows[1].n_missing == 1 and rows[1].accuracy == 0.0
    summary = average_metrics(rows)
    assert summary.n_items == 7 and summary.accuracy.value == 0.5


def test_persona_flow_from_proposal_to_majority_vote():
    demographics = {"age": "25-34", "gender": "male"}
    train = [pe.TrainingExample(ITEMS["s0"], 1), pe.TrainingExample(ITEMS["s1"], 2)]
    proposal = pe.character_proposal_prompt(demographics=demographics, training_examples=train, question=QUESTION)
    assert "Answer: 1" in proposal
    answer = "\n\n".join(
        f"Character Name: {name}\nMovie Title: {movie}\nReasoning: {why}"
        for name, movie, why in [
            ("Ebenezer Scrooge", "A Christmas Carol", "A harsh critic."),
            ("Made Up Person", "No Such Film", "Invented."),
            ("Anton Ego", "Ratatouille", "A food critic who rarely praises."),
            ("Miranda Priestly", "The Devil Wears Prada", "Exacting standards."),
            ("Sherlock Holmes", "Sherlock Holmes", "Notices every flaw."),
        ]
    )
    candidates = pe.parse_characters(answer)
    verdicts = [pe.parse_verification(a) for a in ["VALID", "INVALID", "Valid.", "VALID", "VALID"]]
    chosen = pe.select_characters(candidates, verdicts)
    assert [c.name for c in chosen] == ["Ebenezer Scrooge", "Anton Ego", "Miranda Priestly"]
    prompts = [pe.roleplay_prompt(character=c, item_text=ITEMS["s5"], question=QUESTION, scale=(1, 5)) for c in chosen]
    assert all(c.name in p for c, p in zip(chosen, prompts, strict=True))
    answers = ["Reasoning: Humbug.\nCharacter's aspect: thrift.\nAnswer: 2", "Reasoning: Bland.\nAnswer: 3", "Answer: 2"]
    scores = [pe.parse_answer(a, scale=(1, 5)).score for a in answers]
    assert majority_vote(scores) == 2.0


def test_roleplay_flow_from_roles_to_a_weighted_panel_score():
    options = options_for("roleplay", {"dynamic_roles": 3})
    roles = static_roles({"static_roles_preset": options.static_roles_preset})
    generated = parse_roles(
        "1. Lighthouse Enthusiast: Loves maritime history.\n2. Lighthouse Fan: Loves maritime history!\n3. Night Nurse: Reads on breaks."
    )
    vectors = {r.text(): v for r, v in zip(roles + generated, np.eye(6), strict=True)}
    vectors[generated[1].text()] = vectors[generated[0].text()]  # the two lighthouse roles coincide
    kept = dedupe_roles(roles + generated, eps=options.eps, embed=lambda texts: np.array([vectors[t] for t in texts]))
    assert [r.name for r in kept] == ["General Public", "Critic", "Editor", "Lighthouse Enthusiast", "Night Nurse"]
    prompt = panel_prompt(kept, question=QUESTION, item=ITEMS["s3"], scale=(1, 5))
    assert all(f"{n}. {r.name}: " in prompt for n, r in enumerate(kept, start=1))
    answer = "".join(f"### {r.name}\nReason: fine.\nScore: {s}\n" for r, s in zip(kept, [4, 3, 4, 5, 2], strict=True))
    votes = parse_panel(answer, kept, scale=(1, 5))
    tokens = [{"token": answer[v.span[0] : v.span[1]], "logprob": -0.1 * n} for n, v in enumerate(votes)]
    result = aggregate_scores(votes, tokens, text=answer)
    weights = np.exp(-0.1 * np.arange(5))
    assert result.score == pytest.approx(float(weights @ np.array([4, 3, 4, 5, 2]) / weights.sum()))
    assert (result.n, result.n_abstain, result.weighted) == (5, 0, True)


def test_rubric_flow_on_a_demo_story_item():
    options = options_for("rubric", {})
    fields = {"prompt": "A lighthouse keeper realises the ships stopped coming.", "story": ITEMS["s1"]}
    instruction, response, reference = rb.ItemMapping(options.instruction, options.response, options.reference_field).apply(fields)
    prompt = rb.absolute_prompt(
        instruction=instruction, response=response, rubric=rb.shipped_rubrics()["likability"], reference_answer=reference, version=options.version
    )
    assert "###Reference Answer" not in prompt and fields["prompt"] in prompt and fields["story"] in prompt
    assert rb.parse_absolute("Feedback: Pleasant. [RESULT] 4").score == 4.0
