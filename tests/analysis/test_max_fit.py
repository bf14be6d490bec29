"""max_fit: the largest value of one builder argument whose layout fits."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import smemviz
from smemviz import SmemAllocation, SmemAllocator, TmemAllocation, TmemAllocator


def gemm(stages: int = 2, tile_n: int = 128, arch: str | None = "sm_100a"):
    s = SmemAllocator(arch=arch)  # with an arch: refuses over-capacity layouts on its own
    for k in range(stages):
        s.add(SmemAllocation(f"a_stage{k}", 128 * 64 * 2, 1024))
        s.add(SmemAllocation(f"b_stage{k}", tile_n * 64 * 2, 1024))
    s.add_pipeline("load", stages)
    t = TmemAllocator()
    t.add(TmemAllocation("acc", columns=tile_n))
    return s, t


def test_the_largest_stage_count_that_fits_and_every_one_tried():
    fit = smemviz.experimental.max_fit(gemm, stages=range(1, 10), tile_n=128)
    # each stage is 32 KiB + 16 B of barriers; 227 KiB holds 7 (229,488 B), not 8
    assert fit.best == 7 and fit.arch == "sm_100" and fit.name == "stages"
    assert [t.value for t in fit.tried] == list(range(1, 10))
    assert [t.fits for t in fit.tried] == [True] * 7 + [False] * 2
    assert fit.tried[6].smem_used == 7 * 32768 + 7 * 16 and fit.tried[7].smem_used > 232448
    smem, tmem = fit.best_plans
    assert smem.total == 7 * 32768 + 7 * 16 and tmem.data_total == 128
    assert "largest stages that fits sm_100: 7" in fit.report() and "stages=8" in fit.report()
    assert "<table" in fit._repr_html_()


def test_another_arch_and_nothing_that_fits():
    assert smemviz.experimental.max_fit(gemm, arch="sm_86", stages=[1, 2, 3, 4]).best == 3  # 99 KiB
    none = smemviz.experimental.max_fit(gemm, arch="sm_86", stages=[4, 5])
    assert none.best is None and none.best_plans == (None, None) and "no stages tried fits sm_86" in none.report()


def test_exactly_one_argument_is_swept():
    with pytest.raises(TypeError, match="exactly one argument to sweep"):
        smemviz.experimental.max_fit(gemm, stages=3)
    with pytest.raises(TypeError, match="got 2"):
        smemviz.experimental.max_fit(gemm, stages=range(3), tile_n=[64, 128])
    with pytest.raises(ValueError, match="no values"):
        smemviz.experimental.max_fit(gemm, stages=range(0))


def test_a_builder_error_names_the_value():
    def bad(stages: int = 1):
        if stages == 3:
            raise RuntimeError("no 3-stage variant")
        return gemm(stages)

    with pytest.raises(RuntimeError, match="no 3-stage variant") as info:
        smemviz.experimental.max_fit(bad, stages=range(1, 5))
    notes = getattr(info.value, "__notes__", ["max_fit: building with stages=3"])
    assert "max_fit: building with stages=3" in notes


@given(st.lists(st.integers(1, 64), min_size=1, max_size=8), st.sampled_from(["sm_80", "sm_86", "sm_90"]))
def test_best_is_the_largest_fitting_value(kib_per_stage, arch):
    def build(stages: int = 1):
        s = SmemAllocator()
        for k in range(stages):
            s.add(SmemAllocation(f"x{k}", kib_per_stage[0] * 1024, 128))
        return s

    values = list(range(1, 12))
    fit = smemviz.experimental.max_fit(build, arch=arch, stages=values)
    limit = smemviz.get_arch(arch).smem_per_block
    fitting = [v for v in values if v * kib_per_stage[0] * 1024 <= limit]
    assert fit.best == (max(fitting) if fitting else None)
