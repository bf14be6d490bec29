"""compute_layout() speed: smemviz against CUTLASS's own allocator, same run.

For N allocations (a third of them in alias groups of 2-3 phases), builds
identical declarations for both libraries and times

* ``compute``: compute_layout() alone (declarations prepared beforehand),
* ``build+compute``: constructing the allocations, add()/add_alias_group(),
  then compute_layout() — where smemviz's validation happens.

Prints the best of several interleaved repeats, the ratio smemviz / CUTLASS,
and the ratio of the medians.
Target: ratio <= 1.5 with all validation on.

    python -m benchmarks.bench_core [--repeats 15]
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time


def declarations(n: int, seed: int = 0):
    """(standalone, groups) as plain tuples: (name, size, alignment)."""
    rng = random.Random(seed)
    aligns = [16, 64, 128, 128, 256, 1024]
    items = [(f"a{i}", rng.randint(16, 4096), rng.choice(aligns)) for i in range(n)]
    grouped = n // 3
    standalone = items[grouped:]
    groups, i = [], 0
    while i < grouped:
        phases = []
        for _ in range(rng.randint(2, 3)):
            k = rng.randint(1, 3)
            if i >= grouped:
                break
            phases.append(items[i : i + k])
            i += k
        if len(phases) >= 2:
            groups.append(phases)
        else:
            standalone.extend(m for p in phases for m in p)
    return standalone, groups


def build(lib, standalone, groups):
    alloc = lib.SmemAllocator()
    for name, size, align in standalone:
        alloc.add(lib.SmemAllocation(name, size, align))
    for phases in groups:
        alloc.add_alias_group([[lib.SmemAllocation(n, s, a) for n, s, a in p] for p in phases])
    return alloc


def time_compute(lib, decl):
    alloc = build(lib, *decl)
    gc.collect()
    t0 = time.perf_counter()
    alloc.compute_layout()
    return time.perf_counter() - t0, alloc.total


def time_build(lib, decl):
    gc.collect()
    t0 = time.perf_counter()
    alloc = build(lib, *decl)
    alloc.compute_layout()
    return time.perf_counter() - t0, alloc.total


def compare(fn, decl, repeats, ours_lib, their_lib):
    """Alternate the two libraries repeat by repeat so machine noise hits both alike;
    report the best and the median of each."""
    ours, theirs = [], []
    for _ in range(repeats):
        t, total_ours = fn(ours_lib, decl)
        ours.append(t)
        t, total_theirs = fn(their_lib, decl)
        theirs.append(t)
        assert total_ours == total_theirs, (total_ours, total_theirs)
    return min(ours), min(theirs), statistics.median(ours), statistics.median(theirs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--sizes", type=int, nargs="*", default=[100, 1000, 10000])
    args = parser.parse_args()

    from cutlass.experimental.task_scheduling import memory as reference

    import smemviz

    print(
        f"{'N':>6} {'what':<14} {'smemviz ms':>11} {'CUTLASS ms':>11} {'ratio':>6}"
        f" {'median ratio':>13}   (ms: best of {args.repeats})"
    )
    for n in args.sizes:
        decl = declarations(n)
        for label, fn in (("compute", time_compute), ("build+compute", time_build)):
            ours, theirs, ours_med, theirs_med = compare(fn, decl, args.repeats, smemviz, reference)
            print(
                f"{n:>6} {label:<14} {ours * 1e3:>11.3f} {theirs * 1e3:>11.3f} {ours / theirs:>6.2f}"
                f" {ours_med / theirs_med:>13.2f}"
            )


if __name__ == "__main__":
    main()
