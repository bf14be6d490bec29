"""diff(plan, other): regions added, removed, moved, resized, and the totals."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from smemviz import SmemAllocation, SmemAllocator, TmemAllocation, TmemAllocator
from smemviz.analysis import diff


def layout(stages: int, epi: int = 32768):
    s = SmemAllocator()
    for k in range(stages):
        s.add(SmemAllocation(f"a_stage{k}", 16384, 1024))
    s.add(SmemAllocation("epi", epi, 128))
    s.add_pipeline("load", stages)
    s.compute_layout()
    return s.plan


def test_one_more_stage():
    d = diff(layout(4), layout(5))
    assert [r.name for r in d.added] == ["a_stage4"] and d.removed == ()
    # epi moves up by a stage; the barriers grow by 16 B and move
    assert [(c.name, c.moved_by) for c in d.moved] == [("epi", 16384)]
    assert [(c.name, c.resized_by) for c in d.resized] == [("load.barriers", 16)]
    assert d.unchanged == 4
    assert d.total_delta == 16384 + 16 == layout(5).total - layout(4).total
    text = d.report()
    assert "+ a_stage4: 16,384 B at 65,536" in text and "> epi" in text and "~ load.barriers: 64 -> 80 B" in text
    assert "(+16,400 B)" in text


def test_removed_and_the_same_layout():
    d = diff(layout(3), layout(2, epi=1024))
    assert [r.name for r in d.removed] == ["a_stage2"]
    assert [c.name for c in d.resized] == ["epi", "load.barriers"]
    assert d.total_delta < 0 and "-" in d.report()
    same = diff(layout(2), layout(2))
    assert same.same and "no region changed" in same.report()


def test_memories_must_match():
    t = TmemAllocator()
    t.add(TmemAllocation("acc", 128))
    t.compute_layout()
    try:
        diff(layout(1), t.plan)
    except ValueError as exc:
        assert "SMEM layout with a TMEM one" in str(exc)
    else:
        raise AssertionError("an SMEM plan was compared with a TMEM plan")


@settings(max_examples=50)
@given(st.integers(1, 6), st.integers(1, 6), st.sampled_from([1024, 4096, 32768]), st.sampled_from([1024, 4096]))
def test_every_region_is_accounted_for_once(s1, s2, e1, e2):
    a, b = layout(s1, e1), layout(s2, e2)
    d = diff(a, b)
    assert len(d.removed) + len(d.moved) + len(d.resized) + d.unchanged == len(a.regions)
    assert len(d.added) + len(d.moved) + len(d.resized) + d.unchanged == len(b.regions)
    assert d.total_before + d.total_delta == b.total
    assert diff(a, b).same == (a.to_dict()["regions"] == b.to_dict()["regions"])


def test_compare_figure_outlines_what_changed_on_one_axis():
    import pytest

    pytest.importorskip("plotly")
    import smemviz

    fig = smemviz.experimental.compare_figure(layout(4), layout(5), arch="sm_90")
    assert "+16,400 B" in fig.layout.title.text and "1 added" in fig.layout.title.text
    assert fig.layout.xaxis.range == fig.layout.xaxis2.range  # one address axis for both
    after = [t for t in fig.data if t.meta == "data" and t.xaxis == "x2"][0]
    widths = dict(zip(after.text, after.marker.line.width))
    assert widths["a_stage4"] == 2.5 and widths["epi"] == 2.5 and widths["a_stage0"] == 0.5
    before = [t for t in fig.data if t.meta == "data" and t.xaxis == "x"][0]
    assert all(w == 0.5 for w in before.marker.line.width)  # nothing removed
