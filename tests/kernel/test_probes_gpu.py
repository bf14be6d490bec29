"""Launch tests: the SMEM probe, the pipeline kernel and the TMEM kernel on a real GPU.

They skip, with the reason, where no CUDA GPU (or no PyTorch for device
buffers) is present. Results of the last run on the lent H200 are in
results/gpu_results.md.
"""

from __future__ import annotations

import pytest

pytest.importorskip("cutlass")

from smemviz import SmemAllocation  # noqa: E402
from smemviz.kernel import (  # noqa: E402
    WrongGpuError,
    current_gpu,
    pipeline_layout,
    probe,
    run_pipeline,
    run_tmem,
)
from tools import kernel_layouts as examples  # noqa: E402

GPU = current_gpu()
needs_gpu = pytest.mark.skipif(GPU is None, reason="needs a CUDA GPU visible to PyTorch (none here)")
pytestmark = [pytest.mark.gpu, needs_gpu]


@pytest.mark.parametrize("name", list(examples.SMEM_LAYOUTS))
def test_probe_layout_on_gpu(name):
    allocator = examples.smem_layout(name)
    result = probe(allocator)
    assert result.passed, (
        result.summary()
        + "\n"
        + "\n".join(
            f"{c.name}: {c.bad_bytes} bad bytes, first at {c.first_bad_offset} read {c.found}" for c in result.failures
        )
    )
    assert result.kernel_smem_bytes == allocator.plan.unified_bytes
    assert len(result.checks) == len(allocator.plan.regions)
    assert len(result.snapshots) == max([1] + [len(g.phase_sizes) for g in allocator.plan.groups])


def test_probe_detects_a_wrong_plan():
    """The check must fail when the plan lies: shift one region in the plan the
    host checks against, keep the kernel's writes."""
    from dataclasses import replace

    from smemviz.kernel.probes._schedule import schedule_for
    from smemviz.kernel.probes._smem import check_snapshots

    allocator = examples.smem_layout("odd_alignments")
    result = probe(allocator)
    assert result.passed
    plan = allocator.plan
    moved = replace(plan, regions=(replace(plan.regions[0], offset=plan.regions[0].offset + 1),) + plan.regions[1:])
    checks, stray = check_snapshots(moved, schedule_for(moved), list(result.snapshots))
    assert not checks[0].ok or stray > 0


@pytest.mark.parametrize("stages,tile,n_tiles", [(2, 32, 16), (4, 256, 64), (7, 96, 50)])
def test_pipeline_through_allocator_barriers(stages, tile, n_tiles):
    allocator, resource = pipeline_layout(stages, tile, extra=(SmemAllocation("before", size_bytes=1000, alignment=8),))
    result = run_pipeline(allocator, resource, n_tiles, seed=stages)
    assert result.passed, result.summary()


def test_tmem_kernel_refuses_a_gpu_without_tmem():
    if GPU.has_tmem:
        pytest.skip("this GPU has tensor memory; the blackwell test covers it")
    with pytest.raises(WrongGpuError, match="no tensor memory"):
        run_tmem(examples.tmem_layout("acc_128"))


@pytest.mark.blackwell
@pytest.mark.skipif(GPU is None or not GPU.has_tmem, reason="needs an sm_100-class GPU (tcgen05, TMEM)")
@pytest.mark.parametrize("name", list(examples.TMEM_LAYOUTS))
def test_tmem_kernel_on_blackwell(name):
    result = run_tmem(examples.tmem_layout(name))
    assert result.passed, f"{result.wrong_cells} TMEM cells read back wrong"


def test_pipeline_traced_again_with_the_same_objects_still_runs():
    """A second trace (new tile count) with the same allocator and resource must
    re-point the barriers into the new array, as re-running a cell does."""
    allocator, resource = pipeline_layout(3, 64)
    assert run_pipeline(allocator, resource, 8).passed
    result = run_pipeline(allocator, resource, 24, seed=5)
    assert result.passed, result.summary()


def test_probe_result_renders_without_plotly():
    result = probe(examples.smem_layout("barriers_and_tmem_slot"))
    html = result._repr_html_()
    assert "PASS" in html and "tmem_ptr" in html and "load.barriers" in html
