"""The persona judge (CINEMETRIC): prompts and parsing, options, builder, plan, character preparation."""
from __future__ import annotations

# evalhub's per-rater report imports the vote from here; the kind's own modules import it from
# llmjudge.kinds.persona.prompts (never from a package's __init__, see llmjudge/kinds/__init__.py).
from llmjudge.kinds.persona.prompts import majority_vote

__all__ = ["majority_vote"]
