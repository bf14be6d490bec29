#!/usr/bin/env bash
# Set up .venv (see bootstrap.sh) and open JupyterLab on the quick-start notebook,
# rooted at the repository (README, examples and notebooks all reachable).
# Notebooks under notebooks/ are saved without outputs (scripts/jupyter_server_config.py).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
nb=notebooks/01_quickstart.ipynb
[ -f "$nb" ] || nb=""
extra=()
[ "$(id -u)" = 0 ] && extra+=(--allow-root)
exec .venv/bin/python -m jupyterlab "${extra[@]}" --ServerApp.root_dir="$PWD" \
    --config="$PWD/scripts/jupyter_server_config.py" ${nb:+"$nb"} "$@"
