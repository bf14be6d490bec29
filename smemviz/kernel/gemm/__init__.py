"""smemviz's GEMM on the allocator: one config, one layout, a kernel per GPU generation.

``_config`` (what a kernel author tunes) -> ``_layout`` (its SMEM/TMEM plans, pure
Python) -> ``_base`` (what both kernels share) -> ``_sm90`` (Hopper, WGMMA) /
``_sm100`` (Blackwell, tcgen05 into TMEM) -> ``_host`` (compile and run),
``_measure`` and ``_sweep`` (timing against references).
"""

from ._banks import EpiloguePrediction, MainloopPrediction, epilogue_reports, predict_epilogue, predict_mainloop
from ._config import (
    GEMM_CLUSTERS,
    GEMM_DTYPES,
    GEMM_OUT_DTYPES,
    GEMM_SWIZZLES,
    GEMM_TILES,
    SWIZZLE_128B_ALIGNMENT,
    GemmConfig,
    GemmProblem,
    config_from_controls,
    supported_configs,
)
from ._layout import GemmLayout, blackwell_gemm_allocators, gemm_allocator, gemm_layout, max_stages, resolved_config

__all__ = [
    "GEMM_CLUSTERS",
    "GEMM_DTYPES",
    "GEMM_SWIZZLES",
    "GEMM_OUT_DTYPES",
    "GEMM_TILES",
    "SWIZZLE_128B_ALIGNMENT",
    "GemmConfig",
    "GemmProblem",
    "GemmLayout",
    "EpiloguePrediction",
    "epilogue_reports",
    "predict_epilogue",
    "MainloopPrediction",
    "predict_mainloop",
    "blackwell_gemm_allocators",
    "config_from_controls",
    "gemm_allocator",
    "gemm_layout",
    "max_stages",
    "resolved_config",
    "supported_configs",
]
