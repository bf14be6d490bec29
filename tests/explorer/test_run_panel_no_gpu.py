""" "Run on GPU" on a machine without one (issue 23, point 5): the true
reason, no duplicate rows, a chart that says why it is empty, and a stages
control whose readout does not say 0 where the layout has 7."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("plotly")

from smemviz.kernel import _device  # noqa: E402
from smemviz.kernel.gemm._layout import gemm_allocator  # noqa: E402

from ..helpers import ROOT  # noqa: E402


@dataclass
class CompiledOnly:
    stages: int
    reason: str = "no CUDA GPU is visible on this machine"

    def row(self):
        return {
            "label": f"s{self.stages}",
            "stages": self.stages,
            "smem_requested": 1000 * self.stages,
            "registers": 90,
            "tflops": None,
            "ran": False,
            "reason": self.reason,
            "compile_s": 0.1 * self.stages,
        }

    def summary(self):
        return f"s{self.stages}: compiled; not run: {self.reason}"


def panel_for(runner):
    from smemviz.explorer import explore

    ex = explore(gemm_allocator, run=runner, tile_n=[128, 256], stages=(0, 7), alias_epilogue=True)
    return ex, ex.run_panel


def test_the_reason_given_without_a_gpu_is_the_first_missing_piece(monkeypatch):
    monkeypatch.setattr(_device, "current_gpu", lambda: None)
    monkeypatch.setattr(_device, "nvidia_device_visible", lambda: False)
    monkeypatch.setattr(_device, "torch_or_none", lambda: None)
    from smemviz.kernel.gemm._measure import why_not_run

    assert why_not_run() == "no CUDA GPU is visible on this machine"  # not "PyTorch is not installed"
    monkeypatch.setattr(_device, "nvidia_device_visible", lambda: True)
    assert "PyTorch" in why_not_run() and "GPU is here" in why_not_run()


def test_this_machine_says_no_gpu_rather_than_no_pytorch():
    if _device.nvidia_device_visible():
        pytest.skip("this machine has an NVIDIA device")
    assert _device.no_gpu_reason() == "no CUDA GPU is visible on this machine"


def test_compiling_the_same_controls_again_adds_no_row():
    ex, panel = panel_for(lambda **c: CompiledOnly(c["stages"] or 7))
    first = panel.run()
    again = panel.run()
    assert len(panel.history) == 1 and again is first
    assert "same as run #1" in panel.status.value
    ex.controls["stages"].value = 5
    panel.run()
    assert [r["stages"] for r in panel.history] == [7, 5]


def test_a_chart_with_nothing_timed_says_why_instead_of_an_empty_grid():
    _, panel = panel_for(lambda **c: CompiledOnly(c["stages"] or 7))
    texts = [a.text for a in panel.plot.layout.annotations]
    assert texts and "no runs yet" in texts[0]
    panel.run()
    texts = [a.text for a in panel.plot.layout.annotations]
    assert texts and "no CUDA GPU is visible" in texts[0]
    assert panel.plot.layout.xaxis.visible is False and panel.plot.layout.yaxis.visible is False


def test_notebook_05s_stages_control_reads_most_that_fit_not_zero():
    import ipywidgets as widgets

    nb = json.loads((ROOT / "notebooks" / "05_tuning_a_real_gemm.ipynb").read_text(encoding="utf-8"))
    cell = next(
        "".join(c["source"])
        for c in nb["cells"]
        if c["cell_type"] == "code" and "run=gemm_runner(" in "".join(c["source"])
    )
    seen = {}

    class Stub:
        @staticmethod
        def explore(target, **kwargs):
            seen.update(kwargs)
            raise StopIteration  # the rest of the cell needs the real explorer

    namespace = {
        "smemviz": Stub,
        "gemm_allocator": None,
        "gemm_runner": lambda *a, **k: None,
        "GemmProblem": lambda *a, **k: None,
        "widgets": widgets,
    }
    with pytest.raises(StopIteration):
        exec(cell, namespace)
    stages = seen["stages"]
    assert isinstance(stages, widgets.SelectionSlider), stages
    assert stages.value == 0 and stages.label != "0" and "fit" in stages.label
