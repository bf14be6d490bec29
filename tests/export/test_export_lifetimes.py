"""Issue 30, point 1: a layout solved from lifetimes says when each buffer is live
outside the lifetime map too: a ``live`` column in every table (text, Markdown,
HTML; the explorer reads the same helpers), ``live:`` in the byte map's hover,
and the lifetime map in the HTML export."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

import smemviz
from smemviz import SmemAllocation, SmemAllocator
from smemviz.analysis import html_report, markdown_report, text_report
from smemviz.analysis._report import region_columns, region_rows, table_columns

KIB = 1024


def lifetimes():
    """A/B while loading and multiplying, C in the epilogue at the same offset as A, a bias from the MMA on."""

    class Pipe:
        name = "mainloop"
        pipeline_group = None

        class pipeline_config:
            num_stages = 4
            barrier_ptr = None

        def get_smem_requirements(self):
            return [SmemAllocation("a_stages", 64 * KIB, 1024), SmemAllocation("b_stages", 64 * KIB, 1024)]

    s = SmemAllocator(arch="sm_90a", steps=("load", "mma", "epilogue"))
    s.add_resource(Pipe(), live=range(0, 2))
    s.add(SmemAllocation("epi_c", 32 * KIB, 1024), live="epilogue")
    s.add(SmemAllocation("bias", 512, 16), live={"mma", "epilogue"})
    s.compute_layout()
    plan = s.plan
    assert plan.region("a_stages").offset == plan.region("epi_c").offset == 0  # taking turns over the same bytes
    return plan


LIVE = {
    "a_stages": "load, mma",
    "b_stages": "load, mma",
    "epi_c": "epilogue",
    "bias": "mma, epilogue",
    "mainloop.barriers": "every step",
}


def test_the_text_report_has_a_live_column():
    report = text_report(lifetimes())
    header = next(line for line in report.splitlines() if "Name" in line)
    assert header.split()[-1] == "Live"
    for name, live in LIVE.items():
        row = next(line for line in report.splitlines() if line.strip().startswith(name))
        assert row.rstrip().endswith(live), row


def test_the_markdown_and_html_reports_have_a_live_column():
    plan = lifetimes()
    md = markdown_report(plan)
    heads = next(line for line in md.splitlines() if line.startswith("| name"))
    assert heads.rstrip(" |").split(" | ")[-1] == "live"
    for name, live in LIVE.items():
        row = next(line for line in md.splitlines() if line.startswith(f"| {name} |"))
        assert row.rstrip(" |").split(" | ")[-1] == live
    html = html_report(plan)
    assert "<th style='text-align:left'>live</th>" in html
    for name, live in LIVE.items():
        row = re.search(rf"<tr><td[^>]*>{re.escape(name)}</td>.*?</tr>", html).group(0)
        assert row.endswith(f">{live}</td></tr>")


def test_a_plan_without_lifetimes_has_no_live_column():
    s = SmemAllocator()
    s.add(SmemAllocation("a", 4096))
    s.compute_layout()
    assert "live" not in [h for h, _ in table_columns(s.plan)]
    assert "Live" not in text_report(s.plan)


def test_the_rows_match_the_columns_with_lifetimes_and_source_lines_together():
    plan = lifetimes()
    plan = replace(plan, regions=tuple(replace(r, source="kernel.py:12") for r in plan.regions))
    columns = table_columns(plan)
    assert [h for h, _ in columns][-2:] == ["live", "declared at"]
    rows = region_rows(plan)
    assert all(len(row) == len(columns) for row in rows)
    assert rows[0][-2:] == (LIVE[plan.regions[0].name], "kernel.py:12")
    # a table built row by row with region_cells(r, with_source) keeps its columns
    assert len(region_columns(plan)) == len(columns) - 1


def test_the_byte_map_hover_says_when_each_region_is_live():
    pytest.importorskip("plotly")
    from smemviz.figures import smem_spec

    spec = smem_spec(lifetimes())
    hovers = [h for t in spec.traces if t["type"] == "bar" for h in t.get("hovertext", [])]
    for name, live in LIVE.items():
        hover = next(h for h in hovers if h.startswith(f"<b>{name}</b>"))
        assert f"<br>live: {live}" in hover


def test_the_html_export_of_a_lifetime_plan_draws_its_lifetime_map(tmp_path):
    pytest.importorskip("plotly")
    from smemviz.figures import lifetime_figure

    plan = lifetimes()
    page = smemviz.export(plan, tmp_path / "life.html", plotlyjs="cdn").read_text()
    assert 'id="smemviz-figure-1"' in page and "SMEM lifetimes: when each region is live" in page
    assert '"name":"live bytes"' in page and ">load, mma</td>" in page
    # the lifetime map given as the figure (the explorer's Lifetimes tab) is not drawn twice
    once = smemviz.export(plan, tmp_path / "once.html", plotlyjs="cdn", figure=lifetime_figure(plan)).read_text()
    assert once.count('"name":"live bytes"') == 1 and "smemviz-figure-1" not in once
    # a layout without lifetimes gets no lifetime map
    s = SmemAllocator()
    s.add(SmemAllocation("a", 4096))
    s.compute_layout()
    plain = smemviz.export(s.plan, tmp_path / "plain.html", plotlyjs="cdn").read_text()
    assert "live bytes" not in plain and "smemviz-figure-1" not in plain
