"""The error a kind raises when it cannot run on a study (no Django here: the registry imports it)."""
from __future__ import annotations


class KindError(ValueError):
    """A kind cannot run on this study (too few ratings, no rubric, a scale Prometheus lacks)."""
