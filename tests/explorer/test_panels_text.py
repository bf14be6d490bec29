"""The explorer's text panels as a kernel author reads them: the usage table of a layout
solved from lifetimes says when each buffer is live, the capacity reads without nested
brackets, each map's key lists only what that map draws, and the Tried tab and the runs
table write values as their controls and the other tables do."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("plotly")

import ipywidgets as widgets  # noqa: E402

from smemviz import SmemAllocation, SmemAllocator, TmemAllocation, TmemAllocator  # noqa: E402
from smemviz._units import kib_label  # noqa: E402
from smemviz.explorer import explore  # noqa: E402
from smemviz.explorer._history import Attempt, history_html, option_labels  # noqa: E402
from smemviz.explorer._panels import key_html, summary_html, usage_table_html  # noqa: E402
from smemviz.explorer._run import _cell  # noqa: E402

KIB = 1024
STEPS = ("load", "mma", "epilogue")


def lifetime_plan():
    s = SmemAllocator(arch="sm_90a", steps=STEPS)
    s.add(SmemAllocation("a_stages", 64 * KIB, 1024), live=("load", "mma"))
    s.add(SmemAllocation("epi_c", 32 * KIB, 1024), live="epilogue")
    s.compute_layout()
    return s.plan


def text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def test_the_usage_table_says_when_each_buffer_of_a_lifetime_plan_is_live():
    plan = lifetime_plan()
    assert {r.offset for r in plan.regions} == {0}  # the two share their bytes, at different steps
    html = usage_table_html(plan)
    heads = re.findall(r"<th[^>]*>([^<]*)</th>", html)
    assert "live" in heads
    rows = {
        cells[0]: cells[heads.index("live")]
        for cells in (re.findall(r"<td[^>]*>([^<]*)", row) for row in re.findall(r"<tr>(.*?)</tr>", html)[1:])
    }
    assert rows == {"a_stages": "load, mma", "epi_c": "epilogue"}


def test_the_usage_table_of_the_explorer_shows_the_live_column():
    s = lifetime_plan()
    ex = explore(s)
    ex.show_tab("Usage table")
    assert "load, mma" in ex.table.value and "<th>live</th>" in ex.table.value


def test_a_plan_without_lifetimes_has_no_live_column():
    s = SmemAllocator(arch="sm_90a")
    s.add(SmemAllocation("a", 4 * KIB))
    s.compute_layout()
    assert "<th>live</th>" not in usage_table_html(s.plan)


def test_the_capacity_reads_without_nested_brackets():
    s = SmemAllocator(arch="sm_90a")
    s.add(SmemAllocation("a", 196 * KIB))
    s.compute_layout()
    ex = explore(s.plan, arch="sm_90a")
    line = text(summary_html(ex.state.analysed()))
    assert "of sm_90's 232,448 B (227 KiB)" in line, line
    assert "(232,448 B (227 KiB))" not in line and "))" not in line
    # one way of writing KiB throughout the line: the figures' kib_label, beside its bytes
    pairs = re.findall(r"([\d,]+) B \(([\d.]+ KiB)\)", line)
    assert len(pairs) >= 3 and all(kib_label(int(b.replace(",", ""))) == k for b, k in pairs), pairs


def test_the_tmem_key_lists_only_what_the_tmem_map_draws():
    t = TmemAllocator()
    t.add(TmemAllocation("acc", 256))
    t.compute_layout()
    plan = t.plan
    assert not plan.groups and not plan.padding and all((r.stages or 1) <= 1 for r in plan.regions)
    key = text(key_html("tmem", plan))
    for absent in ("stages", "alias group", "padding"):
        assert absent not in key, key
    assert "columns tcgen05.alloc asks for" in key and "512 columns" in key
    assert "stages" in text(key_html("tmem"))  # without a plan: every item


def test_the_smem_key_of_the_explorer_follows_the_layout():
    def build(stages: int = 2, alias: bool = False):
        s = SmemAllocator(arch="sm_90a")
        s.add(SmemAllocation("a", 8 * KIB, 1024, stages=stages))
        s.add(SmemAllocation("flag", 8, 8))
        return s

    ex = explore(build, stages=(1, 4))
    key = text(ex.smem_key.value)
    assert "an operand's stages" in key and "alias group" not in key and "TMEM-pointer slot" not in key
    ex.controls["stages"].value = 1
    assert "an operand's stages" not in text(ex.smem_key.value)


def test_the_tried_tab_writes_values_as_their_controls_show_them():
    stages = widgets.SelectionSlider(options=[("most that fit", 0), ("2", 2)], value=0, description="stages")
    dtype = widgets.Dropdown(options=["f16", "bf16"], value="f16")
    labels = {"stages": option_labels(stages), "dtype": option_labels(dtype)}
    attempts = [Attempt((("dtype", "f16"), ("stages", 0), ("tile_n", 128)), 196_672, None, True, "sm_90")]
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", history_html(attempts, labels))
    assert cells[:3] == ["f16", "most that fit", "128"], cells


def test_the_runs_table_writes_bytes_with_separators():
    assert _cell("smem_requested", 229488) == "229,488"
    assert _cell("stages", 4) == "4" and _cell("label", "s4") == "s4" and _cell("tflops", 612.4) == "612"
