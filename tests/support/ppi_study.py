"""The worked example of docs/analysis.md (PPI): AltTest's SummEval coherence, systems M11 and M23, gpt-4o as the
judge, with a random share of each system's summaries kept as the human-rated ones.

The subset is drawn as the doc says: per system, over its summaries in sorted instance order,
``draw_human_subset(n, share=0.2, seed=0)``. The study holds the three experts' ratings of those items only, and
gpt-4o's rating of every item; the researcher declares the subset random (``{"declared_random": true}``).
"""
from __future__ import annotations

from pathlib import Path

from django.contrib.auth.models import User

from annotations.models import Study
from annotations.studies import study_create
from evalhub.analysis.planning.human_subset import study_human_subset_set
from evalhub.stats.ppi.mean import draw_human_subset
from tests.conftest import shared_path
from tests.evalhub.factories import import_long
from tests.support.alt_test_data import read_alt_test_dataset

SYSTEMS = ("M11", "M23")
JUDGE = "gpt-4o"
QUESTION = "coherence"


def summeval_spec() -> dict:
    return {
        "title": "SummEval coherence, M11 against M23", "llm_template": "{text}\n\n{question}",
        "item_fields": ["text"], "groups": list(SYSTEMS), "contrasts": [list(SYSTEMS)],
        "scale": {"min": 1, "max": 5}, "questions": [{"key": QUESTION, "text": "How coherent is the summary?"}],
    }


def summeval_study(*, slug: str, owner: User | None, tmp_path: Path, share: float | None = 0.2,
                   seed: int = 0) -> Study:
    """The study; ``share=None`` keeps every item human-rated (the all-human truth) and declares nothing."""
    data = read_alt_test_dataset(shared_path("data", "AltTest", "data", "summeval"))
    study = study_create(slug=slug, spec=summeval_spec(), owner=owner)
    rows = []
    for system in SYSTEMS:
        instances = sorted({i for r in data.humans.values() for i in r if i.endswith(f"__{system}__{QUESTION}")})
        instances = [i for i in instances if i in data.llms[JUDGE]]
        kept = set(range(len(instances)))
        if share is not None:
            kept = set(draw_human_subset(len(instances), share=share, seed=seed)[0].tolist())
        for position, instance in enumerate(instances):
            item = instance.removesuffix(f"__{QUESTION}")
            rows.append((item, system, QUESTION, JUDGE, "0", data.llms[JUDGE][instance]))
            if position in kept:
                rows.extend((item, system, QUESTION, "human", annotator, ratings[instance])
                            for annotator, ratings in sorted(data.humans.items()) if instance in ratings)
    import_long(study, rows, tmp_path, name=f"{slug}.csv")
    if share is not None:
        study_human_subset_set(study=study, setting={"declared_random": True})
    study.refresh_from_db()
    return study
