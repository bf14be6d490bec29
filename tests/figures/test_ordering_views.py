"""The ordering of shared bytes on the maps and in the pipeline diagram: each alias
marked over its shared bytes with its edge in the hover (an unordered one in the
lint-error colour), the diagram's lanes, barrier arrows and hanging aliases, all
read from the plan's analysis, where the check ran once."""

from __future__ import annotations

import pytest

pytest.importorskip("plotly")

import smemviz.analysis.ordering  # noqa: E402
from smemviz import SmemAllocation, SmemAllocator  # noqa: E402
from smemviz.analysis import analyse, text_report  # noqa: E402
from smemviz.figures import TRACE_NAMES, ordering_figure, smem_spec, tmem_spec  # noqa: E402
from smemviz.figures._bars import FINDING_COLORS  # noqa: E402
from smemviz.figures._ordering import ORDERING_TRACES, ordering_spec  # noqa: E402

from .ordering_plans import declared_plan, hopper_plan, tmem_plan  # noqa: E402

ERROR = FINDING_COLORS["error"]


def _trace(spec, meta):
    return next(t for t in spec.traces if t["meta"] == meta)


def test_the_check_runs_once_per_analysis_and_every_view_reads_it(monkeypatch):
    calls = []
    real = smemviz.analysis.ordering.check_ordering
    monkeypatch.setattr(smemviz.analysis.ordering, "check_ordering", lambda m: calls.append(m) or real(m))
    an = analyse(hopper_plan(unordered=True))
    assert len(calls) == 1
    assert an.ordering is not None and an.needs is None and an.has_ordering
    assert {f.rule for f in an.ordering.findings.errors} <= {f.rule for f in an.findings.errors}  # lint read it
    smem_spec(an), ordering_spec(an), text_report(an)
    assert len(calls) == 1  # the map, the diagram and the report read the analysis


def test_a_plan_without_a_model_or_declared_accesses_has_no_ordering():
    s = SmemAllocator(arch="sm_90a")
    s.add(SmemAllocation("a", 4096))
    s.compute_layout()
    an = analyse(s.plan)
    assert (an.ordering, an.needs, an.has_ordering) == (None, None, False)
    assert _trace(smem_spec(an), "ordering")["base"] == []
    assert "No ordering to show" in ordering_spec(an).layout["title"]["text"]


def test_the_byte_map_marks_an_alias_over_its_shared_bytes_with_its_edge():
    spec = smem_spec(analyse(hopper_plan()))
    assert [t["meta"] for t in spec.traces] == list(TRACE_NAMES) and TRACE_NAMES[-1] == "ordering"
    marks = _trace(spec, "ordering")
    # sC (32 KiB) sits over the first two of sA's stages: the model's spans, as the plan has no sC
    assert (marks["base"], marks["x"]) == ([0], [32768])
    hover = marks["hovertext"][0]
    assert "<b>alias sA -> sC</b>" in hover
    assert "edge: wgmma wait_group(0) at gemm.py:44" in hover
    assert "wgmma_read at gemm.py:41" in hover and "stmatrix at gemm.py:60" in hover
    assert marks["marker"]["color"] == ["#2e7d32"]


def test_an_unordered_alias_is_drawn_as_an_error_on_the_map():
    spec = smem_spec(analyse(hopper_plan(unordered=True)))
    marks = _trace(spec, "ordering")
    assert marks["marker"]["color"] == [ERROR]
    assert "<b>unordered</b>" in marks["hovertext"][0]
    # and the race is a lint error marked on sA, in the same colour
    findings = _trace(spec, "findings")
    assert ERROR in findings["marker"]["color"] and any("unordered-alias" in h for h in findings["hovertext"])


def test_the_tmem_map_marks_p_in_s_and_the_dealloc_hand_overs():
    an = analyse(tmem_plan())
    marks = _trace(tmem_spec(an), "ordering")
    spans = dict(
        zip((h.split("</b>")[0].removeprefix("<b>alias ") for h in marks["hovertext"]), zip(marks["base"], marks["x"]))
    )
    assert spans["S -> P"] == (64, 32)  # P's 32 columns inside S's 128
    assert spans["O -> TMEM allocation"] == (128, 128)
    assert len(marks["base"]) == len(an.ordering.aliases) == 5
    assert all("edge: " in h for h in marks["hovertext"])
    assert len(set(marks["y"])) > 1  # strips over the same columns are stacked, each one hoverable


def test_a_declared_plan_shows_the_edge_each_hand_over_needs():
    an = analyse(declared_plan())
    assert an.ordering is None and an.needs is not None
    (need,) = an.needs.needs
    assert (need.earlier, need.earlier_kind, need.later, need.later_kind) == (
        "a_stages",
        "ldmatrix",
        "epi_c",
        "stmatrix",
    )
    marks = _trace(smem_spec(an), "ordering")
    assert (marks["base"], marks["x"]) == ([0], [16384])
    assert "declared plan: needs a named barrier" in marks["hovertext"][0]
    aliases = _trace(ordering_spec(an), "aliases")
    assert aliases["text"][0].startswith("<b>a_stages -> epi_c</b><br>needs a named barrier")
    assert "needs a named barrier" in aliases["hovertext"][0]


def test_the_diagram_draws_roles_as_lanes_and_each_pipeline_as_full_and_empty_arrows():
    spec = ordering_spec(analyse(hopper_plan()))
    assert [t["meta"] for t in spec.traces] == list(ORDERING_TRACES)
    assert spec.layout["yaxis"]["ticktext"] == ["<b>producer</b><br>warp 0", "<b>mma</b><br>warps 4-11"]
    barriers = _trace(spec, "barriers")
    assert barriers["text"] == ["full", "empty"]
    assert "ab: full barriers" in barriers["hovertext"][0] and "producer -> mma" in barriers["hovertext"][0]
    assert "ab: empty barriers" in barriers["hovertext"][1] and "mma -> producer" in barriers["hovertext"][1]
    arrows = [a for a in spec.layout["annotations"] if a.get("showarrow")]
    # full: producer lane (0) down to the consumer lane (-1); empty: back up
    assert [(a["ay"], a["y"]) for a in arrows] == [(0.0, -1.0), (-1.0, 0.0)]
    headers = [a["text"] for a in spec.layout["annotations"] if not a.get("showarrow")]
    assert "<b>ab</b><br>3 stages" in headers and "<b>epi</b><br>bar.sync" in headers
    named = _trace(spec, "named barriers")
    assert "named barrier epi" in named["hovertext"][0] and "256 threads" in named["hovertext"][0]
    aliases = _trace(spec, "aliases")
    assert aliases["text"] == ["sA -> sC"]
    assert spec.meta["anchors"] == [("within", "mma")]  # handed over by the MMA warps' own wait_group
    assert "edge: wgmma wait_group(0)" in aliases["hovertext"][0]
    assert spec.layout["title"]["subtitle"]["text"] == "ordering: no findings"


def test_an_alias_hangs_off_the_pipeline_barrier_that_hands_it_over():
    an = analyse(tmem_plan())
    spec = ordering_spec(an)
    anchors = spec.meta["anchors"]
    barriers = _trace(spec, "barriers")
    arrow_x: dict[str, float] = {}  # "p_inplace: empty barriers" -> the arrow's x
    for x, hover in zip(barriers["x"], barriers["hovertext"]):
        arrow_x.setdefault(hover.split("</b>")[0].removeprefix("<b>"), x)
    starts = _trace(spec, "alias links")["x"][0::3]  # each link: its edge's point, the alias, a gap
    hung = [(a, kind, starts[i]) for i, (a, kind) in enumerate(zip(an.ordering.aliases, anchors))]
    on_pipelines = [(a, kind, x) for a, kind, x in hung if kind[0] in ("full", "empty")]
    assert on_pipelines  # P in S is handed over through a pipeline's barrier
    for a, (side, pipeline), x in on_pipelines:
        assert f"{side} barrier of {pipeline!r}" in a.edge  # the barrier its chain runs through
        assert x == arrow_x[f"{pipeline}: {side} barriers"]  # hanging off that arrow
    within = [(a, kind) for a, kind, _ in hung if kind[0] == "within"]
    assert within and all(kind == ("within", "softmax") for _, kind in within)  # tcgen05.wait::ld by softmax


def test_an_unordered_alias_and_the_errors_are_in_the_error_colour():
    spec = ordering_spec(analyse(hopper_plan(unordered=True)))
    aliases = _trace(spec, "aliases")
    assert aliases["marker"]["color"] == [ERROR] and "<b>unordered</b>" in aliases["hovertext"][0]
    assert spec.meta["anchors"] == [("unordered", "")]
    assert [x for x in _trace(spec, "unordered links")["x"] if x is not None]  # drawn between the roles
    assert "<b>unordered</b>" in [a["text"] for a in spec.layout["annotations"]]
    assert spec.layout["title"]["subtitle"]["text"] == "ordering: 3 errors"


def test_the_diagram_is_a_valid_plotly_figure_of_a_plan_or_its_analysis():
    plan = tmem_plan()
    fig = ordering_figure(plan)
    assert [t.meta for t in fig.data] == list(ORDERING_TRACES)
    assert fig.layout.title.text == ordering_figure(analyse(plan)).layout.title.text


def test_the_maps_take_an_analysis_as_it_is(monkeypatch):
    from smemviz.figures import smem_figure, tmem_figure

    smem, tmem = analyse(hopper_plan()), analyse(tmem_plan())
    calls = []
    monkeypatch.setattr(smemviz.analysis.ordering, "check_ordering", lambda m: calls.append(m))
    assert next(t for t in smem_figure(smem).data if t.meta == "ordering").x == (32768,)
    assert len(next(t for t in tmem_figure(tmem).data if t.meta == "ordering").x) == 5
    assert calls == []  # nothing analysed again
    with pytest.raises(ValueError, match="needs an SMEM layout"):
        smem_figure(tmem)


def test_a_pipeline_used_on_one_side_only_is_drawn_on_that_role_and_long_names_shortened():
    """A TMA store pipeline has no barriers and no consumer role: one short arrow on the role
    that uses it, said to be bulk groups; a captured kernel's long symbol is cut in the title."""
    from dataclasses import replace

    from smemviz.analysis.ordering import Group, Pipeline, PipelineOp

    from ..analysis.ordering.kernels import at

    plan = hopper_plan()
    model = plan.ordering
    stores = Pipeline("stores", "tma_store", 2, Group("thread", 1), Group("thread", 1), at(15))
    mma = model.programs[1]
    body = (*mma.body, PipelineOp(op="producer_acquire", pipeline="stores", site=at(70)))
    long_name = "kernel_cutlass_kernel_smemvizkernelgemm_sm90Sm90Gemm_object_at_0x7f"
    model = replace(
        model,
        name=long_name,
        pipelines=(*model.pipelines, stores),
        programs=(model.programs[0], replace(mma, body=body)),
    )
    spec = ordering_spec(analyse(replace(plan, ordering=model)))
    barriers = _trace(spec, "barriers")
    assert barriers["text"] == ["full", "empty", "bulk groups"]
    assert "no mbarriers" in barriers["hovertext"][2] and "used by mma" in barriers["hovertext"][2]
    assert barriers["y"][2] == -1.0 - 0.45 / 2  # under the MMA warps' lane, not reaching another role
    title = spec.layout["title"]["text"]
    assert title.startswith("Ordering of kernel_cutlass_kernel_smemvizkernelge...: 2 warp roles")


def test_a_large_declared_plan_is_not_searched_for_hand_overs():
    from smemviz.analysis._analysed_ordering import NEEDS_MAX_REGIONS, declared_needs

    def aliased(n):
        s = SmemAllocator()
        s.add_alias_group(
            [
                [SmemAllocation(f"p1_{i}", 256, 16, tma=True) for i in range(n // 2)],
                [SmemAllocation(f"p2_{i}", 512, 16, tma=True) for i in range(n // 2)],
            ]
        )
        s.compute_layout()
        return s.plan

    assert len(declared_needs(aliased(10)).needs) == 5
    assert declared_needs(aliased(NEEDS_MAX_REGIONS + 2)) is None


def test_a_model_on_the_smem_plan_places_its_tmem_aliases_on_the_tmem_map():
    """Capture puts the kernel's model on the SMEM plan: the TMEM map reads its TMEM aliases
    from the SMEM plan's analysis (checked there, once), in the stacked figure too."""
    from dataclasses import replace

    from smemviz.figures import layout_figure

    tmem = tmem_plan()
    smem = replace(hopper_plan(), ordering=tmem.ordering)  # the model (all TMEM) on the SMEM plan
    tmem = replace(tmem, ordering=None)
    s_an, t_an = analyse(smem), analyse(tmem)
    assert t_an.ordering is None and s_an.ordering is not None
    assert _trace(tmem_spec(t_an), "ordering")["base"] == []  # alone, it has nothing to show
    marks = _trace(tmem_spec(t_an, ordering_from=s_an), "ordering")
    assert len(marks["base"]) == 5 and (64, 32) in zip(marks["base"], marks["x"])
    assert _trace(smem_spec(s_an, ordering_from=t_an), "ordering")["base"] == []  # no SMEM alias in this model
    fig = layout_figure(s_an, t_an)
    assert [len(t.x) for t in fig.data if t.meta == "ordering"] == [0, 5]


def test_an_unordered_alias_says_which_edge_would_order_it_and_a_hung_pipeline_is_red():
    marks = _trace(smem_spec(analyse(hopper_plan(unordered=True))), "ordering")
    assert "fix: order sA's wgmma_read before sC's stmatrix" in marks["hovertext"][0].replace("&#39;", "'")
    from dataclasses import replace

    from ..analysis.ordering.kernels import drop, hopper_gemm

    hung = analyse(replace(hopper_plan(), ordering=drop(hopper_gemm(), "mma", 45)))  # no consumer_release
    assert any("'ab'" in f.message for f in hung.ordering.findings.errors)
    spec = ordering_spec(hung)
    assert set(_trace(spec, "barriers")["marker"]["color"]) == {ERROR}  # the pipeline an error names
    assert "an ordering error names this pipeline" in _trace(spec, "barriers")["hovertext"][0]
