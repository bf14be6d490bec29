"""What the bank model predicts for the Hopper GEMM's shared-memory traffic, per launch:
the epilogue's stmatrix into C staging and the mainloop's WGMMA operand reads.

The epilogue's ``stmatrix.x4`` into C staging is the access the plan declares
(``gemm.c_staging``'s ``access``); a launch issues it for every C sub-tile of
every CTA, alternating the staging buffers. The totals are what Nsight Compute
sums over a launch (``smsp__sass_inst_executed_op_shared_stsm`` and the
``..._op_stsm`` wavefront and conflict counters), so a measurement compares
with them directly.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...analysis.banks import AccessReport, analyze_access, stmatrix_atom, wgmma_reads
from ...analysis.banks._wgmma import WARPS_PER_WARPGROUP, WGMMA_K_BYTES
from ._config import GemmConfig, GemmProblem
from ._layout import CONSUMER_WARPGROUPS, epilogue_access, gemm_layout

__all__ = ["EpiloguePrediction", "MainloopPrediction", "epilogue_reports", "predict_epilogue", "predict_mainloop"]


def epilogue_reports(config: GemmConfig) -> tuple[AccessReport, ...]:
    """One report per C staging buffer: the eight consumer warps' stores of one sub-tile,
    at the buffer's real offset in the plan and in the config's swizzle."""
    if config.uses_tmem:
        raise ValueError(f"GEMM {config.label()}: the epilogue prediction is for the Hopper kernel (sm_90a)")
    plan = gemm_layout(config).plan
    access = epilogue_access(config)
    return tuple(
        analyze_access(
            plan,
            "gemm.c_staging",
            stmatrix_atom(4),
            layout=access["layout"],
            dtype=config.out_dtype,
            warps=access["warps"],
            stage=stage,
        )
        for stage in range(config.epi_stages)
    )


@dataclass(frozen=True)
class EpiloguePrediction:
    """A launch's predicted stmatrix totals (what ncu sums over the launch)."""

    ctas: int
    instructions: int
    wavefronts: int
    ideal: int
    conflicts: int

    @property
    def wavefronts_per_instruction(self) -> float:
        return self.wavefronts / self.instructions


def _ctas(config: GemmConfig, problem: GemmProblem) -> int:
    """CTAs in the grid: M rounded up to whole clusters, times N tiles, times the batch."""
    tiles_m = -(-problem.m // config.tile_m)
    grid_m = -(-tiles_m // config.cluster_m) * config.cluster_m
    return grid_m * -(-problem.n // config.tile_n) * problem.l


@dataclass(frozen=True)
class MainloopPrediction:
    """A launch's WGMMA operand reads, in ncu's units (instructions counted per warp)."""

    ctas: int
    instructions: int  # warp-level, as smsp__sass_inst_executed_op_shared_gmma counts them
    wavefronts: int
    bytes: int
    conflicts: int


def predict_mainloop(config: GemmConfig, problem: GemmProblem) -> MainloopPrediction:
    """The WGMMA reads of one launch: every k-tile, each consumer warpgroup issues one
    ``m64n{tile_n}`` instruction per 32-byte K step, reading its A rows and all of B."""
    if config.uses_tmem:
        raise ValueError(f"GEMM {config.label()}: the WGMMA prediction is for the Hopper kernel (sm_90a)")
    reads = wgmma_reads(config.tile_n, config.dtype, layout=config.ab_atom)
    ctas = _ctas(config, problem)
    k_tiles = -(-problem.k // config.tile_k)
    per_tile = config.tile_k * config.elem_bytes // WGMMA_K_BYTES  # K steps per k-tile
    warpgroup_instructions = ctas * k_tiles * per_tile * CONSUMER_WARPGROUPS
    return MainloopPrediction(
        ctas=ctas,
        instructions=warpgroup_instructions * WARPS_PER_WARPGROUP,
        wavefronts=warpgroup_instructions * reads.wavefronts,
        bytes=warpgroup_instructions * (reads.a_bytes + reads.b_bytes),
        conflicts=warpgroup_instructions * reads.conflicts,
    )


def predict_epilogue(config: GemmConfig, problem: GemmProblem) -> EpiloguePrediction:
    """The stmatrix instructions, wavefronts and conflicts of one launch on ``problem``:
    every CTA of the grid (M rounded up to whole clusters) stores every C sub-tile,
    sub-tile ``e`` into buffer ``e % epi_stages``."""
    reports = epilogue_reports(config)
    ctas = _ctas(config, problem)
    per_cta = [reports[e % config.epi_stages] for e in range(config.tile_n // config.epi_tile[1])]
    return EpiloguePrediction(
        ctas=ctas,
        instructions=ctas * sum(r.instructions for r in per_cta),
        wavefronts=ctas * sum(r.wavefronts for r in per_cta),
        ideal=ctas * sum(r.ideal for r in per_cta),
        conflicts=ctas * sum(r.conflicts for r in per_cta),
    )
