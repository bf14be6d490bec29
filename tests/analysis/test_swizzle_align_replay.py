"""The H200's answers on swizzled operands off their swizzle atom (results/swizzle_align_h200.json),
replayed against the ``swizzle-align`` rule: where TMA + WGMMA gave correct results with the
descriptor's base offset 0 (as CUTLASS and the CuTe DSL build it), the rule may warn but not fail."""

import json
from pathlib import Path

import pytest

from smemviz import SmemAllocation, SmemAllocator
from smemviz.analysis import lint

RESULTS = Path(__file__).parents[2] / "results"
ROWS = json.loads((RESULTS / "swizzle_align_h200.json").read_text())
BELOW_128 = json.loads((RESULTS / "swizzle_align_h200_below128.json").read_text())
MISALIGNED_ADDRESS = 100_000 + 716  # the probe's code for the runtime's cudaErrorMisalignedAddress


def _placed_at(offset: int, swizzle: str):
    """A plan whose swizzled operand starts at ``offset`` (a pad region before it)."""
    align = min(128, offset & -offset)  # the same alignment for both: declared order is kept
    s = SmemAllocator()
    s.add(SmemAllocation("pad", offset, align))
    s.add(SmemAllocation("sA", 8192, align, swizzle=swizzle))
    s.compute_layout()
    assert s.plan.region("sA").offset == offset
    return s.plan


def test_the_recording_covers_both_swizzles_every_start_and_both_base_offsets():
    assert {(r["span"], r["offset"], r["base_offset"]) for r in ROWS} == {
        (span, off, base) for span in (128, 64) for off in range(128, 1025, 128) for base in (0, 1)
    }
    assert all(r["rc"] == 0 for r in ROWS)  # TMA took every 128 B aligned start


@pytest.mark.parametrize("row", [r for r in ROWS if r["base_offset"] == 0], ids=lambda r: f"{r['span']}B@{r['offset']}")
def test_a_start_silicon_read_correctly_is_no_error(row):
    assert row["correct"] and row["tma_pattern"] in ("absolute", "both")
    found = [f for f in lint(_placed_at(row["offset"], f"{row['span']}B")) if f.rule == "swizzle-align"]
    atom = {128: 1024, 64: 512}[row["span"]]
    if row["offset"] % atom:
        (f,) = found
        assert f.severity == "warning" and "swizzle_align_h200" in f.fact
    else:
        assert not found


def test_the_base_offset_formula_broke_what_it_was_set_for():
    """The rule's message says a descriptor with the base offset set reads wrong values: the
    recording shows it at most starts off the atom."""
    off_atom = [r for r in ROWS if r["base_offset"] == 1 and r["offset"] % {128: 1024, 64: 512}[r["span"]]]
    wrong = [r for r in off_atom if not r["correct"]]
    assert len(off_atom) == 13 and len(wrong) == 10
    (f,) = [f for f in lint(_placed_at(256, "128B")) if f.rule == "swizzle-align"]
    assert "base offset set" in f.message


@pytest.mark.parametrize("row", BELOW_128, ids=lambda r: f"{r['span']}B@{r['offset']}-base{r['base_offset']}")
def test_a_start_below_128_bytes_faulted_and_is_an_error(row):
    assert row["rc"] == MISALIGNED_ADDRESS and row["offset"] % 128
    (f,) = [f for f in lint(_placed_at(row["offset"], f"{row['span']}B")) if f.rule == "swizzle-align"]
    assert f.severity == "error" and "nor of the 128 B a TMA destination needs" in f.message


def test_on_blackwell_the_message_says_what_was_not_measured():
    plan = _placed_at(256, "128B")
    (hopper,) = [f for f in lint(plan, "sm_90a") if f.rule == "swizzle-align"]
    (blackwell,) = [f for f in lint(plan, "sm_100a") if f.rule == "swizzle-align"]
    assert "not measured" not in hopper.message
    assert "on Blackwell inferred from the PTX ISA, not measured" in blackwell.message
    assert blackwell.severity == hopper.severity == "warning"
