"""Nsight Compute's counts on the map: the measured segments made from an attribution, the strip's
two halves and the verdict labels of the byte map, and the measured table of every report, checked
through their data on a hand-built attribution (no CuTe DSL needed)."""

from __future__ import annotations

import pytest

from smemviz import SmemAllocation, SmemAllocator
from smemviz.analysis import analyse
from smemviz.analysis._report import html_report, markdown_report, text_report
from smemviz.analysis.ncu import NcuAttribution, NcuTotals
from smemviz.analysis.ncu._overlay import MeasuredSegment, measured_segments, ways_text
from smemviz.figures import smem_spec
from smemviz.figures._bank_strip import MEASURED_Y, STRIP_Y


def _totals(name, regions, wavefronts, ideal, predicted=None, unmodelled=(0, 0, 0), executed=64):
    pw, pi = predicted if predicted is not None else (None, None)
    return NcuTotals(
        name=name,
        regions=regions,
        rows=1,
        executed=executed,
        wavefronts=wavefronts,
        ideal=ideal,
        conflicts=wavefronts - ideal,
        predicted_wavefronts=pw,
        predicted_ideal=pi,
        predicted_conflicts=None if pw is None else pw - pi,
        unmodelled=unmodelled,
    )


SPANS = (("sA", 0, 4096), ("sB", 4096, 4096), ("sC", 0, 2048), ("bars", 8192, 16))


def _attribution(*regions, spans=SPANS):
    return NcuAttribution(
        kernel="k",
        captured="k",
        origin="csv",
        ctas=1,
        ctas_from="given",
        rows=(),
        accesses=(),
        regions=regions,
        spans=spans,
    )


# sC: 4-way predicted and measured; its TMA rows (no wavefronts) left out of the comparison
AGREES = _totals("sC", ("sC",), 4096 + 0, 1024, (4096, 1024), unmodelled=(0, 0, 0))
# sA+sB read by one WGMMA: measured 2-way where conflict-free was predicted
DISAGREES = _totals("sA+sB", ("sA", "sB"), 2048, 1024, (1024, 1024))
# sB alone: conflicts nothing predicts (an unmodelled instruction)
UNMODELLED = _totals("sB", ("sB",), 300, 100)
BARRIERS = _totals("bars", ("bars",), 0, 0)  # mbarrier rows: no L1 wavefronts, no segment


def test_ways_are_wavefronts_over_the_ideal():
    assert ways_text(1024, 1024) == "conflict-free"
    assert ways_text(4096, 1024) == "4-way"
    assert ways_text(2560, 1024) == "2.5-way"
    assert ways_text(0, 0) == "conflict-free"


def test_one_segment_per_measured_region_the_one_that_says_most():
    segs = measured_segments(_attribution(AGREES, DISAGREES, UNMODELLED, BARRIERS))
    assert [(s.region, s.offset, s.end, s.source) for s in segs] == [
        ("sA", 0, 4096, "sA+sB"),
        ("sC", 0, 2048, "sC"),
        ("sB", 4096, 8192, "sA+sB"),  # a disagreement says more than unmodelled conflicts
    ]
    by = {s.region: s for s in segs}
    assert (by["sC"].verdict, by["sC"].look_here, by["sC"].label) == (
        "agrees",
        False,
        "predicted 4-way, measured 4-way",
    )
    assert (by["sA"].verdict, by["sA"].label) == ("disagrees", "measured 2-way, predicted conflict-free: look here")
    only_b = measured_segments(_attribution(UNMODELLED))
    assert [(s.region, s.verdict, s.look_here, s.label) for s in only_b] == [
        ("sB", "not modelled", True, "measured 3-way, predicted none: look here")
    ]


def test_a_region_with_tma_rows_compares_its_modelled_rows_only():
    mixed = _totals("sC", ("sC",), 4096 + 7, 1024 + 7, (4096, 1024), unmodelled=(7, 7, 0))
    (seg,) = measured_segments(_attribution(mixed))
    assert (seg.wavefronts, seg.ideal, seg.conflicts, seg.verdict) == (4096, 1024, 3072, "agrees")


def _plan():
    a = SmemAllocator()
    for name, size in (("sA", 4096), ("sB", 4096), ("bars", 16)):
        a.add(SmemAllocation(name, size_bytes=size, alignment=128))
    a.compute_layout()
    return a.plan


def test_the_byte_map_splits_its_strip_and_labels_each_verdict():
    attribution = _attribution(AGREES, DISAGREES, BARRIERS)
    spec = smem_spec(analyse(_plan(), "sm_90a", measured=attribution))
    bars = [s for s in spec.layout["shapes"] if str(s.get("name", "")).startswith("measured: ")]
    assert [(b["name"], b["x0"], b["x1"], b["y0"], b["y1"]) for b in bars] == [
        ("measured: sA", 0, 4096, MEASURED_Y[0], MEASURED_Y[1]),
        ("measured: sC", 0, 2048, MEASURED_Y[0], MEASURED_Y[1]),
        ("measured: sB", 4096, 8192, MEASURED_Y[0], MEASURED_Y[1]),
    ]
    assert bars[0]["line"]["width"] > 0 and bars[1]["line"]["width"] == 0  # a look-here is outlined
    labels = {a["name"]: a for a in spec.layout["annotations"] if str(a.get("name", "")).startswith("measured: ")}
    assert "look here" in labels["measured: sA"]["text"] and labels["measured: sA"]["font"]["color"] == "#c62828"
    assert labels["measured: sC"]["text"] == "sC · ncu: predicted 4-way, measured 4-way"
    assert (
        "65,536" not in labels["measured: sC"]["hovertext"] and "4,096 / 4,096" in labels["measured: sC"]["hovertext"]
    )
    # two labels that would overlap (sA and sC both start at 0) stand in different rows
    assert labels["measured: sA"]["y"] != labels["measured: sC"]["y"]
    assert [m["region"] for m in spec.meta["measured"]] == ["sA", "sC", "sB"]
    assert "Nsight Compute: 3 regions measured, 2 to look at" in spec.layout["title"]["subtitle"]["text"]


def test_without_measured_counts_the_strip_is_as_before():
    spec = smem_spec(analyse(_plan(), "sm_90a"))
    assert not [s for s in spec.layout["shapes"] if str(s.get("name", "")).startswith("measured")]
    assert "measured" not in spec.meta and "Nsight" not in spec.layout["title"]["subtitle"]["text"]
    assert STRIP_Y[0] == MEASURED_Y[0] and MEASURED_Y[1] < STRIP_Y[1]


def test_every_report_tables_measured_beside_predicted():
    an = analyse(_plan(), "sm_90a", measured=_attribution(AGREES, DISAGREES))
    text = text_report(an)
    assert "Nsight Compute, measured / predicted: 3 regions, 2 to look at" in text
    assert "sC (sC): predicted 4-way, measured 4-way; wavefronts 4,096 / 4,096" in text
    md = markdown_report(an)
    assert "| region | bytes | from | instructions | wavefronts | ideal | conflicts | verdict |" in md
    assert "| sA | 0-4,096 | sA+sB | 64 | 2,048 / 1,024 | 1,024 / 1,024 | 1,024 / 0 | measured 2-way" in md
    html = html_report(an)
    assert html.count("class='smemviz-measured smemviz-look-here'") == 2 and "smemviz-ncu" in html


def test_measured_takes_an_attribution_or_segments_and_goes_with_smem():
    segs = measured_segments(_attribution(AGREES))
    assert analyse(_plan(), "sm_90a", measured=segs).measured == segs
    with pytest.raises(TypeError, match="what smemviz.read_ncu returned"):
        analyse(_plan(), "sm_90a", measured=["sC 4-way"])
    a = analyse(_plan(), "sm_90a", measured=segs)
    from smemviz.analysis import as_analysed

    assert as_analysed(a, "sm_100a").measured == segs  # judged again on another arch, the counts kept
    assert isinstance(segs[0], MeasuredSegment) and segs[0].to_dict()["verdict"] == "agrees"


def test_exports_carry_the_measured_table(tmp_path):
    import json

    import smemviz

    attribution = _attribution(AGREES, DISAGREES)
    plan = _plan()
    md = smemviz.export(plan, tmp_path / "m.md", arch="sm_90a", measured=attribution).read_text()
    assert "Nsight Compute, measured / predicted: 3 regions, 2 to look at" in md
    doc = json.loads(smemviz.export(plan, tmp_path / "m.json", arch="sm_90a", measured=attribution).read_text())
    assert [(m["region"], m["verdict"]) for m in doc["measured"]] == [
        ("sA", "disagrees"),
        ("sC", "agrees"),
        ("sB", "disagrees"),
    ]
    page = smemviz.export(plan, tmp_path / "m.html", arch="sm_90a", measured=attribution).read_text()
    assert "smemviz-look-here" in page and "ncu: predicted 4-way, measured 4-way" in page  # table and map
    plain_page = smemviz.export(plan, tmp_path / "p.html", arch="sm_90a").read_text()
    assert "smemviz-ncu" not in plain_page and "ncu: predicted" not in plain_page


def test_labels_of_many_regions_over_the_same_bytes_spread_over_the_rows():
    from smemviz.figures._bank_strip import LABEL_ROW, LABEL_ROWS, measured_annotations

    segs = [MeasuredSegment(f"r{i}", 0, 4096, f"r{i}", 1, 1024, 1024, 0, 1024, 1024, 0) for i in range(6)]
    rows = [round((MEASURED_Y[0] - a["y"]) / LABEL_ROW) for a in measured_annotations(segs, span=4096)]
    assert sorted(rows) == [0, 0, 1, 1, 2, 3]  # four rows, then the rows whose labels end first
    assert LABEL_ROWS == 4
