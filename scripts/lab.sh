#!/usr/bin/env bash
# Set up .venv (see bootstrap.sh) and open JupyterLab on the quick-start notebook.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
nb=notebooks/01_quickstart.ipynb
[ -f "$nb" ] || nb=notebooks
extra=()
[ "$(id -u)" = 0 ] && extra+=(--allow-root)
exec .venv/bin/python -m jupyterlab "${extra[@]}" "$nb" "$@"
