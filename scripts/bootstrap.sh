#!/usr/bin/env bash
# Create the project-local virtual environment .venv from pyproject.toml with
# every extra (Jupyter, plotting, export, CuTe DSL, test tools), and make sure
# a Chromium for browser tests and static exports is present.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e ".[dev]"
# compile the lifetime solver's search kernel now (numba keeps it), not at the first solve
.venv/bin/python -c "from smemviz.solver._loader import core_kind; core_kind()"
if ! command -v chromium >/dev/null 2>&1 && [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Debian's chromium (browser tests, static export)..."
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
      || echo "warning: could not install chromium; browser tests and static exports will be skipped"
  else
    echo "note: no Chromium found; install it (e.g. 'apt-get install chromium') for browser tests and static exports"
  fi
fi
