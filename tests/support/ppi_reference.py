"""ppi_py's figures for the cases on stdin: run by the reference venv's python (.venv-ppi, made by
.ci/ppi_reference.sh from requirements-ppi.lock), never imported by the tests.

Input (JSON on stdin): {"alpha": float, "cases": {name: {"y": [...], "f": [...], "f_unlabelled": [...]}}}.
Output (JSON on stdout): {"ppi_py": version, "cases": {name: {"None" | "0" | "1": {"estimate": float,
"ci_low": float, "ci_high": float}}}}: ``ppi_mean_pointestimate`` and ``ppi_mean_ci`` with lam=None, 0 and 1.
Floats travel as JSON numbers, which Python writes and reads back exactly (repr round-trips).
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version

import numpy as np
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate


def figures(case: dict[str, list[float]], alpha: float) -> dict[str, dict[str, float]]:
    y, f, fu = (np.asarray(case[key], dtype=float) for key in ("y", "f", "f_unlabelled"))
    out = {}
    for lam in (None, 0, 1):
        estimate = ppi_mean_pointestimate(y, f, fu, lam=lam)
        low, high = ppi_mean_ci(y, f, fu, alpha=alpha, lam=lam)
        out[str(lam)] = {
            "estimate": float(np.asarray(estimate).item()),
            "ci_low": float(np.asarray(low).item()),
            "ci_high": float(np.asarray(high).item()),
        }
    return out


def main() -> None:
    request = json.load(sys.stdin)
    cases = {name: figures(case, request["alpha"]) for name, case in request["cases"].items()}
    json.dump({"ppi_py": version("ppi-python"), "cases": cases}, sys.stdout)


if __name__ == "__main__":
    main()
