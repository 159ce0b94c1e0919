"""A Hugging Face causal LM loaded once per worker process, generating for batches of prompts.

Used by the `transformers` backend on the `gpu` Celery queue. It runs on a GPU when one is visible and
on the CPU otherwise. The model comes from a local path or the Hugging Face cache; nothing is downloaded at run time
unless TRANSFORMERS_ALLOW_DOWNLOAD=true (pre-fetch models on the GPU host instead).
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Generation:
    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: int


class LocalModel:
    _loaded: dict[str, LocalModel] = {}
    _lock = threading.Lock()

    def __init__(self, name_or_path: str, *, allow_download: bool = False) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.name = name_or_path
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        # Offline unless allowed: a worker must not fetch gigabytes from a hub in the middle of a run.
        local = not allow_download
        self.tokenizer = AutoTokenizer.from_pretrained(name_or_path, local_files_only=local)
        # Decoder-only models must be padded on the left so that generation continues the prompt.
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        dtype = torch.float16 if self.device == "cuda" else torch.float32
        self.model = AutoModelForCausalLM.from_pretrained(name_or_path, dtype=dtype, local_files_only=local)
        # transformers wraps PreTrainedModel.to in functools.wraps(torch.nn.Module.to), which the type checker
        # reads as the unbound function: it wants the model as the first argument.
        self.model = self.model.to(self.device)  # type: ignore[arg-type]
        self.model.eval()

    @classmethod
    def get(cls, name_or_path: str, *, allow_download: bool = False) -> LocalModel:
        """The process-wide instance for this model: loading takes seconds to minutes, so it happens once."""
        with cls._lock:
            if name_or_path not in cls._loaded:
                cls._loaded[name_or_path] = cls(name_or_path, allow_download=allow_download)
            return cls._loaded[name_or_path]

    def format_conversation(self, messages: list[dict[str, str]]) -> str:
        """The model's own chat template when it has one; otherwise the turns, one after the other."""
        if getattr(self.tokenizer, "chat_template", None):
            text = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
            assert isinstance(text, str)  # tokenize=False: the template's text, not token ids
            return text
        return "\n".join(m["content"] for m in messages)

    def generate(
        self, prompts: list[str], *, max_new_tokens: int = 64, temperature: float = 1.0, top_p: float = 0.9,
        seed: int | None = None,
    ) -> list[Generation]:
        """Generate for already formatted prompts (see format_conversation), one batch, padded left."""
        import torch

        if not prompts:
            return []
        if seed is not None:
            torch.manual_seed(seed)
        started = time.monotonic()
        batch = self.tokenizer(prompts, return_tensors="pt", padding=True).to(self.device)
        options: dict[str, Any] = {"max_new_tokens": max_new_tokens, "pad_token_id": self.tokenizer.pad_token_id}
        if temperature > 0:
            options.update(do_sample=True, temperature=temperature, top_p=top_p)
        else:
            options.update(do_sample=False)
        with torch.inference_mode():
            # GenerationMixin.generate declares its self as GenerativePreTrainedModel, which the class
            # AutoModelForCausalLM.from_pretrained is typed to return (PreTrainedModel + GenerationMixin) is not.
            output = self.model.generate(**batch, **options)  # type: ignore[misc]
        new_tokens = output[:, batch["input_ids"].shape[1]:]
        latency = int((time.monotonic() - started) * 1000)
        prompt_lengths = batch["attention_mask"].sum(dim=1).tolist()
        results = []
        for row, prompt_tokens in zip(new_tokens, prompt_lengths, strict=True):
            completion = int((row != self.tokenizer.pad_token_id).sum())
            text = self.tokenizer.decode(row, skip_special_tokens=True)
            assert isinstance(text, str)  # one sequence decodes to one string
            results.append(Generation(text=text, prompt_tokens=int(prompt_tokens), completion_tokens=completion,
                                      latency_ms=latency))
        return results
