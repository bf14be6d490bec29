"""Nsight Compute's source page of CUTLASS's Hopper ``fmha`` example (one launch on Q 1x1024x16x128,
K/V 1x1000x16x128 f16 on the H200, ``results/ncu/ncu_cutlass_hopper_fmha.csv``,
``tests/analysis/ncu/cutlass_examples_h200.py``) replayed through ``read_ncu`` against a fresh CPU
capture of the example: every shared-memory SASS row is attributed, every modelled row agrees.
The WGMMA rows the DSL gives lines without a ``cute.gemm`` are told apart by their form (SS: QK^T,
A sQ and B sK from shared memory; RS: P.V, A in registers, B sV), and the ``try_wait`` line's
barrier probes are the K/V pipeline's. Skipped when CUTLASS's examples are not fetched into
``.cutlass_examples/``."""

from __future__ import annotations

import pytest

pytest.importorskip("cutlass")
pytestmark = pytest.mark.cutlass

from pathlib import Path  # noqa: E402

from smemviz import read_ncu  # noqa: E402

from ...sources.capture.cutlass_examples import EXAMPLES, examples_dir  # noqa: E402
from .cutlass_examples_h200 import PROFILED, capture_example  # noqa: E402

RECORDED = PROFILED["hopper_fmha"].recorded("hopper_fmha")
KV = "tma_async@fmha.py:1729"  # the K/V pipeline, named by where it is created


@pytest.fixture(scope="module")
def captured():
    example = EXAMPLES["hopper_fmha"]
    path = examples_dir() / example.path
    if not path.exists():
        pytest.skip(f"CUTLASS example {example.path} not found under {examples_dir()}")
    return capture_example("hopper_fmha"), Path(path).parent


@pytest.fixture(scope="module")
def replayed(captured):
    kc, folder = captured
    return read_ncu(RECORDED, kc, source_roots=[folder])


def test_capture_notes_each_gemm_calls_operands_and_the_try_wait(captured):
    kc, _ = captured
    notes = {(str(o.site), o.form, o.operand, o.region) for o in kc.gemm_operands}
    assert notes == {
        ("fmha.py:1666", "SS", "A", "sQ"),  # the helper's gemm: QK^T
        ("fmha.py:1666", "SS", "B", "sK"),
        ("fmha.py:1666", "RS", "B", "sV"),  # and P.V of the first tile
        ("fmha.py:1351", "RS", "B", "sV"),  # P.V of the main loop
    }
    assert [(p.op, p.pipeline, str(p.site)) for p in kc.probes] == [("consumer_try_wait", KV, "fmha.py:1319")]


def test_every_shared_memory_row_is_attributed(replayed):
    res = replayed
    assert len(res.rows) == 239
    assert not res.unattributed, [(r.sass, r.reason) for r in res.unattributed]
    by = [r.by for r in res.rows]
    assert (by.count("call site"), by.count("instruction")) == (207, 32)
    assert {r.kind for r in res.rows} == {"mbarrier", "tma_load", "tma_store", "stmatrix", "wgmma_read"}


def test_predicted_equals_measured_on_every_modelled_row(replayed):
    res = replayed
    assert len(res.modelled) == 56  # 8 STSM, 48 HGMMA
    assert all(r.agrees for r in res.modelled)
    assert not [r for r in res.rows if r.agrees is False]
    for t in (*res.accesses, *res.regions):
        assert t.agrees is not False, t


def test_the_epilogue_stores_are_the_prediction(replayed):
    res = replayed
    assert (res.ctas, res.ctas_from.split(":")[0]) == (
        128,
        "inferred",
    )  # 16 heads x 1024 queries in CTA tiles of 2 math warpgroups x 64 rows
    (stsm,) = [t for t in res.accesses if t.name.startswith("stmatrix")]
    assert (stsm.regions, stsm.executed, stsm.wavefronts, stsm.ideal, stsm.conflicts) == (
        ("sO",),
        8192,
        32768,
        32768,
        0,
    )
    assert (stsm.predicted_instructions, stsm.predicted_wavefronts, stsm.predicted_conflicts) == (8192, 32768, 0)


def test_each_wgmma_row_touches_its_forms_regions(replayed):
    res = replayed
    gmma = [r for r in res.rows if r.opcode.startswith("HGMMA")]
    assert len(gmma) == 48 and all(r.kind == "wgmma_read" for r in gmma)
    ss = [r for r in gmma if r.sass.split()[2].startswith("gdesc")]  # A and B from shared memory
    rs = [r for r in gmma if not r.sass.split()[2].startswith("gdesc")]  # A in a register
    assert len(ss) == 24 and all(r.regions == ("sK", "sQ") for r in ss)
    assert len(rs) == 24 and all(r.regions == ("sV",) for r in rs)
    totals = {t.name: t for t in res.accesses if t.name.startswith("wgmma_read")}
    assert {n: (t.regions, t.rows, t.executed, t.wavefronts) for n, t in totals.items()} == {
        "wgmma_read @ fmha.py:1351": (("sV",), 9, 29696, 237568),
        "wgmma_read RS @ fmha.py:1351, fmha.py:1666": (("sV",), 8, 28672, 229376),
        "wgmma_read RS @ fmha.py:1666": (("sV",), 7, 7168, 57344),
        "wgmma_read SS @ fmha.py:1666": (("sK", "sQ"), 24, 65536, 786432),
    }
    assert all(t.predicted_wavefronts == t.wavefronts == t.ideal and t.conflicts == 0 for t in totals.values())
    # the rows on lines without a cute.gemm (the @cute.jit, make_fragment, ...): by instruction, after their form
    off_line = [r for r in gmma if r.by == "instruction"]
    assert len(off_line) == 32
    lines = {r.site for r in off_line}
    assert {"fmha.py:261", "fmha.py:882", "fmha.py:890", "fmha_helpers.py:1083", "fmha.py:1319"} <= lines


def test_the_try_wait_rows_are_the_kv_pipelines_barriers(replayed):
    rows = [r for r in replayed.rows if r.site == "fmha.py:1319" and r.kind == "mbarrier"]
    assert len(rows) == 2 and all(r.opcode == "SYNCS.PHASECHK.TRANS64.TRYWAIT" for r in rows)
    assert all((r.by, r.regions) == ("call site", (f"{KV} barriers",)) for r in rows)
    assert sum(r.executed for r in rows) == 7168


def test_the_one_disagreement_is_the_kernel_name_of_a_script_run(replayed):
    """The example ran as a script (its module ``__main__``); the capture loads it as a module,
    whose name the DSL writes into the kernel's symbol. Nothing else differs."""
    (only,) = replayed.disagreements
    assert only.startswith("ncu profiled kernel_cutlass_kernel___main__HopperFusedMultiHeadAttentionForward")
    assert "the capture is of kernel_cutlass_kernel_cutlass_example_hopper_fmhaHopperFusedMultiHead" in only
