#!/usr/bin/env bash
# Run the README's test command RUNS times in a row (default 3) while two extra CPU-bound
# processes load the machine; print each run's wall time and pytest's last line.
# Run it in a clean clone: bash scripts/suite_under_load.sh [RUNS] [pytest arguments...]
set -uo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"; shift || true
burn() { python3 -c 'while True: pass' & }
burn; b1=$!; burn; b2=$!
trap 'kill $b1 $b2 2>/dev/null' EXIT
failed=0
for i in $(seq 1 "$runs"); do
  start=$(date +%s)
  bash scripts/test.sh -q -p no:cacheprovider "$@" > "suite_run_$i.log" 2>&1
  rc=$?
  end=$(date +%s)
  echo "run $i: exit $rc, $((end - start)) s, load $(cut -d' ' -f1-3 /proc/loadavg): $(grep -E '(passed|failed|error)' "suite_run_$i.log" | tail -1)"
  [ "$rc" -eq 0 ] || failed=1
done
exit "$failed"
