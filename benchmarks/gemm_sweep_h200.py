"""The sweep behind notebook 05's "what does aliasing the epilogue buy?", run on the GPU:

    python3 -m benchmarks.gemm_sweep_h200 --out "$OUT"

f16 8192^3, cluster 2x1: tile 128x128 and 128x256, every stage count that fits,
C staging aliased over the operand stages or kept apart. Writes
``gemm_sweep_h200.json`` (a :class:`smemviz.kernel.SweepResult`) into ``--out``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results")
    parser.add_argument("--size", type=int, default=8192)
    args = parser.parse_args()

    from smemviz.kernel import GemmConfig, GemmProblem, max_stages, sweep

    configs = []
    for tile_n in (128, 256):
        for alias in (True, False):
            top = max_stages(GemmConfig(tile_n=tile_n, cluster_m=2, alias_epilogue=alias))
            configs += [
                GemmConfig(tile_n=tile_n, cluster_m=2, alias_epilogue=alias, stages=s) for s in range(2, top + 1)
            ]
    result = sweep(configs, GemmProblem(args.size, args.size, args.size), iters=10, rounds=7, warmup=5)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "gemm_sweep_h200.json").write_text(result.to_json())
    print(result.table(("label", "stages", "smem_requested", "registers", "tflops", "rel_err")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
