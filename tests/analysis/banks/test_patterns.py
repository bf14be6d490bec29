"""Access patterns at a region's real offset, and the advice that fixes them."""

from __future__ import annotations

import pytest

from smemviz import SmemAllocation, SmemAllocator
from smemviz.analysis.banks import (
    Swizzle,
    advise,
    analyze_access,
    cp_async_atom,
    ldmatrix_atom,
    parse_cute_layout,
    stmatrix_atom,
    vector_atom,
)

ROWMAJOR = "(128,64):(64,1)"  # 128 rows of 64 bf16: 128-byte rows


def _plan(pad: int = 128, c_align: int = 128):
    s = SmemAllocator()
    s.add(SmemAllocation("head", pad))
    s.add(SmemAllocation("c", 128 * 64 * 2, alignment=c_align, dtype="bf16", count=128 * 64))
    s.add(SmemAllocation("f", 32 * 32 * 4, alignment=128, dtype="f32", count=32 * 32))
    s.compute_layout()
    return s.plan


def test_layout_parsing_and_evaluation():
    lay = parse_cute_layout("((8,8),(8,4)):((64,1),(8,512))")
    assert lay.modes == 2 and lay.extent(0) == 64 and lay.extent(1) == 32
    # coordinate 9 of mode 0 = (1, 1) in (8, 8): 1*64 + 1*1; coordinate 10 of mode 1 = (2, 1): 2*8 + 1*512
    assert lay(9, 10) == 64 + 1 + 16 + 512
    composed = parse_cute_layout("S<3,4,3> o 0 o (8,64):(64,1)")
    assert composed.swizzle == Swizzle(3, 4, 3, "byte") and str(composed).startswith("S<3,4,3>")
    for bad in ["(8,64)", "(8,64):(64)", "(8,64):(64,1", "8:1:1", "(0,4):(1,0)"]:
        with pytest.raises(ValueError):
            parse_cute_layout(bad)


def test_swizzle_values():
    s = Swizzle(3, 4, 3)
    assert s(0x80) == 0x80 ^ 0x10 and s(0x3F0) == 0x3F0 ^ 0x70 and s.period_bytes == 1024
    assert Swizzle(3, 3, 3, "element").in_bytes(2) == Swizzle(3, 4, 3)
    with pytest.raises(ValueError, match="shift must be at least"):
        Swizzle(3, 4, 2)
    with pytest.raises(ValueError, match="unit"):
        Swizzle(3, 4, 3, "bit")


def test_stmatrix_epilogue_conflicts_unswizzled_and_not_swizzled():
    plan = _plan()
    plain = analyze_access(plan, "c", stmatrix_atom(4), layout=ROWMAJOR, swizzle=None, warps=(4, 1))
    # every row starts at bank 0: 8 rows of one matrix in one bank group, 8-way on each of 32 instructions
    assert (plain.instructions, plain.wavefronts, plain.ideal, plain.n_way) == (32, 1024, 128, 8)
    assert plain.base == plan.region("c").offset
    swz = analyze_access(plan, "c", stmatrix_atom(4), layout=ROWMAJOR, swizzle="128B", warps=(4, 1))
    assert swz.conflict_free and swz.wavefronts == 128
    # the same swizzle stated on element offsets (bf16: M = 3), or as the DSL prints a smem layout
    # (a byte swizzle, S<3,4,3>), gives the same banks
    elem = analyze_access(
        plan,
        "c",
        stmatrix_atom(4),
        layout=parse_cute_layout("S<3,3,3> o 0 o " + ROWMAJOR, "element"),
        swizzle=None,
        warps=(4, 1),
    )
    dsl = analyze_access(plan, "c", stmatrix_atom(4), layout="S<3,4,3> o 0 o " + ROWMAJOR, swizzle=None, warps=(4, 1))
    assert elem.wavefronts == dsl.wavefronts == swz.wavefronts


def test_addresses_are_at_the_real_offset():
    """Every lane's address is the region's offset plus the (swizzled) tile offset: the 128B swizzle
    XORs the absolute address, so a tile 128 B past a 1024 boundary sees rows shifted by one."""
    plan = _plan()
    off = plan.region("c").offset
    atom = vector_atom("ld.shared.v4.b32", 2, threads=(32, 1))  # lane r: 8 bf16 at the start of row r
    rep = analyze_access(plan, "c", atom, layout=ROWMAJOR, swizzle="128B")
    first = rep.worst.addresses
    assert all(a is not None and off <= a < off + 128 * 128 for a in first)
    shifted = analyze_access(plan, "c", atom, layout=ROWMAJOR, swizzle="128B", base=128)
    assert shifted.base == 128
    assert shifted.worst.addresses[0] == 128 + (((128 >> 7) & 7) << 4)


def test_region_fields_are_read():
    s = SmemAllocator()
    s.add(SmemAllocation("a", 128 * 64 * 2, alignment=1024, dtype="bf16", count=128 * 64, swizzle="128B"))
    s.compute_layout()
    plan = s.plan
    rep = analyze_access(plan, "a", ldmatrix_atom(4), layout=ROWMAJOR, warps=(2, 2))
    assert rep.swizzle == "128B" and rep.conflict_free and rep.warps == 4 and rep.instructions == 32


def test_bad_access_input():
    plan = _plan()
    with pytest.raises(ValueError, match="no tile layout"):
        analyze_access(plan, "c", stmatrix_atom(4))
    with pytest.raises(ValueError, match="no whole number of 16x16"):
        analyze_access(plan, "c", stmatrix_atom(4), layout="(120,64):(64,1)")
    with pytest.raises(ValueError, match="past its 16384 B"):
        analyze_access(plan, "c", stmatrix_atom(4), layout="(256,64):(64,1)")
    with pytest.raises(ValueError, match="carries a swizzle"):
        analyze_access(plan, "c", stmatrix_atom(4), layout="S<3,3,3> o 0 o " + ROWMAJOR, swizzle="128B")
    with pytest.raises(ValueError, match="contiguous elements"):
        analyze_access(plan, "c", stmatrix_atom(4), layout="(64,32):(2,128)")
    with pytest.raises(ValueError, match="16-bit"):
        ldmatrix_atom(4, element_bytes=4)
    with pytest.raises(ValueError, match="32 lanes"):
        vector_atom("ld.shared.b32", 4, threads=(8, 8))
    with pytest.raises(KeyError):
        analyze_access(plan, "nope", stmatrix_atom(4), layout=ROWMAJOR)


def test_cp_async_fill_of_a_swizzled_tile():
    plan = _plan()
    atom = cp_async_atom(16, 2, threads=(4, 8))  # 4 rows of 8 x 16 B: a 128-byte row per 8 lanes
    rep = analyze_access(plan, "c", atom, layout=ROWMAJOR, swizzle="128B", warps=(4, 1))
    assert rep.instructions == 32 and rep.conflict_free


def test_advice_fixes_the_epilogue():
    plan = _plan()
    adv = advise(plan, "c", stmatrix_atom(4), layout=ROWMAJOR, warps=(4, 1), swizzle=None)
    assert adv.fixes and adv.swizzle == "128B" and adv.alignment == 1024
    assert adv.best.conflict_free and adv.current.n_way == 8
    assert "SmemLayoutAtomKind.K_SW128, cutlass.BFloat16), (128, 64)" in adv.dsl_line
    assert 'swizzle="128B"' in adv.allocation_line
    assert "alignment=1024" in adv.allocation_line and "legal for TMA and WGMMA" in adv.reason


def test_advice_when_no_swizzle_helps():
    plan = _plan()
    # 32 lanes each reading one f32 down a column of 128-byte rows: a swizzle permutes 16-byte chunks
    # among 8 positions, so 32 rows keep 4 lanes per bank whatever the mode
    adv = advise(plan, "f", vector_atom("ld.shared.b32", 4, threads=(32, 1)), layout="(32,32):(32,1)", swizzle=None)
    assert not adv.fixes and adv.best.n_way == 4 and adv.current.n_way == 32
    assert "the access itself conflicts" in adv.reason


def test_advice_when_already_clean_and_when_no_mode_is_legal():
    plan = _plan()
    clean = advise(plan, "c", stmatrix_atom(4), layout=ROWMAJOR, swizzle="128B")
    assert clean.fixes and "already conflict-free" in clean.reason and clean.dsl_line == ""
    narrow = advise(plan, "f", vector_atom("ld.shared.b32", 4, threads=(32, 1)), layout="(32,4):(4,1)", swizzle=None)
    assert not narrow.fixes and "no swizzle mode is legal" in narrow.reason
