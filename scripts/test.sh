#!/usr/bin/env bash
# Set up .venv (see bootstrap.sh), lint (ruff), type-check (mypy), and run the whole test suite.
# GPU-launch tests skip themselves on a machine without an NVIDIA GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
echo "ruff (lint, format)..."; .venv/bin/python -m ruff check . && .venv/bin/python -m ruff format --check .
echo "mypy (types)..."; .venv/bin/python -m mypy
exec .venv/bin/python -m pytest "$@"
