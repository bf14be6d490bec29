#!/usr/bin/env bash
# The GEMM's GPU tier in one go, on the GPU machine, from the project root:
#   bash benchmarks/gemm_gpu_suite.sh OUT_DIR [benchmark args...]
# runs tests/kernel/sm90/test_gemm_gpu.py (junit into OUT_DIR), the benchmark on random
# normal and on small-integer inputs (OUT_DIR/randn, OUT_DIR/ints), the stages x
# aliasing sweep (OUT_DIR/gemm_sweep_h200.json); everything printed goes to
# OUT_DIR/suite.log, and the test summary and benchmark tables are printed last.
set -u
out="${1:?usage: gemm_gpu_suite.sh OUT_DIR [benchmark args]}"
shift
here="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out/randn" "$out/ints"
log="$out/suite.log"
export PYTHONUNBUFFERED=1
python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.get_device_name(0))' >"$log" 2>&1
python3 -m pytest "$here/tests/kernel/sm90/test_gemm_gpu.py" -m gpu --noconftest -p no:cacheprovider -q -rA \
  --junitxml="$out/gemm_gpu_tests.xml" >>"$log" 2>&1
tests_rc=$?
python3 "$here/benchmarks/gemm_h200.py" --out "$out/randn" --data randn "$@" >>"$log" 2>&1
randn_rc=$?
python3 "$here/benchmarks/gemm_h200.py" --out "$out/ints" --data ints "$@" >>"$log" 2>&1
ints_rc=$?
python3 "$here/benchmarks/gemm_sweep_h200.py" --out "$out" >>"$log" 2>&1
sweep_rc=$?
echo "---- tests (exit $tests_rc) ----"
grep -E "^(FAILED|ERROR)|passed|failed" "$log" | tail -n 15
echo "---- benchmarks (exit $randn_rc / $ints_rc), sweep (exit $sweep_rc) ----"
grep -E "GPU state" "$log" | tail -n 8
for d in randn ints; do [ -f "$out/$d/gemm_h200.md" ] && sed -n '7,13p' "$out/$d/gemm_h200.md"; done
grep -E "^\| f16 128x" "$log" | tail -n 20
