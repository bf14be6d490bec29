"""One input rule: every entry point that takes a layout accepts and refuses the same things."""

from __future__ import annotations

import pytest

import smemviz
from smemviz import (
    LayoutPlan,
    LayoutStateError,
    SmemAllocation,
    SmemAllocator,
    TmemAllocation,
    TmemAllocator,
)
from smemviz.sources import LayoutPair


def _smem(compute: bool = True) -> SmemAllocator:
    s = SmemAllocator()
    s.add(SmemAllocation("a", 4096, 1024))
    s.add(SmemAllocation("b", 256, 16))
    if compute:
        s.compute_layout()
    return s


def _tmem(compute: bool = True) -> TmemAllocator:
    t = TmemAllocator()
    t.add(TmemAllocation("acc", 128))
    if compute:
        t.compute_layout()
    return t


class _Hooked:
    """A third-party object offering its layout through the hook."""

    def __smemviz_layout__(self, arch=None):
        return LayoutPair(_smem().plan, _tmem().plan, "hooked", arch)


ACCEPTED = {
    "plan": lambda: _smem().plan,
    "allocator": lambda: _smem(),
    "tmem allocator": lambda: _tmem(),
    "pair": lambda: (_smem(), _tmem()),
    "reversed pair": lambda: (_tmem().plan, _smem()),
    "list": lambda: [_smem().plan, None],
    "hooked object": lambda: _Hooked(),
}

REFUSED = {
    "uncomputed allocator": (lambda: _smem(compute=False), LayoutStateError, "compute_layout"),
    "uncomputed in a pair": (lambda: (_smem(compute=False), _tmem()), LayoutStateError, "compute_layout"),
    "two SMEM layouts": (lambda: (_smem(), _smem().plan), ValueError, "two SMEM"),
    "empty pair": (lambda: (None, None), ValueError, "nothing to show"),
    "three items": (lambda: (_smem(), _tmem(), None), TypeError, "3 items"),
    "a number": (lambda: 42, TypeError, "LayoutPlan"),
    "a string": (lambda: "layout.toml", TypeError, "LayoutPlan"),
}


def _entry_points(tmp_path):
    """Each entry point as a function of the layout object."""
    points = {
        "as_layouts": lambda obj: smemviz.as_layouts(obj),
        "export .json": lambda obj: smemviz.export(obj, tmp_path / "x.json"),
        "export .md": lambda obj: smemviz.export(obj, tmp_path / "x.md"),
    }
    try:
        import ipywidgets  # noqa: F401
        import plotly  # noqa: F401
    except ImportError:
        return points
    from smemviz.figures import layout_figure

    points["layout_figure"] = lambda obj: layout_figure(*smemviz.as_layouts(obj).plans)
    points["explore"] = lambda obj: smemviz.explore(obj)
    return points


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_every_entry_point_accepts_the_same_layouts(case, tmp_path):
    for name, call in _entry_points(tmp_path).items():
        obj = ACCEPTED[case]()
        call(obj)  # must not raise
        if isinstance(obj, SmemAllocator | TmemAllocator):
            assert obj.layout_computed, name


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_every_entry_point_refuses_the_same_inputs_with_the_same_error(case, tmp_path):
    make, error, words = REFUSED[case]
    for name, call in _entry_points(tmp_path).items():
        obj = make()
        with pytest.raises(error, match=words):
            call(obj)
        assert not (tmp_path / "x.json").exists() and not (tmp_path / "x.md").exists(), name
        for item in obj if isinstance(obj, tuple) else [obj]:
            if isinstance(item, SmemAllocator) and case.startswith("uncomputed"):
                assert not item.layout_computed, f"{name} computed the caller's allocator"


def test_the_smem_and_tmem_plans_land_in_their_slots_and_arch_is_applied():
    pair = smemviz.as_layouts((_tmem(), _smem()), arch="sm_90a")
    assert pair.smem.memory == "smem" and pair.tmem.memory == "tmem"
    assert pair.smem.arch == pair.tmem.arch == pair.arch == "sm_90"
    assert pair.plans == (pair.smem, pair.tmem)
    assert smemviz.as_layouts(_smem(), which="smem").tmem is None
    with pytest.raises(ValueError, match="no TMEM layout"):
        smemviz.as_layouts(_smem(), which="tmem")


def test_as_plan_takes_one_layout():
    plan = _smem().plan
    assert smemviz.as_plan(plan) is plan
    assert isinstance(smemviz.as_plan([None, _tmem()]), LayoutPlan)
    with pytest.raises(ValueError, match="expected one layout"):
        smemviz.as_plan((_smem(), _tmem()))


def test_a_hook_must_return_a_layout_pair():
    class Bad:
        def __smemviz_layout__(self, arch=None):
            return _smem().plan

    with pytest.raises(TypeError, match="not a LayoutPair"):
        smemviz.as_layouts(Bad())


def test_the_kernel_bridge_follows_the_rule():
    pytest.importorskip("cutlass")
    from smemviz.kernel import compile_probe

    with pytest.raises(LayoutStateError, match="compute_layout"):
        compile_probe(_smem(compute=False))
    with pytest.raises(TypeError, match="LayoutPlan"):
        compile_probe(42)
