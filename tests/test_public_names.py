"""The stable face of the package, and every public name of the previous release: still
on the face, or moved and warning for one release with the same object at its new home."""

from __future__ import annotations

import importlib
import warnings

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


# the stable face of this release: a name added or dropped shows here
STABLE = {
    "SmemAllocation", "SmemAccess", "TmemAllocation", "ResourceContext", "SmemAllocator", "TmemAllocator",
    "LayoutPlan", "Region", "AliasGroup", "CapacityCheck",
    "CapacityError", "LayoutStateError", "DslUnavailableError", "DeclarationError", "DeclarationTypeError",
    "plan_from_cutlass", "plan_from_struct", "read_minimalloc", "capture", "as_plan", "as_layouts", "load_layout",
    "analyse", "lint", "occupancy", "Occupancy", "Finding", "Findings",
    "bank_conflicts", "analyze_access", "advise", "check_tma_descriptor", "read_ncu", "get_arch",
    "smem_figure", "tmem_figure", "bank_conflict_figure", "explore", "Explorer",
    "export", "EXPORT_FORMATS", "read_plans", "BrowserNotFoundError", "ExportTimeoutError",
    "find_browser", "start_renderer", "stop_renderer",
    "probe", "ProbeResult",
    "hardware", "device", "layout", "sources", "analysis", "experimental", "__version__",
}  # fmt: skip

# names of the previous face that moved: name -> the module that offers it now
MOVED = {
    "groups_to_lifetimes": "smemviz.experimental",
    "compare_layouts": "smemviz.experimental",
    "max_fit": "smemviz.experimental",
    "MaxFit": "smemviz.experimental",
    "lifetime_figure": "smemviz.experimental",
    "compare_figure": "smemviz.experimental",
    "Capture": "smemviz.sources",
    "CaptureError": "smemviz.sources",
    "LayoutPair": "smemviz.sources",
    "MiniMallocFormatError": "smemviz.sources",
    "BankConflicts": "smemviz.analysis.banks",
    "AccessReport": "smemviz.analysis.banks",
    "Advice": "smemviz.analysis.banks",
    "conflict_strip_figure": "smemviz.figures",
    "step_figure": "smemviz.figures",
}
# smemviz.figures: every figure's public name (the root offers the three maps of the stable face)
FIGURES = {
    "smem_figure", "tmem_figure", "bank_conflict_figure", "access_bank_figure", "plan_bank_figure",
    "bank_conflict_spec", "conflict_strip_figure", "layout_figure", "lifetime_figure", "lifetime_spec",
    "step_figure", "step_map_spec", "totals_figure", "compare_figure", "ordering_figure", "smem_spec", "tmem_spec",
    "FigureSpec", "TRACE_NAMES", "color_for",
}  # fmt: skip
PLOTLY = {"smem_figure", "tmem_figure", "bank_conflict_figure", "bank_figure", "lifetime_figure", "compare_figure"}
PLOTLY |= {"conflict_strip_figure", "step_figure", "explore", "Explorer"}


def test_the_stable_face():
    import smemviz

    face = set(smemviz.__all__) | set(smemviz._LAZY)
    assert face == STABLE
    assert len(face - {"hardware", "device", "layout", "sources", "analysis", "experimental", "__version__"}) <= 49
    assert not face & set(MOVED) and not face & set(smemviz._DEPRECATED)
    assert set(dir(smemviz)) >= face and not set(dir(smemviz)) & set(smemviz._DEPRECATED)


@pytest.mark.parametrize("name", sorted(STABLE))
def test_a_stable_name_imports_without_a_warning(name):
    if name in PLOTLY:
        pytest.importorskip("plotly")
    if name in ("probe", "ProbeResult"):
        pytest.importorskip("cutlass")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        assert getattr(importlib.import_module("smemviz"), name) is not None


@pytest.mark.parametrize("name", sorted(MOVED))
def test_a_moved_name_warns_and_is_its_new_home(name):
    if name in PLOTLY:
        pytest.importorskip("plotly")
    import smemviz

    home = importlib.import_module(MOVED[name])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        new = getattr(home, name)
    with pytest.warns(DeprecationWarning, match=rf"smemviz\.{name} is deprecated.*import it from {MOVED[name]}"):
        old = getattr(smemviz, name)
    assert old is new


def test_the_figures_face():
    pytest.importorskip("plotly")
    from smemviz import figures

    assert set(figures.__all__) == FIGURES
    assert all(callable(getattr(figures, name)) or name == "TRACE_NAMES" for name in FIGURES)


def test_a_replaced_figure_warns():
    pytest.importorskip("plotly")
    import smemviz
    from smemviz import figures

    with pytest.warns(DeprecationWarning, match="bank_conflict_figure"):
        assert callable(smemviz.bank_figure)
    with pytest.warns(DeprecationWarning, match="totals_figure"):
        assert figures.comparison_figure is figures.totals_figure


@pytest.mark.parametrize("name", SMEMVIZ)
def test_every_name_of_the_previous_release_still_works(name):
    """Stable, or moved and warning: nothing of the previous release is gone."""
    if name in PLOTLY:
        pytest.importorskip("plotly")
    if name in ("probe", "ProbeResult"):
        pytest.importorskip("cutlass")
    import smemviz

    assert name in STABLE or name in smemviz._DEPRECATED
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert getattr(smemviz, name) is not None


@pytest.mark.parametrize("name", KERNEL)
def test_kernel_names(name):
    pytest.importorskip("cutlass")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert getattr(importlib.import_module("smemviz.kernel"), name) is not None


def test_normalise_arch_warns_and_agrees():
    pytest.importorskip("cutlass")
    from smemviz import hardware, kernel

    with pytest.warns(DeprecationWarning, match="compile_target"):
        assert kernel.normalise_arch("sm90") == hardware.compile_target("sm90") == "sm_90a"
    assert "normalise_arch" not in kernel.__all__


def test_access_spec_warns_and_is_the_model_record():
    import smemviz
    from smemviz.analysis import banks

    with pytest.warns(DeprecationWarning, match="SmemAccess"):
        assert banks.AccessSpec is smemviz.SmemAccess
    assert "AccessSpec" not in banks.__all__


def test_experimental_names_live_there_only():
    import smemviz
    from smemviz import experimental

    for name in experimental.__all__:
        if name in STABLE:  # capture graduated to the stable face and stays importable here
            assert getattr(experimental, name) is getattr(smemviz, name)
        else:
            assert name in smemviz._DEPRECATED and name not in dir(smemviz)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        experimental.nothing  # noqa: B018


@pytest.mark.parametrize(
    ("module", "old", "new"),
    [
        ("smemviz.analysis.banks", "parse_layout", "parse_cute_layout"),
        ("smemviz.analysis.banks", "Layout", "CuteLayout"),
        ("smemviz.sources.layout_file", "parse_layout", "parse_layout_text"),
        ("smemviz.analysis.banks", "analyze_declared", "analyse_declared"),
    ],
)
def test_names_that_meant_two_things_are_renamed_and_warn(module, old, new):
    """ "layout" alone names a memory layout; a CuTe layout and a layout file's text say so."""
    home = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=new):
        assert getattr(home, old) is getattr(home, new)
    assert old not in home.__all__ and new in home.__all__
