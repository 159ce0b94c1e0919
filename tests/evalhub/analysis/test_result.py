"""The typed analysis result: its JSON is made in one place, and the cache never reads a pickle of an older shape."""
from __future__ import annotations

import dataclasses
import json
import typing

import pytest

from evalhub.analysis import AnalysisOptions, study_analysis, study_analysis_cached
from evalhub.analysis import result as result_types
from evalhub.analysis.result import AnalysisResult, WelchRow, shape_digest, to_json
from evalhub.stats import WelchResult
from tests.evalhub.factories import import_long


def _types_reachable_from(kind: object, seen: set[type]) -> set[type]:
    for arg in typing.get_args(kind):
        _types_reachable_from(arg, seen)
    if isinstance(kind, type) and dataclasses.is_dataclass(kind) and kind not in seen:
        seen.add(kind)
        for hint in typing.get_type_hints(kind).values():
            _types_reachable_from(hint, seen)
    return seen


def test_every_type_a_result_holds_counts_in_the_cache_keys_shape_digest():
    reachable = _types_reachable_from(AnalysisResult, set())
    assert len(reachable) > 20
    assert reachable <= set(result_types._result_types())


def test_a_welch_rows_json_spreads_its_test_but_its_reason_which_the_notes_carry():
    test = WelchResult(t=None, df=None, p=None, mean_diff=None, cohens_d=None, n_a=1, n_b=0, unit="item means",
                       reason="fewer than 2 values in group b")
    row = WelchRow("q", "human", "a", "b", mean_a=3.0, mean_b=None, test=test,
                   notes={"t": "fewer than 2 values in group b"}, p_adjusted=None, p_family=0)
    assert list(typing.cast(dict, to_json(row))) == [
        "question", "pool", "group_a", "group_b", "mean_a", "mean_b", "t", "df", "p", "mean_diff", "cohens_d",
        "n_a", "n_b", "unit", "notes", "p_adjusted", "p_family"]


@pytest.mark.django_db
@pytest.mark.usefixtures("fresh_cache")
def test_the_json_leaves_out_the_chart_data_unless_asked_for_and_is_strict(story_study, tmp_path):
    import_long(story_study, [(f"h{i}", "human", "relevance", "human", f"r{r}", 1 + (i + r) % 5)
                              for i in range(4) for r in range(2)], tmp_path)
    plain = study_analysis(study=story_study, options=AnalysisOptions(n_boot=10))
    charted = study_analysis(study=story_study, options=AnalysisOptions(n_boot=10, charts=True))
    assert plain.distributions is None and "distributions" not in plain.to_json()
    assert charted.distributions and list(charted.to_json())[-2:] == ["distributions", "scatter"]
    assert "not_computed" not in plain.to_json()  # a Likert study computes every table
    json.dumps(charted.to_json(), allow_nan=False)


@pytest.mark.django_db
@pytest.mark.usefixtures("fresh_cache")
def test_the_cache_hands_back_the_typed_result_under_a_key_naming_its_shape(story_study, tmp_path, monkeypatch):
    from django.core.cache import cache

    import_long(story_study, [(f"h{i}", "human", "relevance", "human", f"r{r}", 1 + (i * r) % 5)
                              for i in range(4) for r in range(2)], tmp_path)
    keys: list[str] = []
    real_set = cache.set
    monkeypatch.setattr(cache, "set", lambda key, value, timeout: (keys.append(key), real_set(key, value, timeout)))
    options = AnalysisOptions(n_boot=10)
    first = study_analysis_cached(study=story_study, options=options)
    again = study_analysis_cached(study=story_study, options=options)
    assert isinstance(first, AnalysisResult) and again == first and len(keys) == 1
    assert f":{shape_digest()}:" in keys[0]
    # A value of another shape under the key (a dict, as cached before the result was typed) is recomputed.
    real_set(keys[0], first.to_json(), 60)
    assert study_analysis_cached(study=story_study, options=options) == first
