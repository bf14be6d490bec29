"""A step change sends the step's map before the lifetime map's moved outline
(issue 23, point 6): the browser draws one map per frame, in the order the
updates come, so the map asked for is drawn first."""

from __future__ import annotations

import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("plotly")

import smemviz  # noqa: E402
from smemviz import SmemAllocation, SmemAllocator  # noqa: E402


def test_the_step_map_goes_out_before_the_lifetime_map():
    s = SmemAllocator(arch="sm_90a", steps=("load", "mma", "epilogue"))
    s.add(SmemAllocation("a", 16384, 1024), live=range(0, 2))
    s.add(SmemAllocation("epi", 16384, 1024), live="epilogue")
    s.compute_layout()
    ex = smemviz.explore(s)
    ex.show_lifetimes()
    lv = ex.lifetimes
    sent: list[str] = []
    for name, widget in (("step map", lv.step_widget), ("lifetime map", lv.map_widget)):
        original = widget.update_browser_first

        def spy(*args, _name=name, _original=original, **kwargs):
            sent.append(_name)
            return _original(*args, **kwargs)

        widget.update_browser_first = spy
    lv.select_step("epilogue")
    assert sent == ["step map", "lifetime map"], sent
