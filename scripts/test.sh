#!/usr/bin/env bash
# Set up .venv (see bootstrap.sh) and run the whole test suite.
# GPU-launch tests skip themselves on a machine without an NVIDIA GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec .venv/bin/python -m pytest "$@"
