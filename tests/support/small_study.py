"""The dashboard reviews' small story study (issue 25): 6 items (3 per group, "human" and "gpt2"), 4 questions on a 1-5
scale, 3 teachers who rated every item, and one LLM pool (gpt-4o) with 3 samples. Below trust_notes.MIN_ITEMS per
group, so every agreement number on its dashboard is withheld."""
from __future__ import annotations

QUESTIONS = ("grammaticality", "cohesiveness", "likability", "relevance")
ITEMS = [("h1", "human"), ("h2", "human"), ("h3", "human"), ("g1", "gpt2"), ("g2", "gpt2"), ("g3", "gpt2")]


def small_study_rows() -> list[tuple[str, str, str, str, str, int]]:
    """The long-format ratings (item, group, question, pool, rater, score) to import with ``import_long``."""
    rows = []
    for n, (item, group) in enumerate(ITEMS):
        for q, question in enumerate(QUESTIONS):
            rows += [(item, group, question, "human", f"teacher-{r + 1}", 1 + (n * 2 + q + r * (n % 3)) % 5)
                     for r in range(3)]
            rows += [(item, group, question, "gpt-4o", str(s), 1 + (n + q + s) % 5) for s in range(3)]
    return rows
