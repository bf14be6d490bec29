"""A captured plan everywhere a plan goes: figures (hover with layout and source line), the
explorer, exports, lint, occupancy, the JSON reader; and the command line."""

from __future__ import annotations

import json
import textwrap

import pytest

pytest.importorskip("cutlass")
pytestmark = pytest.mark.cutlass

import smemviz  # noqa: E402
from smemviz.analysis import lint, occupancy  # noqa: E402
from smemviz.kernel._compile import compile_host  # noqa: E402
from smemviz.layout import plan_from_json  # noqa: E402
from smemviz.sources.capture import capture  # noqa: E402

from . import kernels  # noqa: E402


@pytest.fixture(scope="module")
def captured():
    with capture(arch="sm_90a") as cap:
        compile_host("capture_surfaces", kernels.mixed_host, (kernels.fake_out(),), "sm_90a")
    return cap


@pytest.fixture(scope="module")
def captured_tmem():
    with capture(arch="sm_100a") as cap:
        compile_host("capture_surfaces_tmem", kernels.tmem_host_and_kernel(), (kernels.fake_out(),), "sm_100a")
    return cap


def test_figures_show_each_regions_layout_and_source_line(captured):
    pytest.importorskip("plotly")
    fig = smemviz.smem_figure(captured.plan)
    hovers = "\n".join(str(t) for trace in fig.data for t in (trace.hovertext or ()) if t)
    line = captured.plan.region("sD").source
    assert f"declared at {line}" in hovers
    assert "layout S&lt;3,4,3&gt; o 0 o (8,64):(64,1)" in hovers or "layout S<3,4,3> o 0 o (8,64):(64,1)" in hovers


def test_tmem_map_and_the_pair(captured_tmem):
    pytest.importorskip("plotly")
    smem, tmem = captured_tmem.layouts
    assert smem.memory == "smem" and tmem.memory == "tmem"
    fig = smemviz.tmem_figure(tmem)
    assert fig.data
    pair = smemviz.as_layouts(captured_tmem)
    assert pair is not None


def test_exports(captured, tmp_path):
    pytest.importorskip("plotly")
    for suffix in (".json", ".md", ".html"):
        out = tmp_path / f"map{suffix}"
        smemviz.export(captured, out)
        assert out.stat().st_size > 0
    smem, tmem = smemviz.read_plans((tmp_path / "map.json").read_text())
    assert smem == captured.plan and tmem is None
    assert "sD" in (tmp_path / "map.md").read_text()


def test_lint_and_occupancy(captured):
    plan = captured.plan
    findings = lint(plan, "sm_90a")
    assert not [f for f in findings if f.rule == "swizzle-align"]  # the 128B-swizzled tile sits on 1024 B
    assert "padding-share" in findings.rules()  # 992 B before sA's 1024 B alignment, 472 B before sD's
    occ = occupancy(plan, "sm_90a")
    assert occ.smem_per_cta == plan.total


def test_explorer_opens_on_a_capture(captured):
    pytest.importorskip("ipywidgets")
    explorer = smemviz.explore(captured)
    assert explorer is not None


def test_json_reader_keeps_an_unrounded_compiled_total():
    """A compiler's total need not be a multiple of the widest alignment (a struct's size is)."""
    with capture() as cap:
        compile_host("capture_named_json", kernels.named_host, (kernels.fake_out(16),), "sm_90a")
    plan = cap.plan
    data = json.loads(plan.to_json())
    assert data["source"] == "cute.capture"
    assert plan_from_json(plan.to_json()) == plan


def test_cli_capture_writes_the_plan(tmp_path, capsys):
    from smemviz.cli import main

    from ...helpers import EXAMPLES

    target = f"{EXAMPLES / 'capture_kernel.py'}:build"
    out = tmp_path / "plan.json"
    assert main(["capture", target, "--out", str(out)]) == 0
    smem, tmem = smemviz.read_plans(out.read_text())
    assert tmem is None
    assert [(r.name, r.swizzle) for r in smem.regions if r.swizzle] == [("sA", "128B"), ("sB", "128B"), ("sC", "64B")]
    assert smem.total == 164864 and smem.arch == "sm_90"
    assert main(["capture", target]) == 0
    printed = capsys.readouterr().out
    assert "sC" in printed and "1 CTA/SM" in printed


def test_cli_capture_refuses_with_the_reason(tmp_path, capsys):
    from smemviz.cli import main

    script = tmp_path / "raw.py"
    script.write_text(
        textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(kernels.__file__.rsplit("/", 4)[0])!r})
        from smemviz.kernel._compile import compile_host
        from tests.sources.capture import kernels

        def build():
            compile_host("cli_raw", kernels.raw_smem_host, (kernels.fake_out(32),), "sm_90a")
    """)
    )
    assert main(["capture", f"{script}:build"]) == 1
    assert "outside cutlass.memory.SmemAllocator" in capsys.readouterr().err
    assert main(["capture", f"{script}:nowhere"]) == 2


def test_bank_view(captured):
    pytest.importorskip("plotly")
    from smemviz.figures._bank import bank_figure

    fig = bank_figure(captured.plan)
    assert fig.data


def test_tables_name_the_line_that_declares_each_region(captured):
    from smemviz.analysis import html_report, markdown_report
    from smemviz.analysis._report import region_columns
    from smemviz.explorer._panels import usage_table_html

    plan = captured.plan
    sourced = [r for r in plan.regions if r.source]
    assert sourced and region_columns(plan)[-1][0] == "declared at"
    line = sourced[0].source
    assert line.split(":")[0].endswith(".py") and line.split(":")[1].isdigit()
    for text in (markdown_report(plan), html_report(plan), usage_table_html(plan)):
        assert "declared at" in text and line in text
    plain = smemviz.SmemAllocator()
    plain.add(smemviz.SmemAllocation("a", 128))
    plain.compute_layout()
    assert "declared at" not in markdown_report(plain.plan)  # only where the plan knows its source
