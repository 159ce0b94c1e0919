"""The local transformers model: loads once per process and generates for a batch, on the CPU here."""
from __future__ import annotations


def test_model_is_loaded_once_per_process(tiny_model_path):
    from llmjudge.backends.local_model import LocalModel

    assert LocalModel.get(tiny_model_path) is LocalModel.get(tiny_model_path)
    assert LocalModel.get(tiny_model_path).device == "cpu"


def test_a_batch_of_prompts_of_different_lengths_gets_one_generation_each(tiny_model_path):
    from llmjudge.backends.local_model import LocalModel

    model = LocalModel.get(tiny_model_path)
    prompts = ["Please rate the story fragment", "You are given a news title . Question : How natural is the text ?"]
    out = model.generate(prompts, max_new_tokens=8, temperature=1.0, seed=3)
    assert len(out) == 2
    assert [g.prompt_tokens for g in out] == [5, 15]
    assert all(0 < g.completion_tokens <= 8 and g.text.strip() for g in out)
    again = model.generate(prompts, max_new_tokens=8, temperature=1.0, seed=3)
    assert [g.text for g in again] == [g.text for g in out]


def test_greedy_decoding_is_deterministic_without_a_seed(tiny_model_path):
    from llmjudge.backends.local_model import LocalModel

    model = LocalModel.get(tiny_model_path)
    first = model.generate(["I would rate it"], max_new_tokens=5, temperature=0)
    second = model.generate(["I would rate it"], max_new_tokens=5, temperature=0)
    assert first[0].text == second[0].text
