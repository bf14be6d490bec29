"""What showing the ordering costs, beside checking it: the analysis (the check runs once
in it), the TMEM map with its alias strips and the pipeline diagram, for the hand-written
model in the shape of CUTLASS's Blackwell FMHA (benchmarks/bench_ordering.py: six roles,
eight pipelines, ten aliases) on a TMEM plan.

    python -m benchmarks.bench_ordering_views [--repeat 20]
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import replace

from benchmarks.bench_ordering import fmha_model
from smemviz import TmemAllocation, TmemAllocator
from smemviz.analysis import analyse
from smemviz.analysis.ordering import check_ordering
from smemviz.figures import tmem_spec
from smemviz.figures._ordering import ordering_spec


def _median_ms(f, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    model = fmha_model()
    t = TmemAllocator(arch="sm_100a")
    t.add(TmemAllocation("all", 512))
    t.compute_layout()
    plan = replace(t.plan, ordering=model)
    an = analyse(plan)
    assert an.ordering is not None
    print(f"{len(model.programs)} roles, {len(model.pipelines)} pipelines, {len(an.ordering.aliases)} aliases")
    few = max(3, args.repeat // 4)  # the check is slow enough to need fewer runs
    rows = [
        ("check_ordering(model)", _median_ms(lambda: check_ordering(model), few)),
        ("analyse(plan) (the check once, lint reads it)", _median_ms(lambda: analyse(plan), few)),
        ("tmem_spec(analysed) (map with alias strips)", _median_ms(lambda: tmem_spec(an), args.repeat)),
        ("ordering_spec(analysed) (pipeline diagram)", _median_ms(lambda: ordering_spec(an), args.repeat)),
        (
            "ordering_spec(analysed).to_figure() (plotly validates)",
            _median_ms(lambda: ordering_spec(an).to_figure(), few),
        ),
    ]
    for name, ms in rows:
        print(f"{name:<56} {ms:8.2f} ms")


if __name__ == "__main__":
    main()
