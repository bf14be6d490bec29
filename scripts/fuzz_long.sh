#!/usr/bin/env bash
# The long fuzz run, started by hand: every fuzz test (tests/test_fuzz_*.py)
# with fresh random examples instead of CI's fixed seed and small budget.
#
#   scripts/fuzz_long.sh                 # 10000 examples per fuzz test (slow ones take a share)
#   SMEMVIZ_FUZZ_EXAMPLES=20000 scripts/fuzz_long.sh -x
#   PYTHON=.venv/bin/python scripts/fuzz_long.sh
#
# Extra arguments go to pytest. Runs at low priority (nice); the statistics of
# every test (examples run, time, events) are printed at the end. A failure
# prints the smallest failing input and a @reproduce_failure line.
set -euo pipefail
cd "$(dirname "$0")/.."
export SMEMVIZ_FUZZ_EXAMPLES="${SMEMVIZ_FUZZ_EXAMPLES:-10000}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
exec nice -n 10 "${PYTHON:-python}" -m pytest -p no:cacheprovider -q --hypothesis-show-statistics \
    --durations=0 tests/test_fuzz_*.py "$@"
