"""Plans that carry hand-written ordering models (tests/analysis/ordering/kernels.py),
shared by the figure, explorer and export tests of the ordering views."""

from __future__ import annotations

from dataclasses import replace

from smemviz import SmemAccess, SmemAllocation, SmemAllocator, TmemAllocation, TmemAllocator
from smemviz.layout import LayoutPlan

from ..analysis.ordering.kernels import drop, hopper_gemm, tmem_in_place


def hopper_plan(*, unordered: bool = False) -> LayoutPlan:
    """The Hopper GEMM's SMEM (sA, sB; sC over sA's first stages) with its model; with
    ``unordered`` the epilogue's wait_group is gone, so the sA -> sC alias is unordered."""
    s = SmemAllocator(arch="sm_90a")
    s.add(SmemAllocation("sA", 3 * 16384, alignment=1024))
    s.add(SmemAllocation("sB", 3 * 16384, alignment=1024))
    s.compute_layout()
    model = drop(hopper_gemm(), "mma", 44) if unordered else hopper_gemm()
    return replace(s.plan, ordering=model)


def tmem_plan() -> LayoutPlan:
    """Blackwell FMHA's TMEM in small (P written in place in S's columns) with its model."""
    t = TmemAllocator(arch="sm_100a")
    t.add(TmemAllocation("S", 128))
    t.add(TmemAllocation("O", 128))
    t.compute_layout()
    return replace(t.plan, ordering=tmem_in_place())


def declared_plan() -> LayoutPlan:
    """A declared plan, no kernel yet: A/B stages by TMA for the mainloop, C staged by
    stmatrix over A's stages in the epilogue (A read by ldmatrix) (its hand-overs need edges)."""
    s = SmemAllocator(steps=("load", "mma", "epilogue"), arch="sm_90a")
    read = SmemAccess("ldmatrix.x4", layout="(64,64):(64,1)", dtype="bf16", warps=(4, 1))
    a = SmemAllocation("a_stages", 3 * 16384, alignment=1024, dtype="bf16", stages=3, tma=True, access=read)
    s.add(a, live=range(0, 2))
    s.add(SmemAllocation("b_stages", 3 * 16384, alignment=1024, stages=3, tma=True), live=range(0, 2))
    access = SmemAccess("stmatrix.x4", layout="(64,128):(128,1)", dtype="bf16", warps=(4, 1))
    s.add(SmemAllocation("epi_c", 16384, alignment=1024, dtype="bf16", access=access), live="epilogue")
    s.compute_layout()
    return s.plan
