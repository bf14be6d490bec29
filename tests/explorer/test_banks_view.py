"""The explorer's Banks tab driven without a browser: pick a region and an access, toggle the
swizzle, and check what the bank grid and the numbers now hold."""

from __future__ import annotations

import dataclasses
import re
from html import escape

import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("plotly")

import smemviz  # noqa: E402
from smemviz import SmemAllocation, SmemAllocator  # noqa: E402
from smemviz.explorer._banks import DECLARED, SWIZZLE_OPTIONS, BankView  # noqa: E402
from smemviz.layout._plan import CAPTURE_SOURCE  # noqa: E402

from ..helpers import EXAMPLES  # noqa: E402


@pytest.fixture
def plan():
    return smemviz.load_layout(EXAMPLES / "epilogue_banks.toml").plans()[0]


def _title(view: BankView) -> str:
    assert view.title and escape(view.title) in view.grid.value  # what is drawn says it
    return view.title


def _wavefront_rows(view: BankView) -> int:
    """Rows of the drawn grid that hold a wavefront."""
    return len(re.findall(r"<tr(?: class=r)?><th>(?:&#9654; )?\d+</th>", view.grid.value))


def _replay_rows(view: BankView) -> int:
    return view.grid.value.count("<tr class=r>")


def _cells(view: BankView) -> list[str]:
    return re.findall(r"<td[^>]*>[^<]*</td>", view.grid.value)


def test_the_view_opens_on_the_access_lint_warns_about(plan):
    """sA comes first and is conflict-free; epi_c's stores are 4-way, and lint warns about them."""
    warned = [f for f in smemviz.analysis.lint(plan) if "epi_c" in f.message and f.severity == "warning"]
    assert warned
    view = BankView()
    view.show(plan)
    assert view.region.options == ("sA", "epi_c", "epi_c_sw64")
    assert view.region.value == "epi_c" and view.current.region == "epi_c" and view.swizzle.value == DECLARED
    assert _title(view).startswith("epi_c: stmatrix.x4: 16 wavefronts (ideal 4), 12 conflicts; 4-way")
    assert view.table.value.count("<tr") == 4  # the head and one row per access


def test_a_conflict_free_plan_opens_on_its_first_access(plan):
    view = BankView()
    view.show(plan)
    view.region.value = "sA"
    assert _title(view).startswith("sA: ldmatrix.x4: 4 wavefronts (ideal 4), 0 conflicts; conflict-free")
    assert "32 instructions, 128 wavefronts (ideal 128), 0 conflicts" in view.numbers.value
    only_sa = dataclasses.replace(plan, accesses=tuple(a for a in plan.accesses if a.region == "sA"))
    fresh = BankView()
    fresh.show(only_sa)
    assert fresh.region.value == "sA"


def test_picking_a_region_redraws_its_access(plan):
    view = BankView()
    view.show(plan)
    view.region.value = "epi_c"
    assert view.current.region == "epi_c"
    assert _title(view).startswith("epi_c: stmatrix.x4: 16 wavefronts (ideal 4), 12 conflicts; 4-way")
    assert _wavefront_rows(view) == 16 and _replay_rows(view) == 12  # replays marked
    assert view.drawn is not None and view.drawn.worst.wavefronts == 16
    assert "4-way: 192 extra wavefronts" in view.numbers.value
    assert "a 64B swizzle, with the region on a 512-byte boundary" in view.numbers.value  # the advice


@pytest.mark.parametrize("mode,rows", [("none", 16), ("32B", 8), ("64B", 4), ("128B", 4)])
def test_the_swizzle_toggle_redraws_live(plan, mode, rows):
    view = BankView()
    view.show(plan)
    view.region.value = "epi_c"
    before = _cells(view)
    view.swizzle.value = mode
    assert _wavefront_rows(view) == rows and view.drawn.worst.wavefronts == rows
    assert len(_cells(view)) == rows * 32  # the rows this access takes: no empty rows under it
    assert f"with {mode if mode != 'none' else 'no'} swizzle" in view.numbers.value
    if rows != 16:
        assert _cells(view) != before
    view.swizzle.value = DECLARED
    assert _cells(view) == before


def test_the_toggle_offers_the_hardware_modes():
    assert SWIZZLE_OPTIONS == (DECLARED, "none", "32B", "64B", "128B")


def test_pick_and_its_refusals(plan):
    view = BankView()
    view.show(plan)
    view.pick("epi_c_sw64", 0, "none")
    assert view.current.region == "epi_c_sw64" and _wavefront_rows(view) == 16
    with pytest.raises(KeyError, match="regions with accesses"):
        view.pick("nowhere")
    with pytest.raises(IndexError, match="has 1 access"):
        view.pick("epi_c", 3)
    with pytest.raises(ValueError, match="swizzle must be one of"):
        view.pick("epi_c", 0, "96B")


def test_a_new_plan_keeps_the_pick_where_it_remains(plan):
    view = BankView()
    view.show(plan)
    view.pick("epi_c", 0, "64B")
    again = smemviz.load_layout(EXAMPLES / "epilogue_banks.toml").plans()[0]
    view.show(again)
    assert view.region.value == "epi_c" and view.swizzle.value == "64B" and _wavefront_rows(view) == 4


def test_an_access_that_cannot_be_analysed_says_why(plan):
    s = SmemAllocator()
    s.add(
        SmemAllocation(
            "tiny", dtype="bf16", count=64, access={"instruction": "stmatrix.x4", "layout": "(128,32):(32,1)"}
        )
    )
    s.compute_layout()
    view = BankView()
    view.show(s.plan)
    assert "cannot be drawn" in _title(view) and "past its 128 B" in view.numbers.value


def test_the_first_button_says_declared_in_full():
    view = BankView()
    assert view.swizzle.label == "as declared" and view.swizzle.value == DECLARED
    assert int(view.swizzle.style.button_width.rstrip("px")) >= 100  # "as declared" (95 px in JupyterLab) and padding


def test_a_captured_plan_without_accesses_says_where_they_come_from(plan):
    captured = dataclasses.replace(plan, accesses=(), source=CAPTURE_SOURCE)
    view = BankView()
    view.show(captured)
    text = view.message.value
    assert "declares no accesses" not in text and "SmemAllocation" not in text
    assert "kernel&#x27;s own shared-memory accesses when capture records them" in text
    assert "dataclasses.replace(cap.plan, accesses=" in text and view.body.layout.display == "none"


def test_without_accesses_the_tab_says_how_to_declare_them():
    s = SmemAllocator()
    s.add(SmemAllocation("a", 1024))
    s.compute_layout()
    view = BankView()
    view.show(s.plan)
    assert "declares no accesses" in view.message.value and view.body.layout.display == "none"
    with pytest.raises(ValueError, match="declares no accesses"):
        view.pick("a")


def test_names_in_the_grid_and_numbers_are_escaped():
    s = SmemAllocator()
    s.add(
        SmemAllocation(
            "<img src=x onerror=alert(1)>",
            dtype="bf16",
            count=4096,
            access={"instruction": "stmatrix.x4", "layout": "(128,32):(32,1)", "warps": (8, 1)},
        )
    )
    s.compute_layout()
    view = BankView()
    view.show(s.plan)
    for html in (view.grid.value, view.numbers.value, view.table.value):
        assert "<img" not in html and "&lt;img" in html
