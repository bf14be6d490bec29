#!/bin/bash
# Build the probe, check its SASS, and measure every case under Nsight Compute.
# Run on the H200 from the directory holding probe.cu, cases.txt and the .py helpers:
#   bash run.sh            (writes under $OUT, default /tmp/bank_out)
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE"
OUTD=${OUT:-/tmp/bank_out}
RAW=$OUTD/raw
mkdir -p "$RAW"
START=$(date +%s)
{
  date -u; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.sm --format=csv
  ncu --version; nvcc --version | tail -2; uname -r
} > "$RAW/env.txt" 2>&1
nvcc -arch=sm_90a -O3 -o probe probe.cu > "$RAW/build.txt" 2>&1 || { cat "$RAW/build.txt"; echo BUILD FAILED; }
cuobjdump -sass probe > "$RAW/sass.txt" 2>&1
python3 check_sass.py "$RAW/sass.txt" > "$OUTD/sass_check.txt" 2>&1
ncu --query-metrics > "$RAW/query.txt" 2>&1
METRICS=$(python3 select_metrics.py "$RAW/query.txt")
echo "$METRICS" | tr , '\n' > "$RAW/metrics.txt"
# plain run first: every case must launch cleanly before it is profiled
./probe cases.txt "${PLAIN:-ld.shared.b32}" > "$RAW/plain_run.txt" 2>&1; echo "plain rc=$?" >> "$RAW/plain_run.txt"
ORDER="ld.shared.b32 ld.shared.v2.b32 ld.shared.v4.b32 st.shared.b32 st.shared.v2.b32 st.shared.v4.b32
ldmatrix.x4 stmatrix.x4 ldmatrix.x1 ldmatrix.x2 stmatrix.x1 stmatrix.x2 ld.shared.u16 st.shared.u16
ld.shared.u8 st.shared.u8 ld.shared.b64 st.shared.b64 ldmatrix.x4.trans stmatrix.x4.trans
ldmatrix.x1.trans ldmatrix.x2.trans stmatrix.x1.trans stmatrix.x2.trans
cp.async.ca.4 cp.async.ca.8 cp.async.ca.16 cp.async.cg.16"
for I in $ORDER; do
  NOW=$(date +%s)
  if [ $((NOW - START)) -gt ${BUDGET_S:-420} ]; then echo "skipped $I (time)" >> "$RAW/skipped.txt"; continue; fi
  TAG=${I//./_}
  grep -q " $I " cases.txt || continue
  T0=$(date +%s%N)
  timeout 120 ncu --clock-control none --metrics "$METRICS" -f -o "$RAW/rep_$TAG" \
      ./probe cases.txt "$I" > "$RAW/launch_$TAG.txt" 2>&1
  RC=$?
  ncu -i "$RAW/rep_$TAG.ncu-rep" --csv --page raw --print-units base > "$RAW/ncu_$TAG.csv" 2>&1
  T1=$(date +%s%N)
  echo "$I rc=$RC $(grep -c launched "$RAW/launch_$TAG.txt") launches $(( (T1 - T0) / 1000000 )) ms" >> "$RAW/timing.txt"
done
python3 parse_ncu.py cases.txt "$RAW" "$OUTD/bank_calibration.csv" > "$OUTD/summary.txt" 2>&1
cp cases.txt "$RAW/"
tar czf "$OUTD/raw.tgz" -C "$OUTD" raw && rm -rf "$RAW"
echo "== env"; tar xzf "$OUTD/raw.tgz" -O raw/env.txt 2>/dev/null | head -12
echo "== sass"; cat "$OUTD/sass_check.txt"
echo "== timing"; tar xzf "$OUTD/raw.tgz" -O raw/timing.txt 2>/dev/null
echo "== metrics"; tar xzf "$OUTD/raw.tgz" -O raw/metrics.txt 2>/dev/null
echo "== summary"; cat "$OUTD/summary.txt"
echo "total $(( $(date +%s) - START )) s"
