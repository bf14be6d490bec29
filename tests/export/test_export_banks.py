"""A plan that carries accesses: its bank table in the text, Markdown and HTML reports and in the
exports, and its bank pictures in the HTML page (under the map) and, on request, in an image."""

from __future__ import annotations

import base64
import hashlib
import json
import re

import pytest

import smemviz
from smemviz import LayoutPlan
from smemviz.analysis import text_report
from smemviz.layout import plan_from_dict

from ..helpers import EXAMPLES

pytest.importorskip("plotly")


@pytest.fixture(scope="module")
def plan() -> LayoutPlan:
    return smemviz.load_layout(EXAMPLES / "epilogue_banks.toml").plans()[0]


def test_the_text_report_has_a_row_per_region_and_access(plan):
    text = text_report(plan)
    head = next(line for line in text.splitlines() if line.strip().startswith("region"))
    assert head.split() == [
        "region",
        "access",
        "swizzle",
        "warps",
        "instructions",
        "wavefronts",
        "ideal",
        "conflicts",
        "n-way",
    ]
    rows = {
        line.split()[0]: line.split()
        for line in text.splitlines()
        if line.strip().split()[:1] in (["sA"], ["epi_c"], ["epi_c_sw64"])
        and "access" not in line
        and len(line.split()) >= 9
    }
    assert rows["epi_c"][1:9] == ["stmatrix.x4", "none", "8x1", "16", "256", "64", "192", "4"]
    assert rows["epi_c_sw64"][1:8] == ["stmatrix.x4", "64B", "8x1", "16", "64", "64", "0"]
    assert rows["sA"][1:8] == ["ldmatrix.x4", "128B", "4x1", "32", "128", "128", "0"]


def test_a_plan_without_accesses_has_no_bank_table():
    plain = smemviz.load_layout(EXAMPLES / "gemm_sm100.toml").plans()[0]
    assert "Bank accesses" not in text_report(plain)
    assert "Bank accesses" not in smemviz.analysis.markdown_report(plain)
    assert "smemviz-banks" not in plain._repr_html_()


def test_markdown_and_json_exports(plan, tmp_path):
    md = smemviz.export(plan, tmp_path / "p.md").read_text()
    assert "| epi_c | stmatrix.x4 | none | 8x1 | 16 | 256 | 64 | 192 | 4 |" in md
    doc = json.loads(smemviz.export(plan, tmp_path / "p.json").read_text())
    assert [a["region"] for a in doc["accesses"]] == ["sA", "epi_c", "epi_c_sw64"]
    assert [f["rule"] for f in doc["lint"]] == ["bank-conflict"]
    assert plan_from_dict(doc).accesses == plan.accesses


def _scripts_pinned(page: str) -> None:
    csp = re.search(r'Content-Security-Policy" content="([^"]+)"', page).group(1)
    bodies = [b for b in re.findall(r"<script\b[^>]*>(.*?)</script>", page, re.S) if b.strip()]
    for body in bodies:
        digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in csp


def test_the_html_page_draws_every_access_under_the_map(plan, tmp_path):
    page = smemviz.export(plan, tmp_path / "p.html", plotlyjs="cdn").read_text()
    assert page.count('class="plotly-graph-div"') == 5  # the map, the strip, three accesses
    assert "Conflict strip: each region&#x27;s worst access" in page
    assert "epi_c: stmatrix.x4" in page and "class='smemviz-bank-conflict'" in page
    _scripts_pinned(page)
    without = smemviz.export(plan, tmp_path / "q.html", plotlyjs="cdn", banks=False).read_text()
    assert without.count('class="plotly-graph-div"') == 1


def test_bank_pictures_need_accesses(tmp_path):
    plain = smemviz.load_layout(EXAMPLES / "gemm_sm100.toml").plans()[0]
    with pytest.raises(ValueError, match="carries no accesses"):
        smemviz.export(plain, tmp_path / "p.svg", banks=True)


def test_the_stacked_bank_figure(plan):
    from smemviz.figures._bank_plan import access_bank_figure, plan_bank_figure

    fig = plan_bank_figure(plan)
    titles = [a.text for a in fig.layout.annotations]
    assert titles[0].startswith("Conflict strip") and len(titles) == 4
    assert sum(t.type == "heatmap" for t in fig.data) == 3
    unswizzled = access_bank_figure(plan, "epi_c")
    fixed = access_bank_figure(plan, "epi_c", swizzle="64B")
    assert len(unswizzled.data[0].y) == 16 and len(fixed.data[0].y) == 4  # wavefronts of the worst stmatrix
    with pytest.raises(KeyError, match="regions with accesses"):
        access_bank_figure(plan, "nowhere")


@pytest.fixture
def renderer_stopped_after():
    """The warm browser a static export starts is stopped after the test (later tests expect
    none running)."""
    from smemviz._export import stop_renderer

    yield
    stop_renderer()


@pytest.mark.browser
def test_an_svg_of_the_bank_pictures(plan, tmp_path, renderer_stopped_after):
    pytest.importorskip("kaleido")
    svg = smemviz.export(plan, tmp_path / "banks.svg", banks=True).read_text()
    assert svg.startswith("<svg") and "Conflict strip" in svg and "stmatrix.x4" in svg


def test_the_byte_map_has_a_conflict_strip_where_accesses_exist(plan):
    from smemviz.figures import smem_spec
    from smemviz.figures._bank_strip import STRIP_Y

    strip = [s for s in smem_spec(plan).layout["shapes"] if str(s.get("name", "")).startswith("banks: ")]
    by_region = {s["name"].removeprefix("banks: "): s for s in strip}
    assert set(by_region) == {"sA", "epi_c", "epi_c_sw64"}
    epi = plan.region("epi_c")
    assert (by_region["epi_c"]["x0"], by_region["epi_c"]["x1"]) == (epi.offset, epi.end)
    assert (by_region["epi_c"]["y0"], by_region["epi_c"]["y1"]) == STRIP_Y
    assert by_region["sA"]["fillcolor"] == by_region["epi_c_sw64"]["fillcolor"] == "rgb(46,125,50)"  # 1x
    assert by_region["epi_c"]["fillcolor"] != "rgb(46,125,50)"  # 4x the ideal
    plain = smemviz.load_layout(EXAMPLES / "gemm_sm100.toml").plans()[0]
    assert not [s for s in smem_spec(plain).layout["shapes"] if str(s.get("name", "")).startswith("banks: ")]
