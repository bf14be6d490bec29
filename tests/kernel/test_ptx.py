"""The PTX address reader on hand-written PTX (no CuTe DSL): what it follows, and
that an address it cannot follow is reported, not guessed."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from smemviz.kernel._ptx import read_addresses

PTX = """
\tmov.b32 \t%r5, __dynamic_shmem__0;
\tadd.s32 \t%r19, %r5, 4096;
\tmov.b32 \t%r7, 256;
\ttcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 \t[%r19], %r7;
\tld.shared.b32 \t%r22, [%r5+4096];
\tselp.b32 \t%r30, 256, 0, %p1;
\tadd.s32 \t%r31, %r30, %r22;
\ttcgen05.mma.cta_group::1.kind::f16 [%r31], %rd1, %rd2, %r9, {%r1, %r2, %r3, %r4}, %p2;
\tshl.b32 \t%r40, %r2, 21;
\tadd.s32 \t%r41, %r22, %r40;
\ttcgen05.ld.sync.aligned.32x32b.x32.b32 {%r50, %r51}, [%r41];
\tshl.b32 \t%r60, %r3, 10;
\tadd.s32 \t%r61, %r5, %r60;
\tcp.async.bulk.tensor.3d.shared::cta.global.tile.mbarrier::complete_tx::bytes [%r61+2048], [%rd3, {%r1, %r2, %r3}], [%r62];
\tshr.u32 \t%r70, %r61, 4;
\tand.b32 \t%r71, %r70, 16383;
\tmbarrier.init.shared.b64 \t[%r5+4104], %r1;
\tmbarrier.init.shared.b64 \t[%r99], %r1;
\ttcgen05.dealloc.cta_group::1.sync.aligned.b32 \t%r22, %r7;
"""


def test_offsets_are_followed_through_registers():
    found = read_addresses(PTX)
    assert found.tmem_slot == (4096,) and found.tmem_slot_reads == (4096,)
    assert found.tcgen05_alloc_columns == (256,) and found.tcgen05_dealloc_columns == (256,)
    # selp between two accumulators, added to the TMEM base read from the slot
    assert found.mma_accumulator_columns == {0, 256}
    # a warp's lane bits (shifted by 21) leave the column alone
    assert found.epilogue_load_columns == {0}
    assert found.tma_load_offsets == {2048}
    assert found.mma_descriptor_offsets == {0}
    assert found.mbarrier_inits == (4104,)


def test_an_address_that_cannot_be_followed_is_reported():
    found = read_addresses(PTX)
    assert found.unresolved == ("mbarrier.init [%r99]",)


def test_a_load_from_another_smem_byte_is_not_the_tmem_base():
    moved = PTX.replace("ld.shared.b32 \t%r22, [%r5+4096]", "ld.shared.b32 \t%r22, [%r5+4100]")
    found = read_addresses(moved)
    assert found.mma_accumulator_columns == frozenset()
    assert any(u.startswith("tcgen05.mma") for u in found.unresolved)


@st.composite
def offset_chains(draw, stage_term: bool = False):
    """PTX that reaches an SMEM byte through a chain of register adds (immediates and
    registers holding constants), ending in an mbarrier.init with an immediate; with
    ``stage_term`` the chain starts from the base plus a shifted run-time register."""
    if stage_term:
        lines = [
            "\tmov.b32 \t%r100, __dynamic_shmem__0;",
            f"\tshl.b32 \t%r101, %r102, {draw(st.integers(1, 14))};",
            "\tadd.s32 \t%r1, %r100, %r101;",
        ]
    else:
        lines = ["\tmov.b32 \t%r1, __dynamic_shmem__0;"]
    total, reg = 0, 1
    for _ in range(draw(st.integers(0, 6))):
        step = draw(st.integers(0, 4096)) * 8
        nxt = reg + 2
        if draw(st.booleans()):
            lines.append(f"\tadd.s32 \t%r{nxt}, %r{reg}, {step};")
        else:
            lines.append(f"\tmov.b32 \t%r{nxt - 1}, {step};")
            lines.append(f"\tadd.s32 \t%r{nxt}, %r{reg}, %r{nxt - 1};")
        total, reg = total + step, nxt
    last = draw(st.integers(0, 512)) * 8
    lines.append(
        f"\tmbarrier.init.shared.b64 \t[%r{reg}+{last}], %r0;"
        if last
        else f"\tmbarrier.init.shared.b64 \t[%r{reg}], %r0;"
    )
    return "\n".join(lines), total + last


@given(offset_chains())
def test_any_chain_of_constant_adds_resolves_to_its_sum(chain):
    ptx, expected = chain
    found = read_addresses(ptx)
    assert found.mbarrier_inits == (expected,) and found.unresolved == ()


@given(offset_chains(stage_term=True))
def test_a_run_time_stage_term_keeps_the_constant_part(chain):
    ptx, expected = chain
    found = read_addresses(ptx)
    assert found.mbarrier_inits == (expected,) and found.unresolved == ()


@given(offset_chains())
def test_a_chain_from_an_unknown_register_is_not_resolved(chain):
    ptx, _ = chain
    found = read_addresses(ptx.replace("mov.b32 \t%r1, __dynamic_shmem__0;", "ld.param.u32 \t%r1, [p];"))
    assert found.mbarrier_inits == () and len(found.unresolved) == 1
