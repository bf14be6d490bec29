"""Probe kernels that check a layout on the hardware: every SMEM byte where the
plan says (``_smem``), a pipeline whose mbarriers sit in the plan's barrier
region (``_pipeline``), and tcgen05's TMEM allocation into the plan's slot (``_tmem``)."""

from ._pipeline import PipelineResult, StagedCopyResource, compile_pipeline, pipeline_layout, run_pipeline
from ._smem import ProbeResult, RegionCheck, compile_probe, probe
from ._tmem import TmemResult, compile_tmem, run_tmem, slot_allocator, tcgen05_alloc_columns_in_ptx

__all__ = [
    "PipelineResult",
    "StagedCopyResource",
    "compile_pipeline",
    "pipeline_layout",
    "run_pipeline",
    "ProbeResult",
    "RegionCheck",
    "compile_probe",
    "probe",
    "TmemResult",
    "compile_tmem",
    "run_tmem",
    "slot_allocator",
    "tcgen05_alloc_columns_in_ptx",
]
