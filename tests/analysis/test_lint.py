"""``LayoutPlan.lint``: every rule fires on a layout that breaks it and stays
quiet on one that keeps it; each cites a fact that exists in hardware.py."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from smemviz import LayoutPlan, Region, SmemAllocation, SmemAllocator, TmemAllocation, TmemAllocator, device, hardware
from smemviz.analysis import lint, text_report
from smemviz.analysis._lint import ORDERING_RULES, RULES
from smemviz.cli import main
from smemviz.layout import plan_from_dict, plan_from_json


@pytest.fixture(autouse=True)
def no_detected_arch(monkeypatch):
    monkeypatch.delenv("CUTE_DSL_ARCH", raising=False)
    monkeypatch.setattr(device, "_gpu_arch", lambda: None)


def smem(*allocs: SmemAllocation, arch: str | None = "sm_90") -> LayoutPlan:
    s = SmemAllocator(arch=None)
    for a in allocs:
        s.add(a)
    s.compute_layout()
    plan = s.plan
    return plan if arch is None else dataclasses.replace(plan, arch=arch)


def hand_plan(*regions: Region, total: int) -> LayoutPlan:
    """A plan as a JSON file or a struct can hold it (nothing forces alignment)."""
    return LayoutPlan("smem", tuple(regions), data_total=total, source="cute.struct", arch="sm_90")


def rules(plan: LayoutPlan, **kw) -> set[str]:
    return lint(plan, **kw).rules()


# -- one pair of tests per rule ------------------------------------------------------------


def test_swizzle_align():
    bad = smem(SmemAllocation("flag", 128, 128), SmemAllocation("sA", 8192, 128, swizzle="128B"))
    found = lint(bad)
    assert "swizzle-align" in found.rules()
    (f,) = [f for f in found if f.rule == "swizzle-align"]
    # at 128 B TMA and WGMMA still agree (measured on the H200): a warning, saying so
    assert f.severity == "warning" and f.regions == ("sA",)
    assert "1,024 B swizzle atom" in f.message and "alignment=1024" in f.fix
    assert "base offset 0" in f.message and "results/swizzle_align_h200.md" in f.fact
    # below TMA's 128 B it is an error
    (err,) = [
        f
        for f in lint(smem(SmemAllocation("flag", 64, 64), SmemAllocation("sA", 8192, 64, swizzle="128B")))
        if f.rule == "swizzle-align"
    ]
    assert err.severity == "error" and "nor of the 128 B a TMA destination needs" in err.message
    good = smem(SmemAllocation("flag", 16, 16), SmemAllocation("sA", 8192, 1024, swizzle="128B"))
    assert "swizzle-align" not in rules(good)
    # the 32B atom is 256 B: 128-aligned at 128 breaks it
    assert "swizzle-align" in rules(smem(SmemAllocation("f", 128, 128), SmemAllocation("sB", 512, 128, swizzle="32B")))


def test_swizzle_stage():
    uneven = smem(SmemAllocation("sA", 3 * 1536, 1024, swizzle="128B", stages=3))
    (f,) = [f for f in lint(uneven) if f.rule == "swizzle-stage"]
    assert "1,536 B" in f.message and "2,048 B" in f.fix
    assert "swizzle-stage" in rules(smem(SmemAllocation("sA", 5000, 1024, swizzle="64B", stages=3)))
    assert "swizzle-stage" not in rules(smem(SmemAllocation("sA", 3 * 2048, 1024, swizzle="128B", stages=3)))
    # without a stage count there is nothing to check
    assert "swizzle-stage" not in rules(smem(SmemAllocation("sA", 3 * 1536, 1024, swizzle="128B")))


def test_tma_align():
    bad = smem(SmemAllocation("f", 16, 16), SmemAllocation("sC", 4096, 16, tma=True))
    assert "tma-align" in rules(bad)
    good = smem(SmemAllocation("f", 16, 16), SmemAllocation("sC", 4096, 128, tma=True))
    assert "tma-align" not in rules(good)
    not_tma = smem(SmemAllocation("f", 16, 16), SmemAllocation("sC", 4096, 16))
    assert "tma-align" not in rules(not_tma)


def test_mbarrier_align():
    bad = hand_plan(Region("x", "data", 0, 4), Region("bars", "barrier", 4, 16), total=24)
    (f,) = [f for f in lint(bad) if f.rule == "mbarrier-align"]
    assert f.regions == ("bars",) and f.fact == "hardware.MBARRIER_ALIGNMENT = 8"
    good = hand_plan(Region("x", "data", 0, 4), Region("bars", "barrier", 8, 16), total=24)
    assert "mbarrier-align" not in rules(good)


def test_tmem_ptr_align():
    bad = hand_plan(Region("x", "data", 0, 2), Region("slot", "tmem_ptr", 2, 4), total=8)
    assert "tmem-ptr-align" in rules(bad)
    good = hand_plan(Region("x", "data", 0, 2), Region("slot", "tmem_ptr", 4, 4), total=8)
    assert "tmem-ptr-align" not in rules(good)


def test_capacity():
    big = smem(SmemAllocation("sA", 200 * 1024), SmemAllocation("sB", 40 * 1024))
    (f,) = [f for f in lint(big) if f.rule == "capacity"]
    assert f.severity == "error" and "sA" in f.regions
    assert "exceeds the sm_90 per-block limit" in f.message
    assert [f.severity for f in lint(big, arch="sm_100") if f.rule == "capacity"] == ["error"]
    assert "capacity" not in rules(smem(SmemAllocation("sA", 200 * 1024)))
    # no arch anywhere: nothing is judged, and the finding says so
    unjudged = lint(smem(SmemAllocation("sA", 300 * 1024), arch=None))
    assert [(f.rule, f.severity) for f in unjudged] == [("capacity", "info")]


def test_tmem_over_512_columns_is_a_capacity_error():
    plan = LayoutPlan("tmem", (Region("acc", "data", 0, 600),), data_total=600)
    assert [f.rule for f in lint(plan)] == ["capacity"]


def test_padding_share():
    gappy = hand_plan(Region("flag", "data", 0, 100), Region("sA", "data", 4096, 4096, padding_before=3996), total=8192)
    (f,) = [f for f in lint(gappy) if f.rule == "padding-share"]
    assert f.severity == "warning" and f.regions == ("sA",) and "48.8%" in f.message
    dense = hand_plan(Region("sA", "data", 0, 4096), Region("flag", "data", 4096, 100), total=4196)
    assert "padding-share" not in rules(dense)
    assert "padding-share" not in rules(gappy, padding_share=0.6)
    # a small absolute gap is not worth a warning, whatever its share
    tiny = hand_plan(Region("a", "data", 0, 4), Region("b", "data", 64, 4), total=68)
    assert "padding-share" not in rules(tiny)


def test_tmem_rounding():
    t = TmemAllocator()
    t.add(TmemAllocation("acc", 384))
    t.compute_layout()
    (f,) = lint(t.plan)
    assert (f.rule, f.severity) == ("tmem-rounding", "warning")
    assert "384 TMEM columns" in f.message and "128 columns wasted" in f.message
    t2 = TmemAllocator()
    t2.add(TmemAllocation("acc", 256))
    t2.compute_layout()
    assert not lint(t2.plan)


# -- the rule set as a whole --------------------------------------------------------------------


def test_every_rule_cites_a_fact_that_exists():
    plans = [
        smem(SmemAllocation("f", 16, 16), SmemAllocation("sA", 3 * 1536, 16, swizzle="128B", stages=3, tma=True)),
        smem(SmemAllocation("sA", 300 * 1024)),
        hand_plan(
            Region("x", "data", 0, 2),
            Region("b", "barrier", 2, 8),
            Region("s", "tmem_ptr", 10, 4),
            Region("y", "data", 8192, 8),
            total=8200,
        ),
        LayoutPlan("tmem", (Region("acc", "data", 0, 100),), data_total=100),
        smem(
            SmemAllocation(
                "epi_c",
                dtype="bf16",
                count=4096,
                access={"instruction": "stmatrix.x4", "layout": "(128,32):(32,1)", "warps": [8, 1]},
            ),
            SmemAllocation(
                "small", dtype="bf16", count=64, access={"instruction": "stmatrix.x4", "layout": "(128,32):(32,1)"}
            ),
        ),
    ]
    from smemviz.analysis.tma._rules import DOCUMENTED, MEASURED, UNENFORCED
    from smemviz.layout._tma_atom import TmaAtom

    # a TMA atom whose box rows (256 B) overflow its 128B swizzle: the driver's rule, cited by source
    bad_box = TmaAtom("tma_a", "k.py:1", "load", "float16", (1024, 64), (2048,), (128, 64), swizzle="128B")
    plans.append(dataclasses.replace(smem(SmemAllocation("sA", 16384, 1024, swizzle="128B")), tma_atoms=(bad_box,)))
    seen = set()
    for plan in plans:
        for f in lint(plan):
            seen.add(f.rule)
            if f.rule == "tma-descriptor":
                assert f.fact in (DOCUMENTED, MEASURED, UNENFORCED), f.fact
                continue
            name = re.match(r"hardware\.(\w+)", f.fact)
            assert name, f.fact
            assert hasattr(hardware, name.group(1)), f.fact
    # the ordering rules state the mbarrier rule they rest on in words; each is made to fire in
    # tests/analysis/ordering (test_rules.py) and reaches lint through test_on_the_plan.py
    assert seen == set(RULES) - set(ORDERING_RULES)


def test_findings_come_errors_first_and_ignore_works():
    plan = hand_plan(
        Region("flag", "data", 0, 100),
        Region("bars", "barrier", 4092, 16, padding_before=3992),
        Region("sA", "data", 4108, 4096),
        total=8204,
    )
    found = lint(plan)
    severities = [f.severity for f in found]
    assert severities == sorted(severities, key=["error", "warning", "info"].index)
    assert found.errors and found.warnings
    assert "mbarrier-align" not in lint(plan, ignore=("mbarrier-align",)).rules()
    with pytest.raises(ValueError, match="unknown lint rule 'nope'"):
        lint(plan, ignore=("nope",))


def test_swizzle_and_stages_travel_through_the_plan_json():
    plan = smem(SmemAllocation("sA", 4096, 1024, swizzle="64B", stages=2, tma=True), SmemAllocation("x", 64))
    r = plan.region("sA")
    assert (r.swizzle, r.stages, r.tma) == ("64B", 2, True)
    data = json.loads(plan.to_json())
    assert {"swizzle", "stages", "tma"} <= set(data["regions"][0])
    assert "swizzle" not in next(d for d in data["regions"] if d["name"] == "x")  # only when set
    assert plan_from_json(plan.to_json()) == plan


def test_bad_lint_fields_are_refused_naming_the_allocation():
    with pytest.raises(ValueError, match="'sA': swizzle must be None"):
        SmemAllocation("sA", 1024, swizzle="16B")
    with pytest.raises(ValueError, match="'sA': stages must be a positive int"):
        SmemAllocation("sA", 1024, stages=0)
    with pytest.raises(TypeError, match="'sA': tma must be"):
        SmemAllocation("sA", 1024, tma="yes")


# -- where findings show -------------------------------------------------------------------------


def test_report_markdown_and_html_list_findings():
    plan = smem(SmemAllocation("f", 64, 64), SmemAllocation("sA", 8192, 64, swizzle="128B"))
    assert "error[swizzle-align] sA (128B swizzle) starts at 64" in text_report(plan)
    from smemviz.analysis._report import html_report, markdown_report

    assert "**error** `swizzle-align`" in markdown_report(plan)
    assert "smemviz-finding smemviz-error" in html_report(plan)


def test_json_export_carries_findings(tmp_path):
    from smemviz import export

    plan = smem(SmemAllocation("f", 128, 128), SmemAllocation("sA", 8192, 128, swizzle="128B"))
    doc = json.loads(export(plan, tmp_path / "p.json").read_text())
    assert [f["rule"] for f in doc["lint"]] == ["swizzle-align"]  # at 128 it is TMA-aligned
    assert doc["occupancy"]["ctas_per_sm"] >= 1


def test_cli_check_exit_codes(tmp_path, capsys):
    bad = smem(SmemAllocation("f", 64, 64), SmemAllocation("sA", 8192, 64, swizzle="128B"))
    warn = hand_plan(Region("flag", "data", 0, 100), Region("sA", "data", 4096, 4096, padding_before=3996), total=8192)
    clean = smem(SmemAllocation("sA", 8192, 1024, swizzle="128B"))
    for name, plan in (("bad", bad), ("warn", warn), ("clean", clean)):
        (tmp_path / f"{name}.json").write_text(plan.to_json())
    assert main(["check", str(tmp_path / "bad.json")]) == 1
    assert "error[swizzle-align]" in capsys.readouterr().err
    assert main(["check", str(tmp_path / "warn.json")]) == 0
    assert "warning[padding-share]" in capsys.readouterr().out
    assert main(["check", str(tmp_path / "warn.json"), "--strict"]) == 1
    assert "warning[padding-share]" in capsys.readouterr().err
    assert main(["check", str(tmp_path / "clean.json"), "--strict"]) == 0
    out = capsys.readouterr().out
    assert "fits the sm_90 per-block limit" in out and "occupancy sm_90:" in out


def test_explorer_summary_lists_findings_and_occupancy():
    pytest.importorskip("ipywidgets")
    from smemviz.explorer._panels import summary_html
    from smemviz.explorer._state import analyse_pair

    bad = smem(SmemAllocation("f", 64, 64), SmemAllocation("sA", 8192, 64, swizzle="128B"))
    html = summary_html(analyse_pair(bad, None, "sm_90"))
    assert "smemviz-finding smemviz-error" in html and "swizzle-align" in html
    assert "occupancy sm_90: 24 CTAs/SM" in html
    clean = smem(SmemAllocation("sA", 8192, 1024, swizzle="128B"))
    assert "smemviz-finding" not in summary_html(analyse_pair(clean, None, "sm_90"))


def test_explorer_summary_lists_at_most_a_screenful():
    pytest.importorskip("ipywidgets")
    from smemviz.explorer._panels import MAX_FINDINGS, summary_html
    from smemviz.explorer._state import analyse_pair

    # 64 B aligned: below TMA's 128 B, so each is an error
    many = [SmemAllocation(f"s{i}", 320, 64, swizzle="128B") for i in range(2 * MAX_FINDINGS)]
    plan = smem(*many)
    assert len(lint(plan).errors) > MAX_FINDINGS
    html = summary_html(analyse_pair(plan, None, "sm_90"))
    assert html.count("smemviz-finding smemviz-error") == MAX_FINDINGS
    assert f"and {len(lint(plan)) - MAX_FINDINGS} more" in html


def test_the_plan_reader_refuses_bad_lint_fields():
    plan = smem(SmemAllocation("sA", 4096, 1024, swizzle="64B", stages=2, tma=True))
    good = json.loads(plan.to_json())
    for key, value, message in (
        ("swizzle", "16B", "regions[0].swizzle"),
        ("stages", 0, "regions[0].stages"),
        ("tma", "yes", "regions[0].tma"),
    ):
        bad = json.loads(json.dumps(good))
        bad["regions"][0][key] = value
        with pytest.raises(ValueError, match=re.escape(message)):
            plan_from_dict(bad)
    assert plan_from_dict(good) == plan


def test_findings_show_hostile_names_escaped():
    plan = hand_plan(Region("x", "data", 0, 4), Region("bars\x1b[31m\u202e", "barrier", 4, 16), total=24)
    (f,) = [f for f in lint(plan) if f.rule == "mbarrier-align"]
    assert f.regions == ("bars\x1b[31m\u202e",)  # the data keeps the name as it is
    assert "\x1b" not in f.line() and "\u202e" not in f.line()
    assert "\x1b" not in text_report(plan)
