#!/usr/bin/env bash
# The GEMM's GPU tier in one go, on the GPU machine, from the project root:
#   bash benchmarks/gemm_gpu_suite.sh OUT_DIR [benchmark args...]
# runs tests/gpu/test_gemm_gpu.py (junit + log into OUT_DIR), then
# benchmarks/gemm_h200.py (gemm_h200.json/.md into OUT_DIR), and prints the
# test summary and the benchmark table last.
set -u
out="${1:?usage: gemm_gpu_suite.sh OUT_DIR [benchmark args]}"
shift
here="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out"
python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.get_device_name(0))'
python3 -m pytest "$here/tests/gpu/test_gemm_gpu.py" -m gpu --noconftest -p no:cacheprovider -q -rfE \
  --junitxml="$out/gemm_gpu_tests.xml" >"$out/gemm_gpu_tests.log" 2>&1
tests_rc=$?
PYTHONUNBUFFERED=1 python3 "$here/benchmarks/gemm_h200.py" --out "$out" "$@" >"$out/gemm_bench.log" 2>&1
bench_rc=$?
echo "---- tests (exit $tests_rc) ----"
grep -E "passed|failed|error|Error|assert" "$out/gemm_gpu_tests.log" | tail -n 25
echo "---- benchmark (exit $bench_rc) ----"
tail -n 40 "$out/gemm_bench.log"
