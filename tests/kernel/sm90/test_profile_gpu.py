"""The explorer's Run on GPU under Nsight Compute, on the GPU: ``gemm_runner().profile(...)``
captures smemviz's Hopper GEMM, launches it once under ncu and attributes every shared-memory
SASS row; the plain row-major C staging's 4-way conflict is measured where it was predicted.

Skips, with the reason, where no sm_90 GPU or no ncu is here. The last run is recorded in
results/ncu_attribution.md ("the explorer's profile on the H200")."""

from __future__ import annotations

import pytest

pytest.importorskip("cutlass")

from smemviz.analysis.ncu._overlay import measured_segments  # noqa: E402
from smemviz.analysis.ncu._profile import find_ncu  # noqa: E402
from smemviz.kernel import GemmProblem, current_gpu, gemm_runner  # noqa: E402

GPU = current_gpu()
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.cutlass,
    pytest.mark.skipif(GPU is None or GPU.major != 9, reason=f"needs an sm_90 GPU visible to PyTorch (here: {GPU})"),
    pytest.mark.skipif(find_ncu() is None, reason="needs Nsight Compute's ncu on PATH"),
]


@pytest.mark.parametrize(("c_swizzle", "ways"), [("none", "4-way"), ("auto", "conflict-free")])
def test_the_runner_profiles_the_controls_it_is_given(c_swizzle, ways):
    res = gemm_runner(GemmProblem(1024, 1024, 1024)).profile(c_swizzle=c_swizzle)
    assert res.rows and not res.unattributed, [(r.sass, r.reason) for r in res.unattributed]
    assert res.agrees, res.disagreements
    segs = {s.region: s for s in measured_segments(res)}
    assert sorted(segs) == ["sA", "sB", "sC"] and not [s for s in segs.values() if s.look_here]
    assert segs["sC"].label == f"predicted {ways}, measured {ways}"
