"""The analysis JSON as served (dashboard button, API, ``analyze --format json``): the result's JSON with a
machine-readable ``withheld`` object on each row whose value the page withholds (issue 25, fifth review M1).

The JSON keeps every value and its note; ``withheld`` maps each withheld field, by its JSON name, to the short
reason. The decision is the CSV's own (``trust_notes.withheld_values``, ``ceiling_rater_withheld`` and
``ceiling_summary_withheld``, the block's own summary fields): a CSV
column ``ci95_low`` or ``ci95_high`` names the JSON field ``ci95``, ``alpha_ordinal`` names ``alpha.ordinal``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from evalhub.analysis.reading import ALL_GROUPS
from evalhub.analysis.result import AnalysisResult, JSONObject
from evalhub.analysis.trust_notes import (
    POOLED_ROW,
    Withheld,
    ceiling_rater_withheld,
    ceiling_summary_withheld,
    pooled_groups_caveat,
    withheld_values,
)

ROW_TABLES = ("cells", "kendall", "welch", "pairwise_kendall", "kappa")  # rows that withheld_values reads


def json_field(column: str) -> str:
    """The JSON name of a CSV column: an interval's bound names its interval, a level's alpha ``alpha.<level>``."""
    for end in ("_low", "_high"):
        if column.endswith(f"ci95{end}"):
            return column.removesuffix(end)
    if column.startswith("alpha_") and column != "alpha_ci95":
        return f"alpha.{column.removeprefix('alpha_')}"
    return column


def json_withheld(withheld: Withheld) -> JSONObject:
    """A row's ``withheld`` object: JSON field -> reason."""
    out: JSONObject = {json_field(column): reason for column, reason in withheld.items()}
    return out


def _mark(rows: list[JSONObject], withheld: Sequence[Withheld]) -> None:
    for row, columns in zip(rows, withheld, strict=True):
        if columns:
            row["withheld"] = json_withheld(columns)


def _objects(value: object) -> list[JSONObject]:
    """A JSON list of rows (to_json writes each table as a list of objects), typed as such."""
    assert isinstance(value, list) and all(isinstance(row, dict) for row in value)
    return cast("list[JSONObject]", value)


def analysis_json(result: AnalysisResult) -> JSONObject:
    """``result.to_json()`` with each withheld value named under its row's ``withheld`` (values stay)."""
    out = result.to_json()
    for table in ROW_TABLES:
        _mark(_objects(out[table]), [withheld_values(r) for r in getattr(result, table)])
    for json_row, row in zip(_objects(out["ceiling"]), result.ceiling, strict=True):
        _mark([json_row], [ceiling_summary_withheld(row)])
        _mark(_objects(json_row["raters"]), [ceiling_rater_withheld(row, rater) for rater in row.raters])
    if pooled_groups_caveat(result):  # each all-groups row says it pools the groups, as the CSV's ``pooled``
        for value in out.values():
            for item in value if isinstance(value, list) else []:
                if isinstance(item, dict) and item.get("group") == ALL_GROUPS:
                    item["pooled"] = POOLED_ROW
    return out
