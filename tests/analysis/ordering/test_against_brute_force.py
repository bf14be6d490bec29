"""The checker against a brute-force search of every interleaving, on random small
pipelines: two roles, two or three stages, trip counts up to 4, calls dropped, counts,
tx bytes, phases and stage counts changed at random. Whenever the search reaches a
race, an unfenced async read, an over-arrival or a deadlock, the checker must report
an error; whenever every interleaving is clean, it must report none. After the loops
stage 0's bytes may be handed on: rewritten by the consumer, or by the producer once a
named barrier says the consumer is done with them."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest
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
    When,
    check_ordering,
)

from .brute import judge, outcomes

SLOT = 1024


def at(line: int) -> CallSite:
    return CallSite("k.py", line)


@dataclass(frozen=True)
class Spec:
    """One small pipeline: what each role does, and what it gets wrong."""

    kind: str = "async"  # async: st -> ld/wgmma; tma_async: TMA -> ld/wgmma; tma_umma: TMA -> UMMA, released by commit
    stages: int = 2
    trips_p: int = 4
    trips_c: int = 4
    full: int = 1
    empty: int = 1
    tx: int = SLOT
    read: str = "ld"
    fence_at: str = "before"  # the proxy fence after a generic write: before / after the commit, or none
    acquire: int = 1  # arrivals of the producer's acquire (0: dropped)
    commit: int = 1  # arrivals of its commit (0: dropped)
    wait: bool = True
    retire: bool = True  # WGMMA commit_group + wait_group(0)
    release: int = 1  # arrivals of the consumer's release (0: dropped)
    ending: str = "none"  # none / consumer (writes stage 0) / handoff / handoff_arrive (to the producer)
    handoff_threads: int = 64
    consumer_state: tuple[int, int] | None = None  # (stages, phase) of the consumer's own PipelineState
    producer_loop: str = "plain"  # plain / cap (2 trips more, at_most trips_p) / guard (loads while count < trips_c)
    handle: str = (
        "none"  # none / handle (wait_and_advance, read and release through it) / stale (release the advanced state)
    )


def _producer_loop(spec: Spec, body: tuple) -> Loop:
    if spec.producer_loop == "cap":
        return Loop("kp", spec.trips_p + 2, body, at_most=spec.trips_p)
    if spec.producer_loop == "guard":  # a refill that stops once the consumer's tiles are all loaded
        return Loop("kp", spec.trips_p + 2, (When(pipeline="p", side="producer", loop="kc", body=body),))
    return Loop("kp", spec.trips_p, body)


def build(spec: Spec) -> OrderingModel:
    write = "st" if spec.kind == "async" else "tma_load"
    read = "umma_read" if spec.kind == "tma_umma" else spec.read
    fence_at = spec.fence_at if write == "st" and read == "wgmma_read" else "none"
    producer: list = []
    if spec.acquire:
        producer.append(PipelineOp(op="producer_acquire", pipeline="p", site=at(10), arrivals=spec.acquire))
    producer.append(Access(kind=write, region="buf", stage="p", site=at(11)))
    commit = [PipelineOp(op="producer_commit", pipeline="p", site=at(13), arrivals=spec.commit)] if spec.commit else []
    fence = [Fence(kind="view_async_shared", site=at(12))]
    producer += (fence if fence_at == "before" else []) + commit + (fence if fence_at == "after" else [])
    producer.append(PipelineOp(op="producer_advance", pipeline="p", site=at(14)))
    consumer: list = [PipelineOp(op="consumer_wait", pipeline="p", site=at(20))] if spec.wait else []
    held = "h" if spec.handle != "none" else ""
    if held:  # h = consumer.wait_and_advance(): the handle keeps the stage waited on
        consumer += [
            PipelineOp(op="consumer_snapshot", pipeline="p", state="h", source="", site=at(20)),
            PipelineOp(op="consumer_advance", pipeline="p", site=at(25)),
        ]
    consumer.append(Access(kind=read, region="buf", stage="p", state=held, site=at(21)))
    if read == "wgmma_read" and spec.retire:
        consumer += [CommitGroup(unit="wgmma", site=at(22)), WaitGroup(unit="wgmma", pending=0, site=at(23))]
    if spec.release:
        released = "h" if spec.handle == "handle" else ""
        consumer.append(
            PipelineOp(op="consumer_release", pipeline="p", state=released, site=at(24), arrivals=spec.release)
        )
    if not held:
        consumer.append(PipelineOp(op="consumer_advance", pipeline="p", site=at(25)))
    # after the loops: nothing, the consumer writes over stage 0, or it hands stage 0 to
    # the producer through a named barrier (sync, or arrive only) and the producer writes it
    tail = [Access(kind="st", region="epi", site=at(30))] if spec.ending == "consumer" else []
    producer_tail: list = []
    if spec.ending.startswith("handoff"):
        tail = [BarrierSync(barrier="handoff", wait=spec.ending == "handoff", site=at(31))]
        producer_tail = [BarrierSync(barrier="handoff", site=at(32)), Access(kind="st", region="epi", site=at(33))]
    states = (StateSpec("p", "consumer", *spec.consumer_state),) if spec.consumer_state else ()
    pipe = Pipeline(
        "p",
        spec.kind,
        spec.stages,
        Group("thread", 1),
        Group("thread", 1),
        at(1),
        tx_count=spec.tx if spec.kind != "async" else 0,
        full_count=spec.full,
        empty_count=spec.empty,
    )
    return OrderingModel(
        "random",
        pipelines=(pipe,),
        barriers=(NamedBarrier("handoff", spec.handoff_threads, at(4)),),
        regions=(RegionSpan("buf", "smem", 0, spec.stages * SLOT, spec.stages), RegionSpan("epi", "smem", 0, SLOT)),
        programs=(
            RoleProgram(WarpRole("producer", 0), (_producer_loop(spec, tuple(producer)), *producer_tail)),
            RoleProgram(WarpRole("consumer", 1), (Loop("kc", spec.trips_c, tuple(consumer)), *tail), states),
        ),
        prologue=(Init(pipeline="p", site=at(2)), BarrierSync(barrier="cta", site=at(3))),
    )


@st.composite
def specs(draw) -> Spec:
    likely = st.integers(0, 5).map(bool)  # True 5 times in 6
    count = st.sampled_from([1, 1, 2])
    common = draw(st.integers(1, 4))
    state = None
    if draw(st.integers(0, 5)) == 0:
        state = (draw(st.sampled_from([2, 3])), draw(st.sampled_from([0, 1])))
    return Spec(
        kind=draw(st.sampled_from(["async", "tma_async", "tma_umma"])),
        stages=draw(st.sampled_from([2, 3])),
        trips_p=draw(st.one_of(st.just(common), st.integers(1, 4))),
        trips_c=draw(st.one_of(st.just(common), st.integers(1, 4))),
        full=draw(st.sampled_from([1, 1, 1, 2])),
        empty=draw(st.sampled_from([1, 1, 1, 2])),
        tx=draw(st.sampled_from([SLOT, SLOT, SLOT, SLOT // 2])),
        read=draw(st.sampled_from(["ld", "wgmma_read"])),
        fence_at=draw(st.sampled_from(["before", "before", "after", "none"])),
        acquire=draw(count) if draw(likely) else 0,
        commit=draw(count) if draw(likely) else 0,
        wait=draw(likely),
        retire=draw(likely),
        release=draw(count) if draw(likely) else 0,
        ending=draw(st.sampled_from(["none", "consumer", "handoff", "handoff_arrive"])),
        handoff_threads=draw(st.sampled_from([64, 64, 64, 32])),
        consumer_state=state,
        handle=draw(st.sampled_from(["none", "none", "none", "handle", "handle", "stale"])),
        producer_loop=draw(st.sampled_from(["plain", "plain", "plain", "cap", "guard"])),
    )


def pipelines():
    return specs().map(build)


def agree(model: OrderingModel) -> None:
    truth = judge(model)
    report = check_ordering(model)
    assert bool(report.findings.errors) == (truth is not None), (truth, report.findings.text())


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pipelines())
def test_checker_agrees_with_every_interleaving(model):
    agree(model)


GRID = [
    Spec(kind=kind, stages=stages, trips_p=trips, trips_c=trips, read=read, ending=ending)
    for kind, read in (
        ("async", "ld"),
        ("async", "wgmma_read"),
        ("tma_async", "ld"),
        ("tma_async", "wgmma_read"),
        ("tma_umma", "ld"),
    )
    for stages in (2, 3)
    for trips in (1, stages, stages + 1)
    for ending in ("none", "consumer", "handoff")
]
# the UMMA reads of the last stages are in flight until their commit arrives, which no
# one waits for: writing stage 0 after the loop races them
WITNESS = {  # what the search must reach for each kind of error the checker reports
    "race": lambda f: f.rule == "unordered-alias",
    "proxy": lambda f: f.rule == "proxy-fence",
    "deadlock": lambda f: "so it hangs" in f.message,
    "over-arrival": lambda f: "gets more" in f.message,
}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pipelines())
def test_each_kind_of_error_is_reached_by_the_search(model):
    """Finer than agreeing on clean or not: a race, a missing fence, a hang or an
    over-arrival the checker reports is one the search reaches (unless the search
    stopped earlier at an over-arrival, past which the hardware defines nothing)."""
    reached = outcomes(model)
    if "over-arrival" in reached:
        return
    errors = check_ordering(model).findings.errors
    for outcome, reports in WITNESS.items():
        if any(reports(f) for f in errors):
            assert outcome in reached, (outcome, reached, [f.line() for f in errors])


CORRECT = [s for s in GRID if not (s.kind == "tma_umma" and s.ending != "none")]
RACY = [s for s in GRID if s not in CORRECT]


def test_writing_over_umma_operands_before_their_commit_lands_races():
    for spec in RACY:
        model = build(spec)
        assert judge(model) == "race"
        rules = {f.rule for f in check_ordering(model).findings.errors}
        assert rules == {"unordered-alias"}, spec


DROPS = ({"acquire": 0}, {"commit": 0}, {"wait": False}, {"retire": False}, {"release": 0}, {"fence_at": "after"})


@pytest.mark.parametrize("drop", [{}, *DROPS], ids=lambda d: "+".join(f"{k}={v}" for k, v in d.items()) or "as written")
def test_every_correct_pipeline_and_each_single_drop(drop):
    """Each kind, stage count, trip count (1, S, S+1) and ending, correct and with one
    call dropped: the checker agrees with the search on every one."""
    clean = 0
    for spec in CORRECT:
        model = build(replace(spec, **drop))
        agree(model)
        clean += judge(model) is None
    assert clean == len(CORRECT) if not drop else clean < len(CORRECT)


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
