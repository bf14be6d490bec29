"""Blackwell kernels in the ordering model: the TMEM views placed by their columns.

CUTLASS's Blackwell FMHA and persistent dense GEMM, unmodified (read from
``.cutlass_examples/``; skipped when absent), compiled for sm_100a on the CPU. Their TMEM
tensors are made over the pointer the TMEM allocator hands out at run time; capture reads
each view's columns from the IR. The FMHA's plan is held column for column to the offsets
the example itself declares (S0/S1, O0/O1, P0 inside S1, P1 inside S0, the row statistics),
and the plan recorded in ``notebooks/data/`` to a fresh capture.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("cutlass")
pytestmark = [pytest.mark.cutlass, pytest.mark.slow]

from smemviz.analysis.ordering import check_ordering  # noqa: E402
from smemviz.kernel._compile import compile_host  # noqa: E402
from smemviz.layout import plan_from_json  # noqa: E402
from smemviz.layout.ordering import Access, contexts  # noqa: E402
from smemviz.sources.capture import capture  # noqa: E402

from .cutlass_examples import EXAMPLES, examples_dir, load  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
RECORDED = ROOT / "notebooks" / "data" / "blackwell_fmha_plan.json"
RECORDED_TMEM = ROOT / "notebooks" / "data" / "blackwell_fmha_tmem_plan.json"


def _captured(name: str):
    example = EXAMPLES[name]
    if not (examples_dir() / example.path).exists():
        pytest.skip(f"CUTLASS example {example.path} not found under {examples_dir()}")
    host, args = example.build(load(example))
    with capture() as cap:
        compile_host(f"ordering_{name}", host, args, example.arch)
    (kc,) = cap.kernels.values()
    return kc, host


@pytest.fixture(scope="module")
def fmha():
    return _captured("blackwell_fmha")


@pytest.fixture(scope="module")
def gemm():
    return _captured("blackwell_dense_gemm_persistent")


def _tmem(model) -> dict[str, tuple[int, int]]:
    return {r.name: (r.start, r.size) for r in model.regions if r.memory == "tmem"}


def test_fmha_tmem_regions_column_for_column(fmha):
    kc, kernel = fmha
    tmem = _tmem(kc.ordering)
    k = kernel  # the example's own column offsets, as it declares them
    assert tmem == {
        "tStS0": (k.tmem_s0_offset, 128),
        "tStS1": (k.tmem_s1_offset, 128),
        "tOtO0": (k.tmem_o0_offset, 128),
        "tOtO1": (k.tmem_o1_offset, 128),
        "tOrP0": (k.tmem_p0_offset, 64),  # 128x128 f16 in 32-bit columns
        "tOrP1": (k.tmem_p1_offset, 64),
        "tStS_vec0": (k.tmem_vec0_offset, 2),  # row max and row sum
        "tStS_vec1": (k.tmem_vec1_offset, 2),
    }

    def inside(a: str, b: str) -> bool:
        return tmem[b][0] <= tmem[a][0] and sum(tmem[a]) <= sum(tmem[b])

    assert inside("tOrP0", "tStS1") and inside("tOrP1", "tStS0")
    assert inside("tStS_vec0", "tStS0") and inside("tStS_vec1", "tStS1")
    unread = " ".join(v for k_, v in kc.ordering.meta)
    assert "lies in TMEM is not constant" not in unread  # every TMEM access is placed


def test_fmha_accesses_reach_the_tmem_regions(fmha):
    kc, _ = fmha
    seen = {
        (c.role.name, e.kind, e.region)
        for e, c in contexts(kc.ordering)
        if isinstance(e, Access) and kc.ordering.region(e.region).memory == "tmem"
    }
    # the MMA warp writes S and O and reads P from TMEM; each softmax warpgroup reads its S and
    # writes the P that lies in the other S; the correction warps read O and the statistics
    assert ("warp 12", "umma_write_acc", "tStS0") in seen and ("warp 12", "umma_write_acc", "tOtO1") in seen
    assert ("warp 12", "umma_read", "tOrP0") in seen and ("warp 12", "umma_read", "tOrP1") in seen
    assert ("warps 0-3", "tcgen05_ld", "tStS0") in seen and ("warps 0-3", "tcgen05_st", "tOrP0") in seen
    assert ("warps 4-7", "tcgen05_ld", "tStS1") in seen and ("warps 4-7", "tcgen05_st", "tOrP1") in seen
    assert any(r == "warps 9-11" and kind == "tcgen05_ld" and reg == "tOtO0" for r, kind, reg in seen)


def test_fmha_tmem_plan_draws_the_views(fmha):
    kc, _ = fmha
    plan = kc.tmem_plan
    assert plan is not None and plan.memory == "tmem" and plan.data_total == 512
    regions = {r.name: r for r in plan.regions}
    assert {n: (r.offset, r.size) for n, r in regions.items()} == _tmem(kc.ordering)
    # S with what is put in place over it: one alias group each, S first, then P and the statistics
    for s, inner in (("tStS0", ("tOrP1", "tStS_vec0")), ("tStS1", ("tOrP0", "tStS_vec1"))):
        assert regions[s].phase == 0
        assert all(regions[i].group == regions[s].group and regions[i].phase == 1 for i in inner)
    assert regions["tOtO0"].group is None and regions["tOtO1"].group is None


def test_fmha_tmem_lifecycle_has_no_error(fmha):
    kc, _ = fmha
    report = check_ordering(kc.ordering)
    assert [f.message for f in report.findings if f.rule == "tmem-lifecycle" and f.severity == "error"] == []
    tmem = set(_tmem(kc.ordering))
    assert [f.message for f in report.findings if f.severity == "error" and tmem & set(f.regions)] == []
    # softmax0 reads S0, then writes its row statistics over S0's first columns: the register
    # reads of its loads order them (the kernel writes no tcgen05.wait::ld there)
    (stats,) = [a for a in report.aliases if (a.earlier, a.later) == ("tStS0", "tStS_vec0")]
    assert stats.edge.startswith("the registers of tcgen05.ld read at fmha.py:")


def test_gemm_accumulator_placed_with_its_stages(gemm):
    kc, _ = gemm
    (acc,) = [r for r in kc.ordering.regions if r.memory == "tmem"]
    assert (acc.start, acc.size, acc.stages) == (0, 256, 2)  # two 128-column accumulators
    report = check_ordering(kc.ordering)
    assert [f.message for f in report.findings if f.rule == "tmem-lifecycle" and f.severity == "error"] == []
    assert [r.name for r in kc.tmem_plan.regions][0] == acc.name
    # the epilogue reads the buffer its acc_pipeline state picks (through a further subtile slice)
    assert [f.message for f in report.findings if f.severity == "error" and acc.name in f.regions] == []
    (dealloc,) = [a for a in report.aliases if a.earlier == acc.name and a.later == "TMEM allocation"]
    assert dealloc.edge.startswith("the registers of tcgen05.ld read at dense_gemm_persistent.py:")


def test_gemm_checks_clean_with_the_mma_reading_its_handles_stage(gemm):
    kc, _ = gemm
    report = check_ordering(kc.ordering)
    ordering_errors = [
        f.line() for f in report.findings.errors if f.rule == "unordered-alias" or f.rule.startswith("mbarrier-")
    ]
    assert ordering_errors == [], report.text()
    # the MMA indexes A and B by the handle wait_and_advance returns, not by the consumer it has
    # already advanced: the stage its tcgen05.commit release frees for the loader's next acquire
    reads = [e for e, _ in contexts(kc.ordering) if isinstance(e, Access) and e.kind == "umma_read"]
    assert {(e.region, e.state) for e in reads} == {("sA", "handle"), ("sB", "handle")}
    assert [(a.earlier, a.later, a.ordered) for a in report.aliases] == [("tCtAcc_base", "TMEM allocation", True)], (
        report.text()
    )
    (alias,) = report.aliases
    assert "bar.sync 'bar1'" in alias.edge


def test_recorded_fmha_plan_equals_a_fresh_capture(fmha):
    kc, _ = fmha
    text = RECORDED.read_text() + RECORDED_TMEM.read_text()
    assert not any(root in text for root in ("/work/", "/tmp/", "/home/"))  # no machine paths
    recorded = json.loads(RECORDED.read_text())
    assert recorded == json.loads(kc.plan.to_json())
    assert json.loads(RECORDED_TMEM.read_text()) == json.loads(kc.tmem_plan.to_json())
    assert plan_from_json(RECORDED.read_text()).ordering == kc.ordering  # the model travels with it


@pytest.fixture(scope="module")
def own_gemm():
    """smemviz's own Blackwell GEMM, two accumulator buffers (no fetched examples needed)."""
    from smemviz.kernel.gemm import GemmConfig
    from smemviz.kernel.gemm._host import _fake_operands, gemm_kernel

    config = GemmConfig(alias_epilogue=False, acc_stages=2, arch="sm_100a")
    layout, kernel = gemm_kernel(config)
    with capture() as cap:
        compile_host("ordering_gemm_sm100", kernel, _fake_operands(config.dtype), "sm_100a", key=None)
    (kc,) = cap.kernels.values()
    return layout, kc


def test_own_gemm_accumulators_are_one_region_picked_by_the_acc_pipeline(own_gemm):
    layout, kc = own_gemm
    model = kc.ordering
    first, second = layout.acc_columns()
    acc = model.region("acc")  # column = acc_columns[0]; if index == 1: column = acc_columns[1]
    assert (acc.memory, acc.start, acc.stages, acc.slot) == ("tmem", first, 2, second - first)
    reads = [e for e, _ in contexts(model) if isinstance(e, Access) and e.region == "acc"]
    assert {e.kind for e in reads} == {"umma_write_acc", "tcgen05_ld"}
    assert {e.stage for e in reads} == {"accs"}  # each takes the slot of its accs pipeline state
    report = check_ordering(model)
    assert [f.message for f in report.findings if f.rule == "tmem-lifecycle" and f.severity == "error"] == []
    assert [f for f in report.findings if f.rule.startswith("mbarrier-") and f.severity == "error"] == []
    (dealloc,) = [a for a in report.aliases if a.earlier == "acc" and a.later == "TMEM allocation"]
    assert dealloc.edge.startswith("tcgen05.wait::ld at _sm100.py:")  # then a named barrier with the deallocating warp


@pytest.fixture(scope="module")
def own_gemm_aliased():
    """smemviz's own Blackwell GEMM as shipped by default: one accumulator buffer, one tile per
    CTA, C staging over the A stages."""
    from smemviz.kernel.gemm import GemmConfig
    from smemviz.kernel.gemm._host import _fake_operands, gemm_kernel

    config = GemmConfig(alias_epilogue=True, acc_stages=1, arch="sm_100a")
    layout, kernel = gemm_kernel(config)
    with capture() as cap:
        compile_host("ordering_gemm_sm100_aliased", kernel, _fake_operands(config.dtype), "sm_100a", key=None)
    (kc,) = cap.kernels.values()
    return kc


def _errors(report) -> list[str]:
    return [f.line() for f in report.findings.errors]


def test_own_gemm_checks_clean_in_both_configurations(own_gemm, own_gemm_aliased):
    _, persistent = own_gemm
    for kc in (persistent, own_gemm_aliased):
        report = check_ordering(kc.ordering)
        assert _errors(report) == [], report.text()
        # every sC access has its buffer read: (written + e) % stages turns with the subtile loop
        assert not any("stage of 'sC'" in f.message for f in report.findings), report.text()


def test_own_aliased_gemm_runs_one_tile_per_cta_and_orders_c_over_a(own_gemm_aliased):
    report = check_ordering(own_gemm_aliased.ordering)
    # the tile loop's bound says one tile (range(bidx, bidx + 1, grid)): no run-time tile count
    assert not any("loop #" in f.message or "'loop" in f.message for f in report.findings), report.text()
    (alias,) = [a for a in report.aliases if (a.earlier, a.later) == ("sA", "sC")]
    # the MMA's tcgen05.commit frees the stage, and the epilogue waits the accumulator it completes
    assert alias.ordered and alias.edge.startswith("tcgen05.commit arrives on stage 0's empty barrier of 'loads'")
    assert "consumer_wait of 'accs'" in alias.edge
