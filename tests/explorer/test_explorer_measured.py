"""Nsight Compute's counts in the explorer, driven without a browser: given at the start or
after a run, they are drawn on the byte map's strip, labelled with their verdicts and listed in
the Banks tab while the layout they were measured on is on screen, and gone once it changes."""

from __future__ import annotations

import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("plotly")

from smemviz import SmemAllocation, SmemAllocator  # noqa: E402
from smemviz.explorer import explore  # noqa: E402

from ..analysis.ncu.test_overlay import _attribution as attribution  # noqa: E402
from ..analysis.ncu.test_overlay import _totals as totals  # noqa: E402


def _attribution():
    """epi measured 4-way as predicted; a measured 2-way where conflict-free was predicted."""
    return attribution(
        totals("epi", ("epi",), 4096, 1024, (4096, 1024)),
        totals("a", ("a",), 2048, 1024, (1024, 1024)),
        spans=(("a", 0, 8192), ("epi", 8192, 4096)),
    )


def build(stages: int = 1):
    s = SmemAllocator()
    s.add(SmemAllocation("a", size_bytes=8192 * stages, alignment=1024))
    epi = {"instruction": "stmatrix.x4", "layout": "(64,32):(32,1)"}
    s.add(SmemAllocation("epi", dtype="bf16", count=2048, alignment=128, access=epi))
    return s


def _measured_labels(ex):
    return [a.text for a in ex.smem_widget.layout.annotations if str(a.name or "").startswith("measured: ")]


def test_counts_given_at_the_start_are_on_the_map_and_in_the_banks_tab():
    allocator = build()
    allocator.compute_layout()
    ex = explore(allocator, arch="sm_90a", measured=_attribution())
    assert _measured_labels(ex) == [
        "a · <b>ncu</b>: measured 2-way, predicted conflict-free: look here",
        "epi · ncu: predicted 4-way, measured 4-way",
    ]
    bars = [s for s in ex.smem_widget.layout.shapes if str(s.name or "").startswith("measured: ")]
    assert [(b.name, b.x0, b.x1) for b in bars] == [("measured: a", 0, 8192), ("measured: epi", 8192, 12288)]
    ex.show_banks("epi")
    html = ex.banks.measured.value
    assert "<b>epi: predicted 4-way, measured 4-way</b>" in html  # the picked access's region in bold
    assert "smemviz-look-here" in html and "a: measured 2-way" in html


def test_counts_shown_later_follow_the_layout_they_were_measured_on():
    ex = explore(build, arch="sm_90a", stages=(1, 4))
    assert _measured_labels(ex) == [] and ex.measured == ()
    ex.show_measured(_attribution())
    assert len(_measured_labels(ex)) == 2 and len(ex.measured) == 2
    ex.controls["stages"].value = 2  # another layout: those counts are not of it
    assert _measured_labels(ex) == [] and ex.measured == ()
    ex.controls["stages"].value = 1  # back to the layout measured: shown again
    assert len(_measured_labels(ex)) == 2
    ex.show_measured(None)
    assert _measured_labels(ex) == [] and ex.banks.measured.value == ""


def test_bad_counts_are_refused_by_name():
    with pytest.raises(TypeError, match="smemviz.read_ncu"):
        explore(build, arch="sm_90a", measured={"epi": "4-way"})
