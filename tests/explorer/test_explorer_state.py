"""The explorer's state, tested without ipywidgets or plotly: what a builder
returned, the configurations tried, the last one that fit, the arch, and one
analysis per change."""

from __future__ import annotations

import subprocess
import sys

import pytest

from smemviz import SmemAllocation, SmemAllocator, TmemAllocation, TmemAllocator
from smemviz.explorer import ExplorerState

from ..helpers import ROOT


def build(stages: int = 2, tile_n: int = 128):
    if stages == 7:
        raise RuntimeError("stage count 7 is not supported by this kernel")
    s = SmemAllocator()
    for i in range(stages):
        s.add(SmemAllocation(f"smem_a{i}", 128 * 64 * 2, 1024))
        s.add(SmemAllocation(f"smem_b{i}", tile_n * 64 * 2, 1024))
    t = TmemAllocator()
    t.add(TmemAllocation("acc", tile_n))
    return s, t


def started(**values) -> ExplorerState:
    state = ExplorerState(build, arch="sm_100")
    state.start({"stages": 2, "tile_n": 128, **values})
    return state


def test_the_state_imports_without_ipywidgets_or_plotly():
    code = (
        "import sys\n"
        "for name in ('ipywidgets', 'plotly', 'anywidget'): sys.modules[name] = None\n"
        "from smemviz.explorer import ExplorerState\n"
        "import smemviz\n"
        "a = smemviz.SmemAllocator()\n"
        "a.add(smemviz.SmemAllocation('x', 1024, 16))\n"
        "a.compute_layout()\n"
        "s = ExplorerState(a, arch='sm_90')\n"
        "print(s.start().drawn, s.plan.total, s.analysed().smem.capacity.fits)\n"
        "print(sorted(m for m in ('ipywidgets', 'plotly', 'anywidget') if sys.modules[m] is not None))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["True 1024 True", "[]"]


def test_a_builder_change_gives_its_plans_history_and_last_fit():
    state = started()
    assert state.smem_plan.total == 2 * 2 * 16384 and state.tmem_plan.data_total == 128
    outcome = state.apply({"stages": 3, "tile_n": 256})
    assert outcome.drawn and outcome.message == ""
    assert state.smem_plan.total == 3 * (16384 + 32768) and state.tmem_plan.data_total == 256
    assert state.last_fit[0] == {"stages": 3, "tile_n": 256}
    assert [(a.arguments["stages"], a.fits, a.arch) for a in state.history] == [
        (2, True, "sm_100"),
        (3, True, "sm_100"),
    ]
    state.apply({"stages": 3, "tile_n": 256})  # the same again: no second row
    assert len(state.history) == 2


def test_a_builder_error_keeps_the_last_layout_and_is_recorded():
    state = started()
    before = state.smem_plan
    outcome = state.apply({"stages": 7, "tile_n": 128})
    assert not outcome.drawn and state.smem_plan is before
    assert "RuntimeError: stage count 7" in outcome.message and "Showing the last layout that built." in outcome.message
    assert "at build, line" in state.last_error and state.history[-1].fits is None


def test_an_over_capacity_layout_is_shown_with_the_last_fit_in_a_note():
    state = started()
    outcome = state.apply({"stages": 8, "tile_n": 256})
    assert outcome.drawn and outcome.message.startswith("CapacityError:") and state.last_error == outcome.message
    assert "Last layout that fit: stages=2, tile_n=128" in outcome.note
    assert state.history[-1].fits is False and state.last_fit[0] == {"stages": 2, "tile_n": 128}


def test_the_arch_follows_the_plan_until_one_is_chosen():
    def on_sm90(stages: int = 1):
        s = SmemAllocator(arch="sm_90a")
        for i in range(stages):
            s.add(SmemAllocation(f"a{i}", 32768, 1024))
        return s

    state = ExplorerState(on_sm90)
    state.start({"stages": 1})
    assert state.arch == "sm_90" and not state.arch_pinned
    state.choose_arch("sm_120")
    state.apply({"stages": 2})  # 64 KiB: fits sm_120's 99 KiB
    assert state.arch == "sm_120" and state.arch_pinned and state.last_error is None
    assert state.plan.arch == "sm_120" and state.smem_plan.arch == "sm_90"  # judged against the choice
    outcome = state.apply({"stages": 4})  # 128 KiB: fits the plan's own sm_90, not the chosen sm_120
    assert outcome.message.startswith("CapacityError:") and "sm_120" in outcome.message
    state.choose_arch("sm_90")
    assert state.analysed().over_capacity is None and state.capacity_message() == ""


def test_a_fixed_layout_has_no_builder_history_or_last_fit():
    s, _ = build()
    s.compute_layout()
    state = ExplorerState(s)
    assert state.builder is None and state.start().drawn
    assert state.history == [] and state.last_fit is None
    assert state.plan.regions == state.smem_plan.regions and state.plan.arch == state.arch
    assert state.apply({}).drawn and state.history == []


def test_one_analysis_per_change(monkeypatch):
    """Each plan on screen is analysed (capacity, occupancy, lint, banks) once per
    change, however many panels and checks read it."""
    import smemviz.analysis._analysed

    calls = {"analyse": 0, "lint": 0}
    analyse, lint = smemviz.analysis.analyse, smemviz.analysis._analysed.lint_with_accesses

    def counted_analyse(*args, **kwargs):
        calls["analyse"] += 1
        return analyse(*args, **kwargs)

    def counted_lint(*args, **kwargs):
        calls["lint"] += 1
        return lint(*args, **kwargs)

    monkeypatch.setattr(smemviz.analysis, "analyse", counted_analyse)
    monkeypatch.setattr(smemviz.analysis._analysed, "lint_with_accesses", counted_lint)
    state = ExplorerState(lambda stages=1: build(stages)[0], arch="sm_100")  # SMEM only: one plan
    state.start({"stages": 1})
    calls.update(analyse=0, lint=0)
    state.apply({"stages": 3})
    first = state.analysed()
    assert state.analysed() is first and state.capacity_message() == "" and state.plan is first.smem.plan
    assert first.smem.plan.total == 3 * 2 * 16384 and first.occupancy is first.smem.occupancy is not None
    assert calls == {"analyse": 1, "lint": 1}
    state.choose_arch("sm_90")  # a new arch: analysed again, once
    assert state.analysed() is not first and state.analysed() is state.analysed()
    assert state.analysed().smem.arch == "sm_90" and calls == {"analyse": 2, "lint": 2}
    state.apply({"stages": 7})  # the builder raises: nothing new to analyse
    assert state.analysed().smem.plan.total == 3 * 2 * 16384 and calls == {"analyse": 2, "lint": 2}


def test_apply_runs_the_values_it_is_given_not_a_kept_configuration():
    """What the explorer's Run and every control change rely on: the builder is
    called with the values handed over now."""
    seen = []

    def recording(stages: int = 1):
        seen.append(stages)
        return build(stages)[0]

    state = ExplorerState(recording)
    state.start({"stages": 1})
    state.apply({"stages": 4})
    assert seen == [1, 4] and state.history[-1].arguments == {"stages": 4}


@pytest.mark.parametrize("bad", [None, 3, "name"])
def test_only_functions_are_builders(bad):
    from smemviz.explorer._state import is_builder

    assert not is_builder(bad) and is_builder(build)
