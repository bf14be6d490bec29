"""The conflict strip, the table/report, and the bank picture, checked through their data."""

from __future__ import annotations

import pytest

from smemviz import SmemAllocation, SmemAllocator
from smemviz.analysis.banks import advise, analyze_access, bank_conflicts, stmatrix_atom, vector_atom
from smemviz.analysis.banks._tables import bank_report_html, bank_report_text, bank_table, conflict_strip

ROWMAJOR = "(128,64):(64,1)"


def _plan():
    s = SmemAllocator()
    s.add(SmemAllocation("c<&>", 128 * 64 * 2, alignment=1024, dtype="bf16", count=128 * 64))
    s.add(SmemAllocation("d", 128 * 64 * 2, alignment=1024, dtype="bf16", count=128 * 64, swizzle="128B"))
    s.compute_layout()
    return s.plan


def _reports(plan):
    st = stmatrix_atom(4)
    return [
        analyze_access(plan, "c<&>", st, layout=ROWMAJOR, swizzle=None, warps=(4, 1)),
        analyze_access(plan, "d", st, layout=ROWMAJOR, warps=(4, 1)),
        analyze_access(plan, "d", vector_atom("ld.shared.b32", 2, (32, 1)), layout=ROWMAJOR, warps=(4, 1)),
    ]


def test_strip_takes_each_regions_worst_access():
    plan = _plan()
    strip = conflict_strip(plan, _reports(plan))
    assert [s.region for s in strip] == sorted([s.region for s in strip], key=lambda n: plan.region(n).offset)
    by = {s.region: s for s in strip}
    assert by["c<&>"].excess_ratio == 8.0 and by["c<&>"].instruction == "stmatrix.x4"
    assert by["d"].instruction == "ld.shared.b32" and by["d"].excess_ratio == 4.0
    assert (by["d"].offset, by["d"].end) == (plan.region("d").offset, plan.region("d").end)


def test_table_text_and_html():
    plan = _plan()
    reports = _reports(plan)
    adv = [advise(plan, "c<&>", stmatrix_atom(4), layout=ROWMAJOR, warps=(4, 1), swizzle=None)]
    rows = bank_table(reports, adv)
    assert [r["n-way"] for r in rows] == [8, 1, 4]
    assert rows[0]["fix"] == "128B swizzle, align 1024" and rows[1]["fix"] == ""
    text = bank_report_text(reports, adv)
    assert "stmatrix.x4" in text and "K_SW128" in text
    page = bank_report_html(reports, adv)
    assert "c&lt;&amp;&gt;" in page and "<&>" not in page
    assert page.count('class="conflict"') == 2


def test_bank_picture_data():
    fig_mod = pytest.importorskip("smemviz.figures._bank_conflicts")
    res = bank_conflicts("ld.shared.b32", [8 * lane for lane in range(32)])  # 2-way: lanes 16+ replay
    spec = fig_mod.bank_conflict_spec(res)
    assert len(spec["lane"]) == 2 and spec["replay"] == [False, True]
    assert spec["lane"][0][0] == 0 and spec["lane"][1][0] == 16 and spec["lane"][0][1] is None
    assert spec["lanes"][1][2] == [17]
    v4 = fig_mod.bank_conflict_spec(bank_conflicts("ld.shared.v4.b32", [256] * 32))  # merged broadcast
    assert v4["replay"] == [False, False] and v4["lanes"][0][0] == list(range(16))


def test_bank_figure_through_plotly():
    pytest.importorskip("plotly")
    from smemviz.figures._bank_conflicts import bank_conflict_figure, conflict_strip_figure

    plan = _plan()
    rep = _reports(plan)[0]
    fig = bank_conflict_figure(rep)
    heat = fig.data[0]
    assert heat.type == "heatmap" and len(heat.z) == 32 and len(heat.z[0]) == 32  # 4 matrices x 8-way
    assert fig.data[1].name == "replay" and len(fig.data[1].y) == 28
    assert "c<&>" not in fig.layout.title.text and "8-way" in fig.layout.title.text
    strip = conflict_strip_figure(conflict_strip(plan, _reports(plan)))
    assert {t.name for t in strip.data} == {"c<&>", "d"}
    assert all(t.base[0] == plan.region(t.name).offset for t in strip.data)
