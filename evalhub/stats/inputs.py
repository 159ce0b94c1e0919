"""Input checks shared by the statistics: matrices (items x raters, NaN = missing) and paired vectors."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt


def _as_matrix(matrix: npt.ArrayLike) -> np.ndarray:
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2:
        raise ValueError(f"expected a 2-D matrix (items x raters), got shape {m.shape}")
    if np.isinf(m).any():
        raise ValueError("matrix contains infinite values; use NaN for missing ratings")
    return m


def _as_vector(x: npt.ArrayLike, name: str) -> np.ndarray:
    v = np.asarray(x, dtype=float)
    if v.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {v.shape}")
    if np.isinf(v).any():
        raise ValueError(f"{name} contains infinite values; use NaN for missing values")
    return v


def _paired(x: npt.ArrayLike, y: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    xv, yv = _as_vector(x, "x"), _as_vector(y, "y")
    if xv.shape != yv.shape:
        raise ValueError(f"x and y differ in length: {xv.shape[0]} != {yv.shape[0]}")
    keep = ~(np.isnan(xv) | np.isnan(yv))
    return xv[keep], yv[keep]


def _finite_or_none(value: float) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None
