"""Real annotations from ../shared/data/AltTest, read for reference checks (never copied into the repo).

``human_annotations.json`` is ``{annotator: {instance: label}}``, ``llm_annotations.json``
``{llm: {instance: label}}`` (SOURCES.md). The statistics take floats, so string labels become their
position in a fixed category list, in the labels' own order (Negative, unknown, Positive);
``tests.support.alt_test_data`` reads the same files for the alt-test, which codes them in sorted order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from tests.conftest import shared_path

# The categories of the string-labelled sets, in a fixed order (codes 0, 1, 2, ...).
CATEGORIES = {
    "cebab_aspects": ["Negative", "unknown", "Positive"],
    "mtbench": ["model_a", "tie", "model_b"],
    "framing": ["no", "yes", "n/a: problem is resolved"],
}


@dataclass(frozen=True)
class AltTestData:
    name: str
    humans: dict[str, dict[str, float]]  # annotator -> instance -> label (coded)
    llms: dict[str, dict[str, float]]  # llm -> instance -> label (coded)
    instances: list[str]  # every instance a human rated, sorted
    annotators: list[str]

    def matrix(self) -> np.ndarray:
        """Items (``instances``) x raters (``annotators``), NaN = not rated."""
        out = np.full((len(self.instances), len(self.annotators)), np.nan)
        row = {instance: i for i, instance in enumerate(self.instances)}
        for j, annotator in enumerate(self.annotators):
            for instance, label in self.humans[annotator].items():
                out[row[instance], j] = label
        return out

    def llm_vector(self, llm: str) -> np.ndarray:
        labels = self.llms[llm]
        return np.array([labels.get(instance, np.nan) for instance in self.instances], dtype=float)


def load_alttest(name: str) -> AltTestData:
    folder = ("data", "AltTest", "data", name)
    humans_raw = json.loads(shared_path(*folder, "human_annotations.json").read_text(encoding="utf-8"))
    llms_raw = json.loads(shared_path(*folder, "llm_annotations.json").read_text(encoding="utf-8"))
    categories = CATEGORIES.get(name)

    def code(label: object) -> float:
        return float(categories.index(label)) if categories is not None else float(label)

    humans = {a: {i: code(v) for i, v in labels.items()} for a, labels in humans_raw.items()}
    llms = {m: {i: code(v) for i, v in labels.items()} for m, labels in llms_raw.items()}
    instances = sorted({i for labels in humans.values() for i in labels})
    return AltTestData(name, humans, llms, instances, sorted(humans))
