"""The ordering model captured from CUTLASS's own Hopper GEMM examples, unmodified (read from
``.cutlass_examples/`` as the other capture tests do; skipped when absent). What capture reads
is asserted, and what it cannot read must come back as ``info`` findings naming it."""

from __future__ import annotations

import pytest

pytest.importorskip("cutlass")
pytestmark = [pytest.mark.cutlass, pytest.mark.slow]

from smemviz.analysis.ordering import check_ordering  # noqa: E402
from smemviz.kernel._compile import compile_host  # noqa: E402
from smemviz.layout.ordering import Access, Loop, PipelineOp, When  # noqa: E402
from smemviz.sources.capture import capture  # noqa: E402

from .cutlass_examples import EXAMPLES, examples_dir, load  # noqa: E402


def _captured(name: str):
    example = EXAMPLES[name]
    if not (examples_dir() / example.path).exists():
        pytest.skip(f"CUTLASS example {example.path} not found under {examples_dir()}")
    host, args = example.build(load(example))
    with capture() as cap:
        compile_host(f"ordering_{name}", host, args, example.arch)
    (kc,) = cap.kernels.values()
    return kc


def _events(steps):
    for s in steps:
        if isinstance(s, (Loop, When)):
            yield from _events(s.body)
        else:
            yield s


def _infos(report) -> list[str]:
    return [f.message for f in report.findings.of("info")]


@pytest.fixture(scope="module")
def persistent():
    return _captured("hopper_dense_gemm_persistent")


@pytest.fixture(scope="module")
def dense():
    return _captured("hopper_dense_gemm")


def test_persistent_gemm_pipelines_roles_and_loops(persistent):
    model = persistent.ordering
    mainloop = model.pipeline("mainloop_pipeline")
    assert mainloop.kind == "tma_async" and mainloop.stages >= 2
    assert mainloop.barrier_region == "mainloop_pipeline_array_ptr"  # the struct field holding its mbarriers
    assert model.pipeline("tma_store_pipeline").kind == "tma_store"
    roles = {p.role.name: p for p in model.programs}
    assert set(roles) == {"warp 0", "warp 4", "warps 5-7"}  # the load warp; the MMA warpgroup split by its store warp
    loads = [e for e in _events(roles["warp 0"].body) if isinstance(e, Access) and e.kind == "tma_load"]
    assert {a.region for a in loads} == {"sA", "sB"} and all(a.stage == "mainloop_pipeline" for a in loads)
    tile_loops = {p.role.name: [s.id for s in p.body if isinstance(s, Loop)] for p in model.programs}
    assert all("tiles" in ids for ids in tile_loops.values())


def test_persistent_gemm_has_no_error_and_rotates_its_epilogue_buffers(persistent):
    model = persistent.ordering
    report = check_ordering(model)
    assert not _errors(report), report.text()
    infos = _infos(report)
    assert any("outermost while loops" in m for m in infos)
    assert not any("stage of 'sC'" in m for m in infos), report.text()
    # the epilogue's buffer (tiles_done * epi_tiles + i) % stages with i unrolled: epi_tiles (8) is
    # whole turns of the 4 buffers, so subtile i takes buffer i % 4 on every tile (8 a tile, in each role)
    stores = [e for p in model.programs for e in _events(p.body) if isinstance(e, Access) and e.region == "sC"]
    assert {e.kind for e in stores} == {"stmatrix", "tma_store"}
    sC = model.region("sC")
    assert all(e.rotation is None and isinstance(e.stage, int) for e in stores)
    for kind in ("stmatrix", "tma_store"):
        slots = [e.stage for e in stores if e.kind == kind]
        assert slots and len(slots) % 8 == 0 and slots == [i % sC.stages for i in range(len(slots))]
    assert not report.aliases  # sC lies apart from sA and sB


def _errors(report) -> list[str]:
    return [f.message for f in report.findings.errors if f.rule == "unordered-alias" or f.rule.startswith("mbarrier-")]


def _walk(steps):
    for s in steps:
        yield s
        if isinstance(s, (Loop, When)):
            yield from _walk(s.body)


def test_dense_gemm_reads_its_refill_guard_and_prefetch_cap(dense):
    model = dense.ordering
    roles = {p.role.name: p for p in model.programs}
    assert set(roles) == {"warp 0", "warps 1-3"}
    warp0 = [e for e in _events(roles["warp 0"].body) if isinstance(e, PipelineOp)]
    others = [e for e in _events(roles["warps 1-3"].body) if isinstance(e, PipelineOp)]
    assert any(e.op == "producer_acquire" for e in warp0)
    assert not any(e.op == "producer_acquire" for e in others)  # `if warp_idx == 0 and ...` splits the roles
    # the refill inside the consumer loop: `if ... producer_state.count < k_tile_cnt`
    (guard,) = [s for s in _walk(roles["warp 0"].body) if isinstance(s, When)]
    assert (guard.pipeline, guard.side, guard.state) == ("mainloop_pipeline", "producer", "mainloop_producer_state")
    assert any(isinstance(e, PipelineOp) and e.op == "producer_acquire" for e in _events(guard.body))
    # the prefetch runs min(stages, k) trips: one written out, the rest capped at stages - 1, on k's count
    prefetch = next(s for s in roles["warp 0"].body if isinstance(s, Loop))
    stages = model.pipeline("mainloop_pipeline").stages
    assert prefetch.at_most == stages - 1 and guard.loop == prefetch.id and guard.plus == 1
    report = check_ordering(model)
    assert not _errors(report), report.text()
    assert not [m for m in _infos(report) if m.startswith("ordering not read")], report.text()
    edges = {(a.earlier, a.later): a for a in report.aliases}
    assert set(edges) == {("sA", "sC")} and edges[("sA", "sC")].ordered, report.text()


@pytest.fixture(scope="module")
def fmha():
    return _captured("hopper_fmha")


def test_fmha_has_no_error_and_lists_v_on_k_and_o_in_q_with_their_edges(fmha):
    model = fmha.ordering
    report = check_ordering(model)
    assert not _errors(report), report.text()
    edges = {(a.earlier, a.later): a for a in report.aliases}
    # V's stages on K's slots, both under the one K/V pipeline: each hand-over rides its empty barrier
    for pair in (("sK", "sV"), ("sV", "sK")):
        assert pair in edges and edges[pair].ordered, report.text()
        assert "consumer_release" in edges[pair].edge and "producer_acquire" in edges[pair].edge
    # sO staged inside sQ: written once the warpgroup's last WGMMA reading sQ is retired
    assert edges[("sQ", "sO")].ordered and "wait_group" in edges[("sQ", "sO")].edge, report.text()
    assert all(a.ordered for a in report.aliases), report.text()
    infos = _infos(report)
    # what is still not read is named: the inner while loops (checked where the pipelines balance)
    # and the loads under `if k_tile_count > 0`
    assert any("could not relate to one another" in m and "loop" in m for m in infos)
    assert not any("named barrier" in m or "stage of" in m or "resource handle" in m for m in infos), infos


def test_fmha_reads_its_handles_turns_and_per_warpgroup_ids(fmha):
    model = fmha.ordering
    events = [e for p in model.programs for e in _events(p.body)]
    snapshots = {e.state for e in events if isinstance(e, PipelineOp) and e.op.endswith("_snapshot")}
    assert {"q_handle", "k_handle", "v_handle"} <= snapshots
    releases = {e.state for e in events if isinstance(e, PipelineOp) and e.op == "consumer_release"}
    assert releases == {"k_handle", "v_handle"}  # q_handle.release() only when persistent
    assert any(p.kind == "order" and p.groups == 2 for p in model.pipelines)  # the warpgroups' turns
    assert {b.name for b in model.barriers} >= {"bar1", "bar2"}  # barrier_id=warp_group_idx, per warpgroup
    stages = {
        p.role.name: {e.stage for e in _events(p.body) if isinstance(e, Access) and e.region == "sO"}
        for p in model.programs
    }
    assert stages["warp 4"] == {0} and stages["warp 8"] == {1}  # sO[..., warp_group_idx - 1]
