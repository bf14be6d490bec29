"""Fuzzing plans read back from JSON and everything that draws a plan.

Tampered plan documents are refused with a ``ValueError`` or, when the
tampering still describes a layout an allocator could produce, read back
whole; an independent brute-force check confirms that nothing accepted has
coexisting regions that overlap or totals that do not add up. Names of any
text (control characters, bidi overrides, lone surrogates, markup) come out of
every view (text, Markdown, HTML, JSON, figure data) with no raw control
character (SVG: tests/ui/test_fuzz_svg.py).
"""

from __future__ import annotations

import copy
import io
import json
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from smemviz import LayoutPlan, SmemAllocator, TmemAllocation, TmemAllocator
from smemviz._export import read_plans
from smemviz.analysis._report import html_report, markdown_report, text_report
from smemviz.cli import main
from smemviz.layout import plan_from_dict

from ..hostile import RAW_CONTROL, fuzz_settings, hostile_text, hostile_values, no_hang, unprintable_names
from ..strategies import replay, smem_programs, smemviz_alloc, tmem_programs


@st.composite
def computed_plans(draw: Any) -> LayoutPlan:
    if draw(st.integers(0, 3)):
        alloc: Any = SmemAllocator()
        replay(draw(smem_programs()), alloc, smemviz_alloc)
    else:
        standalone, groups = draw(tmem_programs())
        alloc = TmemAllocator()
        for i, cols in enumerate(standalone):
            alloc.add(TmemAllocation(f"t{i}", cols))
        for g, phases in enumerate(groups):
            alloc.add_alias_group(
                [[TmemAllocation(f"g{g}p{p}m{m}", c) for m, c in enumerate(ph)] for p, ph in enumerate(phases)]
            )
    try:
        alloc.compute_layout()
    except ValueError:  # over TMEM capacity
        standalone = TmemAllocator()
        standalone.add(TmemAllocation("t", 64))
        standalone.compute_layout()
        return standalone.plan
    return alloc.plan


# -- the independent check of an accepted plan ---------------------------------------------------


def brute_force_check(plan: LayoutPlan) -> None:
    """What any plan must satisfy, checked pair by pair without the reader's code."""
    regions = plan.regions
    for r in regions:
        assert type(r.offset) is int and r.offset >= 0 and type(r.size) is int and r.size >= 0
    for i, a in enumerate(regions):
        for b in regions[i + 1 :]:
            exclusive = a.group is not None and a.group == b.group and a.phase != b.phase
            if not exclusive and a.size and b.size:
                assert a.end <= b.offset or b.end <= a.offset, (a, b)
    ends = [r.end for r in regions if r.kind != "barrier"]
    assert plan.data_total == max(ends, default=0)
    if plan.memory == "tmem":
        assert plan.barrier_bytes == 0


# -- tampering with a plan document ---------------------------------------------------------------


def _paths(value: Any, path: tuple = ()) -> list[tuple]:
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*path, i))
    return out


def _get(doc: Any, path: tuple) -> Any:
    for p in path:
        doc = doc[p]
    return doc


@st.composite
def tampered(draw: Any, doc: dict) -> dict:
    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent, key = _get(doc, path[:-1]), path[-1]
        value = parent[key]
        op = draw(st.sampled_from(["replace", "nudge", "nudge", "delete", "add_key", "swap"]))
        if op == "replace":
            parent[key] = draw(hostile_values)
        elif op == "nudge" and isinstance(value, int) and not isinstance(value, bool):
            parent[key] = draw(st.sampled_from([value + 1, value - 1, value + 8, value * 2, -value, value + 128, 0]))
        elif op == "delete":
            del parent[key]
        elif op == "add_key" and isinstance(value, dict):
            value[draw(hostile_text)] = draw(hostile_values)
        elif op == "swap" and isinstance(parent, list) and len(parent) > 1:
            other = draw(st.integers(0, len(parent) - 1))
            if all(isinstance(x, dict) and "offset" in x for x in (parent[key], parent[other])):
                parent[key]["offset"], parent[other]["offset"] = parent[other]["offset"], parent[key]["offset"]
    return doc


@fuzz_settings(200)
@given(data=st.data())
def test_tampered_plans_are_refused_or_still_a_sound_layout(data):
    plan = data.draw(computed_plans())
    doc = data.draw(tampered(plan.to_dict()))
    with no_hang():
        try:
            back = plan_from_dict(doc)
        except ValueError as exc:
            event("refused")
            assert str(exc) and not RAW_CONTROL.search(str(exc).encode("utf-8", "replace").decode())
            return
    event("accepted")
    brute_force_check(back)
    assert plan_from_dict(back.to_dict()) == back
    for text in (text_report(back), markdown_report(back), html_report(back)):
        assert not RAW_CONTROL.search(text)


@fuzz_settings(80, long_share=0.25)
@given(data=st.data())
def test_cli_reads_tampered_plans_with_exit_0_1_or_2(data):
    plan = data.draw(computed_plans())
    doc = data.draw(tampered(plan.to_dict()))
    command = data.draw(st.sampled_from(["check", "report"]))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "plan.json"
        path.write_text(json.dumps(doc))
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err), no_hang(60):
            code = main([command, str(path), "--arch", "sm_100a"])
        assert code in (0, 1, 2), err.getvalue()
        assert not RAW_CONTROL.search(out.getvalue() + err.getvalue())
        if code == 2:
            assert err.getvalue().startswith(f"smemviz: error: {path}") and err.getvalue().count("\n") == 1


# -- any name through every view -------------------------------------------------------------------

any_name = st.one_of(st.text(min_size=1, max_size=30), unprintable_names, hostile_text.filter(bool))


@st.composite
def plans_with_any_names(draw: Any) -> LayoutPlan:
    """A computed plan whose region names are replaced, as a plan file or a
    CUTLASS allocator could carry them."""
    doc = draw(computed_plans()).to_dict()
    for r in doc["regions"]:
        if draw(st.booleans()):
            r["name"] = draw(any_name)
    return plan_from_dict(doc)


@fuzz_settings(150, long_share=0.25)
@given(plan=plans_with_any_names())
def test_text_views_of_any_name_hold_no_raw_control_characters(plan):
    for text in (text_report(plan), markdown_report(plan), html_report(plan), plan.capacity("sm_120").message()):
        assert not RAW_CONTROL.search(text)
    for ext in (".json", ".md"):
        text = export_text(plan, ext)
        assert not RAW_CONTROL.search(text)
        if ext == ".json":
            assert read_plans(text) == ((plan, None) if plan.memory == "smem" else (None, plan))


def export_text(plan: LayoutPlan, ext: str, **kwargs: Any) -> str:
    import smemviz

    with tempfile.TemporaryDirectory() as folder:
        return smemviz.export(plan, Path(folder) / f"out{ext}", **kwargs).read_text(encoding="utf-8")


@fuzz_settings(60, long_share=0.1)
@given(plan=plans_with_any_names())
def test_figure_data_of_any_name_holds_no_raw_control_characters(plan):
    pytest.importorskip("plotly")
    from smemviz import smem_figure, tmem_figure

    fig = smem_figure(plan) if plan.memory == "smem" else tmem_figure(plan)
    assert not RAW_CONTROL.search(json.dumps(fig.to_plotly_json(), ensure_ascii=False))


@fuzz_settings(8, long_share=0.01)
@given(plan=plans_with_any_names(), title=any_name)
def test_html_export_of_any_name_holds_no_raw_control_characters(plan, title):
    pytest.importorskip("plotly")
    from plotly.offline import get_plotlyjs

    page = export_text(plan, ".html", title=title)
    assert not RAW_CONTROL.search(page.replace(get_plotlyjs(), ""))
