"""Read annotator-keyed JSON, the format of the alt-test authors' repository, into the test's inputs.

A dataset is a folder with ``human_annotations.json`` = ``{annotator: {instance: label}}`` and
``llm_annotations.json`` = ``{llm_name: {instance: label}}``. Labels are numbers (Likert scores) or
strings (nominal labels such as ``"Positive"``); string labels are given numeric codes, shared by the
humans and every LLM of the dataset, in sorted order of the labels. Framework-free: json and pathlib only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from evalhub.stats.alt_test import Scoring

HUMANS_FILE = "human_annotations.json"
LLM_FILE = "llm_annotations.json"

# The settings of the authors' notebook (alt_test_example.ipynb) for their nine text datasets:
# accuracy on the string-labelled sets, negative RMSE on the numeric ones, and epsilon by annotator type.
AUTHORS_SETTINGS: dict[str, tuple[Scoring, float]] = {
    "wax": ("accuracy", 0.1),
    "lgbteen": ("accuracy", 0.2),
    "mtbench": ("accuracy", 0.2),
    "framing": ("accuracy", 0.15),
    "cebab_aspects": ("accuracy", 0.1),
    "summeval": ("neg_rmse", 0.2),
    "10k_prompts": ("neg_rmse", 0.15),
    "cebab_stars": ("neg_rmse", 0.1),
    "lesion": ("neg_rmse", 0.15),
}

Label = str | int | float


@dataclass(frozen=True)
class AltTestDataset:
    """One dataset's labels as numbers; ``labels`` maps a code back to its string (None when numeric)."""

    name: str
    humans: dict[str, dict[str, float]]
    llms: dict[str, dict[str, float]]
    labels: tuple[str, ...] | None


def read_alt_test_dataset(folder: Path) -> AltTestDataset:
    """Read ``folder``'s two files; a malformed file raises ValueError naming the file and the entry."""
    humans = _read(folder / HUMANS_FILE, "annotator")
    llms = _read(folder / LLM_FILE, "LLM")
    kinds = {_kind(label) for table in (humans, llms) for ratings in table.values() for label in ratings.values()}
    if kinds == {"str"}:
        names = sorted({str(v) for table in (humans, llms) for ratings in table.values() for v in ratings.values()})
        code = {name: float(k) for k, name in enumerate(names)}
        return AltTestDataset(folder.name, _coded(humans, code), _coded(llms, code), tuple(names))
    if "str" in kinds:
        raise ValueError(f"{folder}: labels mix strings and numbers; a dataset's labels must be one or the other")
    return AltTestDataset(folder.name, _coded(humans, None), _coded(llms, None), None)


def _read(path: Path, owner: str) -> dict[str, dict[str, Label]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ValueError(f"{path}: cannot be read ({error.strerror})") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not JSON ({error.msg} at line {error.lineno})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected an object {{{owner}: {{instance: label}}}}")
    for who, ratings in data.items():
        if not isinstance(ratings, dict):
            raise ValueError(f"{path}: {owner} {who!r}: expected an object {{instance: label}}")
        for instance, label in ratings.items():
            if _kind(label) is None:
                where = f"{path}: {owner} {who!r}, instance {instance!r}"
                raise ValueError(f"{where}: label {label!r} is not a string or number")
    return data


def _kind(label: object) -> str | None:
    if isinstance(label, str):
        return "str"
    if isinstance(label, int | float) and not isinstance(label, bool):
        return "number"
    return None


def _coded(table: dict[str, dict[str, Label]], code: dict[str, float] | None) -> dict[str, dict[str, float]]:
    if code is None:
        return {who: {i: float(v) for i, v in ratings.items()} for who, ratings in table.items()}
    return {who: {i: code[str(v)] for i, v in ratings.items()} for who, ratings in table.items()}
