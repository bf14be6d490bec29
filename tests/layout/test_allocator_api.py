"""The API does what a newcomer expects: pipelines by name, one word for TMEM
columns, unique names, and what explore() is given is left as it was."""

from __future__ import annotations

import pytest

import smemviz
from smemviz import SmemAllocation, SmemAllocator, TmemAllocation, TmemAllocator


def test_add_pipeline_declares_barriers_like_a_layout_file_pipeline():
    s = SmemAllocator()
    s.add(SmemAllocation("a", 4096, 128))
    load = s.add_pipeline("load", 4)
    s.add_pipeline("mma", 2)
    s.compute_layout()
    assert load.pipeline_config.num_stages == 4 and load.pipeline_config.barrier_ptr is None
    regions = {r.name: r for r in s.plan.barrier_regions}
    assert regions["load.barriers"].size == 4 * 16 and regions["mma.barriers"].size == 2 * 16
    assert s.plan.barrier_bytes == 6 * 16
    assert regions["load.barriers"].offset == 4096  # after the data, rounded to 8


def test_add_pipeline_refuses_bad_input_and_changes_nothing():
    s = SmemAllocator()
    s.add_pipeline("load", 2)
    before = s.barrier_smem_bytes
    with pytest.raises(ValueError, match=r"pipeline 'mma'.*num_stages must be a positive int, got 0"):
        s.add_pipeline("mma", 0)
    with pytest.raises(ValueError, match="pipeline 'load' is declared twice"):
        s.add_pipeline("load", 3)
    with pytest.raises(TypeError, match="pipeline name"):
        s.add_pipeline("", 3)
    assert s.barrier_smem_bytes == before


def test_tmem_columns_is_an_alias_of_num_columns():
    a = TmemAllocation("acc", columns=128)
    b = TmemAllocation("acc2", num_columns=64)
    assert (a.num_columns, a.columns, b.columns) == (128, 128, 64)
    assert TmemAllocation("c", 32, columns=32).num_columns == 32
    with pytest.raises(TypeError, match="num_columns=128 and columns=64 disagree"):
        TmemAllocation("d", 128, columns=64)
    with pytest.raises(TypeError, match="give its width as num_columns="):
        TmemAllocation("e")
    with pytest.raises(ValueError, match="'f': num_columns must be >= 1, got 0"):
        TmemAllocation("f", columns=0)
    t = TmemAllocator()
    t.add(a)
    t.compute_layout()
    assert t.plan.data_total == 128


def test_two_allocations_of_one_name_are_refused_and_nothing_is_placed():
    s = SmemAllocator()
    first = SmemAllocation("buf", 1024, 128)
    s.add(first)
    s.add(first)  # the same object twice is fine: laid out once
    s.add(SmemAllocation("buf", 2048, 128))
    with pytest.raises(ValueError, match="two different allocations are named 'buf'"):
        s.compute_layout()
    assert not s.layout_computed
    g = SmemAllocator()
    g.add(SmemAllocation("x", 64, 16))
    g.add_alias_group([[SmemAllocation("x", 64, 16)], [SmemAllocation("y", 64, 16)]])
    with pytest.raises(ValueError, match="named 'x'"):
        g.compute_layout()
    t = TmemAllocator()
    t.add(TmemAllocation("acc", 64))
    t.add(TmemAllocation("acc", 64))
    with pytest.raises(ValueError, match="named 'acc'"):
        t.compute_layout()


def test_explore_leaves_an_uncomputed_allocator_alone():
    pytest.importorskip("ipywidgets")
    pytest.importorskip("plotly")
    s = SmemAllocator()
    s.add(SmemAllocation("a", 1024, 128))
    with pytest.raises(smemviz.LayoutStateError, match="compute_layout"):
        smemviz.explore(s)
    assert not s.layout_computed
    s.add(SmemAllocation("b", 1024, 128))  # still open for more


def test_export_takes_an_explorer(tmp_path):
    pytest.importorskip("ipywidgets")
    pytest.importorskip("plotly")

    def build(stages: int = 2):
        s = SmemAllocator()
        for k in range(stages):
            s.add(SmemAllocation(f"a_stage{k}", 4096, 128))
        return s

    ex = smemviz.explore(build, stages=(1, 4))
    ex.controls["stages"].value = 3
    out = smemviz.export(ex, tmp_path / "now.json")
    (plan,) = [p for p in smemviz.read_plans(out.read_text()) if p is not None]
    assert [r.name for r in plan.regions] == ["a_stage0", "a_stage1", "a_stage2"]  # the layout on screen
