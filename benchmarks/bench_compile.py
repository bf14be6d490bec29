"""Compile and launch times of the SMEM probe, as a notebook cell sees them.

    python -m benchmarks.bench_compile [--arch sm_90a] [--launch] [--json PATH]

* import: ``import cutlass`` (the DSL) in this fresh process;
* first compile: the first ``compile_probe`` in the process (DSL start-up included);
* first compile, warm: a layout not seen before, in the same process;
* cached compile: ``compile_probe`` again on an equal layout (median of 50);
* launch round trip (``--launch``, needs a GPU): ``smemviz.probe()`` with the kernel
  cached, from the call to the checked result (median of 10).

Targets: first compile <= 3 s, cached compile <= 50 ms.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

FIRST_COMPILE_TARGET_S = 3.0
CACHED_COMPILE_TARGET_S = 0.050


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", default=None, help="target (default: this GPU's, else sm_90a)")
    parser.add_argument("--launch", action="store_true", help="also time probe() launches (GPU)")
    parser.add_argument("--json", type=Path, default=None, help="write the numbers here")
    args = parser.parse_args()

    t = time.perf_counter()
    import cutlass  # noqa: F401

    import_s = time.perf_counter() - t

    from smemviz.kernel import cache_info, compile_probe, current_gpu, probe
    from tools import kernel_layouts as examples

    gpu = current_gpu()
    arch = args.arch or (gpu.arch if gpu else "sm_90a")

    t = time.perf_counter()
    compile_probe(examples.smem_layout("typed_mix"), arch)
    first_s = time.perf_counter() - t

    t = time.perf_counter()
    compile_probe(examples.smem_layout("alias_groups"), arch)
    first_warm_s = time.perf_counter() - t

    cached = []
    for _ in range(50):
        layout = examples.smem_layout("alias_groups")  # a new, equal allocator each time
        t = time.perf_counter()
        compile_probe(layout, arch)
        cached.append(time.perf_counter() - t)
    cached_s = statistics.median(cached)

    numbers = {
        "arch": arch,
        "gpu": gpu.name if gpu else None,
        "import_cutlass_s": round(import_s, 4),
        "first_compile_s": round(first_s, 4),
        "first_compile_warm_s": round(first_warm_s, 4),
        "cached_compile_median_s": round(cached_s, 6),
        "cached_compile_max_s": round(max(cached), 6),
        "first_compile_target_s": FIRST_COMPILE_TARGET_S,
        "cached_compile_target_s": CACHED_COMPILE_TARGET_S,
        "first_compile_meets_target": first_s <= FIRST_COMPILE_TARGET_S,
        "cached_compile_meets_target": cached_s <= CACHED_COMPILE_TARGET_S,
        "cache": cache_info(),
    }
    if args.launch:
        if gpu is None:
            print("--launch needs a GPU; none here", file=sys.stderr)
            return 2
        layout = examples.smem_layout("alias_groups")
        probe(layout)  # first launch: module load
        rounds = []
        for _ in range(10):
            t = time.perf_counter()
            result = probe(layout)
            rounds.append(time.perf_counter() - t)
            if not result.passed:
                print(result.summary(), file=sys.stderr)
                return 1
        numbers["launch_roundtrip_median_s"] = round(statistics.median(rounds), 6)
        numbers["launch_roundtrip_max_s"] = round(max(rounds), 6)

    width = max(len(k) for k in numbers)
    for k, v in numbers.items():
        print(f"{k:<{width}}  {v}")
    if args.json:
        args.json.write_text(json.dumps(numbers, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
