"""Small ordering models of the kernels the checker is for, written by hand: a
Hopper warp-specialised GEMM (TMA -> WGMMA, epilogue staged over the A/B stages)
and a Blackwell one (TMA -> UMMA into TMEM, epilogue through tcgen05.ld)."""

from __future__ import annotations

from dataclasses import replace

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
)

F = "gemm.py"
STAGE = 16384


def at(line: int) -> CallSite:
    return CallSite(F, line)


def hopper_gemm(stages: int = 3, k_tiles: int | None = 5) -> OrderingModel:
    """Producer warp loads A/B by TMA; two consumer warpgroups read them by WGMMA, then
    stage C by stmatrix over the A/B stages and store it by TMA."""
    ab = Pipeline("ab", "tma_async", stages, Group("thread", 1), Group("warp", 8), at(10), tx_count=2 * STAGE)
    producer = WarpRole("producer", 0, 1)
    consumer = WarpRole("mma", 4, 8)
    prod = RoleProgram(
        producer,
        (
            Loop(
                "k",
                k_tiles,
                (
                    PipelineOp(op="producer_acquire", pipeline="ab", site=at(20)),
                    Access(kind="tma_load", region="sA", stage="ab", site=at(21)),
                    Access(kind="tma_load", region="sB", stage="ab", site=at(22)),
                    PipelineOp(op="producer_commit", pipeline="ab", site=at(23)),
                    PipelineOp(op="producer_advance", pipeline="ab", site=at(24)),
                ),
            ),
        ),
    )
    cons = RoleProgram(
        consumer,
        (
            Loop(
                "k",
                k_tiles,
                (
                    PipelineOp(op="consumer_wait", pipeline="ab", site=at(40)),
                    Access(kind="wgmma_read", region="sA", stage="ab", site=at(41)),
                    Access(kind="wgmma_read", region="sB", stage="ab", site=at(42)),
                    CommitGroup(unit="wgmma", site=at(43)),
                    WaitGroup(unit="wgmma", pending=0, site=at(44)),
                    PipelineOp(op="consumer_release", pipeline="ab", site=at(45)),
                    PipelineOp(op="consumer_advance", pipeline="ab", site=at(46)),
                ),
            ),
            Access(kind="stmatrix", region="sC", site=at(60)),
            Fence(kind="view_async_shared", site=at(61)),
            BarrierSync(barrier="epi", site=at(62)),
            Access(kind="tma_store", region="sC", site=at(63)),
            CommitGroup(unit="bulk", site=at(64)),
            WaitGroup(unit="bulk", pending=0, read=True, site=at(65)),
        ),
    )
    return OrderingModel(
        "hopper_gemm",
        pipelines=(ab,),
        barriers=(NamedBarrier("epi", consumer.threads, at(11)),),
        regions=(
            RegionSpan("sA", "smem", 0, stages * STAGE, stages),
            RegionSpan("sB", "smem", stages * STAGE, stages * STAGE, stages),
            RegionSpan("sC", "smem", 0, 32768),
        ),
        programs=(prod, cons),
        prologue=(
            Init(pipeline="ab", site=at(12)),
            Fence(kind="mbarrier_init", site=at(13)),
            BarrierSync(barrier="cta", site=at(14)),
        ),
        arch="sm_90a",
    )


def blackwell_gemm(stages: int = 4, k_tiles: int | None = 6) -> OrderingModel:
    """TMA warp loads A/B, MMA warp runs UMMA into TMEM and commits; epilogue warps wait
    the accumulator, tcgen05.ld it, and warp 4 frees TMEM after a barrier."""
    ab = Pipeline("ab", "tma_umma", stages, Group("thread", 1), Group("thread", 1), at(10), tx_count=2 * STAGE)
    acc = Pipeline("acc", "umma_async", 1, Group("thread", 1), Group("thread", 128), at(11))
    tma, mma, epi = WarpRole("tma", 0, 1), WarpRole("mma", 1, 1), WarpRole("epilogue", 4, 4)
    prog_tma = RoleProgram(
        tma,
        (
            Loop(
                "k",
                k_tiles,
                (
                    PipelineOp(op="producer_acquire", pipeline="ab", site=at(20)),
                    Access(kind="tma_load", region="sA", stage="ab", site=at(21)),
                    Access(kind="tma_load", region="sB", stage="ab", site=at(22)),
                    PipelineOp(op="producer_advance", pipeline="ab", site=at(23)),
                ),
            ),
        ),
    )
    prog_mma = RoleProgram(
        mma,
        (
            PipelineOp(op="producer_acquire", pipeline="acc", site=at(30)),
            Loop(
                "k",
                k_tiles,
                (
                    PipelineOp(op="consumer_wait", pipeline="ab", site=at(31)),
                    Access(kind="umma_read", region="sA", stage="ab", site=at(32)),
                    Access(kind="umma_read", region="sB", stage="ab", site=at(33)),
                    Access(kind="umma_write_acc", region="tAcc", site=at(34)),
                    PipelineOp(op="consumer_release", pipeline="ab", site=at(35)),
                    PipelineOp(op="consumer_advance", pipeline="ab", site=at(36)),
                ),
            ),
            PipelineOp(op="producer_commit", pipeline="acc", site=at(37)),
        ),
    )
    prog_epi = RoleProgram(
        epi,
        (
            PipelineOp(op="consumer_wait", pipeline="acc", site=at(50)),
            Access(kind="tcgen05_ld", region="tAcc", site=at(51)),
            Tcgen05Wait(kind="ld", site=at(52)),
            BarrierSync(barrier="tmem_free", site=at(53)),
            TmemDealloc(columns=256, site=at(54)),
        ),
    )
    return OrderingModel(
        "blackwell_gemm",
        pipelines=(ab, acc),
        barriers=(NamedBarrier("tmem_free", epi.threads, at(12)),),
        regions=(
            RegionSpan("sA", "smem", 0, stages * STAGE, stages),
            RegionSpan("sB", "smem", stages * STAGE, stages * STAGE, stages),
            RegionSpan("tAcc", "tmem", 0, 256),
        ),
        programs=(prog_tma, prog_mma, prog_epi),
        prologue=(
            Init(pipeline="ab", site=at(13)),
            Init(pipeline="acc", site=at(14)),
            TmemAlloc(columns=256, site=at(15)),
            BarrierSync(barrier="cta", site=at(16)),
        ),
        arch="sm_100a",
    )


def drop(model: OrderingModel, role: str, line: int) -> OrderingModel:
    """The model with the event written at ``line`` in ``role``'s program removed."""

    def strip(steps):
        out = []
        for s in steps:
            if isinstance(s, Loop):
                out.append(replace(s, body=strip(s.body)))
            elif s.site.line != line:
                out.append(s)
        return tuple(out)

    programs = tuple(replace(p, body=strip(p.body)) if p.role.name == role else p for p in model.programs)
    return replace(model, programs=programs)
