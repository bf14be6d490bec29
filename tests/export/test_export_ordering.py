"""The ordering of shared bytes in the reports and exports: every report (text,
Markdown, HTML) lists each alias with its edge (or ``unordered``) and counts the
ordering findings, which are listed with the lint findings; the HTML export draws
the pipeline diagram; the JSON carries the model and the findings."""

from __future__ import annotations

import json

import pytest

import smemviz
from smemviz.analysis import analyse, html_report, markdown_report, text_report

from ..figures.ordering_plans import declared_plan, hopper_plan, tmem_plan

EDGE = "alias sA (wgmma_read at gemm.py:41) -> sC (stmatrix at gemm.py:60): wgmma wait_group(0) at gemm.py:44"


def test_the_text_report_lists_every_alias_with_its_edge():
    text = text_report(analyse(hopper_plan()))
    assert "  Ordering of hopper_gemm: 1 alias; no ordering findings" in text
    assert f"    {EDGE}" in text
    tmem = analyse(tmem_plan())
    lines = text_report(tmem).splitlines()
    assert [line for line in lines if line.startswith("    alias ")] == [
        f"    alias {a.line()}" for a in tmem.ordering.aliases
    ]
    assert any(
        line.startswith("    alias S (tcgen05_ld at gemm.py:51) -> P (tcgen05_st at gemm.py:54): ") for line in lines
    )


def test_an_unordered_alias_and_the_ordering_findings_are_in_every_report():
    an = analyse(hopper_plan(unordered=True))
    text = text_report(an)
    assert (
        "Ordering of hopper_gemm: 1 alias, 1 unordered; ordering findings: 3 errors (listed with the findings)" in text
    )
    assert "-> sC (stmatrix at gemm.py:60): unordered" in text
    assert text.count("error[unordered-alias]") == 3
    md = markdown_report(an)
    assert "- alias sA (wgmma_read at gemm.py:41) -&gt; sC (stmatrix at gemm.py:60): unordered" in md
    assert md.count("- **error** `unordered-alias`") == 3
    html = html_report(an)
    assert "<li class='smemviz-alias smemviz-error'>alias sA" in html
    assert html.count("smemviz-finding smemviz-error") == 3


def test_a_declared_plan_reports_the_edge_each_hand_over_needs():
    text = text_report(declared_plan())
    assert "Ordering a declared plan needs (no kernel yet): 1 hand-over" in text
    assert "ldmatrix reads a_stages -> stmatrix writes epi_c over it: needs a named barrier" in text
    assert "class='smemviz-ordering'" in html_report(declared_plan())


def test_a_plan_without_an_ordering_has_no_ordering_section():
    s = smemviz.SmemAllocator()
    s.add(smemviz.SmemAllocation("a", 4096))
    s.compute_layout()
    assert "Ordering" not in text_report(s.plan) + markdown_report(s.plan) and "smemviz-ordering" not in html_report(
        s.plan
    )


def test_the_html_export_draws_the_pipeline_diagram_and_lists_the_aliases(tmp_path):
    pytest.importorskip("plotly")
    from smemviz.figures import ordering_figure

    plan = hopper_plan(unordered=True)
    page = smemviz.export(plan, tmp_path / "gemm.html", plotlyjs="cdn").read_text()
    assert "SMEM ordering: the pipeline diagram" in page and 'id="smemviz-figure-1"' in page
    assert '"meta":"aliases"' in page and "Ordering of hopper_gemm: 2 warp roles, 1 pipelines, 1 aliases" in page
    assert "smemviz-alias smemviz-error" in page
    # the diagram given as the figure is not drawn twice
    once = smemviz.export(plan, tmp_path / "once.html", plotlyjs="cdn", figure=ordering_figure(plan)).read_text()
    assert once.count('"meta":"aliases"') == 1 and "smemviz-figure-1" not in once


def test_both_memories_of_one_kernel_get_their_diagram(tmp_path):
    pytest.importorskip("plotly")
    page = smemviz.export((hopper_plan(), tmp_plan := tmem_plan()), tmp_path / "both.html", plotlyjs="cdn").read_text()
    assert "SMEM ordering: the pipeline diagram" in page and "TMEM ordering: the pipeline diagram" in page
    assert f"Ordering of {tmp_plan.ordering.name}" in page


def test_the_json_export_carries_the_model_and_the_ordering_findings(tmp_path):
    plan = hopper_plan(unordered=True)
    doc = json.loads(smemviz.export(plan, tmp_path / "gemm.json").read_text())
    assert doc["ordering"]["name"] == "hopper_gemm"
    assert [f["rule"] for f in doc["lint"] if f["severity"] == "error"].count("unordered-alias") == 3
    again = smemviz.layout.plan_from_json((tmp_path / "gemm.json").read_text())
    assert again.ordering == plan.ordering


def test_the_markdown_export_lists_the_aliases(tmp_path):
    md = smemviz.export(hopper_plan(), tmp_path / "gemm.md").read_text()
    assert "Ordering of hopper_gemm: 1 alias; no ordering findings" in md
    assert (
        "- alias sA (wgmma_read at gemm.py:41) -&gt; sC (stmatrix at gemm.py:60): wgmma wait_group(0) at gemm.py:44"
        in md
    )
