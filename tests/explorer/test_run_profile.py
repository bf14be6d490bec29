"""The explorer's Run on GPU with Nsight Compute, driven without a GPU: a runner that can profile
is offered the "profile with Nsight Compute" box only where ncu is on PATH, and a run with it
ticked puts the counts on the byte map and in the history; a profile that fails says why."""

from __future__ import annotations

import os
import stat

import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("plotly")

from smemviz.explorer import explore  # noqa: E402

from .test_explorer_measured import _attribution, _measured_labels, build  # noqa: E402
from .test_run_panel_no_gpu import CompiledOnly  # noqa: E402


class Profiling:
    """Compiles only (no GPU here); its profile returns hand-made counts, or fails."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.profiled: list[dict] = []

    def __call__(self, **values):
        return CompiledOnly(values["stages"])

    def profile(self, **values):
        self.profiled.append(values)
        if self.fail:
            raise RuntimeError("ncu exited 1 without a report")
        return _attribution()


@pytest.fixture
def ncu_on_path(tmp_path, monkeypatch):
    """An ``ncu`` on PATH (never run: the runner's profile stands in for what it would do)."""
    ncu = tmp_path / "ncu"
    ncu.write_text("#!/bin/sh\nexit 3\n")
    ncu.chmod(ncu.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")


def test_without_ncu_the_profile_box_is_not_offered(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # nowhere to find ncu
    ex = explore(build, arch="sm_90a", run=Profiling(), stages=(1, 2))
    assert ex.run_panel.profile.layout.display == "none"
    ex.run_panel.profile.value = True  # ticked anyway (by code): nothing is profiled
    ex.run_panel.run()
    assert ex.measured == () and ex.run_panel.history[-1].get("ncu") is None


def test_a_runner_that_cannot_profile_is_not_offered_it(ncu_on_path):
    ex = explore(build, arch="sm_90a", run=lambda **values: CompiledOnly(values["stages"]), stages=(1, 2))
    assert ex.run_panel.profile.layout.display == "none"


def test_a_profiled_run_puts_the_counts_on_the_map(ncu_on_path):
    runner = Profiling()
    ex = explore(build, arch="sm_90a", run=runner, stages=(1, 2))
    panel = ex.run_panel
    assert panel.profile.layout.display is None and panel.profile.value is False
    panel.profile.value = True
    row = panel.run()
    assert runner.profiled == [{"stages": 1}]  # the controls on screen
    assert row["ncu"] == "1 to look at"  # the hand-made counts disagree on region a
    assert "Nsight Compute: 0 shared-memory rows" in panel.status.value
    assert len(ex.measured) == 2 and len(_measured_labels(ex)) == 2
    assert "<td>1 to look at</td>" in panel.table.value


def test_a_profile_that_fails_says_why_and_keeps_the_run(ncu_on_path):
    ex = explore(build, arch="sm_90a", run=Profiling(fail=True), stages=(1, 2))
    ex.run_panel.profile.value = True
    row = ex.run_panel.run()
    assert row is not None and row["ncu"] == "failed"
    assert "profiling failed: RuntimeError: ncu exited 1 without a report" in ex.run_panel.status.value
    assert ex.measured == ()


def test_counts_that_are_not_an_attribution_are_reported_not_raised(ncu_on_path):
    runner = Profiling()
    runner.profile = lambda **values: {"sC": "4-way"}  # not what read_ncu returns
    ex = explore(build, arch="sm_90a", run=runner, stages=(1, 2))
    ex.run_panel.profile.value = True
    row = ex.run_panel.run()
    assert (
        row is not None and row["ncu"] == "failed" and "profiling failed: AttributeError" in ex.run_panel.status.value
    )
    assert ex.measured == ()
