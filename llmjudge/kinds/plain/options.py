"""A plain judge's settings: none."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def plain_options(raw: Mapping[str, Any] | None) -> None:
    """A plain judge takes no options."""
    if raw:
        raise ValueError(f"a plain judge takes no options, got {', '.join(sorted(raw))}")
    return None
