"""Builds and saves a tiny, randomly initialised GPT-2 and its tokenizer: no download, a few seconds on CPU."""
from __future__ import annotations

from pathlib import Path

CORPUS = [
    "Please rate the story fragment on a scale of 1 - 5 , with 1 being the lowest .",
    "I would rate it 1 2 3 4 5 out of 5 . The sentences fit together . Story fragment : prompt ( End )",
    "You are given a news title . Question : How natural and fluent is the text ? Note :",
]


def build_tiny_model(directory: Path, *, seed: int = 0) -> Path:
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.WordLevelTrainer(special_tokens=["[UNK]", "[PAD]", "[EOS]"])
    tokenizer.train_from_iterator(CORPUS, trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]", pad_token="[PAD]",
                                   eos_token="[EOS]")
    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=fast.vocab_size, n_positions=512, n_embd=32, n_layer=2, n_head=2,
                        bos_token_id=fast.eos_token_id, eos_token_id=fast.eos_token_id,
                        pad_token_id=fast.pad_token_id)
    GPT2LMHeadModel(config).save_pretrained(directory)
    fast.save_pretrained(directory)
    return directory
