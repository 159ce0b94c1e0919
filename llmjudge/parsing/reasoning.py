"""Split a reasoning model's trace from its answer: ``split_reasoning(text) -> (reasoning, answer, cut_off)``.

Pure and shared: the parser never scores the trace, and the backends store it apart from the answer. The
forms read, each only where a model writes it (the trace opens the text):

- ``<think>…</think>`` (DeepSeek-R1, Qwen3, QwQ; also ``<thinking>``), and a lone ``</think>`` when the chat
  template already sent the opening tag: everything before it is the trace;
- gpt-oss channels: ``<|channel|>analysis<|message|>…<|end|>`` then ``<|channel|>final<|message|>…``, and the
  same with the special tokens stripped (``analysis…assistantfinal…``);
- Ollama's ``Thinking...`` … ``...done thinking.``.

``cut_off`` is True when the text ends inside the trace (max_tokens reached while reasoning): the answer is
then empty. Only ``str.find`` scans the text, so a megabyte costs well under a millisecond.
"""

from __future__ import annotations

import re

_THINK_OPEN = re.compile(r"\A\s*<(think|thinking)>", re.IGNORECASE)
_GPT_OSS_ANALYSIS = "<|channel|>analysis<|message|>"
_GPT_OSS_FINAL = "<|channel|>final<|message|>"
_GPT_OSS_END = "<|end|>"
# "analysisWe need ..." and "analysis The user ...": the channel's name, then the trace.
_GPT_OSS_STRIPPED = re.compile(r"\A\s*analysis(?=[^\S\n]?\S)")
_GPT_OSS_STRIPPED_FINAL = "assistantfinal"
_OLLAMA_OPEN = re.compile(r"\A\s*Thinking\.\.\.[ \t]*\n")
_OLLAMA_CLOSE = "...done thinking."
# gpt-oss closes its final message with these; they are markup, not part of the answer.
_TRAILING_TOKENS = ("<|return|>", "<|end|>", "<|endoftext|>", "<|im_end|>")
_LEADING_START = re.compile(r"\A\s*<\|start\|>(?:assistant)?")


def _answer(text: str) -> str:
    text = text.strip()
    while text.endswith(_TRAILING_TOKENS):
        text = text[: text.rindex("<|")].rstrip()
    return text


def _split_think(text: str) -> tuple[str, str, bool] | None:
    opening = _THINK_OPEN.match(text)
    tag = opening.group(1).lower() if opening else "think"
    close = f"</{tag}>"
    end = text.lower().find(close, opening.end() if opening else 0)
    if opening is None:
        if end == -1:
            return None
        # The chat template sent "<think>": only the closing tag is in the text.
        return text[:end].strip(), _answer(text[end + len(close) :]), False
    if end == -1:
        return text[opening.end() :].strip(), "", True
    return text[opening.end() : end].strip(), _answer(text[end + len(close) :]), False


def _split_gpt_oss(text: str) -> tuple[str, str, bool] | None:
    start = text.find(_GPT_OSS_ANALYSIS)
    if start != -1 and not text[:start].replace("<|start|>", "").replace("assistant", "").strip():
        body = start + len(_GPT_OSS_ANALYSIS)
        end = text.find(_GPT_OSS_END, body)
        final = text.find(_GPT_OSS_FINAL, body)
        if end == -1 and final == -1:
            return text[body:].strip(), "", True
        trace_end = end if end != -1 and (final == -1 or end < final) else final
        answer = _answer(text[final + len(_GPT_OSS_FINAL) :]) if final != -1 else ""
        return text[body:trace_end].strip(), answer, False
    stripped = _GPT_OSS_STRIPPED.match(text) if _LEADING_START.match(text) is None else None
    if stripped is not None:
        # Special tokens stripped by the server: "analysis<trace>assistantfinal<answer>".
        final = text.rfind(_GPT_OSS_STRIPPED_FINAL)
        if final != -1:
            return text[stripped.end() : final].strip(), _answer(text[final + len(_GPT_OSS_STRIPPED_FINAL) :]), False
    return None


def _split_ollama(text: str) -> tuple[str, str, bool] | None:
    opening = _OLLAMA_OPEN.match(text)
    if opening is None:
        return None
    end = text.find(_OLLAMA_CLOSE, opening.end())
    if end == -1:
        return text[opening.end() :].strip(), "", True
    return text[opening.end() : end].strip(), _answer(text[end + len(_OLLAMA_CLOSE) :]), False


def split_reasoning(text: str) -> tuple[str, str, bool]:
    """``(reasoning, answer, cut_off)``: the trace (stripped, "" when there is none), the answer that follows it
    (stripped), and whether the text ended inside the trace. Text without a trace is all answer."""
    for split in (_split_gpt_oss, _split_ollama, _split_think):
        found = split(text)
        if found is not None:
            return found
    return "", _answer(text), False
