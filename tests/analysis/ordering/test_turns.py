"""The model's constructs for kernels whose stage or count comes from more than one loop's
state: a refill guarded by a state's count (``When``), a prefetch capped at the stages
(``Loop.at_most``), a resource handle's snapshot, a buffer rotating with a tile loop
(``Rotation``), warpgroups taking turns (``SequenceOp``), a warpgroup's WGMMAs retired by
any of its warps, and loops whose counts capture could not relate (``FREE_LOOP``). Each is
clean as written and each edit that breaks it is caught."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from smemviz.analysis.ordering import (
    FREE_LOOP,
    Access,
    BarrierSync,
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
    Rotation,
    SequenceOp,
    WaitGroup,
    WarpRole,
    When,
    check_ordering,
    from_dict,
    to_dict,
)

from .kernels import STAGE, at

PROLOGUE = (
    Init(pipeline="ab", site=at(2)),
    Fence(kind="mbarrier_init", site=at(3)),
    BarrierSync(barrier="cta", site=at(4)),
)


def _errors(model: OrderingModel) -> list[str]:
    return [f.rule for f in check_ordering(model).findings.errors]


def _load(line: int) -> tuple:
    return (
        PipelineOp(op="producer_acquire", pipeline="ab", site=at(line)),
        Access(kind="tma_load", region="sA", stage="ab", site=at(line + 1)),
        PipelineOp(op="producer_advance", pipeline="ab", site=at(line + 2)),
    )


def refill(stages: int = 3, guard: bool = True, cap: bool = True) -> OrderingModel:
    """CUTLASS's non-specialised dense GEMM: warp 0 prefetches ``min(stages, k)`` tiles, then
    every warp consumes; warp 0 refills inside the loop while its count is below ``k``."""
    ab = Pipeline("ab", "tma_async", stages, Group("thread", 1), Group("warp", 2), at(1), tx_count=STAGE)
    consume = (
        PipelineOp(op="consumer_wait", pipeline="ab", site=at(30)),
        Access(kind="wgmma_read", region="sA", stage="ab", site=at(31)),
        CommitGroup(unit="wgmma", site=at(32)),
        WaitGroup(unit="wgmma", pending=0, site=at(33)),
        PipelineOp(op="consumer_release", pipeline="ab", arrivals=1, site=at(34)),
        PipelineOp(op="consumer_advance", pipeline="ab", site=at(35)),
    )
    block = When(pipeline="ab", side="producer", loop="k", body=_load(40)) if guard else None
    warp0 = (
        Loop("k", None, _load(20), at_most=stages if cap else None),
        Loop("k", None, (*consume, *([block] if block is not None else _load(40)))),
    )
    sync = BarrierSync(barrier="cta", site=at(50))
    programs = (  # after the loop: C staged over the first A stage, behind a CTA barrier
        RoleProgram(WarpRole("warp 0", 0), (*warp0, sync)),
        RoleProgram(
            WarpRole("warp 1", 1), (Loop("k", None, consume), sync, Access(kind="st", region="sC", site=at(51)))
        ),
    )
    regions = (RegionSpan("sA", "smem", 0, stages * STAGE, stages), RegionSpan("sC", "smem", 0, STAGE))
    return OrderingModel("refill", (ab,), (), regions, programs, PROLOGUE, "sm_90a")


def test_a_guarded_refill_after_a_capped_prefetch_is_clean():
    report = check_ordering(refill())
    assert not report.findings.errors and not report.findings.warnings, report.text()
    assert [(a.earlier, a.later, a.ordered) for a in report.aliases] == [("sA", "sC", True)]


def test_the_refill_without_its_guard_or_the_prefetch_without_its_cap_is_caught():
    assert "unordered-alias" in _errors(refill(guard=False))  # loads no wait consumes land over sC
    assert _errors(refill(cap=False))  # more prefetches than stages: a load over an unreleased stage


def handle(release_through_handle: bool = True) -> OrderingModel:
    """A consumer that waits and advances at once (``h = consumer.wait_and_advance()``), reads
    through the handle and releases it after: the handle keeps the stage it waited on."""
    ab = Pipeline("ab", "tma_async", 2, Group("thread", 1), Group("warp", 1), at(1), tx_count=STAGE)
    prod = (
        PipelineOp(op="producer_acquire", pipeline="ab", state="producer", site=at(20)),
        PipelineOp(op="producer_snapshot", pipeline="ab", state="h", source="producer", site=at(20)),
        PipelineOp(op="producer_advance", pipeline="ab", state="producer", site=at(20)),
        Access(kind="tma_load", region="sA", stage="ab", state="h", barrier="ab", site=at(21)),
    )
    release = PipelineOp(
        op="consumer_release", pipeline="ab", state="h" if release_through_handle else "consumer", site=at(34)
    )
    cons = (
        PipelineOp(op="consumer_wait", pipeline="ab", state="consumer", site=at(30)),
        PipelineOp(op="consumer_snapshot", pipeline="ab", state="h", source="consumer", site=at(30)),
        PipelineOp(op="consumer_advance", pipeline="ab", state="consumer", site=at(30)),
        Access(kind="ld", region="sA", stage="ab", state="h", site=at(31)),
        release,
    )
    programs = (
        RoleProgram(WarpRole("producer", 0), (Loop("k", 5, prod),)),
        RoleProgram(WarpRole("consumer", 1), (Loop("k", 5, cons),)),
    )
    regions = (RegionSpan("sA", "smem", 0, 2 * STAGE, 2),)
    return OrderingModel("handle", (ab,), (), regions, programs, PROLOGUE, "sm_90a")


def test_a_handle_keeps_the_stage_it_was_taken_at():
    report = check_ordering(handle())
    assert not report.findings.errors and not report.findings.warnings, report.text()
    # released through the participant's state, already advanced: the wrong stage is released
    assert _errors(handle(release_through_handle=False))


ROTATION = Rotation("tiles", 2)


def rotating(rotation: Rotation | None = ROTATION, pending: int = 1) -> OrderingModel:
    """A persistent epilogue: two C tiles per work tile into ``(tiles_done * 2 + i) % 2``,
    each stored by TMA, the store pipeline waiting until ``pending`` stores are in flight."""
    store = Pipeline("st", "tma_store", 2, Group("thread", 1), Group("thread", 1), at(1))
    epi = []
    for i in range(2):
        rot = replace(rotation, offset=i) if rotation is not None else None
        stage = None if rot is not None else 0
        epi += [
            Access(kind="stmatrix", region="sC", stage=stage, rotation=rot, site=at(50)),
            Fence(kind="view_async_shared", site=at(51)),
            Access(kind="tma_store", region="sC", stage=stage, rotation=rot, site=at(52)),
            PipelineOp(op="producer_commit", pipeline="st", site=at(53)),
            WaitGroup(unit="bulk", pending=pending, read=True, site=at(54)),
        ]
    programs = (RoleProgram(WarpRole("epilogue", 0), (Loop("tiles", None, tuple(epi)),)),)
    regions = (RegionSpan("sC", "smem", 0, 2 * STAGE, 2),)
    return OrderingModel("rotating", (store,), (), regions, programs, (), "sm_90a")


def test_a_rotating_buffer_is_one_slot_not_the_whole_region():
    report = check_ordering(rotating())
    assert not report.findings.errors, report.text()
    assert _errors(rotating(rotation=None)) == ["unordered-alias"]  # always slot 0: its store still reads
    assert _errors(rotating(pending=2)) == ["unordered-alias"]  # two stores in flight over two slots


def turns(wait: bool = True) -> OrderingModel:
    """Two warpgroups writing one buffer in turn (``PipelineOrder``): group 0 writes, then
    hands the turn to group 1, which waits for it before writing."""
    order = Pipeline("order", "order", 1, Group("thread", 128), Group("thread", 1), at(1), groups=2)

    def role(first: int, group: int) -> RoleProgram:
        body = [
            *([SequenceOp(op="wait", pipeline="order", group=group, site=at(60))] if wait or group == 0 else []),
            Access(kind="st", region="sO", site=at(61)),
            SequenceOp(op="arrive", pipeline="order", group=group, site=at(62)),
        ]
        return RoleProgram(WarpRole(f"wg{group}", first, 4), tuple(body))

    prologue = (Init(pipeline="order", site=at(2)), BarrierSync(barrier="cta", site=at(4)))
    regions = (RegionSpan("sO", "smem", 0, STAGE),)
    return OrderingModel("turns", (order,), (), regions, (role(4, 0), role(8, 1)), prologue, "sm_90a")


def test_warpgroups_taking_turns_order_their_writes():
    report = check_ordering(turns())
    assert not report.findings.errors and not report.findings.warnings, report.text()
    assert "unordered-alias" in _errors(turns(wait=False))


def warpgroup(retire: bool = True) -> OrderingModel:
    """One warpgroup split into two roles (warp 4 also stores): both issue the same WGMMAs
    over sQ; warp 4 retires them and writes sO over sQ. A warpgroup's WGMMA is one operation
    of its four warps, so warp 4's wait_group retires warps 5-7's part too."""
    mma = (
        Access(kind="wgmma_read", region="sQ", site=at(70)),
        CommitGroup(unit="wgmma", site=at(71)),
    )
    wait = (WaitGroup(unit="wgmma", pending=0, site=at(72)),)
    warp4 = (*mma, *(wait if retire else ()), Access(kind="st", region="sO", site=at(73)))
    others = (*mma, *wait)
    regions = (RegionSpan("sQ", "smem", 0, STAGE), RegionSpan("sO", "smem", 0, STAGE // 2))
    programs = (RoleProgram(WarpRole("warp 4", 4), warp4), RoleProgram(WarpRole("warps 5-7", 5, 3), others))
    return OrderingModel("warpgroup", (), (), regions, programs, (), "sm_90a")


def test_one_warp_retiring_its_warpgroup_s_wgmma_orders_the_others_reads():
    report = check_ordering(warpgroup())
    assert not report.findings.errors, report.text()
    assert [(a.earlier, a.later, a.ordered) for a in report.aliases] == [("sQ", "sO", True)]
    assert _errors(warpgroup(retire=False)) == ["unordered-alias"]


def unrelated(free: bool = True) -> OrderingModel:
    """A producer loop and two consumer loops whose counts add up to it, which no tracer can
    read: marked free, they are checked at counts where the pipeline balances."""
    ab = Pipeline("ab", "tma_async", 2, Group("thread", 1), Group("warp", 1), at(1), tx_count=STAGE)
    consume = (
        PipelineOp(op="consumer_wait", pipeline="ab", site=at(30)),
        Access(kind="ld", region="sA", stage="ab", site=at(31)),
        PipelineOp(op="consumer_release", pipeline="ab", site=at(32)),
        PipelineOp(op="consumer_advance", pipeline="ab", site=at(33)),
    )
    programs = (
        RoleProgram(WarpRole("producer", 0), (Loop("a", None, _load(20)),)),
        RoleProgram(WarpRole("consumer", 1), (Loop("b", None, consume), Loop("c", None, consume))),
    )
    regions = (RegionSpan("sA", "smem", 0, 2 * STAGE, 2),)
    meta = tuple((FREE_LOOP, d) for d in "abc") if free else ()
    return OrderingModel("unrelated", (ab,), (), regions, programs, PROLOGUE, "sm_90a", meta)


def test_loops_capture_could_not_relate_are_checked_where_the_pipelines_balance():
    report = check_ordering(unrelated())
    assert not report.findings.errors, report.text()
    (info,) = [f.message for f in report.findings.of("info") if "could not relate" in f.message]
    assert "a=2, b=1, c=1" in info
    assert "mbarrier-parity" in _errors(unrelated(free=False))  # tried apart: 1 load, 2 waits


@pytest.mark.parametrize("make", [refill, handle, rotating, turns, warpgroup, unrelated], ids=lambda f: f.__name__)
def test_the_new_constructs_round_trip_through_json(make):
    model = make()
    back = from_dict(json.loads(json.dumps(to_dict(model))))
    assert back == model
    assert check_ordering(back).text() == check_ordering(model).text()


def test_a_named_barrier_still_orders_across_warpgroups():
    """The warpgroup rule covers only roles inside one warpgroup: across two a barrier is needed."""
    model = warpgroup()
    split = replace(
        model,
        programs=(
            replace(model.programs[0], role=WarpRole("warp 4", 4)),
            replace(model.programs[1], role=WarpRole("warp 8", 8)),
        ),
        barriers=(NamedBarrier("x", 64, at(5)),),
    )
    assert _errors(split) == ["unordered-alias"]
