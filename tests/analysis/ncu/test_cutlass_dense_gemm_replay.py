"""Nsight Compute's source page of CUTLASS's Hopper ``dense_gemm`` example (one launch on
1024x1024x1024 on the H200, ``results/ncu/ncu_cutlass_hopper_dense_gemm.csv``,
``tests/analysis/ncu/cutlass_examples_h200.py``) replayed through ``read_ncu`` against a fresh CPU
capture of the example: every shared-memory SASS row is attributed, every modelled row agrees.
Skipped when CUTLASS's examples are not fetched into ``.cutlass_examples/``."""

from __future__ import annotations

import pytest

pytest.importorskip("cutlass")
pytestmark = pytest.mark.cutlass

from pathlib import Path  # noqa: E402

from smemviz import read_ncu  # noqa: E402

from ...sources.capture.cutlass_examples import EXAMPLES, examples_dir  # noqa: E402
from .cutlass_examples_h200 import PROFILED, capture_example  # noqa: E402

RECORDED = PROFILED["hopper_dense_gemm"].recorded("hopper_dense_gemm")


@pytest.fixture(scope="module")
def replayed():
    example = EXAMPLES["hopper_dense_gemm"]
    path = examples_dir() / example.path
    if not path.exists():
        pytest.skip(f"CUTLASS example {example.path} not found under {examples_dir()}")
    return read_ncu(RECORDED, capture_example("hopper_dense_gemm"), source_roots=[Path(path).parent])


def test_every_shared_memory_row_is_attributed(replayed):
    res = replayed
    assert len(res.rows) == 72
    assert not res.unattributed, [(r.sass, r.reason) for r in res.unattributed]
    assert {r.kind for r in res.rows} == {"mbarrier", "tma_load", "tma_store", "stmatrix", "wgmma_read"}


def test_predicted_equals_measured_on_every_modelled_row(replayed):
    res = replayed
    assert len(res.modelled) == 32
    assert all(r.agrees for r in res.modelled)
    assert not [r for r in res.rows if r.agrees is False]
    for t in res.accesses:
        assert t.agrees is not False, t


def test_the_epilogue_stores_are_the_prediction(replayed):
    res = replayed
    assert (res.ctas, res.ctas_from.split(":")[0]) == (64, "inferred")  # 1024x1024 in 128x128 tiles
    (stsm,) = [t for t in res.accesses if t.name.startswith("stmatrix")]
    assert (stsm.executed, stsm.wavefronts, stsm.ideal, stsm.conflicts) == (4096, 16384, 16384, 0)
    assert (stsm.predicted_instructions, stsm.predicted_wavefronts, stsm.predicted_conflicts) == (4096, 16384, 0)


def test_the_one_disagreement_is_the_kernel_name_of_a_script_run(replayed):
    """The example ran as a script (its module ``__main__``); the capture loads it as a module,
    whose name the DSL writes into the kernel's symbol. Nothing else differs."""
    (only,) = replayed.disagreements
    assert only.startswith("ncu profiled kernel_cutlass_kernel___main__HopperWgmmaGemmKernel")
    assert "the capture is of kernel_cutlass_kernel_cutlass_example_hopper_dense_gemmHopperWgmmaGem" in only
