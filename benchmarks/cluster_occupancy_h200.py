"""How many thread-block clusters the CUDA driver lets be active at once on the GPU present.

Builds ``cluster_occupancy/probe.cu`` with ``nvcc`` and runs it: for every cluster shape (1..8
CTAs portable; 1..16 with ``cudaFuncAttributeNonPortableClusterSizeAllowed``), dynamic shared
memory per CTA and threads per CTA, it asks ``cudaOccupancyMaxActiveClusters`` (and
``cudaOccupancyMaxActiveBlocksPerMultiprocessor`` for the same CTA without clusters), prints the
device's SM count and ``cudaDevAttrClusterLaunch``, and reads which SMs share a GPC off the SM ids
of launched clusters' CTAs.

    python3 benchmarks/cluster_occupancy_h200.py --out results/cluster_occupancy_h200.csv
    python3 benchmarks/cluster_occupancy_h200.py --infer results/cluster_occupancy_h200.csv

``--infer`` (no GPU; needs numpy) finds the GPC layout the recorded answers imply: the counts
n_s of GPCs of s = 1..32 SMs that solve, for every (c, k) asked, answer(c, k) = sum over s >= k of
n_s * floor(s * min(c, cap) / k), c the CTAs per SM without clusters, k the cluster size and cap
the most CTAs per SM a cluster launch keeps (the ratio of the answer for k = 1 to the SM count).

Needs nvcc (CUDA 12 or later) and a GPU of compute capability 9.0 or later. The CSV's '#' lines
are the device facts and the GPC readout; results/cluster_occupancy_h200.md holds the H200's.
``tests/analysis/test_cluster_occupancy.py`` replays the CSV against smemviz's cluster model.
"""

from __future__ import annotations

import argparse
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent


def infer(path: str, largest: int = 32) -> int:
    """Print the GPC layout that the recorded answers imply, and whether it is the only one."""
    import csv

    import numpy as np

    text = pathlib.Path(path).read_text().splitlines()
    sms = int(next(line for line in text if "MultiProcessorCount" in line).rsplit(":", 1)[1])
    rows = list(csv.DictReader(line for line in text if line and not line.startswith("#")))
    ones = [r for r in rows if r["cluster_size"] == "1"]
    cap = max(int(r["max_active_clusters"]) // sms for r in ones)
    answers: dict[tuple[int, int], int] = {}
    for r in rows:
        key = (min(int(r["ctas_per_sm"]), cap), int(r["cluster_size"]))
        if answers.setdefault(key, int(r["max_active_clusters"])) != int(r["max_active_clusters"]):
            print(f"two answers for (c, k) = {key}: the answer depends on more than c and k")
            return 1
    sizes = range(1, largest + 1)
    a = np.array([[s * c // k if s >= k else 0 for s in sizes] for c, k in answers], dtype=float)
    b = np.array(list(answers.values()), dtype=float)
    x, *_ = np.linalg.lstsq(a, b, rcond=None)
    n = np.rint(x).astype(int)
    exact = bool((a @ n == b).all()) and bool((n >= 0).all())
    rank = int(np.linalg.matrix_rank(a))
    layout = [s for s, count in zip(sizes, n, strict=True) for _ in range(count)][::-1]
    print(f"{len(rows)} answers, {len(answers)} distinct (CTAs per SM, cluster size) pairs; cap {cap} CTAs/SM")
    print(f"GPC sizes: {layout} (sum {sum(layout)} of {sms} SMs)")
    print(f"matches every answer: {exact}; rank {rank} of {largest} sizes (unique: {rank == largest})")
    return 0 if exact else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="CSV file to write")
    parser.add_argument("--infer", metavar="CSV", help="infer the GPC layout from a recorded CSV")
    parser.add_argument("--arch", default="sm_90", help="nvcc -arch (default sm_90)")
    args = parser.parse_args()
    if args.infer:
        return infer(args.infer)
    if not args.out:
        parser.error("--out or --infer is needed")
    with tempfile.TemporaryDirectory() as tmp:
        exe = pathlib.Path(tmp) / "probe"
        build = ["nvcc", f"-arch={args.arch}", "-O2", "-o", str(exe), str(HERE / "cluster_occupancy" / "probe.cu")]
        print("$", " ".join(build[:-1]), "benchmarks/cluster_occupancy/probe.cu", flush=True)
        subprocess.run(build, check=True)
        done = subprocess.run([str(exe)], capture_output=True, text=True, check=False)
    sys.stderr.write(done.stderr)
    pathlib.Path(args.out).write_text(done.stdout)
    for line in done.stdout.splitlines():
        if line.startswith("#"):
            print(line)
    rows = [line for line in done.stdout.splitlines() if line and not line.startswith("#")]
    print(f"{max(len(rows) - 1, 0)} rows written to {args.out}; probe exited {done.returncode}")
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main())
