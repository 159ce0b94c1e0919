"""Estimated cost of a run: USD per million tokens (input, output), for the progress page.

An estimate, not a bill: list prices change, so a judge may set its own in
``Judge.options["price_per_mtok"] = [input, output]``. Unknown models (local servers, the fake
backend) cost nothing.
"""
from __future__ import annotations

from decimal import Decimal
from typing import Any

# USD per 1M tokens (input, output), public list prices; the longest matching prefix wins.
PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "gpt-3.5-turbo": (0.50, 1.50),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4-turbo": (10.00, 30.00),
    "gpt-4": (30.00, 60.00),
    "davinci-002": (2.00, 2.00),
}


def price_per_mtok(model: str, options: dict[str, Any] | None = None) -> tuple[float, float]:
    custom = (options or {}).get("price_per_mtok")
    if isinstance(custom, (list, tuple)) and len(custom) == 2:
        return float(custom[0]), float(custom[1])
    matches = [prefix for prefix in PRICES_PER_MTOK if model.startswith(prefix)]
    if not matches:
        return 0.0, 0.0
    return PRICES_PER_MTOK[max(matches, key=len)]


def estimate_cost(*, model: str, options: dict[str, Any] | None, tokens_prompt: int, tokens_completion: int) -> Decimal:
    price_in, price_out = price_per_mtok(model, options)
    usd = (tokens_prompt * price_in + tokens_completion * price_out) / 1_000_000
    return Decimal(str(round(usd, 6)))
