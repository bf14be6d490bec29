"""Any model a tracer could hand over, however wrong, gets an answer: the checker never
raises, every finding has one of the seven rule ids, names a rule's fact and a fix,
and the model reads back from JSON equal."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from smemviz.analysis.ordering import (
    ACCESS_KINDS,
    PIPELINE_KINDS,
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
    Tcgen05Commit,
    Tcgen05Wait,
    TmemAlloc,
    TmemDealloc,
    TmemRelinquish,
    WaitGroup,
    WarpRole,
    check_ordering,
    from_dict,
    to_dict,
)
from smemviz.analysis.ordering._result import FACTS

PIPES = ("a", "b", "ghost")  # "ghost" is never declared
REGIONS = ("sA", "tS", "nowhere")
OPS = (
    "producer_acquire",
    "producer_commit",
    "consumer_wait",
    "consumer_release",
    "producer_advance",
    "consumer_advance",
    "producer_tail",
)
sites = st.builds(CallSite, st.just("k.py"), st.integers(1, 40))

events = st.one_of(
    st.builds(
        Access,
        kind=st.sampled_from(ACCESS_KINDS),
        region=st.sampled_from(REGIONS),
        site=sites,
        stage=st.one_of(st.none(), st.integers(0, 2), st.sampled_from(PIPES)),
        bytes=st.one_of(st.none(), st.sampled_from([512, 1024])),
        multicast=st.sampled_from([1, 2]),
    ),
    st.builds(
        PipelineOp,
        op=st.sampled_from(OPS),
        pipeline=st.sampled_from(PIPES),
        site=sites,
        arrivals=st.one_of(st.none(), st.integers(1, 3)),
    ),
    st.builds(
        BarrierSync, barrier=st.sampled_from(["nb", "cta", "cluster", "undeclared"]), site=sites, wait=st.booleans()
    ),
    st.builds(Fence, kind=st.sampled_from(["proxy_async", "view_async_shared", "tcgen05_before"]), site=sites),
    st.builds(CommitGroup, unit=st.sampled_from(["bulk", "wgmma", "cp_async"]), site=sites),
    st.builds(
        WaitGroup,
        unit=st.sampled_from(["bulk", "wgmma", "cp_async"]),
        site=sites,
        pending=st.integers(0, 2),
        read=st.booleans(),
    ),
    st.builds(Tcgen05Commit, pipeline=st.sampled_from(PIPES), side=st.sampled_from(["full", "empty"]), site=sites),
    st.builds(Tcgen05Wait, kind=st.sampled_from(["ld", "st"]), site=sites),
    st.builds(TmemAlloc, columns=st.sampled_from([32, 100, 512, 1024]), site=sites, cta_group=st.sampled_from([1, 2])),
    st.builds(TmemRelinquish, site=sites),
    st.builds(TmemDealloc, columns=st.sampled_from([32, 512]), site=sites),
    st.builds(Init, pipeline=st.sampled_from(PIPES), site=sites),
)
bodies = st.lists(
    st.one_of(
        events,
        st.builds(
            Loop,
            st.sampled_from(["k", "t"]),
            st.one_of(st.none(), st.integers(0, 3)),
            st.lists(events, max_size=5).map(tuple),
        ),
    ),
    max_size=8,
).map(tuple)


@st.composite
def models(draw) -> OrderingModel:
    pipes = tuple(
        Pipeline(
            name,
            draw(st.sampled_from(PIPELINE_KINDS)),
            draw(st.integers(0, 3)),
            Group("thread", draw(st.integers(1, 2))),
            Group("warp", draw(st.integers(1, 2))),
            CallSite("k.py", 1),
            tx_count=draw(st.sampled_from([0, 1024])),
            multicast=draw(st.sampled_from([1, 2])),
        )
        for name in ("a", "b")
    )
    programs = tuple(RoleProgram(WarpRole(f"r{i}", i), draw(bodies)) for i in range(draw(st.integers(1, 3))))
    return OrderingModel(
        "any",
        pipelines=pipes,
        barriers=(NamedBarrier("nb", draw(st.sampled_from([32, 64])), CallSite("k.py", 2)),),
        regions=(RegionSpan("sA", "smem", 0, 2048, 2), RegionSpan("tS", "tmem", 0, 128)),
        programs=programs,
        prologue=draw(st.lists(events, max_size=4).map(tuple)),
        arch=draw(st.sampled_from([None, "sm_90a", "sm_100a"])),
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(models())
def test_any_model_gets_an_answer(model):
    report = check_ordering(model)
    for f in report.findings:
        assert f.rule in FACTS and f.fact == FACTS[f.rule] and f.fix and f.message
    assert json.loads(json.dumps(report.to_dict()))["findings"] == report.findings.to_list()
    assert from_dict(json.loads(json.dumps(to_dict(model)))) == model
