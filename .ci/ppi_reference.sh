#!/usr/bin/env bash
# The PPI statistics (evalhub/stats/ppi/mean.py) against ppi_py itself, on real data from ../shared/data (issue 27).
# Builds .venv-ppi from the hashed requirements-ppi.lock (ppi-python 0.2.3 and its numba, statsmodels,
# scikit-learn, pandas, gdown: kept out of the app's venv) when the lock is newer than the venv, then runs
# tests/evalhub/stats/test_ppi.py with PPI_REFERENCE_PYTHON pointing at it: the test hands its cases to
# tests/support/ppi_reference.py in that venv and compares in the same run. Run from anywhere:
#   bash .ci/ppi_reference.sh [extra pytest arguments]
#   PY=/path/to/python (default: .venv/bin/python, the app's venv that runs the tests)
# Other scripts (.ci/run) may source the venv it leaves: PPI_REFERENCE_PYTHON=$ROOT/.venv-ppi/bin/python.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
PY=${PY:-$ROOT/.venv/bin/python}
VENV=$ROOT/.venv-ppi
if [[ ! -f $VENV/.installed || requirements-ppi.lock -nt $VENV/.installed ]]; then
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --require-hashes -r requirements-ppi.lock
  touch "$VENV/.installed"
fi
PPI_REFERENCE_PYTHON=$VENV/bin/python "$PY" -m pytest tests/evalhub/stats/test_ppi.py "$@"
