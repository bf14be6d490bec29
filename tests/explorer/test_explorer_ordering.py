"""The explorer's Ordering tab, driven without a browser: offered while the layout on
screen has an ordering (a kernel model, or a declared plan's hand-overs), drawn when
opened, from the analysis the maps read (the check runs once per change)."""

from __future__ import annotations

import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("plotly")

import smemviz.analysis.ordering  # noqa: E402
from smemviz import SmemAllocation, SmemAllocator  # noqa: E402
from smemviz.explorer import ExplorerState, explore  # noqa: E402
from smemviz.figures._ordering import ORDERING_TRACES  # noqa: E402

from ..figures.ordering_plans import declared_plan, hopper_plan, tmem_plan  # noqa: E402


def _plain():
    s = SmemAllocator(arch="sm_90a")
    s.add(SmemAllocation("a", 4096))
    s.compute_layout()
    return s.plan


def _ordered(target):
    state = ExplorerState(target)
    state.start()
    return state.analysed().ordered


def test_the_state_names_the_analyses_with_an_ordering():
    assert [a.plan.ordering.name for a in _ordered(hopper_plan())] == ["hopper_gemm"]
    assert [a.plan.memory for a in _ordered((hopper_plan(), tmem_plan()))] == ["smem", "tmem"]
    assert [a.needs is not None for a in _ordered(declared_plan())] == [True]
    assert _ordered(_plain()) == ()


def test_the_tab_is_offered_only_with_an_ordering_and_drawn_when_opened():
    assert "Ordering" not in explore(_plain()).tab_names
    ex = explore(hopper_plan())
    assert ex.tab_names[-1] == "Ordering"
    assert ex.ordering.figure is None  # hidden: not drawn yet
    ex.show_tab("Ordering")
    assert ex.open_tab == "Ordering"
    fig = ex.ordering.figure.widget
    assert [t.meta for t in fig.data] == list(ORDERING_TRACES)
    aliases = next(t for t in fig.data if t.meta == "aliases")
    assert list(aliases.text) == ["sA -> sC"]
    table = ex.ordering.aliases.value
    assert table.count("<tr class='smemviz-alias-row smemviz-ordered'>") == 1
    assert "<td>sA</td><td>sC</td>" in table and "wgmma wait_group(0) at gemm.py:44" in table
    assert ex.ordering.findings.value.endswith("no ordering findings</div>")


def test_an_unordered_alias_is_an_error_row_and_its_findings_are_listed():
    ex = explore(hopper_plan(unordered=True))
    ex.show_tab("Ordering")
    assert "<tr class='smemviz-alias-row smemviz-unordered'>" in ex.ordering.aliases.value
    assert "no edge orders them; fix: order sA&#x27;s wgmma_read before sC&#x27;s stmatrix" in ex.ordering.aliases.value
    assert ex.ordering.findings.value.count("smemviz-finding smemviz-error") == 3
    assert ex.ordering.figure.widget.layout.title.subtitle.text == "ordering: 3 errors"


def test_the_check_runs_once_per_change_and_the_tab_reads_it(monkeypatch):
    calls = []
    real = smemviz.analysis.ordering.check_ordering
    monkeypatch.setattr(smemviz.analysis.ordering, "check_ordering", lambda m: calls.append(m) or real(m))
    ex = explore(hopper_plan())
    ex.show_tab("Ordering")
    ex.show_tab("Usage table")
    ex.show_tab("Ordering")
    assert len(calls) == 1


def test_a_builder_that_gains_and_loses_its_model_offers_and_withdraws_the_tab():
    ex = explore(lambda model: hopper_plan() if model else _plain(), model=[True, False])
    ex.show_tab("Ordering")
    ex.controls["model"].value = False
    assert "Ordering" not in ex.tab_names and ex.open_tab == "Usage table"
    ex.controls["model"].value = True
    assert "Ordering" in ex.tab_names
    ex.show_tab("Ordering")
    assert list(next(t for t in ex.ordering.figure.widget.data if t.meta == "aliases").text) == ["sA -> sC"]


def test_both_memories_with_their_models_offer_a_choice():
    ex = explore((hopper_plan(), tmem_plan()))
    ex.show_tab("Ordering")
    view = ex.ordering
    assert view.memory.layout.display is None and view.memory.value == "smem"
    view.memory.value = "tmem"
    assert view.figure.widget.layout.title.text.startswith("Ordering of tmem_in_place")
    assert view.aliases.value.count("smemviz-alias-row") == 5
    assert "<td class='n'>64..96</td>" in view.aliases.value  # P inside S's columns


def test_a_declared_plan_shows_the_edges_its_hand_overs_need():
    ex = explore(declared_plan())
    ex.show_tab("Ordering")
    table = ex.ordering.aliases.value
    assert "<tr class='smemviz-alias-row smemviz-needed'>" in table and "needs a named barrier" in table
    assert (
        next(t for t in ex.ordering.figure.widget.data if t.meta == "aliases")
        .text[0]
        .startswith("<b>a_stages -> epi_c</b>")
    )


def test_the_maps_key_names_the_alias_strips_of_a_plan_with_a_model():
    assert "alias over its shared bytes" in explore(hopper_plan()).smem_key.value
    assert "alias over its shared bytes" in explore((hopper_plan(), tmem_plan())).tmem_key.value
    assert "alias over its shared bytes" not in explore(_plain()).smem_key.value


def test_a_model_on_the_smem_plan_draws_its_tmem_aliases_on_the_tmem_map():
    from dataclasses import replace

    tmem = tmem_plan()
    ex = explore((replace(hopper_plan(), ordering=tmem.ordering), replace(tmem, ordering=None)))
    strips = next(t for t in ex.tmem_widget.data if t.meta == "ordering")
    assert len(strips.x) == 5
    ex.show_tab("Ordering")
    assert ex.ordering.aliases.value.count("on the TMEM map") == 5
