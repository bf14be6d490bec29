"""Kernel bridge: trace, compile and launch CuTe DSL kernels from a layout.

* ``probe(allocator)``: the SMEM probe on this GPU, a :class:`ProbeResult`
  with per-region pass/fail, an HTML display and ``.figure()``;
* ``compile_probe`` / ``compile_pipeline`` / ``compile_tmem``: the same
  kernels compiled with no GPU, for any architecture, as a
  :class:`CompiledKernel` (PTX, cubin, requested dynamic SMEM);
* ``run_pipeline`` / ``run_tmem``: launch and check the pipeline and TMEM kernels;
* a Hopper GEMM on the allocator: ``GemmConfig`` / ``gemm_layout`` (pure Python),
  ``compile_gemm``, ``gemm``, ``measure_gemm``, ``sweep`` and ``gemm_runner`` (the
  explorer's run action); the same for Blackwell with ``GemmConfig(arch="sm_100a")``
  (accumulators in TMEM), ``blackwell_gemm_allocators`` and ``gemm_plan_facts``
  (its PTX read against both plans).

The CuTe DSL (``nvidia-cutlass-dsl``) is imported when a kernel is built,
not when this package is imported.
"""

from __future__ import annotations

from typing import Any

from ._compile import CompiledKernel, cache_info, clear_cache
from ._device import GpuInfo, NoGpuError, WrongGpuError, current_gpu
from ._ptx import gemm_plan_facts
from .gemm import (
    GemmConfig,
    GemmLayout,
    GemmProblem,
    blackwell_gemm_allocators,
    gemm_allocator,
    gemm_layout,
    max_stages,
)
from .gemm._host import compile_gemm, gemm, prepare_gemm
from .gemm._measure import GemmMeasurement, gemm_runner, measure_gemm
from .gemm._sweep import SweepResult, sweep
from .probes._pipeline import (
    PipelineConfig,
    PipelineResult,
    StagedCopyResource,
    compile_pipeline,
    pipeline_layout,
    run_pipeline,
)
from .probes._smem import ProbeResult, RegionCheck, compile_probe, probe
from .probes._tmem import TmemResult, compile_tmem, run_tmem, slot_allocator, tcgen05_alloc_columns_in_ptx

__all__ = [
    "GemmConfig",
    "GemmProblem",
    "GemmLayout",
    "gemm_layout",
    "gemm_allocator",
    "blackwell_gemm_allocators",
    "gemm_plan_facts",
    "max_stages",
    "compile_gemm",
    "prepare_gemm",
    "gemm",
    "measure_gemm",
    "GemmMeasurement",
    "gemm_runner",
    "sweep",
    "SweepResult",
    "probe",
    "ProbeResult",
    "RegionCheck",
    "compile_probe",
    "CompiledKernel",
    "compile_pipeline",
    "run_pipeline",
    "pipeline_layout",
    "PipelineConfig",
    "PipelineResult",
    "StagedCopyResource",
    "compile_tmem",
    "run_tmem",
    "TmemResult",
    "slot_allocator",
    "tcgen05_alloc_columns_in_ptx",
    "current_gpu",
    "GpuInfo",
    "NoGpuError",
    "WrongGpuError",
    "cache_info",
    "clear_cache",
]


def __getattr__(name: str) -> Any:
    if name == "normalise_arch":  # deprecated: warns when called
        from ._compile import normalise_arch

        return normalise_arch
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
