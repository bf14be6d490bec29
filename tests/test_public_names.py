"""Every public name of the previous release still works from its old path."""

from __future__ import annotations

import importlib

import pytest

# the names `smemviz` and `smemviz.kernel` offered before the rooms were made
SMEMVIZ = [
    "AliasGroup",
    "BrowserNotFoundError",
    "CapacityCheck",
    "CapacityError",
    "DeclarationError",
    "DeclarationTypeError",
    "DslUnavailableError",
    "EXPORT_FORMATS",
    "Explorer",
    "ExportTimeoutError",
    "Finding",
    "Findings",
    "LayoutPair",
    "LayoutPlan",
    "LayoutStateError",
    "MaxFit",
    "Occupancy",
    "ProbeResult",
    "Region",
    "ResourceContext",
    "SmemAllocation",
    "SmemAllocator",
    "TmemAllocation",
    "TmemAllocator",
    "__version__",
    "as_layouts",
    "as_plan",
    "bank_figure",
    "compare_figure",
    "compare_layouts",
    "explore",
    "export",
    "find_browser",
    "get_arch",
    "groups_to_lifetimes",
    "hardware",
    "lifetime_figure",
    "load_layout",
    "max_fit",
    "occupancy",
    "plan_from_cutlass",
    "plan_from_struct",
    "probe",
    "read_plans",
    "smem_figure",
    "start_renderer",
    "stop_renderer",
    "tmem_figure",
]
KERNEL = [
    "CompiledKernel",
    "GemmConfig",
    "GemmLayout",
    "GemmMeasurement",
    "GemmProblem",
    "GpuInfo",
    "NoGpuError",
    "PipelineConfig",
    "PipelineResult",
    "ProbeResult",
    "RegionCheck",
    "StagedCopyResource",
    "SweepResult",
    "TmemResult",
    "WrongGpuError",
    "blackwell_gemm_allocators",
    "cache_info",
    "clear_cache",
    "compile_gemm",
    "compile_pipeline",
    "compile_probe",
    "compile_tmem",
    "current_gpu",
    "gemm",
    "gemm_allocator",
    "gemm_layout",
    "gemm_plan_facts",
    "gemm_runner",
    "max_stages",
    "measure_gemm",
    "normalise_arch",
    "pipeline_layout",
    "prepare_gemm",
    "probe",
    "run_pipeline",
    "run_tmem",
    "slot_allocator",
    "sweep",
    "tcgen05_alloc_columns_in_ptx",
]


@pytest.mark.parametrize("name", SMEMVIZ)
def test_smemviz_names(name):
    if name in (
        "smem_figure",
        "tmem_figure",
        "bank_figure",
        "lifetime_figure",
        "compare_figure",
        "explore",
        "Explorer",
    ):
        pytest.importorskip("plotly")
    if name in ("probe", "ProbeResult"):
        pytest.importorskip("cutlass")
    assert getattr(importlib.import_module("smemviz"), name) is not None


@pytest.mark.parametrize("name", KERNEL)
def test_kernel_names(name):
    pytest.importorskip("cutlass")
    assert getattr(importlib.import_module("smemviz.kernel"), name) is not None


def test_experimental_names_are_the_same_objects():
    import smemviz
    from smemviz import experimental

    for name in experimental.__all__:
        assert getattr(experimental, name) is getattr(smemviz, name)
    pytest.importorskip("plotly")
    assert experimental.lifetime_figure is smemviz.lifetime_figure
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        experimental.nothing  # noqa: B018
