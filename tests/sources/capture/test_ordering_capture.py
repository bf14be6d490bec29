"""The ordering model capture records, on smemviz's own Hopper GEMM traced for sm_90a on the
CPU: its pipelines, warp roles, loops and accesses as the kernel has them, the check on it
(no error, the epilogue alias listed with its edge), a dropped edge caught, the model in
the plan's JSON, and the PTX unchanged by recording it."""

from __future__ import annotations

from dataclasses import replace

import pytest

pytest.importorskip("cutlass")
pytestmark = pytest.mark.cutlass

from smemviz.analysis.ordering import check_ordering  # noqa: E402
from smemviz.kernel._compile import compile_host  # noqa: E402
from smemviz.kernel.gemm import GemmConfig  # noqa: E402
from smemviz.kernel.gemm._host import _fake_operands, gemm_kernel  # noqa: E402
from smemviz.layout import plan_from_json  # noqa: E402
from smemviz.layout.ordering import (  # noqa: E402
    Access,
    BarrierSync,
    Loop,
    OrderingModel,
    PipelineOp,
    RoleProgram,
    from_dict,
    to_dict,
)
from smemviz.sources.capture import capture  # noqa: E402
from smemviz.sources.capture._ordering import UNREAD, _last_coord  # noqa: E402

ARCH = "sm_90a"
ERRORS = ("unordered-alias", "mbarrier-arrive-count", "mbarrier-tx-bytes", "mbarrier-init", "mbarrier-parity")


def _captured(alias: bool, monkeypatch=None):
    config = GemmConfig(alias_epilogue=alias, arch=ARCH)
    layout, kernel = gemm_kernel(config)
    with capture() as cap:
        compiled = compile_host(f"ordering_gemm_{int(alias)}", kernel, _fake_operands(config.dtype), ARCH, key=None)
    (kc,) = cap.kernels.values()
    return layout, kc, compiled


@pytest.fixture(scope="module")
def aliased():
    return _captured(True)


@pytest.fixture(scope="module")
def apart():
    return _captured(False)


def _events(steps):
    for s in steps:
        if isinstance(s, Loop):
            yield from _events(s.body)
        else:
            yield s


def _program(model: OrderingModel, name: str) -> RoleProgram:
    return next(p for p in model.programs if p.role.name == name)


def test_the_mainloop_pipeline_as_created(aliased):
    layout, kc, _ = aliased
    model = kc.ordering
    mainloop = model.pipeline("mainloop")
    assert mainloop.kind == "tma_async"
    assert mainloop.stages == layout.stages
    stage_bytes = layout.a.size_bytes // layout.stages + layout.b.size_bytes // layout.stages
    assert mainloop.tx_count == stage_bytes
    assert (mainloop.full_init(), mainloop.empty_init()) == (1, 8)  # one TMA arrive; one per consumer warp
    assert mainloop.site.file == "_sm90.py"
    stores = model.pipeline("stores")
    assert stores.kind == "tma_store" and stores.stages == layout.config.epi_stages


def test_regions_are_where_the_plan_puts_them(aliased, apart):
    for layout, kc, _ in (aliased, apart):
        offsets = layout.offsets()
        spans = {r.name: r for r in kc.ordering.regions}
        assert {n: spans[n].start for n in ("sA", "sB", "sC")} == {
            "sA": offsets["a"],
            "sB": offsets["b"],
            "sC": offsets["c"],
        }
        assert spans["sA"].size == layout.a.size_bytes and spans["sA"].stages == layout.stages
        assert spans["sC"].stages == layout.config.epi_stages


def test_warp_roles_from_the_traced_branches(aliased):
    _, kc, _ = aliased
    roles = {p.role.name: p.role for p in kc.ordering.programs}
    # the producer's elected warp, the consumer warp that also issues the TMA stores, the other consumers
    assert set(roles) == {"warp 0", "warp 4", "warps 5-11"}
    producer = list(_events(_program(kc.ordering, "warp 0").body))
    loads = [e for e in producer if isinstance(e, Access)]
    assert {(a.kind, a.region, a.stage) for a in loads} == {
        ("tma_load", "sA", "mainloop"),
        ("tma_load", "sB", "mainloop"),
    }
    assert all(a.barrier == "mainloop" for a in loads)
    stores = [
        e for e in _events(_program(kc.ordering, "warp 4").body) if isinstance(e, Access) and e.kind == "tma_store"
    ]
    assert stores and not [
        e for e in _events(_program(kc.ordering, "warps 5-11").body) if isinstance(e, Access) and e.kind == "tma_store"
    ]


def test_the_peeled_k_loop_shares_one_trip_count(aliased):
    """Producer ``range(k)`` and consumer ``range(1, k)`` after a peeled first k-tile: one loop id."""
    _, kc, _ = aliased
    loops = {
        p.role.name: [s for s in p.body if isinstance(s, Loop)] for p in kc.ordering.programs if p.role.name != "warp 4"
    }
    assert [(lp.id, lp.trips) for lp in loops["warp 0"]] == [("k", None)]
    assert [(lp.id, lp.trips) for lp in loops["warps 5-11"]] == [("k", None)]
    producer = _program(kc.ordering, "warp 0").body
    first = producer.index(loops["warp 0"][0])
    assert [e.op for e in producer[:first] if isinstance(e, PipelineOp)] == ["producer_acquire", "producer_advance"]


def test_release_arrivals_add_up_to_the_empty_count(aliased):
    _, kc, _ = aliased
    total = 0
    for p in kc.ordering.programs:
        body = [s for s in p.body if not isinstance(s, Loop)]
        total += sum(e.arrivals or 0 for e in body if isinstance(e, PipelineOp) and e.op == "consumer_release")
    assert total == kc.ordering.pipeline("mainloop").empty_init()


def test_check_finds_no_error_and_lists_the_epilogue_alias_with_its_edge(aliased):
    _, kc, _ = aliased
    report = check_ordering(kc.ordering)
    assert not [f for f in report.findings.errors if f.rule in ERRORS], report.text()
    pairs = {(a.earlier, a.later): a for a in report.aliases}
    assert ("sA", "sC") in pairs, report.text()
    edge = pairs[("sA", "sC")]
    assert edge.ordered and "_sm90.py:" in edge.edge
    assert not [text for key, text in kc.ordering.meta if key == UNREAD]


def test_unaliased_layout_has_no_alias(apart):
    _, kc, _ = apart
    report = check_ordering(kc.ordering)
    assert not report.findings.errors, report.text()
    assert not report.aliases


def test_dropping_the_epilogue_barrier_is_caught(aliased):
    """The captured model is what the check reads: without the consumers' named barrier
    before the first C write, the C staging races the other warpgroup's WGMMA reads."""
    _, kc, _ = aliased
    model = kc.ordering
    first_c = None
    programs = []
    for p in model.programs:
        body = list(p.body)
        writes = [i for i, s in enumerate(body) if isinstance(s, Access) and s.region == "sC"]
        bars = [i for i, s in enumerate(body) if isinstance(s, BarrierSync) and writes and i < writes[0]]
        if bars:
            first_c = body[bars[-1]].site
            del body[bars[-1]]
        programs.append(replace(p, body=tuple(body)))
    assert first_c is not None
    report = check_ordering(replace(model, programs=tuple(programs)))
    errors = [f for f in report.findings.errors if f.rule == "unordered-alias"]
    assert errors and any({"sA", "sC"} <= set(f.regions) or "sC" in f.regions for f in errors), report.text()


def test_the_plan_carries_the_model_through_json(aliased):
    _, kc, _ = aliased
    assert kc.plan.ordering == kc.ordering
    assert from_dict(to_dict(kc.ordering)) == kc.ordering
    assert plan_from_json(kc.plan.to_json()).ordering == kc.ordering


def test_ptx_is_identical_with_and_without_capture(monkeypatch):
    from cutlass.cutlass_dsl import CuTeDSL

    monkeypatch.setattr(CuTeDSL._get_dsl().envar, "no_cache", True)
    config = GemmConfig(alias_epilogue=True, arch=ARCH)
    _, kernel = gemm_kernel(config)
    plain = compile_host("ordering_gemm_plain", kernel, _fake_operands(config.dtype), ARCH, key=None)
    _, kernel = gemm_kernel(config)
    with capture() as cap:
        captured = compile_host("ordering_gemm_plain", kernel, _fake_operands(config.dtype), ARCH, key=None)
    assert cap.kernels  # recorded
    assert captured.ptx == plain.ptx


@pytest.mark.parametrize(
    ("coord", "last"),
    [('!cute.coord<"(_,?)">', "?"), ('!cute.coord<"(_,_,_,1)">', "1"), ('!cute.coord<"(_,(0,?{div=4}))">', None)],
)
def test_last_slice_coordinate(coord, last):
    assert _last_coord(coord) == last


def _handoff(drop_release: bool):
    import cutlass

    from . import ordering_kernels
    from .kernels import fake_out

    with capture() as cap:
        compile_host(
            f"ordering_handoff_{int(drop_release)}",
            ordering_kernels.make(drop_release),
            (fake_out(32), cutlass.Int32(4)),
            ARCH,
        )
    (kc,) = cap.kernels.values()
    return kc.ordering


def test_a_two_warp_handoff_as_traced():
    model = _handoff(False)
    handoff = model.pipeline("handoff")
    assert (handoff.kind, handoff.stages, handoff.full_init(), handoff.empty_init()) == ("async", 2, 32, 32)
    assert handoff.barrier_region == "bars"
    assert [r.name for r in model.regions] == ["buf"] and model.regions[0].stages == 2
    producer, consumer = (list(_events(_program(model, n).body)) for n in ("warp 0", "warp 1"))
    assert [(e.kind, e.stage) for e in producer if isinstance(e, Access)] == [("st", "handoff")]
    assert [(e.kind, e.stage) for e in consumer if isinstance(e, Access)] == [("ld", "handoff")]
    # both roles call their state `state`: each advance moves only the side that role uses
    assert [e.op for e in producer if isinstance(e, PipelineOp)] == [
        "producer_acquire",
        "producer_commit",
        "producer_advance",
    ]
    assert [e.op for e in consumer if isinstance(e, PipelineOp)] == [
        "consumer_wait",
        "consumer_release",
        "consumer_advance",
    ]
    assert [e.arrivals for e in consumer if isinstance(e, PipelineOp) and e.op == "consumer_release"] == [32]
    report = check_ordering(model)
    assert not report.findings.errors, report.text()


def test_a_dropped_release_is_caught_from_the_capture():
    report = check_ordering(_handoff(True))
    errors = report.findings.errors
    assert [f.rule for f in errors] == ["mbarrier-parity"], report.text()
    assert "ordering_kernels.py:" in errors[0].message and "no consumer_release" in errors[0].message
