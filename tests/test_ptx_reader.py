"""The PTX address reader on hand-written PTX (no CuTe DSL): what it follows, and
that an address it cannot follow is reported, not guessed."""

from __future__ import annotations

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
