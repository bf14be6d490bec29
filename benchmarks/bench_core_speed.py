"""The compiled search kernel against its previous form, same run, same instances.

The previous kernel (``smemviz/_aliasing/_core.py`` at commit ``a7303c2``, the
form before the search stack became a 2-D frame array and ``run`` was split
into steps) is read from git into a cache directory and compiled by numba
there; the current one comes from ``smemviz.solver``. Both run on the hardest
kernel-sized instances of ``bench_alias.py`` (seed 0), interleaved repeat by
repeat, timed in CPU seconds (``time.process_time``: the machine is shared),
best and median of the repeats:

* ``kernel``: one search each, below the optimum (it must exhaust: the proof
  of optimality), fresh table of searched states; per-node time.
* ``end to end``: ``solve_problem`` on the same instances, the previous kernel
  swapped in under the current solver (same calls, same nodes).

Node counts of both kernels must agree (checked).

``--dump FILE`` writes, for the ``--instances`` seed-0 instances, each
solution's nodes, peak, bound, proof and offsets as JSON (current kernel), to
compare byte for byte before and after a change to the kernel.

    python -m benchmarks.bench_core_speed [--hardest 6] [--repeats 5] [--end-to-end 12]
    python -m benchmarks.bench_core_speed --dump results.json [--instances 200]
    python -m benchmarks.bench_core_speed --minimalloc DIR

``--minimalloc DIR``: MiniMalloc's challenging CSVs (see ``bench_alias.py``), each
solved by both kernels under the current solver with the capacity as target
and "enough" (default node budget, no clock): the solutions must be identical;
CPU time of each, once.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType, SimpleNamespace

import smemviz.solver._exact as exact
from benchmarks.bench_alias import kernel_instance
from smemviz.solver import Problem, solve_problem
from smemviz.solver._solve import _SEARCH_ORDERS, _ranks

ROOT = Path(__file__).resolve().parent.parent

OLD_COMMIT = "a7303c2"
OLD_PATH = "smemviz/_aliasing/_core.py"


def load_old_core() -> ModuleType:
    """The previous kernel, compiled (numba's cache kept in a directory of its own)."""
    where = Path("/tmp") / f"smemviz_old_core_{OLD_COMMIT}"
    where.mkdir(exist_ok=True)
    src = where / "_old_core.py"
    text = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{OLD_COMMIT}:{OLD_PATH}"], check=True, capture_output=True, text=True
    ).stdout
    if not src.exists() or src.read_text() != text:
        src.write_text(text)
    spec = importlib.util.spec_from_file_location("_old_core", src)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    module.__dict__["COMPILE"] = True
    sys.modules["_old_core"] = module
    spec.loader.exec_module(module)
    return module


def old_as_new(old: ModuleType, new: ModuleType) -> SimpleNamespace:
    """The previous kernel behind the current kernel's calls (what ``_exact`` uses)."""

    def run(g, rank, order_id, cap, limit, memo):
        return old.run(
            g.size,
            g.align,
            g.span,
            rank,
            order_id,
            g.nbr_ptr,
            g.nbr_idx,
            g.sec_ptr,
            g.sec_idx,
            g.mem_ptr,
            g.mem_idx,
            cap,
            limit,
            memo.table,
            memo.info,
            memo.pool,
        )

    return SimpleNamespace(
        run=run,
        regrow=old.regrow,
        Graph=new.Graph,
        Memo=new.Memo,
        new_memo=new.new_memo,
        grown=new.grown,
        as_array=new.as_array,
        FOUND=old.FOUND,
        EXHAUSTED=old.EXHAUSTED,
        OUT_OF_NODES=old.OUT_OF_NODES,
    )


def instances(count: int, seed: int = 0) -> list[Problem]:
    rng = random.Random(seed)
    return [Problem.build(*kernel_instance(rng)) for _ in range(count)]


def solve_with(core, p: Problem):
    saved = exact.load_core
    exact.load_core = lambda compiled: core  # type: ignore[assignment]
    try:
        return solve_problem(p)
    finally:
        exact.load_core = saved  # type: ignore[assignment]


def kernel_search(core, p: Problem, cap: int) -> tuple[int, int, float]:
    """One search of the largest component within ``cap``: (status, nodes, CPU seconds)."""
    comp = max(p.components(), key=len)
    c = exact._Component(p, comp, core)
    rank = core.as_array(_ranks(p, comp, _SEARCH_ORDERS[0]))
    limit = 10**9
    c._make_room(1 << 16)
    t0 = time.process_time()
    status, nodes, _, _ = core.run(c.graph, rank, 0, cap, limit, c.memo)
    return int(status), int(nodes), time.process_time() - t0


def stats_line(label: str, old: list[float], new: list[float], scale: float, unit: str) -> str:
    return (
        f"  {label:<34} old best {min(old) * scale:8.3f} median {statistics.median(old) * scale:8.3f} {unit} | "
        f"new best {min(new) * scale:8.3f} median {statistics.median(new) * scale:8.3f} {unit} | "
        f"new/old best {min(new) / min(old):.3f} median {statistics.median(new) / statistics.median(old):.3f}"
    )


def timing(hardest: int, end_to_end: int, repeats: int, count: int) -> None:
    new = exact.load_core(True)
    old = old_as_new(load_old_core(), new)
    problems = instances(count)
    # warm both (compile or load from numba's cache) before timing
    for core in (old, new):
        solve_with(core, problems[0])
    sols = [solve_with(new, p) for p in problems]
    order = sorted(range(count), key=lambda k: -sols[k].nodes)
    print(f"seed 0, {count} instances; load average {' '.join(f'{x:.2f}' for x in _loadavg())}")

    picked = order[:hardest]
    caps = {k: sols[k].peak - 1 for k in picked}
    nodes_total = 0
    for k in picked:
        so, no, _ = kernel_search(old, problems[k], caps[k])
        sn, nn, _ = kernel_search(new, problems[k], caps[k])
        assert (so, no) == (sn, nn), (k, so, no, sn, nn)
        nodes_total += nn
    t_old, t_new = [], []
    for _ in range(repeats):
        for core, out in ((old, t_old), (new, t_new)):
            out.append(sum(kernel_search(core, problems[k], caps[k])[2] for k in picked))
    print(
        f"kernel: {hardest} hardest instances, one search each below the optimum, {nodes_total} nodes "
        f"(same for both), best/median of {repeats}"
    )
    print(stats_line("per node", t_old, t_new, 1e6 / nodes_total, "us"))

    if end_to_end == 0:
        return
    picked = order[:end_to_end]
    nodes_total = 0
    for k in picked:
        a, b = solve_with(old, problems[k]), solve_with(new, problems[k])
        assert a == b, k
        nodes_total += b.nodes
    t_old, t_new = [], []
    for _ in range(repeats):
        for core, out in ((old, t_old), (new, t_new)):
            t0 = time.process_time()
            for k in picked:
                solve_with(core, problems[k])
            out.append(time.process_time() - t0)
    print(
        f"end to end: {end_to_end} hardest instances, solve_problem, {nodes_total} nodes "
        f"(same solutions for both), best/median of {repeats}"
    )
    print(stats_line("total", t_old, t_new, 1.0, "s "))


def _loadavg() -> tuple[float, float, float]:
    import os

    return os.getloadavg()


def dump(path: Path, count: int) -> None:
    new = exact.load_core(True)
    out = []
    for p in instances(count):
        s = solve_with(new, p)
        out.append(
            {
                "nodes": s.nodes,
                "peak": s.peak,
                "lower_bound": s.lower_bound,
                "optimal": s.optimal,
                "offsets": list(s.offsets),
                "solver": s.solver,
            }
        )
    path.write_text(json.dumps(out, indent=0) + "\n")
    print(f"{count} instances: {sum(d['nodes'] for d in out)} nodes in all -> {path}")


def minimalloc(directory: Path) -> None:
    from bench_alias import CAPACITY, read_csv

    new = exact.load_core(True)
    old = old_as_new(load_old_core(), new)
    solve_with(old, instances(1)[0])
    files = sorted(directory.glob("*.csv"))
    print(f"MiniMalloc: {len(files)} files, fit {CAPACITY}; load average {' '.join(f'{x:.2f}' for x in _loadavg())}")
    for path in files:
        sizes, intervals = read_csv(path)
        p = Problem.from_intervals(sizes, [1] * len(sizes), intervals)
        out = []
        for core in (old, new):
            t0 = time.process_time()
            saved = exact.load_core
            exact.load_core = lambda compiled, core=core: core  # type: ignore[assignment]
            try:
                sol = solve_problem(p, target=CAPACITY, enough=CAPACITY)
            finally:
                exact.load_core = saved  # type: ignore[assignment]
            out.append((sol, time.process_time() - t0))
        (a, ta), (b, tb) = out
        assert a == b, path
        print(
            f"  {path.name:<16} nodes {b.nodes:>9} peak {b.peak:>8}  old {ta:6.2f} s  new {tb:6.2f} s  "
            f"new/old {tb / ta:.2f}  same solution"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--instances", type=int, default=200)
    parser.add_argument("--hardest", type=int, default=6)
    parser.add_argument("--end-to-end", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--dump", type=Path)
    parser.add_argument("--minimalloc", type=Path)
    args = parser.parse_args()
    if args.minimalloc is not None:
        minimalloc(args.minimalloc)
    elif args.dump is not None:
        dump(args.dump, args.instances)
    else:
        timing(args.hardest, args.end_to_end, args.repeats, args.instances)


if __name__ == "__main__":
    main()
