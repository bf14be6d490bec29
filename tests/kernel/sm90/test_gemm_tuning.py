"""Tuning without a GPU: measurements that compile and say why they did not run,
sweeps with a compile cache, and the explorer's run action (fake and real runner)."""

from __future__ import annotations

import pytest

from smemviz.kernel.gemm import GemmConfig, GemmProblem, config_from_controls, gemm_allocator, gemm_layout
from smemviz.kernel.gemm._measure import GemmMeasurement


def test_controls_map_to_configs_and_unknown_ones_are_named():
    assert config_from_controls(stages=0, tile_n=128).stages is None
    assert config_from_controls(stages=3).stages == 3
    with pytest.raises(TypeError, match="'tile_k'"):
        config_from_controls(tile_k=32)
    alloc = gemm_allocator(tile_n=128, stages=0, alias_epilogue=False)
    assert alloc.plan.unified_bytes == gemm_layout(GemmConfig(tile_n=128, alias_epilogue=False)).unified_bytes


def _fake(stages, tflops, alias=True, ran=True):
    cfg = GemmConfig(tile_n=128, stages=stages, alias_epilogue=alias)
    return GemmMeasurement(
        cfg,
        GemmProblem(4096, 4096, 4096),
        stages=stages,
        smem_planned=gemm_layout(cfg).unified_bytes,
        smem_requested=gemm_layout(cfg).unified_bytes,
        registers=168,
        ran=ran,
        median_ms=0.2 if ran else None,
        tflops=tflops,
        rel_err=2e-4 if ran else None,
        reason="" if ran else "no CUDA GPU is visible",
    )


def test_measurement_rows_and_summaries():
    good = _fake(7, 640.0)
    assert good.passed is True and good.fits
    assert "640 TFLOP/s" in good.summary() and "PASS" in good.summary()
    row = good.row()
    assert row["label"] == "f16 128x128 cl1x1 s7 alias" and row["tflops"] == 640.0
    off = _fake(3, None, ran=False)
    assert off.passed is None and "not run: no CUDA GPU" in off.summary()


# -- with the CuTe DSL (compile only) ------------------------------------------------------


@pytest.mark.cutlass
def test_measure_without_a_gpu_compiles_and_says_why():
    pytest.importorskip("cutlass")
    from smemviz.kernel import measure_gemm

    m = measure_gemm(GemmConfig(tile_n=128, stages=4))
    assert not m.ran and m.tflops is None and m.reason
    assert m.smem_requested == m.smem_planned == gemm_layout(GemmConfig(tile_n=128, stages=4)).unified_bytes
    assert m.registers is not None and 0 < m.registers <= 255


@pytest.mark.cutlass
def test_sweep_compiles_each_config_once_and_keeps_rows_that_do_not_fit():
    pytest.importorskip("cutlass")
    from smemviz.kernel import cache_info, sweep

    seen = []
    result = sweep(tile_n=[256], stages=[3, 4, 5], alias_epilogue=[True], progress=lambda i, n, s: seen.append((i, n)))
    assert seen[0] == (0, 3) and seen[-1] == (3, 3)
    assert [r["stages"] for r in result.rows] == [3, 4, None]
    assert "does not fit" in result.rows[2]["reason"] and "232,448" in result.rows[2]["reason"]
    assert all(r["smem_requested"] == r["smem_planned"] for r in result.rows[:2])
    hits = cache_info()["hits"]
    again = sweep(tile_n=[256], stages=[3, 4], alias_epilogue=[True], progress=False)
    assert cache_info()["hits"] == hits + 2  # compiled once per config
    assert [r["smem_requested"] for r in again.rows] == [r["smem_requested"] for r in result.rows[:2]]
    fig = result.figure("stages")
    assert not result.ran and "requested dynamic SMEM" in fig.layout.yaxis.title.text
    assert list(fig.data[0].x) == [3, 4] and list(fig.data[0].y) == [r["smem_requested"] for r in result.rows[:2]]
    md = result.table()
    assert md.count("\n") == 4 and "does not fit" in md


def test_sweep_figure_plots_tflops_from_recorded_rows():
    pytest.importorskip("plotly")
    from smemviz.kernel import SweepResult

    rows = tuple(_fake(s, t, alias).row() for s, t, alias in [(6, 600.0, False), (5, 590.0, False), (7, 610.0, True)])
    result = SweepResult.from_json(SweepResult(rows=rows, problem=GemmProblem(4096, 4096, 4096), gpu="H200").to_json())
    assert result.ran and result.best()["stages"] == 7
    fig = result.figure("smem")
    by_name = {t.name: t for t in fig.data}
    separate = next(t for n, t in by_name.items() if "separate" in n)
    assert list(separate.y) == [590.0, 600.0]  # sorted by stages
    assert "TFLOP/s" in fig.layout.yaxis.title.text
    with pytest.raises(ValueError, match="'stages', 'smem' or 'tile'"):
        result.figure("colour")


# -- the explorer's run action ---------------------------------------------------------------


def test_run_panel_keeps_a_history_from_a_fake_runner():
    pytest.importorskip("ipywidgets")
    pytest.importorskip("plotly")
    from smemviz.explorer import explore

    calls = []

    def runner(**controls):
        calls.append(controls)
        if controls["stages"] == 2:
            raise RuntimeError("launch failed")
        return _fake(controls["stages"] or 7, 500.0 + 10 * (controls["stages"] or 7))

    ex = explore(gemm_allocator, run=runner, tile_n=[128, 256], stages=(0, 7), alias_epilogue=True)
    panel = ex.run_panel
    assert panel is not None and panel in ex.children
    ex.controls["tile_n"].value = 128
    panel.button.click()
    assert calls[-1]["tile_n"] == 128 and calls[-1]["stages"] == 0
    ex.controls["stages"].value = 5
    panel.button.click()
    assert [r["run"] for r in panel.history] == [1, 2]
    assert list(panel.plot.data[0].y) == [570.0, 550.0]
    assert list(panel.plot.data[0].x) == [r["smem_requested"] for r in panel.history]
    panel.x_axis.value = "stages"
    assert list(panel.plot.data[0].x) == [7, 5] and "stages" in panel.plot.layout.title.text
    panel.x_axis.value = "tile"
    assert list(panel.plot.data[0].x) == ["128x128", "128x128"]
    assert "s5" in panel.table.value and "PASS" in panel.status.value
    ex.controls["stages"].value = 2
    panel.button.click()  # the runner's error is shown, the history kept
    assert "launch failed" in panel.status.value and len(panel.history) == 2
    assert not panel.button.disabled


@pytest.mark.cutlass
def test_run_panel_with_the_real_runner_compiles_and_says_why_not_run():
    pytest.importorskip("cutlass")
    pytest.importorskip("ipywidgets")
    from smemviz.explorer import explore
    from smemviz.kernel import gemm_runner

    ex = explore(gemm_allocator, run=gemm_runner(), tile_n=[128, 256], stages=(0, 7))
    row = ex.run_panel.run()
    assert row is not None and row["ran"] is False
    assert row["smem_requested"] == ex.smem_plan.unified_bytes
    assert "not run" in ex.run_panel.status.value
    assert list(ex.run_panel.plot.data[0].y) == []  # nothing timed, nothing plotted


def test_register_reader_refuses_what_is_not_a_cubin():
    from smemviz.kernel._cubin import register_counts

    with pytest.raises(ValueError, match="not a 64-bit ELF"):
        register_counts(b"PK\x03\x04 not an ELF file")


@pytest.mark.cutlass
def test_register_reader_agrees_between_configs_of_one_kernel_shape():
    pytest.importorskip("cutlass")
    from smemviz import hardware
    from smemviz.kernel import compile_gemm
    from smemviz.kernel._cubin import register_counts
    from smemviz.kernel.gemm._sm90 import THREADS

    counts = register_counts(compile_gemm(GemmConfig(tile_n=128)).cubin)
    assert len(counts) == 1  # one kernel in the cubin
    # all threads at launch must fit the register file before setmaxnreg moves registers
    assert counts[0] * THREADS <= hardware.REGISTERS_PER_SM
