"""What the bank model predicts for the Hopper GEMM's shared-memory traffic, per launch.

The epilogue's ``stmatrix.x4`` into C staging is the access the plan declares
(``gemm.c_staging``'s ``access``); a launch issues it for every C sub-tile of
every CTA, alternating the staging buffers. The totals are what Nsight Compute
sums over a launch (``smsp__sass_inst_executed_op_shared_stsm`` and the
``..._op_stsm`` wavefront and conflict counters), so a measurement compares
with them directly.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...analysis.banks import AccessReport, analyze_access, stmatrix_atom
from ._config import GemmConfig, GemmProblem
from ._layout import epilogue_access, gemm_layout

__all__ = ["EpiloguePrediction", "epilogue_reports", "predict_epilogue"]


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


def predict_epilogue(config: GemmConfig, problem: GemmProblem) -> EpiloguePrediction:
    """The stmatrix instructions, wavefronts and conflicts of one launch on ``problem``:
    every CTA of the grid (M rounded up to whole clusters) stores every C sub-tile,
    sub-tile ``e`` into buffer ``e % epi_stages``."""
    reports = epilogue_reports(config)
    tiles_m = -(-problem.m // config.tile_m)
    grid_m = -(-tiles_m // config.cluster_m) * config.cluster_m
    ctas = grid_m * -(-problem.n // config.tile_n) * problem.l
    per_cta = [reports[e % config.epi_stages] for e in range(config.tile_n // config.epi_tile[1])]
    return EpiloguePrediction(
        ctas=ctas,
        instructions=ctas * sum(r.instructions for r in per_cta),
        wavefronts=ctas * sum(r.wavefronts for r in per_cta),
        ideal=ctas * sum(r.ideal for r in per_cta),
        conflicts=ctas * sum(r.conflicts for r in per_cta),
    )
