"""Lifetime aliasing: how small, how often proven, how fast.

1. Kernel-sized instances (seeded): 8-14 buffers, sizes 1-64 KiB (multiples
   of 16 B), alignments 16-1024, 4-10 steps, mostly contiguous lifetimes and
   some with a gap. For each: the solver (``auto``, default node budget) and
   size-ordered first fit (what compilers ship) and the best greedy order.
   Reports how many layouts are proven optimal, greedy's peak against the
   optimum, and solve time median / p95 / max.
   Targets: proven optimum on every instance, median <= 5 ms, p95 <= 100 ms,
   max <= 2 s. The search kernel is compiled (or loaded from numba's cache)
   before anything is timed; the line "search kernel" says which form ran.

2. MiniMalloc's "challenging" instances (github.com/google/minimalloc,
   benchmarks/challenging/*.csv: columns id,lower,upper,size; capacity
   1048576), read from a directory given on the command line, never stored
   here. Per file: buffers, LOAD (most bytes live at once), the best greedy
   peak, the solver's peak, peak / LOAD, whether it fits 1048576, time.
   The solver runs with the capacity as its target and as "enough" (a yes/no
   question, as MiniMalloc asks it: it stops at the first layout that fits)
   and a time limit per file (the one place a wall clock ends a search). Targets: never worse than the
   best greedy; fits the capacity on at least 8 of 11 within 60 s each.

   With ``--public DIR`` the same files go through the public API instead,
   read from their CSVs as they are (``read_minimalloc``: time values
   untouched, alignment 1) and solved by ``compute_layout(fit=capacity)``
   (the capacity from the file name) with the default node budget and no
   clock anywhere. Target: 11 / 11 fit, each within 5 s. With
   ``--public-default`` also ``compute_layout()`` alone: the default search,
   minimising, with its gap and whether it is proven (target: within 10 s).

3. With ``--figure N``: the lifetime map of an N-buffer layout, building its
   figure and exporting SVG warm. Targets: redraw <= 150 ms at 200 regions
   (the browser's part is not measured here), SVG export <= 0.5 s warm.

    python -m benchmarks.bench_alias [--instances 200] [--seed 0 | --seeds 0-14]
                                     [--challenging DIR] [--time-limit 60]
                                     [--public DIR [--public-default]]
                                     [--figure 200]
"""

from __future__ import annotations

import argparse
import csv
import random
import statistics
import time
from pathlib import Path

from smemviz.solver import Problem, solve_problem
from smemviz.solver._exact import core_kind
from smemviz.solver._greedy import ORDERS, best_greedy, first_fit, ordered

CAPACITY = 1048576


def kernel_instance(rng: random.Random) -> tuple[list[int], list[int], list[set[int]]]:
    n = rng.randint(8, 14)
    steps = rng.randint(4, 10)
    sizes = [rng.randint(64, 4096) * 16 for _ in range(n)]  # 1 KiB .. 64 KiB
    aligns = [rng.choice([16, 128, 128, 1024, 1024]) for _ in range(n)]
    lives = []
    for _ in range(n):
        first = rng.randrange(steps)
        live = set(range(first, rng.randint(first + 1, steps)))
        if rng.random() < 0.2:  # live again later (e.g. a buffer reused by the epilogue)
            again = rng.randrange(steps)
            live |= set(range(again, rng.randint(again + 1, steps)))
        lives.append(live)
    return sizes, aligns, lives


def quantile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def kernel_sized(count: int, seed: int) -> tuple[int, list[float], list[int]]:
    """Solve ``count`` instances of ``seed``, print the report; (proven, times in ms, nodes)."""
    rng = random.Random(seed)
    times, nodes, size_ratio, best_ratio = [], [], [], []
    proven = greedy_optimal = 0
    for _ in range(count):
        sizes, aligns, lives = kernel_instance(rng)
        start = time.perf_counter()
        p = Problem.build(sizes, aligns, lives)
        sol = solve_problem(p)
        times.append(time.perf_counter() - start)
        nodes.append(sol.nodes)
        proven += sol.optimal
        by_size = p.peak(first_fit(p, ordered(p, range(p.count), "size")))
        size_ratio.append(by_size / sol.peak)
        best_ratio.append(sol.greedy_peak / sol.peak)
        greedy_optimal += by_size == sol.peak and sol.optimal
    ms = [t * 1e3 for t in times]
    print(f"kernel-sized: {count} instances (seed {seed}), 8-14 buffers, 4-10 steps")
    print(f"  proven optimal:             {proven} / {count}")
    print(
        f"  size-ordered first fit optimal on {greedy_optimal} / {count}; "
        f"peak / ours mean {statistics.mean(size_ratio):.4f}, max {max(size_ratio):.4f}"
    )
    print(
        f"  best of {len(ORDERS)} greedy orders: peak / ours mean {statistics.mean(best_ratio):.4f}, "
        f"max {max(best_ratio):.4f}"
    )
    _times_line(ms, nodes)
    return proven, ms, nodes


def _times_line(ms: list[float], nodes: list[int]) -> None:
    print(f"  time ms: median {statistics.median(ms):.2f}, p95 {quantile(ms, 0.95):.2f}, max {max(ms):.1f}")
    print(f"  search nodes: median {statistics.median(nodes):.0f}, max {max(nodes)}")


def many_seeds(count: int, first: int, last: int) -> None:
    """Every seed from ``first`` to ``last``, then all their instances together."""
    proven, ms, nodes = 0, [], []
    for seed in range(first, last + 1):
        p, t, n = kernel_sized(count, seed)
        proven, ms, nodes = proven + p, ms + t, nodes + n
        print()
    print(f"all seeds {first}-{last}: {len(ms)} instances")
    print(f"  proven optimal:             {proven} / {len(ms)}")
    _times_line(ms, nodes)
    print(f"  over 1 s: {sum(t > 1000 for t in ms)}, over 100 ms: {sum(t > 100 for t in ms)}")


def read_csv(path: Path) -> tuple[list[int], list[tuple[int, int]]]:
    with path.open() as f:
        rows = list(csv.DictReader(f))
    return [int(r["size"]) for r in rows], [(int(r["lower"]), int(r["upper"])) for r in rows]


def past(deadline: float):
    return lambda: time.perf_counter() > deadline


def challenging(directory: Path, time_limit: float) -> None:
    files = sorted(directory.glob("*.csv"))
    if not files:
        raise SystemExit(f"no .csv files in {directory}")
    print(
        f"MiniMalloc challenging: {len(files)} files from {directory}, capacity {CAPACITY}, "
        f"time limit {time_limit:.0f} s per file"
    )
    print(
        f"  {'file':<16} {'buffers':>7} {'LOAD':>8} {'greedy':>8} {'order':>10} {'ours':>8} "
        f"{'ours/LOAD':>9} {'fits':>4} {'proven':>6} {'nodes':>8} {'time s':>7}"
    )
    fits = never_worse = 0
    for path in files:
        sizes, intervals = read_csv(path)
        start = time.perf_counter()
        p = Problem.from_intervals(sizes, [1] * len(sizes), intervals)
        sol = solve_problem(p, node_budget=10**12, target=CAPACITY, enough=CAPACITY, stop=past(start + time_limit))
        elapsed = time.perf_counter() - start
        order, _, greedy_peak = best_greedy(p)
        assert not p.violations(list(sol.offsets)), path
        load = max(sum(sizes[i] for i in s) for s in p.sections)
        fits += sol.peak <= CAPACITY
        never_worse += sol.peak <= greedy_peak
        print(
            f"  {path.name:<16} {len(sizes):>7} {load:>8} {greedy_peak:>8} {order:>10} {sol.peak:>8} "
            f"{sol.peak / load:>9.4f} {'yes' if sol.peak <= CAPACITY else 'no':>4} "
            f"{'yes' if sol.optimal else 'no':>6} {sol.nodes:>8} {elapsed:>7.2f}"
        )
    print(f"  fits {CAPACITY}: {fits} / {len(files)}; never worse than best greedy: {never_worse} / {len(files)}")


def public_api(directory: Path, minimise: bool) -> None:
    """MiniMalloc's files through the public API: read as they are, fit to their capacity."""
    from smemviz.sources._minimalloc import parse_minimalloc, read_minimalloc

    files = sorted(directory.glob("*.csv"))
    if not files:
        raise SystemExit(f"no .csv files in {directory}")
    for fit in [True] + ([False] if minimise else []):
        print(
            f"MiniMalloc challenging through the public API: {len(files)} files from {directory}, "
            + ("compute_layout(fit=capacity)" if fit else "compute_layout() (default search, minimising)")
        )
        print(
            f"  {'file':<16} {'buffers':>7} {'stretches':>9} {'LOAD':>8} {'total':>8} {'fits':>4} "
            f"{'proven':>6} {'gap':>7} {'time s':>7} {'cpu s':>6}"
        )
        fits, worst = 0, 0.0
        for path in files:
            capacity = int(path.name.split(".")[1])
            start, cpu = time.perf_counter(), time.process_time()
            s = read_minimalloc(path)
            s.compute_layout(**({"fit": capacity} if fit else {}))
            elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
            plan = s.plan
            rows = {b.id: b for b in parse_minimalloc(path.read_text())}
            placed = sorted(((rows[r.name].lower, r) for r in plan.regions), key=lambda pair: pair[0])
            for k, (_, r) in enumerate(placed):  # checked from the CSV itself: live together, no shared byte
                a = rows[r.name]
                for _, q in placed[k + 1 :]:
                    b = rows[q.name]
                    if b.lower >= a.upper:
                        break
                    assert r.offset + r.size <= q.offset or q.offset + q.size <= r.offset, (path, r.name, q.name)
            load = max(plan.live_profile)
            fits += plan.data_total <= capacity
            worst = max(worst, elapsed)
            print(
                f"  {path.name:<16} {len(rows):>7} {len(plan.steps):>9} {load:>8} {plan.data_total:>8} "
                f"{'yes' if plan.data_total <= capacity else 'no':>4} {'yes' if plan.optimal else 'no':>6} "
                f"{plan.data_total - plan.lower_bound:>7} {elapsed:>7.2f} {cpu:>6.2f}"
            )
        print(f"  fits its capacity: {fits} / {len(files)}; slowest {worst:.2f} s")


def figure_speed(regions: int, repeats: int = 5) -> None:
    """The lifetime map of a ``regions``-buffer plan: building its figure data,
    and a warm SVG export (kaleido; the first export starts the browser)."""
    import tempfile

    import smemviz

    rng = random.Random(1)
    steps = 24
    s = smemviz.SmemAllocator(steps=steps)
    for k in range(regions):
        first = rng.randrange(steps)
        s.add(
            smemviz.SmemAllocation(f"buf{k}", rng.randint(4, 256) * 16, alignment=rng.choice([16, 128])),
            live=range(first, rng.randint(first + 1, min(steps, first + 4))),
        )
    start = time.perf_counter()
    s.compute_layout(node_budget=2000)
    solve_s = time.perf_counter() - start
    from smemviz.figures import lifetime_spec

    spec_ms = []
    for _ in range(repeats):
        start = time.perf_counter()
        lifetime_spec(s.plan).to_figure()
        spec_ms.append((time.perf_counter() - start) * 1e3)
    svg_s = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(repeats + 1):
            fig = smemviz.experimental.lifetime_figure(s.plan)
            start = time.perf_counter()
            smemviz.export(s.plan, f"{tmp}/map{k}.svg", figure=fig)
            svg_s.append(time.perf_counter() - start)
    print(
        f"lifetime map, {regions} regions over {steps} steps (layout solved in {solve_s:.2f} s, "
        f"{s.plan.solver}, optimal {s.plan.optimal}):"
    )
    print(f"  figure data + Figure: median {statistics.median(spec_ms):.1f} ms")
    print(f"  SVG export: first {svg_s[0]:.2f} s, warm median {statistics.median(svg_s[1:]):.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--instances", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--seeds", metavar="FIRST-LAST", help="every seed in this range, then all instances together")
    ap.add_argument("--challenging", type=Path, help="directory with MiniMalloc's challenging CSVs")
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per challenging file")
    ap.add_argument("--public", type=Path, metavar="DIR", help="MiniMalloc's CSVs through the public API")
    ap.add_argument("--public-default", action="store_true", help="with --public: also the default search")
    ap.add_argument("--skip-kernel", action="store_true")
    ap.add_argument("--figure", type=int, metavar="REGIONS", help="also time the lifetime map at this many regions")
    args = ap.parse_args()
    start = time.perf_counter()
    kind = core_kind()  # compiles the search kernel (or loads numba's cache) outside every timing
    print(f"search kernel: {kind} (ready in {time.perf_counter() - start:.2f} s, before any timing)")
    if args.seeds:
        first, _, last = args.seeds.partition("-")
        many_seeds(args.instances, int(first), int(last or first))
    elif not args.skip_kernel:
        kernel_sized(args.instances, args.seed)
    if args.challenging:
        challenging(args.challenging, args.time_limit)
    if args.public:
        public_api(args.public, args.public_default)
    if args.figure:
        figure_speed(args.figure)


if __name__ == "__main__":
    main()
