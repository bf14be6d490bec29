"""Accesses as plain data (a layout file's access key) and their lint findings."""

from __future__ import annotations

import pytest

from smemviz import SmemAllocation, SmemAllocator
from smemviz.analysis.banks._access import access_from_dict, analyse_declared, bank_findings


def _plan():
    s = SmemAllocator()
    s.add(SmemAllocation("epi_c", 128 * 32 * 2, dtype="bf16", count=128 * 32))
    s.add(SmemAllocation("ok", 128 * 64 * 2, alignment=1024, dtype="bf16", count=128 * 64, swizzle="128B"))
    s.compute_layout()
    return s.plan


def test_findings_name_the_region_and_the_fix():
    plan = _plan()
    accesses = [
        access_from_dict(
            {"region": "epi_c", "instruction": "stmatrix.x4", "layout": "(128,32):(32,1)", "warps": [8, 1]}
        ),
        access_from_dict({"instruction": "ldmatrix.x4", "layout": "(128,64):(64,1)", "warps": [4, 1]}, region="ok"),
    ]
    findings = bank_findings(plan, accesses)
    assert len(findings) == 1
    f = findings[0]
    assert f.rule == "bank-conflict" and f.severity == "warning" and f.regions == ("epi_c",)
    assert "4-way: 256 wavefronts where 64 would do" in f.message
    assert f.fix.startswith("64B swizzle on a 512-byte boundary") and "K_SW64" in f.fix
    assert "warning[bank-conflict]" in f.line()


def test_vector_access_with_threads():
    plan = _plan()
    acc = access_from_dict(
        {
            "region": "ok",
            "instruction": "ld.shared.v4.b32",
            "layout": "(128,64):(64,1)",
            "threads": [4, 8],
            "warps": [4, 1],
        }
    )
    rep = analyse_declared(plan, acc)
    assert rep.conflict_free and rep.instructions == 32


@pytest.mark.parametrize(
    "data,match",
    [
        ({"region": "epi_c", "instruction": "stmatrix.x4", "colour": 1}, "unknown key"),
        ({"region": "epi_c", "instruction": "stmatrix.x9"}, "unknown instruction"),
        ({"region": "epi_c", "instruction": "stmatrix.x4", "warps": [0, 1]}, "'warps' must be two positive"),
        ({"region": "epi_c", "instruction": "stmatrix.x4", "warps": 4}, "'warps' must be two positive"),
        ({"region": "epi_c", "instruction": "stmatrix.x4", "stage": -1}, "'stage' must be"),
        ({"region": "epi_c", "instruction": "stmatrix.x4", "layout": 5}, "'layout' must be text"),
    ],
)
def test_bad_access_tables(data, match):
    with pytest.raises((TypeError, ValueError), match=match):  # a wrong type is a TypeError
        access_from_dict(data)


def test_not_a_table():
    with pytest.raises(TypeError, match="an access is a table"):
        access_from_dict(["stmatrix.x4"])  # type: ignore[arg-type]
