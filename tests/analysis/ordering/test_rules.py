"""Each rule on hand-written kernels: clean as written, and each edit caught by the
rule it breaks, naming the regions and the call sites."""

from __future__ import annotations

from dataclasses import replace

import pytest

from smemviz.analysis.ordering import (
    Access,
    BarrierSync,
    Loop,
    RegionSpan,
    StateSpec,
    TmemAlloc,
    TmemDealloc,
    check_ordering,
)

from .kernels import at, blackwell_gemm, drop, hopper_gemm, tmem_in_place


def errors(model):
    return check_ordering(model).findings.errors


def only(model, rule):
    """The one error of the model, of ``rule``."""
    errs = errors(model)
    assert [f.rule for f in errs] == [rule], "\n".join(f.line() for f in errs)
    return errs[0]


@pytest.mark.parametrize("make", [hopper_gemm, blackwell_gemm, tmem_in_place])
def test_the_kernels_as_written_are_clean(make):
    report = check_ordering(make())
    assert not report.findings.errors and not report.findings.warnings, report.findings.text()
    assert report.aliases and all(a.ordered for a in report.aliases)


def test_every_alias_lists_its_edge():
    lines = {(a.earlier, a.later): a.edge for a in check_ordering(tmem_in_place()).aliases}
    assert "tcgen05.wait::ld at gemm.py:52" in lines[("S", "P")]  # P written over S once S is read
    assert "p_inplace" in lines[("P", "S")]  # the next S waits the MMA's commit of P's reads
    assert "producer_tail" in lines[("O", "TMEM allocation")]  # dealloc ordered only through the chain
    hopper = {(a.earlier, a.later): a.edge for a in check_ordering(hopper_gemm()).aliases}
    assert hopper[("sA", "sC")] == "wgmma wait_group(0) at gemm.py:44"


def test_dropped_release_hangs_the_producer_with_a_witness():
    f = only(drop(hopper_gemm(), "mma", 45), "mbarrier-parity")
    assert f.regions == ("ab",)
    assert "stage 0's empty barrier of 'ab' waits phase 0" in f.message
    assert "warp 0 ('producer') at gemm.py:20" in f.message and "expects 8 arrivals, gets 0" in f.message


def test_dropped_view_fence_before_the_tma_store():
    f = only(drop(hopper_gemm(), "mma", 61), "proxy-fence")
    assert f.regions == ("sC",)
    assert "stmatrix at gemm.py:60" in f.message and "tma_store at gemm.py:63" in f.message
    assert "fence_view_async_shared" in f.fix


def test_wrong_arrive_count():
    model = hopper_gemm()
    model = replace(model, pipelines=(replace(model.pipelines[0], empty_count=9),))
    f = only(model, "mbarrier-arrive-count")
    assert "expects 9 arrivals, gets 8" in f.message and "warps 4-11 ('mma') at gemm.py:45" in f.message


def test_wrong_tx_count():
    model = hopper_gemm()
    model = replace(model, pipelines=(replace(model.pipelines[0], tx_count=3 * 16384),))
    f = only(model, "mbarrier-tx-bytes")
    assert "expect_tx is 49,152 B" in f.message and "bring 32,768 B" in f.message


def test_multicast_multiplies_the_landing_bytes():
    """A box multicast to 2 CTAs lands twice per stage (its peer sends the same), so the
    tx count must say 2 x the box."""
    model = hopper_gemm()
    prod = model.programs[0]
    loop = prod.body[0]
    body = tuple(replace(e, bytes=8192, multicast=2) if isinstance(e, Access) else e for e in loop.body)
    model = replace(model, programs=(replace(prod, body=(replace(loop, body=body),)), model.programs[1]))
    assert not errors(model)
    halved = replace(model, pipelines=(replace(model.pipelines[0], tx_count=16384),))
    first = errors(halved)[0]  # the boxes land after their phase completed; the consumer's reads race them
    assert (
        first.rule == "mbarrier-tx-bytes"
        and "before the TMA load by warp 0 ('producer') at gemm.py:22 lands" in first.message
    )


def test_stage_count_disagreement_is_a_parity_error():
    model = hopper_gemm(k_tiles=4)
    cons = replace(model.programs[1], states=(StateSpec("ab", "consumer", 2, 0),))
    f = only(replace(model, programs=(model.programs[0], cons)), "mbarrier-parity")
    assert "'ab'" in f.message


def test_single_trip_of_a_dynamic_loop_is_checked():
    """A consumer that never releases hangs only past the stage count; the dynamic trip
    sweep finds it, and says which count."""
    report = check_ordering(drop(hopper_gemm(k_tiles=None), "mma", 45))
    [f] = report.findings.errors
    assert f.rule == "mbarrier-parity" and "with 4 trips of 'k'" in f.message
    assert report.trips == (1, 2, 3, 4, 7)
    infos = [i for i in report.findings.of("info") if "'k' has a trip count known only at run time" in i.message]
    assert infos


def test_missing_wait_group_read_before_the_rewrite():
    """Two tiles of epilogue: sC rewritten while the first tile's TMA store may read it."""
    model = hopper_gemm()
    cons = model.programs[1]
    epilogue = cons.body[1:]
    tiles = Loop("tile", 2, epilogue)
    fixed = replace(model, programs=(model.programs[0], replace(cons, body=(cons.body[0], tiles))))
    assert not errors(fixed)
    f = only(drop(fixed, "mma", 65), "unordered-alias")
    assert f.regions == ("sC",) and "tma_store at gemm.py:63" in f.message and "stmatrix at gemm.py:60" in f.message
    assert "cp.async.bulk.wait_group.read" in f.fix


def test_dropped_tmem_wait_ld_before_dealloc():
    f = only(drop(blackwell_gemm(), "epilogue", 52), "unordered-alias")
    assert f.regions == ("tAcc", "TMEM allocation")
    assert "wait::ld" in f.fix


def test_in_place_p_over_s_needs_the_wait_ld():
    errs = errors(drop(tmem_in_place(), "softmax", 52))
    pairs = {f.regions for f in errs}
    assert ("S", "P") in pairs and all(f.rule == "unordered-alias" for f in errs)


def test_dealloc_without_the_chain_from_the_mma():
    errs = errors(drop(tmem_in_place(), "softmax", 60))
    assert {f.regions for f in errs} == {("P", "TMEM allocation"), ("O", "TMEM allocation")}
    assert all("tcgen05.commit" in f.fix for f in errs)


def test_dealloc_by_another_warp():
    model = blackwell_gemm()
    epi = model.programs[2]
    mma = model.programs[1]
    moved_epi = replace(epi, body=tuple(e for e in epi.body if not isinstance(e, TmemDealloc)))
    moved_mma = replace(mma, body=(*mma.body, TmemDealloc(columns=256, site=at(38))))
    errs = errors(replace(model, programs=(model.programs[0], moved_mma, moved_epi)))
    owner = [f for f in errs if f.rule == "tmem-lifecycle"]
    assert len(owner) == 1 and "freed by warp 1 ('mma') at gemm.py:38, another warp" in owner[0].message


def test_tmem_never_freed_and_over_budget():
    model = drop(blackwell_gemm(), "epilogue", 54)
    f = only(model, "tmem-lifecycle")
    assert "not freed" in f.message
    epi = model.programs[2]
    big = replace(
        epi, body=(TmemAlloc(columns=1024, site=at(48)), *epi.body[1:], TmemDealloc(columns=1024, site=at(54)))
    )
    errs = errors(replace(model, programs=(*model.programs[:2], big)))
    assert any("1,024 TMEM columns" in f.message for f in errs)
    # sm_107 gives a CTA 576 columns, taken exclusively
    wide = replace(
        big, body=(TmemAlloc(columns=576, site=at(48)), *epi.body[1:], TmemDealloc(columns=576, site=at(54)))
    )
    assert not errors(replace(model, programs=(*model.programs[:2], wide), arch="sm_107a"))


def test_tmem_access_before_alloc():
    model = blackwell_gemm()
    mma = model.programs[1]
    early = replace(mma, body=mma.body[1:])  # no tmem_ready sync: UMMA may run before the alloc
    errs = errors(replace(model, programs=(model.programs[0], early, model.programs[2])))
    assert any(f.rule == "tmem-lifecycle" and "before TMEM is allocated" in f.message for f in errs)


def test_two_cta_alloc_needs_a_cluster_barrier():
    model = blackwell_gemm()
    epi = model.programs[2]
    pair = replace(epi, body=(TmemAlloc(columns=256, site=at(48), cta_group=2), *epi.body[1:]))
    paired = replace(model, programs=(*model.programs[:2], pair))
    f = only(paired, "tmem-lifecycle")
    assert "no cluster barrier" in f.message
    synced = replace(pair, body=(*pair.body[:-1], BarrierSync(barrier="cluster", site=at(53)), pair.body[-1]))
    fixed_model = replace(paired, programs=(*model.programs[:2], synced))
    # the cluster barrier needs every role; the others reach it at the end of their programs
    others = tuple(replace(p, body=(*p.body, BarrierSync(barrier="cluster", site=at(70)))) for p in model.programs[:2])
    assert not errors(replace(fixed_model, programs=(*others, synced)))


def test_barrier_used_before_init_and_zero_count():
    model = hopper_gemm()
    late = replace(model, prologue=(BarrierSync(barrier="cta", site=at(14)), *model.prologue[:1]))
    f = only(late, "mbarrier-init")
    assert "'ab'" in f.message and "without being ordered after its init" in f.message
    zero = replace(model, pipelines=(replace(model.pipelines[0], full_count=0),))
    assert "mbarrier-init" in {f.rule for f in errors(zero)}
    unrecorded = check_ordering(replace(model, prologue=()))  # a model that says nothing of inits
    assert not unrecorded.findings.errors
    assert [f.rule for f in unrecorded.findings.of("info")] == ["mbarrier-init"]


def test_named_barrier_thread_count():
    model = blackwell_gemm()
    wrong = replace(model, barriers=(model.barriers[0], replace(model.barriers[1], threads=64)))
    assert "mbarrier-arrive-count" in {f.rule for f in errors(wrong)}


def test_unknown_names_are_said_not_read():
    model = hopper_gemm()
    cons = model.programs[1]
    extra = replace(cons, body=(*cons.body, Access(kind="ld", region="nowhere", site=at(99))))
    report = check_ordering(replace(model, programs=(model.programs[0], extra)))
    infos = report.findings.of("info")
    assert any("nowhere" in f.message and "not read" in f.message for f in infos)
    assert not report.findings.errors


def test_p_moved_out_of_s_drops_the_alias():
    model = tmem_in_place()
    moved = replace(model, regions=(*model.regions[:1], RegionSpan("P", "tmem", 256, 32), model.regions[2]))
    pairs = {(a.earlier, a.later) for a in check_ordering(moved).aliases}
    assert ("S", "P") not in pairs and ("S", "P") in {(a.earlier, a.later) for a in check_ordering(model).aliases}


def _cp_async_pipeline(release_after_commit: bool = True):
    """Ampere-style: a producer warp copies a tile by cp.async and arrives on the full
    barrier when the copies land (``cp.async.mbarrier.arrive``); a consumer reads it."""
    from smemviz.analysis.ordering import Group, Init, OrderingModel, Pipeline, PipelineOp, RoleProgram, WarpRole

    pipe = Pipeline("cp", "cp_async", 2, Group("thread", 32), Group("thread", 32), at(10))
    producer = (
        PipelineOp(op="producer_acquire", pipeline="cp", site=at(20)),
        Access(kind="cp_async", region="sT", stage="cp", site=at(21)),
        PipelineOp(op="producer_commit", pipeline="cp", site=at(22)),
        PipelineOp(op="producer_advance", pipeline="cp", site=at(23)),
    )
    consumer = (
        PipelineOp(op="consumer_wait", pipeline="cp", site=at(30)),
        Access(kind="ldmatrix", region="sT", stage="cp", site=at(31)),
        PipelineOp(op="consumer_release", pipeline="cp", site=at(32)),
        PipelineOp(op="consumer_advance", pipeline="cp", site=at(33)),
    )
    if not release_after_commit:
        producer = (producer[0], producer[2], producer[1], producer[3])  # arrives before issuing the copy
    return OrderingModel(
        "cp_async",
        pipelines=(pipe,),
        regions=(RegionSpan("sT", "smem", 0, 2 * 4096, 2),),
        programs=(
            RoleProgram(WarpRole("copy", 0), (Loop("k", 5, producer),)),
            RoleProgram(WarpRole("math", 1), (Loop("k", 5, consumer),)),
        ),
        prologue=(Init(pipeline="cp", site=at(11)), BarrierSync(barrier="cta", site=at(12))),
    )


def test_cp_async_copies_land_before_their_mbarrier_arrive():
    assert not errors(_cp_async_pipeline())
    errs = errors(_cp_async_pipeline(release_after_commit=False))  # the copy also overlaps its own next round
    assert {f.rule for f in errs} == {"unordered-alias"}
    f = errs[0]
    assert "cp_async at gemm.py:21" in f.message and "ldmatrix at gemm.py:31" in f.message
    assert "cp.async.wait_group (or cp.async.mbarrier.arrive)" in f.fix


def test_release_one_stage_behind_through_a_second_state():
    """CUTLASS's Hopper mainloop keeps one WGMMA in flight and releases the stage it
    read one k-tile earlier; keeping two in flight releases a stage still being read."""
    from .kernels import hopper_gemm_lagged

    report = check_ordering(hopper_gemm_lagged())
    assert not report.findings.errors and not report.findings.warnings, report.findings.text()
    errs = errors(hopper_gemm_lagged(keep=2))
    assert errs and {f.rule for f in errs} == {"unordered-alias"}
    assert any("wgmma_read at gemm.py:41" in f.message and "tma_load at gemm.py:21" in f.message for f in errs)
    assert "wait_group retiring the WGMMA" in errs[0].fix


def test_tmem_access_after_dealloc():
    model = blackwell_gemm()
    epi = model.programs[2]
    late = replace(epi, body=(*epi.body, Access(kind="tcgen05_ld", region="tAcc", site=at(56))))
    f = only(replace(model, programs=(*model.programs[:2], late)), "tmem-lifecycle")
    assert (
        f.regions == ("tAcc",) and "tcgen05_ld at gemm.py:56" in f.message and "deallocated at gemm.py:54" in f.message
    )


def test_dynamic_loops_with_their_own_counts_are_also_checked_apart():
    """Producer and consumer loops with different ids may run different counts: the
    producer then fills stages nobody drains. Under one id they always agree."""
    model = hopper_gemm(k_tiles=None)
    cons = model.programs[1]
    renamed = replace(cons, body=(replace(cons.body[0], id="k2"), *cons.body[1:]))
    report = check_ordering(replace(model, programs=(model.programs[0], renamed)))
    hang = report.findings.errors[0]
    assert hang.rule == "mbarrier-parity" and "with 1 trip of 'k', 7 trips of 'k2'" in hang.message
    # the other way round the producer refills stage 0 over sC while the epilogue uses it
    assert {f.rule for f in report.findings.errors} == {"mbarrier-parity", "unordered-alias"}
    assert not check_ordering(model).findings.errors
