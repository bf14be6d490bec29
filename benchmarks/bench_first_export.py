"""The first static export of a session, in fresh processes: without the
warm-up (the browser starts inside the export) and as in a notebook (an
explorer made, a few seconds of reading, then the export).

    python -m benchmarks.bench_first_export [--runs 3] [--read 5]

Target: first export <= 1.5 s with the warm-up.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 1.5

SCRIPT = """
import time
import smemviz
s = smemviz.SmemAllocator()
for i in range(6):
    s.add(smemviz.SmemAllocation(f"buf{{i}}", 4096 * (i + 1)))
s.compute_layout()
smemviz.explore(s)
time.sleep({read})
t = time.perf_counter()
smemviz.export(s, {out!r})
print(time.perf_counter() - t)
"""


def first_export(warm: bool, read: float, out: str) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("SMEMVIZ_NO_WARMUP", None)
    env["SMEMVIZ_WARMUP" if warm else "SMEMVIZ_NO_WARMUP"] = "1"
    code = textwrap.dedent(SCRIPT.format(read=read, out=out))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--read", type=float, default=5.0, help="seconds between the explorer and the export")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "first.svg")
        for warm in (False, True):
            times = [first_export(warm, args.read, out) for _ in range(args.runs)]
            label = "with warm-up   " if warm else "without warm-up"
            print(
                f"first SVG export {label}: median {statistics.median(times):.2f} s "
                f"(runs: {', '.join(f'{t:.2f}' for t in times)})"
            )
            if warm:
                verdict = "meets" if statistics.median(times) <= TARGET_S else "misses"
                print(f"target <= {TARGET_S} s: {verdict} it")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
