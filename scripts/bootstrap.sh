#!/usr/bin/env bash
# Create the project-local virtual environment .venv from pyproject.toml with
# every extra (Jupyter, plotting, export, CuTe DSL, test tools), and make sure
# a Chromium for browser tests and static exports is present.
#
# A warm start does no work: the install and the solver's compile are stamped
# in .venv with what they depend on (pyproject.toml, the search kernel's source,
# the Python and the checkout's path); while the stamp matches and smemviz
# imports from this checkout, both are skipped. SMEMVIZ_REINSTALL=1 forces them.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
STAMP=.venv/.smemviz-bootstrap
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
kernel_sources=$(find smemviz/solver smemviz/_aliasing -name '*.py' 2>/dev/null | sort || true)
want="$(cat pyproject.toml $kernel_sources | sha256sum | cut -d' ' -f1) $(.venv/bin/python -c 'import sys; print(sys.version.split()[0])') $PWD"
fresh=1
if [ -z "${SMEMVIZ_REINSTALL:-}" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] \
   && .venv/bin/python -c "import smemviz, sys; sys.exit(not smemviz.__file__.startswith('$PWD/'))" 2>/dev/null; then
  fresh=0
fi
if [ "$fresh" = 1 ]; then
  rm -f "$STAMP"
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  .venv/bin/python -m pip install -q -e ".[dev]"
  # compile the lifetime solver's search kernel now (numba keeps it), not at the first solve
  .venv/bin/python -c "from smemviz.solver._loader import core_kind; core_kind()"
  echo "$want" > "$STAMP"
fi
# ESLint for the explorer's JS (tests/explorer/test_js_lint.py), pinned by package-lock.json;
# installed again only when the lock file changes
if [ -f package-lock.json ] && command -v npm >/dev/null 2>&1; then
  lock_sum="$(sha256sum package-lock.json | cut -d' ' -f1)"
  if [ ! -f node_modules/.smemviz-lock ] || [ "$(cat node_modules/.smemviz-lock)" != "$lock_sum" ]; then
    echo "installing ESLint (npm ci)..."
    npm ci --no-audit --no-fund --loglevel=error >/dev/null && echo "$lock_sum" > node_modules/.smemviz-lock
  fi
elif [ -f package-lock.json ]; then
  echo "note: no npm found; install Node.js and npm (e.g. 'apt-get install npm') for the JS lint test"
fi
if ! command -v chromium >/dev/null 2>&1 && [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Debian's chromium (browser tests, static export)..."
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
      || echo "warning: could not install chromium; browser tests and static exports will be skipped"
  else
    echo "note: no Chromium found; install it (e.g. 'apt-get install chromium') for browser tests and static exports"
  fi
fi
