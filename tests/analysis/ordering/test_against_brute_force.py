"""The checker against a brute-force search of every interleaving, on random small
pipelines: two roles, two or three stages, trip counts up to 4, calls dropped, counts,
tx bytes, phases and stage counts changed at random. Whenever the search reaches a
race, an unfenced async read, an over-arrival or a deadlock, the checker must report
an error; whenever every interleaving is clean, it must report none. After the loops
stage 0's bytes may be handed on: rewritten by the consumer, or by the producer once a
named barrier says the consumer is done with them."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
    StateSpec,
    WaitGroup,
    WarpRole,
    check_ordering,
)

from .brute import judge, outcomes

SLOT = 1024


def at(line: int) -> CallSite:
    return CallSite("k.py", line)


@st.composite
def pipelines(draw) -> OrderingModel:
    stages = draw(st.sampled_from([2, 3]))
    kind = draw(st.sampled_from(["async", "tma_async"]))
    common = draw(st.integers(1, 4))
    trips_p = draw(st.one_of(st.just(common), st.integers(1, 4)))
    trips_c = draw(st.one_of(st.just(common), st.integers(1, 4)))
    likely = st.integers(0, 5).map(bool)  # True 5 times in 6
    full = draw(st.sampled_from([1, 1, 1, 2]))
    empty = draw(st.sampled_from([1, 1, 1, 2]))
    pipe = Pipeline(
        "p",
        kind,
        stages,
        Group("thread", 1),
        Group("thread", 1),
        at(1),
        tx_count=draw(st.sampled_from([SLOT, SLOT, SLOT, SLOT // 2])) if kind == "tma_async" else 0,
        full_count=full,
        empty_count=empty,
    )
    write = "tma_load" if kind == "tma_async" else "st"
    read = draw(st.sampled_from(["ld", "wgmma_read"]))
    fence_at = (
        draw(st.sampled_from(["before", "before", "after", "none"]))
        if write == "st" and read == "wgmma_read"
        else "none"
    )
    producer: list = []
    if draw(likely):
        producer.append(
            PipelineOp(op="producer_acquire", pipeline="p", site=at(10), arrivals=draw(st.sampled_from([1, 1, 2])))
        )
    producer.append(Access(kind=write, region="buf", stage="p", site=at(11)))
    commit = [PipelineOp(op="producer_commit", pipeline="p", site=at(13), arrivals=draw(st.sampled_from([1, 1, 2])))]
    if not draw(likely):
        commit = []
    fence = [Fence(kind="view_async_shared", site=at(12))]
    producer += (fence if fence_at == "before" else []) + commit + (fence if fence_at == "after" else [])
    producer.append(PipelineOp(op="producer_advance", pipeline="p", site=at(14)))
    consumer: list = []
    if draw(likely):
        consumer.append(PipelineOp(op="consumer_wait", pipeline="p", site=at(20)))
    consumer.append(Access(kind=read, region="buf", stage="p", site=at(21)))
    if read == "wgmma_read" and draw(likely):
        consumer += [CommitGroup(unit="wgmma", site=at(22)), WaitGroup(unit="wgmma", pending=0, site=at(23))]
    if draw(likely):
        consumer.append(
            PipelineOp(op="consumer_release", pipeline="p", site=at(24), arrivals=draw(st.sampled_from([1, 1, 2])))
        )
    consumer.append(PipelineOp(op="consumer_advance", pipeline="p", site=at(25)))
    # after the loops: nothing, the consumer writes over stage 0, or it hands stage 0 to
    # the producer through a named barrier (sync, or arrive only) and the producer writes it
    ending = draw(st.sampled_from(["none", "consumer", "handoff", "handoff_arrive"]))
    tail = [Access(kind="st", region="epi", site=at(30))] if ending == "consumer" else []
    producer_tail: list = []
    if ending.startswith("handoff"):
        tail = [BarrierSync(barrier="handoff", wait=ending == "handoff", site=at(31))]
        producer_tail = [BarrierSync(barrier="handoff", site=at(32)), Access(kind="st", region="epi", site=at(33))]
    handoff_threads = draw(st.sampled_from([64, 64, 64, 32]))
    states = ()
    if draw(st.integers(0, 5)) == 0:
        states = (StateSpec("p", "consumer", draw(st.sampled_from([2, 3])), draw(st.sampled_from([0, 1]))),)
    return OrderingModel(
        "random",
        pipelines=(pipe,),
        barriers=(NamedBarrier("handoff", handoff_threads, at(4)),),
        regions=(RegionSpan("buf", "smem", 0, stages * SLOT, stages), RegionSpan("epi", "smem", 0, SLOT)),
        programs=(
            RoleProgram(WarpRole("producer", 0), (Loop("kp", trips_p, tuple(producer)), *producer_tail)),
            RoleProgram(WarpRole("consumer", 1), (Loop("kc", trips_c, tuple(consumer)), *tail), states),
        ),
        prologue=(Init(pipeline="p", site=at(2)), BarrierSync(barrier="cta", site=at(3))),
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pipelines())
def test_checker_agrees_with_every_interleaving(model):
    truth = judge(model)
    report = check_ordering(model)
    errors = report.findings.errors
    assert bool(errors) == (truth is not None), (truth, report.findings.text())


def _clean_model(**changes) -> OrderingModel:
    """A correct two-stage pipeline, for the search's own sanity checks."""
    producer = (
        PipelineOp(op="producer_acquire", pipeline="p", site=at(10)),
        Access(kind="st", region="buf", stage="p", site=at(11)),
        PipelineOp(op="producer_commit", pipeline="p", site=at(13)),
        PipelineOp(op="producer_advance", pipeline="p", site=at(14)),
    )
    consumer = (
        PipelineOp(op="consumer_wait", pipeline="p", site=at(20)),
        Access(kind="ld", region="buf", stage="p", site=at(21)),
        PipelineOp(op="consumer_release", pipeline="p", site=at(24)),
        PipelineOp(op="consumer_advance", pipeline="p", site=at(25)),
    )
    producer = tuple(e for e in producer if e.site.line not in changes.get("drop", ()))
    consumer = tuple(e for e in consumer if e.site.line not in changes.get("drop", ()))
    return OrderingModel(
        "clean",
        pipelines=(Pipeline("p", "async", 2, Group("thread", 1), Group("thread", 1), at(1)),),
        regions=(RegionSpan("buf", "smem", 0, 2 * SLOT, 2),),
        programs=(
            RoleProgram(WarpRole("producer", 0), (Loop("k", 4, producer),)),
            RoleProgram(WarpRole("consumer", 1), (Loop("k", 4, consumer),)),
        ),
        prologue=(Init(pipeline="p", site=at(2)), BarrierSync(barrier="cta", site=at(3))),
    )


def test_the_search_sees_the_three_outcomes():
    assert judge(_clean_model()) is None
    assert outcomes(_clean_model()) == set()
    # the consumer reads without waiting: a race, and its early releases run the empty barrier two phases ahead
    assert outcomes(_clean_model(drop=(20,))) == {"race", "deadlock"}
    assert outcomes(_clean_model(drop=(24,))) == {"deadlock"}  # no release: the producer hangs on stage 0's reuse
    assert outcomes(_clean_model(drop=(10,))) >= {"race"}  # no acquire: stage 0 is rewritten while read
