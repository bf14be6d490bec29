#!/usr/bin/env bash
# Set up .venv (see bootstrap.sh), lint (ruff), type-check (mypy), and run the whole test suite.
# GPU-launch tests skip themselves on a machine without an NVIDIA GPU.
#
# pytest runs in parallel workers (pytest-xdist), each with its own JupyterLab and
# Chromium for the browser tests: SMEMVIZ_TEST_WORKERS sets how many (default: 'auto',
# one per CPU core, at least 2); '-n 0' among the arguments runs in one process.
# Arguments go to pytest, e.g. the CPU tier: bash scripts/test.sh -m "not browser and not notebook"
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
echo "ruff (lint, format)..."; .venv/bin/python -m ruff check . && .venv/bin/python -m ruff format --check .
echo "mypy (types)..."; .venv/bin/python -m mypy
workers="${SMEMVIZ_TEST_WORKERS:-auto}"
if [ "$workers" = auto ]; then
  workers=$(nproc 2>/dev/null || echo 2)
  [ "$workers" -ge 2 ] || workers=2
fi
# loadgroup: a browser module's tests stay on one worker (tests/conftest.py groups them and
# hands the longest tests out first; --no-loadscope-reorder keeps that order)
exec .venv/bin/python -m pytest -n "$workers" --dist loadgroup --no-loadscope-reorder "$@"
