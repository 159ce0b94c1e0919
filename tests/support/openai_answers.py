"""What the test OpenAI server (tests/support/openai_server.py) says: the predictable default answer,
hostile texts a real server may send, reasoning traces and the forms reasoning models wrap them in,
and the shapes an answer is sent in (logprobs, a model cut at max_tokens, streamed chunks).

All pure functions of their arguments, so a test can compute what the server will say. An answer
function takes ``(prompt_text, request_json)`` and returns the answer text.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import math
import re
from collections.abc import Callable
from typing import Any

AnswerFn = Callable[[str, dict[str, Any]], str]

REFUSAL_TEXT = (
    "As an AI language model, I cannot rate the story fragment because I do not have "
    "personal preferences or the ability to experience enjoyment."
)
# What Behaviour.hostile_kind may name; "huge" and "adversarial" are Behaviour.answer_bytes long.
HOSTILE_KINDS = ("nul", "surrogate", "huge", "adversarial")
# Where a reasoning model's trace ends up when the server does not split it off: in the content,
# wrapped as DeepSeek-R1/QwQ write it ("think"), with the opening tag left in the prompt by the chat
# template ("close_only"), or in gpt-oss's harmony channels, raw ("harmony") or with the special
# tokens dropped by a server that skips them when decoding ("harmony_stripped").
INLINE_STYLES = ("think", "close_only", "harmony", "harmony_stripped")
# Where a server puts a reasoning model's trace beside the answer: vLLM's reasoning parsers and
# DeepSeek's API use "reasoning_content", newer vLLM and other servers "reasoning".
REASONING_FIELDS = ("reasoning_content", "reasoning")
# A streamed answer is cut into at most this many deltas (several tokens each for a 1 MB answer).
_MAX_DELTAS = 2000
# The words a model cut at max_tokens was still going to say after its answer.
_RAMBLE = "and on reflection the story could be read in another way entirely since".split()
# How many tokens a forced "length" answer keeps when the request sets no max_tokens (the legacy
# completions endpoint's default).
DEFAULT_MAX_TOKENS = 16


def prompt_text_of(request_json: dict[str, Any]) -> str:
    """The text the default answer is keyed on: the last user message, or the prompt."""
    if "messages" in request_json:
        for message in reversed(request_json.get("messages") or []):
            if isinstance(message, dict) and message.get("role") == "user":
                return content_text(message.get("content"))
        return ""
    prompt = request_json.get("prompt", "")
    if isinstance(prompt, list):
        prompt = prompt[0] if prompt else ""
    return prompt if isinstance(prompt, str) else json.dumps(prompt)


def content_text(content: Any) -> str:
    """A message's text, whether a string or a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def count_tokens(text: str) -> int:
    """Tokens as this server counts them: words."""
    return len(text.split())


def expected_score(prompt_text: str) -> int:
    """The score 1..5 the default answer gives for ``prompt_text`` (the last user message)."""
    return hashlib.sha256(prompt_text.encode("utf-8")).digest()[0] % 5 + 1


def decoy_score(prompt_text: str) -> int:
    """A score 1..5 that is never ``expected_score(prompt_text)``: the default trace weighs it and drops it."""
    return expected_score(prompt_text) % 5 + 1


def default_answer(prompt_text: str, request_json: dict[str, Any]) -> str:
    """A ChatGPT-like answer whose score tests can predict with ``expected_score``."""
    return f"I would rate it {expected_score(prompt_text)} out of 5. The sentences fit together."


def first_position_answer(prompt_text: str, request_json: dict[str, Any]) -> str:
    """A pairwise judge with pure position bias: it picks the response shown first (A), whatever it says."""
    return "Both are fine; I prefer the first one.\nAnswer: A"


def nul_answer(prompt_text: str, request_json: dict[str, Any]) -> str:
    """The default answer with a NUL character in it (sent as the JSON escape ``\\u0000``).

    Python keeps it in a str; PostgreSQL text columns refuse it.
    """
    return f"I would rate it {expected_score(prompt_text)} out of 5.\x00 The sentences fit together."


def surrogate_answer(prompt_text: str, request_json: dict[str, Any]) -> str:
    """The default answer with a lone high surrogate in it.

    ``json.dumps`` writes it as the escape ``\\ud800``, as a real server may; ``json.loads`` turns that
    back into a str that cannot be encoded as UTF-8 (``str.encode`` raises UnicodeEncodeError).
    """
    return f"I would rate it {expected_score(prompt_text)} out of 5. \ud800 The sentences fit together."


def huge_answer(size: int) -> AnswerFn:
    """An answer function giving the default answer followed by filler, ``size`` characters in all
    (ASCII, so as many bytes): the verdict is in its first sentence, so only size can hurt."""

    def answer(prompt_text: str, request_json: dict[str, Any]) -> str:
        head = default_answer(prompt_text, request_json)
        filler = " The sentences fit together."
        repeats = max(size - len(head), 0) // len(filler) + 1
        return (head + filler * repeats)[:size]

    return answer


@functools.lru_cache(maxsize=4)
def _adversarial_text(size: int) -> str:
    # Each piece aims at a regex habit: long digit runs (int() of more than 4300 digits raises
    # ValueError), labels never followed by a score, unclosed nesting that backtracking parsers
    # re-scan, unclosed think tags, fractions and decimals that chain without end, runs of
    # whitespace and emphasis. No honest verdict anywhere: the right reading is "unparseable".
    pieces = (
        "9" * 5000 + " ",
        "Score: " * 400,
        "[" * 2000 + "]" * 1000,
        "(" * 2000 + "Rating: ",
        "<think>" * 400,
        "[RESULT] " * 300,
        "1/" * 1000 + " ",
        "4 out of " * 300,
        "1." * 1500 + " ",
        " \t" * 1500 + "\n",
        "**" * 1000 + " ",
        "Rating: -" * 300,
        "[[" * 1000 + " ",
    )
    block = "".join(pieces)
    return (block * (size // len(block) + 1))[:size]


def adversarial_answer(size: int) -> AnswerFn:
    """An answer function giving ``size`` characters (ASCII) of text crafted against regex parsers:
    long digit runs, "Score: " over and over, deep unclosed brackets, "<think>" without close, and
    the like, with no honest verdict (a parser should call it unparseable, and quickly)."""

    def answer(prompt_text: str, request_json: dict[str, Any]) -> str:
        return _adversarial_text(size)

    return answer


def hostile_answer(kind: str, size: int) -> AnswerFn:
    """The answer function for one of ``HOSTILE_KINDS``."""
    if kind == "nul":
        return nul_answer
    if kind == "surrogate":
        return surrogate_answer
    if kind == "huge":
        return huge_answer(size)
    if kind == "adversarial":
        return adversarial_answer(size)
    raise ValueError(f"hostile kind must be one of {HOSTILE_KINDS}")


def default_reasoning(prompt_text: str, request_json: dict[str, Any]) -> str:
    """A reasoning trace that weighs ``decoy_score`` and drops it: a parser that reads the trace as the
    answer gets the wrong score, one that reads only the answer gets ``expected_score``."""
    decoy = decoy_score(prompt_text)
    return (
        f"The user wants a score from 1 to 5. My first thought is Score: {decoy}, since the middle drags. "
        f"Rating: {decoy}/5 would be harsh though; let me reread it before I answer."
    )


def with_inline_reasoning(style: str, trace: str, answer: str) -> str:
    """The content a server sends when the trace stays in it, in one of ``INLINE_STYLES``."""
    if style == "think":
        return f"<think>\n{trace}\n</think>\n\n{answer}"
    if style == "close_only":
        return f"{trace}\n</think>\n\n{answer}"
    if style == "harmony":
        return (
            f"<|channel|>analysis<|message|>{trace}<|end|>"
            f"<|start|>assistant<|channel|>final<|message|>{answer}<|return|>"
        )
    if style == "harmony_stripped":
        return f"analysis{trace}assistantfinal{answer}"
    raise ValueError(f"inline reasoning style must be one of {INLINE_STYLES}")


def cut_at_length(text: str, max_tokens: int) -> str:
    """``text`` as a model stopped at ``max_tokens`` words says it: if the answer is shorter, the model
    rambles on past it until the budget runs out (so the result always has ``max_tokens`` words)."""
    words = text.split()
    while len(words) < max_tokens:
        words += _RAMBLE
    return " ".join(words[:max_tokens])


_TOKENS = re.compile(r"\s*\S+|\s+")


def answer_tokens(text: str) -> list[tuple[int, str]]:
    """(offset, token) pieces that spell ``text`` exactly, leading whitespace attached to the word as
    BPE tokenizers do (" rate"), so concatenating the tokens gives the answer back, as with OpenAI."""
    return [(m.start(), m.group()) for m in _TOKENS.finditer(text)]


def chat_logprobs(text: str, top: int, logprob: Callable[[str, int, str], float]) -> dict[str, Any]:
    entries = []
    for offset, token in answer_tokens(text):
        value = float(logprob(text, offset, token))
        alternatives = [{"token": token, "logprob": value, "bytes": list(token.encode())}]
        word = token.strip()
        if word.isdigit():
            # Other scale points as less likely alternatives, for probability-weighted scoring.
            lead = token[: len(token) - len(word)]
            alternatives += [
                {"token": f"{lead}{d}", "logprob": -3.0 - abs(d - int(word)), "bytes": list(f"{lead}{d}".encode())}
                for d in range(1, 6)
                if str(d) != word
            ]
        entries.append({**alternatives[0], "top_logprobs": alternatives[: max(top, 0)]})
    return {"content": entries, "refusal": None}


def completion_logprobs(text: str, top: int) -> dict[str, Any]:
    tokens = text.split(" ")
    offsets = list(itertools.accumulate([0] + [len(t) + 1 for t in tokens[:-1]]))
    return {
        "tokens": tokens,
        "token_logprobs": [-0.05] * len(tokens),
        "top_logprobs": [{t: -0.05} for t in tokens] if top else None,
        "text_offset": offsets,
    }


def generate(answer: str, trace: str | None, budget: int | None, force: bool) -> tuple[str | None, str | None, str]:
    """(content, trace, finish_reason) of a model that thinks ``trace`` (None: no separate trace) and
    then says ``answer`` within ``budget`` words; ``force`` makes it run out of budget."""
    thought = trace.split() if trace is not None else []
    if budget is None or (not force and len(thought) + count_tokens(answer) <= budget):
        return answer, trace, "stop"
    left = budget - len(thought)
    if left <= 0 and trace is not None:
        # The budget ran out mid-thought: vLLM then sends the partial trace and null content.
        return None, " ".join(thought[:budget]), "length"
    content = cut_at_length(answer, left) if force else " ".join(answer.split()[:left])
    return content, trace, "length"


def _delta_groups(text: str) -> list[tuple[int, int, str]]:
    """(first token, end token, text) of each streamed delta: one token each, or several for a long answer."""
    tokens = [token for _, token in answer_tokens(text)]
    step = max(1, math.ceil(len(tokens) / _MAX_DELTAS))
    return [(i, min(i + step, len(tokens)), "".join(tokens[i : i + step])) for i in range(0, len(tokens), step)]


def _choice_chunks(choice: dict[str, Any], chat: bool) -> list[dict[str, Any]]:
    index, finish = choice["index"], choice["finish_reason"]
    if not chat:
        pieces = [
            {"index": index, "text": text, "logprobs": None, "finish_reason": None}
            for *_, text in _delta_groups(choice["text"])
        ]
        return [*pieces, {"index": index, "text": "", "logprobs": None, "finish_reason": finish}]
    message = choice["message"]
    chunks = [{"index": index, "delta": {"role": "assistant", "content": ""}, "logprobs": None, "finish_reason": None}]
    for name in REASONING_FIELDS:
        if message.get(name):
            chunks += [
                {"index": index, "delta": {name: text}, "logprobs": None, "finish_reason": None}
                for *_, text in _delta_groups(message[name])
            ]
    entries = (choice.get("logprobs") or {}).get("content")
    for start, end, text in _delta_groups(message.get("content") or ""):
        logprobs = {"content": entries[start:end], "refusal": None} if entries is not None else None
        chunks.append({"index": index, "delta": {"content": text}, "logprobs": logprobs, "finish_reason": None})
    return [*chunks, {"index": index, "delta": {}, "logprobs": None, "finish_reason": finish}]


def stream_events(completion: dict[str, Any], chat: bool, request_json: dict[str, Any]) -> list[bytes]:
    """The completion as server-sent events: one choice's deltas after another, then the usage chunk
    if the client asked for it (``stream_options.include_usage``, as OpenAI), then ``[DONE]``."""
    head = {name: completion[name] for name in ("id", "created", "model", "system_fingerprint")}
    head["object"] = "chat.completion.chunk" if chat else "text_completion"
    options = request_json.get("stream_options")
    with_usage = isinstance(options, dict) and bool(options.get("include_usage"))
    tail = {"usage": None} if with_usage else {}
    events = [
        {**head, "choices": [chunk], **tail} for choice in completion["choices"] for chunk in _choice_chunks(choice, chat)
    ]
    if with_usage and "usage" in completion:
        events.append({**head, "choices": [], "usage": completion["usage"]})
    return [b"data: " + json.dumps(event).encode("utf-8") + b"\n\n" for event in events] + [b"data: [DONE]\n\n"]
