"""Bank analysis of a kernel's SMEM as captured while the CuTe DSL traces it: the regions' layouts
and swizzles are the kernel's own (examples/capture_kernel.py), nothing is described by hand but
the access instruction and the warps."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("cutlass")
pytest.importorskip("cutlass.cute")

from smemviz import capture  # noqa: E402
from smemviz.analysis.banks import (  # noqa: E402
    access_from_dict,
    analyze_access,
    bank_findings,
    ldmatrix_atom,
    stmatrix_atom,
)

pytestmark = pytest.mark.cutlass

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


@pytest.fixture(scope="module")
def captured_plan():
    sys.path.insert(0, str(EXAMPLES))
    try:
        import capture_kernel
    finally:
        sys.path.remove(str(EXAMPLES))
    with capture() as cap:
        capture_kernel.build()
    return cap.plan


def test_captured_regions_carry_layouts_the_analysis_reads(captured_plan):
    plan = captured_plan
    c = plan.region("sC")
    assert c.layout.startswith("S<2,4,3>") and c.swizzle == "64B"
    for stage in range(4):
        rep = analyze_access(plan, "sC", stmatrix_atom(4), warps=(8, 1), stage=stage)
        assert rep.conflict_free and rep.instructions == 16 and rep.swizzle == "S<2,4,3> (bytes)"
        assert all(
            c.offset + stage * 8192 <= a < c.offset + (stage + 1) * 8192  # 4096 f16 per stage
            for a in rep.worst.addresses
            if a is not None
        )
    a = analyze_access(plan, "sA", ldmatrix_atom(4), warps=(4, 1), stage=3)
    assert a.conflict_free and a.base == plan.region("sA").offset


def test_captured_kernel_has_no_bank_findings_and_an_unswizzled_twin_has(captured_plan):
    plan = captured_plan
    accesses = [
        access_from_dict({"region": "sC", "instruction": "stmatrix.x4", "warps": [8, 1]}),
        access_from_dict({"region": "sA", "instruction": "ldmatrix.x4", "warps": [4, 1]}),
    ]
    assert bank_findings(plan, accesses) == ()
    twin = access_from_dict(
        {
            "region": "sC",
            "instruction": "stmatrix.x4",
            "warps": [8, 1],
            "layout": "(128,32,4):(32,1,4096)",
            "swizzle": "none",
        }
    )
    (finding,) = bank_findings(plan, [twin])
    assert "4-way" in finding.message and finding.fix.startswith("64B swizzle")
