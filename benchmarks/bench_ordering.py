"""The ordering check's time on an FMHA-sized model (target: at most 1 s on a 2-core machine).

The model is written by hand in the shape of CUTLASS's Blackwell FMHA, not captured: six
warp roles (load, MMA, two softmax warpgroups, correction, epilogue), seven pipelines
(Q and K/V by TMA into UMMA, S0/S1 and O from the MMA, P0/P1 in place in S0/S1's TMEM
columns, the epilogue hand-off), a persistent tile loop around the KV loop, both with
dynamic trip counts, so the check runs every trip-count case (1 .. 2S+1 for S up to 3:
up to 49 KV iterations per case, and each loop at the fewest trips with the other at
the most). TMEM: S0, S1, O0, O1, with P0 in S0 and P1 in S1.

    python -m benchmarks.bench_ordering [--repeat 5] [--tiles N] [--json]

``--tiles N`` fixes both loops at N trips instead (one case, N*N KV iterations).
Prints the model's size, the number of findings and aliases, and the check's time:
median and max wall time over the repeats, and the median CPU time (the wall time
also counts waiting for a core on a shared machine).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from smemviz.analysis.ordering import (
    Access,
    BarrierSync,
    CallSite,
    CommitGroup,
    Fence,
    Group,
    Init,
    Loop,
    NamedBarrier,
    OrderingModel,
    Pipeline,
    PipelineOp,
    RegionSpan,
    RoleProgram,
    Tcgen05Wait,
    TmemAlloc,
    TmemDealloc,
    WaitGroup,
    WarpRole,
    check_ordering,
)

ROOT = Path(__file__).resolve().parent.parent

TILE = 16384  # bytes of one 128 x 64 bf16 tile
FILE = "fmha.py"
_line = iter(range(10, 10_000))


def at() -> CallSite:
    return CallSite(FILE, next(_line))


def op(name: str, pipeline: str) -> PipelineOp:
    return PipelineOp(op=name, pipeline=pipeline, site=at())


def produce(pipeline: str, *body) -> tuple:
    return (op("producer_acquire", pipeline), *body, op("producer_commit", pipeline), op("producer_advance", pipeline))


def consume(pipeline: str, *body) -> tuple:
    return (op("consumer_wait", pipeline), *body, op("consumer_release", pipeline), op("consumer_advance", pipeline))


def acc(name: str, kind: str) -> Access:
    return Access(kind=kind, region=name, site=at())


def pipelines() -> tuple[Pipeline, ...]:
    one, warpgroup = Group("thread", 1), Group("thread", 128)
    return (
        Pipeline("q", "tma_umma", 2, one, one, at(), tx_count=TILE),
        Pipeline("kv", "tma_umma", 3, one, one, at(), tx_count=TILE),
        Pipeline("s0", "umma_async", 1, one, warpgroup, at()),
        Pipeline("s1", "umma_async", 1, one, warpgroup, at()),
        Pipeline("p0", "async_umma", 1, warpgroup, one, at()),
        Pipeline("p1", "async_umma", 1, warpgroup, one, at()),
        Pipeline("o", "umma_async", 1, one, warpgroup, at()),
        Pipeline("epi", "async", 1, warpgroup, Group("thread", 32), at()),
    )


def loops(trips: int | None, tile_body: tuple, kv_body: tuple, after: tuple = ()) -> tuple:
    return (Loop("tile", trips, (*tile_body, Loop("kv", trips, kv_body), *after)),)


def load_role(trips: int | None) -> RoleProgram:
    kv = (*produce("kv", Access(kind="tma_load", region="sKV", stage="kv", site=at())),) * 2  # K then V
    return RoleProgram(
        WarpRole("load", 0), loops(trips, produce("q", Access(kind="tma_load", region="sQ", stage="q", site=at())), kv)
    )


def mma_role(trips: int | None) -> RoleProgram:
    def s_tile(i: int) -> tuple:
        return produce(
            f"s{i}",
            Access(kind="umma_read", region="sQ", stage="q", site=at()),
            Access(kind="umma_read", region="sKV", stage="kv", site=at()),
            acc(f"S{i}", "umma_write_acc"),
        )

    def pv(i: int) -> tuple:
        return consume(
            f"p{i}",
            acc(f"P{i}", "umma_read"),
            Access(kind="umma_read", region="sKV", stage="kv", site=at()),
            acc(f"O{i}", "umma_write_acc"),
        )

    kv = (op("consumer_wait", "kv"), *s_tile(0), *s_tile(1), op("consumer_release", "kv"), op("consumer_advance", "kv"))
    kv += (op("consumer_wait", "kv"), *pv(0), *pv(1), op("consumer_release", "kv"), op("consumer_advance", "kv"))
    tile = (op("consumer_wait", "q"), op("producer_acquire", "o"))  # O is rewritten only once correction read it
    after = (
        op("consumer_release", "q"),
        op("consumer_advance", "q"),
        op("producer_commit", "o"),
        op("producer_advance", "o"),
    )
    body = (BarrierSync(barrier="tmem_ready", site=at()), *loops(trips, tile, kv, after))
    return RoleProgram(WarpRole("mma", 1), body)


def softmax_role(i: int, trips: int | None) -> RoleProgram:
    kv = consume(
        f"s{i}",
        acc(f"S{i}", "tcgen05_ld"),
        Tcgen05Wait(kind="ld", site=at()),
        *produce(f"p{i}", acc(f"P{i}", "tcgen05_st"), Tcgen05Wait(kind="st", site=at())),
    )
    body = (BarrierSync(barrier="tmem_ready", site=at()), *loops(trips, (), kv), op("producer_tail", f"p{i}"))
    return RoleProgram(WarpRole(f"softmax{i}", 4 + 4 * i, 4), body)


def correction_role(trips: int | None) -> RoleProgram:
    tile = consume("o", acc("O0", "tcgen05_ld"), acc("O1", "tcgen05_ld"), Tcgen05Wait(kind="ld", site=at()))
    tile += produce("epi", acc("sO", "st"), Fence(kind="view_async_shared", site=at()))
    body = (
        TmemAlloc(columns=512, site=at()),
        BarrierSync(barrier="tmem_ready", site=at()),
        Loop("tile", trips, tile),
        BarrierSync(barrier="tmem_done", site=at()),
        TmemDealloc(columns=512, site=at()),
    )
    return RoleProgram(WarpRole("correction", 12, 4), body)


def epilogue_role(trips: int | None) -> RoleProgram:
    store = (
        acc("sO", "tma_store"),
        CommitGroup(unit="bulk", site=at()),
        WaitGroup(unit="bulk", pending=0, read=True, site=at()),
    )
    return RoleProgram(WarpRole("epilogue", 2), (Loop("tile", trips, consume("epi", *store)),))


def fmha_model(trips: int | None = None) -> OrderingModel:
    pipes = pipelines()
    roles = (
        load_role(trips),
        mma_role(trips),
        softmax_role(0, trips),
        softmax_role(1, trips),
        correction_role(trips),
        epilogue_role(trips),
    )
    # the softmax warpgroups and the MMA reach tmem_done through their producer tails and the O pipeline
    roles = tuple(
        RoleProgram(r.role, (*r.body, BarrierSync(barrier="tmem_done", site=at())))
        if r.role.name in ("mma", "softmax0", "softmax1")
        else r
        for r in roles
    )
    users = 128 + 128 + 32 + 128
    return OrderingModel(
        "fmha_synthetic",
        pipelines=pipes,
        barriers=(NamedBarrier("tmem_ready", users, at()), NamedBarrier("tmem_done", users, at())),
        regions=(
            RegionSpan("sQ", "smem", 0, 2 * TILE, 2),
            RegionSpan("sKV", "smem", 2 * TILE, 3 * TILE, 3),
            RegionSpan("sO", "smem", 5 * TILE, TILE),
            RegionSpan("S0", "tmem", 0, 128),
            RegionSpan("S1", "tmem", 128, 128),
            RegionSpan("P0", "tmem", 32, 32),
            RegionSpan("P1", "tmem", 160, 32),
            RegionSpan("O0", "tmem", 256, 128),
            RegionSpan("O1", "tmem", 384, 128),
        ),
        programs=roles,
        prologue=(*(Init(pipeline=p.name, site=at()) for p in pipes), BarrierSync(barrier="cta", site=at())),
        arch="sm_100a",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--tiles", type=int, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    model = fmha_model(args.tiles)
    times, cpu, report = [], [], None
    for _ in range(args.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        report = check_ordering(model)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    assert report is not None
    result = {
        "roles": len(model.programs),
        "pipelines": len(model.pipelines),
        "trip_cases": list(report.trips) or [args.tiles],
        "errors": len(report.findings.errors),
        "warnings": len(report.findings.warnings),
        "aliases": len(report.aliases),
        "median_s": round(statistics.median(times), 3),
        "max_s": round(max(times), 3),
        "median_cpu_s": round(statistics.median(cpu), 3),
        "target_s": 1.0,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(report.findings.text())
    for a in report.aliases:
        print("alias", a.line())
    print(
        f"{result['roles']} roles, {result['pipelines']} pipelines, trip cases {result['trip_cases']}: "
        f"{result['errors']} errors, {result['warnings']} warnings, {result['aliases']} aliases; "
        f"check median {result['median_s']} s, max {result['max_s']} s, median CPU {result['median_cpu_s']} s (target <= 1 s)"
    )


if __name__ == "__main__":
    main()
