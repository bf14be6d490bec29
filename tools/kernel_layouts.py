"""Layouts that exercise the kernel bridge: every shape of plan the probe must
get right (typed and untyped regions, alias groups, odd alignments, pipeline
barriers, the TMEM-pointer slot, the full 227 KiB of a Hopper/Blackwell CTA).

Each builder returns a fresh allocator with its layout computed.
"""

from __future__ import annotations

from collections.abc import Callable

from smemviz import hardware
from smemviz.kernel.probes._pipeline import StagedCopyResource
from smemviz.layout._allocation import SmemAllocation, TmemAllocation
from smemviz.layout._allocator import SmemAllocator, TmemAllocator

__all__ = ["SMEM_LAYOUTS", "TMEM_LAYOUTS", "smem_layout", "tmem_layout"]


def _typed_mix() -> SmemAllocator:
    al = SmemAllocator("sm_90a")
    al.add(SmemAllocation("a_bf16", dtype="bf16", count=128 * 64, alignment=1024))
    al.add(SmemAllocation("b_f16", dtype="f16", count=64 * 64, alignment=128))
    al.add(SmemAllocation("scale_f32", dtype="f32", count=96, alignment=16))
    al.add(SmemAllocation("acc_f64", dtype="f64", count=9, alignment=8))
    al.add(SmemAllocation("idx_i32", dtype="i32", count=33, alignment=4))
    al.add(SmemAllocation("q_fp8", dtype="f8e4m3", count=200, alignment=128))
    al.add(SmemAllocation("w_fp4", dtype="f4e2m1", count=77, alignment=16))
    al.add(SmemAllocation("raw", size_bytes=1000, alignment=256))
    al.compute_layout()
    return al


def _odd_alignments() -> SmemAllocator:
    al = SmemAllocator("sm_90a")
    for i, (size, align) in enumerate(
        [(3, 1), (5, 2), (7, 4), (9, 8), (17, 16), (33, 32), (65, 64), (1, 512), (130, 1), (6, 2), (12, 4)]
    ):
        al.add(SmemAllocation(f"odd{i}_{size}B_align{align}", size_bytes=size, alignment=align))
    al.add(SmemAllocation("u16_at_2", dtype="u16", count=11, alignment=2))
    al.add(SmemAllocation("i8_at_1", dtype="i8", count=13, alignment=1))
    al.compute_layout()
    return al


def _alias_groups() -> SmemAllocator:
    al = SmemAllocator("sm_90a")
    al.add(SmemAllocation("persistent", dtype="f32", count=256, alignment=128))
    mainloop_a = SmemAllocation("mainloop_a", dtype="bf16", count=4096, alignment=1024)
    mainloop_b = SmemAllocation("mainloop_b", dtype="bf16", count=2048, alignment=128)
    epilogue = SmemAllocation("epilogue_c", dtype="f32", count=3000, alignment=128)
    reduce = SmemAllocation("reduce_tmp", size_bytes=777, alignment=8)
    al.add_alias_group([[mainloop_a, mainloop_b], [epilogue, reduce]])
    x = SmemAllocation("x_phase1", size_bytes=100, alignment=4)
    y = SmemAllocation("y_phase2", dtype="i16", count=70, alignment=2)
    z = SmemAllocation("z_phase3", dtype="u8", count=333, alignment=1)
    al.add_alias_group([[x], [y], [z]])
    al.compute_layout()
    return al


def _barriers_and_slot() -> SmemAllocator:
    al = SmemAllocator("sm_100a")
    al.add(SmemAllocation("tile", dtype="bf16", count=2048, alignment=1024))
    al.add_resource(StagedCopyResource(stages=3, tile=64, name="load"))
    al.add_resource(StagedCopyResource(stages=5, tile=32, name="store"))
    al.add_tmem_ptr(SmemAllocation("tmem_ptr", size_bytes=4, alignment=4))
    al.compute_layout()
    return al


def _full_227k() -> SmemAllocator:
    """Exactly the per-block maximum: 232448 B with 1024-aligned buffers."""
    limit = hardware.get_arch("sm_90").smem_per_block
    al = SmemAllocator("sm_90a")
    al.add(SmemAllocation("stage_a", dtype="bf16", count=49152, alignment=1024))  # 96 KiB
    al.add(SmemAllocation("stage_b", dtype="bf16", count=49152, alignment=1024))  # 96 KiB
    used = 2 * 98304
    al.add(SmemAllocation("epilogue", size_bytes=limit - used - 16, alignment=128))
    al.add(SmemAllocation("flags", dtype="u32", count=4, alignment=16))
    al.compute_layout()
    if al.plan.unified_bytes != limit:
        raise AssertionError(f"full layout is {al.plan.unified_bytes} B, expected {limit} B")
    return al


def _single_byte() -> SmemAllocator:
    al = SmemAllocator("sm_90a")
    al.add(SmemAllocation("one", size_bytes=1, alignment=1))
    al.compute_layout()
    return al


SMEM_LAYOUTS: dict[str, Callable[[], SmemAllocator]] = {
    "typed_mix": _typed_mix,
    "odd_alignments": _odd_alignments,
    "alias_groups": _alias_groups,
    "barriers_and_tmem_slot": _barriers_and_slot,
    "full_227KiB": _full_227k,
    "single_byte": _single_byte,
}


def smem_layout(name: str) -> SmemAllocator:
    try:
        return SMEM_LAYOUTS[name]()
    except KeyError:
        raise KeyError(f"no example SMEM layout {name!r}; known: {', '.join(SMEM_LAYOUTS)}") from None


def _tmem(columns: list[int]) -> Callable[[], TmemAllocator]:
    def build() -> TmemAllocator:
        al = TmemAllocator("sm_100a")
        for i, n in enumerate(columns):
            al.add(TmemAllocation(f"t{i}_{n}cols", n))
        al.compute_layout()
        return al

    return build


TMEM_LAYOUTS: dict[str, Callable[[], TmemAllocator]] = {
    "one_column": _tmem([1]),
    "acc_128": _tmem([128]),
    "acc_and_scales": _tmem([128, 40]),
    "full_512": _tmem([256, 128, 64, 64]),
}


def tmem_layout(name: str) -> TmemAllocator:
    try:
        return TMEM_LAYOUTS[name]()
    except KeyError:
        raise KeyError(f"no example TMEM layout {name!r}; known: {', '.join(TMEM_LAYOUTS)}") from None
