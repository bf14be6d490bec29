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
            BarrierSync(barrier="tmem_ready", site=at(29)),
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
            TmemAlloc(columns=256, site=at(48)),
            BarrierSync(barrier="tmem_ready", site=at(49)),
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
        barriers=(
            NamedBarrier("tmem_free", epi.threads, at(12)),
            NamedBarrier("tmem_ready", epi.threads + mma.threads, at(17)),
        ),
        regions=(
            RegionSpan("sA", "smem", 0, stages * STAGE, stages),
            RegionSpan("sB", "smem", stages * STAGE, stages * STAGE, stages),
            RegionSpan("tAcc", "tmem", 0, 256),
        ),
        programs=(prog_tma, prog_mma, prog_epi),
        prologue=(
            Init(pipeline="ab", site=at(13)),
            Init(pipeline="acc", site=at(14)),
            BarrierSync(barrier="cta", site=at(16)),
        ),
        arch="sm_100a",
    )


def tmem_in_place(tiles: int = 3) -> OrderingModel:
    """Blackwell FMHA's trick in small: softmax reads S from TMEM and writes P into S's own
    columns; the MMA warp reads P only after the in-place pipeline says it is written,
    and the next S overwrites P only after the MMA's commit. Softmax frees TMEM after
    its producer tail has seen every commit (ordered only through that chain)."""
    s_pipe = Pipeline("s_full", "umma_async", 1, Group("thread", 1), Group("thread", 128), at(10))
    p_pipe = Pipeline("p_inplace", "async_umma", 1, Group("thread", 128), Group("thread", 1), at(11))
    mma, softmax = WarpRole("mma", 1, 1), WarpRole("softmax", 4, 4)
    prog_mma = RoleProgram(
        mma,
        (
            BarrierSync(barrier="tmem_ready", site=at(29)),
            Loop(
                "tile",
                tiles,
                (
                    PipelineOp(op="producer_acquire", pipeline="s_full", site=at(30)),
                    Access(kind="umma_write_acc", region="S", site=at(31)),
                    PipelineOp(op="producer_commit", pipeline="s_full", site=at(32)),
                    PipelineOp(op="producer_advance", pipeline="s_full", site=at(33)),
                    PipelineOp(op="consumer_wait", pipeline="p_inplace", site=at(34)),
                    Access(kind="umma_read", region="P", site=at(35)),
                    Access(kind="umma_write_acc", region="O", site=at(36)),
                    PipelineOp(op="consumer_release", pipeline="p_inplace", site=at(37)),
                    PipelineOp(op="consumer_advance", pipeline="p_inplace", site=at(38)),
                ),
            ),
        ),
    )
    prog_softmax = RoleProgram(
        softmax,
        (
            TmemAlloc(columns=256, site=at(48)),
            BarrierSync(barrier="tmem_ready", site=at(49)),
            Loop(
                "tile",
                tiles,
                (
                    PipelineOp(op="consumer_wait", pipeline="s_full", site=at(50)),
                    Access(kind="tcgen05_ld", region="S", site=at(51)),
                    Tcgen05Wait(kind="ld", site=at(52)),
                    PipelineOp(op="producer_acquire", pipeline="p_inplace", site=at(53)),
                    Access(kind="tcgen05_st", region="P", site=at(54)),
                    Tcgen05Wait(kind="st", site=at(55)),
                    PipelineOp(op="producer_commit", pipeline="p_inplace", site=at(56)),
                    PipelineOp(op="producer_advance", pipeline="p_inplace", site=at(57)),
                    PipelineOp(op="consumer_release", pipeline="s_full", site=at(58)),
                    PipelineOp(op="consumer_advance", pipeline="s_full", site=at(59)),
                ),
            ),
            PipelineOp(op="producer_tail", pipeline="p_inplace", site=at(60)),
            TmemDealloc(columns=256, site=at(61)),
        ),
    )
    return OrderingModel(
        "tmem_in_place",
        pipelines=(s_pipe, p_pipe),
        barriers=(NamedBarrier("tmem_ready", softmax.threads + mma.threads, at(12)),),
        regions=(
            RegionSpan("S", "tmem", 0, 128),
            RegionSpan("P", "tmem", 64, 32),
            RegionSpan("O", "tmem", 128, 128),
        ),
        programs=(prog_mma, prog_softmax),
        prologue=(
            Init(pipeline="s_full", site=at(13)),
            Init(pipeline="p_inplace", site=at(14)),
            BarrierSync(barrier="cta", site=at(15)),
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


def hopper_gemm_lagged(k_tiles: int = 5, keep: int = 1) -> OrderingModel:
    """The Hopper GEMM as CUTLASS writes its mainloop: one WGMMA kept in flight
    (``wait_group(keep)``) and each stage released one k-tile behind the one read,
    through a second consumer ``PipelineState`` ("release")."""
    base = hopper_gemm(k_tiles=k_tiles)
    first = (
        PipelineOp(op="consumer_wait", pipeline="ab", site=at(40)),
        Access(kind="wgmma_read", region="sA", stage="ab", site=at(41)),
        Access(kind="wgmma_read", region="sB", stage="ab", site=at(42)),
        CommitGroup(unit="wgmma", site=at(43)),
        PipelineOp(op="consumer_advance", pipeline="ab", site=at(46)),
    )
    steady = (
        *first[:4],
        WaitGroup(unit="wgmma", pending=keep, site=at(44)),
        PipelineOp(op="consumer_release", pipeline="ab", state="release", site=at(45)),
        PipelineOp(op="consumer_advance", pipeline="ab", site=at(46)),
        PipelineOp(op="consumer_advance", pipeline="ab", state="release", site=at(47)),
    )
    drain = (
        WaitGroup(unit="wgmma", pending=0, site=at(50)),
        PipelineOp(op="consumer_release", pipeline="ab", state="release", site=at(51)),
        PipelineOp(op="consumer_advance", pipeline="ab", state="release", site=at(52)),
    )
    cons = base.programs[1]
    body = (*first, Loop("k", k_tiles - 1, steady), *drain, *cons.body[1:])
    return replace(base, programs=(base.programs[0], replace(cons, body=body)))
