"""A GEMM config's shared and tensor memory as smemviz layouts.

:func:`gemm_layout` turns a :class:`GemmConfig` into an
:class:`~smemviz.SmemAllocator` whose plan *is* the kernel's shared memory
(operand stages, the C staging buffer, the pipelines' mbarriers, on Blackwell
the TMEM-pointer slot) and, on Blackwell, a :class:`~smemviz.TmemAllocator` for
the accumulators. Pure Python.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ... import hardware
from ..._errors import CapacityError
from ...layout._allocation import SmemAllocation, TmemAllocation
from ...layout._allocator import SmemAllocator, TmemAllocator
from ...layout._pipelines import Pipeline, PipelineConfig
from ._config import SWIZZLE_128B_ALIGNMENT, GemmConfig, config_from_controls

# the Hopper kernel's consumers: two warpgroups, each 64 rows of the 128-row tile
CONSUMER_WARPGROUPS = 2
# the Hopper epilogue's stmatrix.x4: a warp's four 8x8 matrices cover 16 rows x 16 columns
EPILOGUE_ROWS_PER_WARP = 16

__all__ = ["GemmLayout", "gemm_layout", "max_stages", "gemm_allocator", "blackwell_gemm_allocators"]


@dataclass(frozen=True)
class GemmLayout:
    """A config's computed layout: the allocator (for trace-time ``allocate()``), its
    allocations and the pipeline resource whose barriers it placed."""

    config: GemmConfig
    allocator: SmemAllocator = field(repr=False, compare=False)
    a: SmemAllocation = field(repr=False)
    b: SmemAllocation = field(repr=False)
    c: SmemAllocation = field(repr=False)
    mainloop: Pipeline = field(repr=False, compare=False)
    # Blackwell only: the TMEM-pointer slot, the accumulator pipeline and the accumulators' TMEM layout
    tmem_ptr: SmemAllocation | None = field(repr=False, default=None)
    acc_pipeline: Pipeline | None = field(repr=False, compare=False, default=None)
    tmem: TmemAllocator | None = field(repr=False, compare=False, default=None)
    accumulators: tuple[TmemAllocation, ...] = field(repr=False, default=())

    @property
    def plan(self):
        return self.allocator.plan

    @property
    def stages(self) -> int:
        assert self.config.stages is not None
        return self.config.stages

    @property
    def unified_bytes(self) -> int:
        return self.plan.unified_bytes

    def offsets(self) -> dict[str, int]:
        """Byte offsets of the operand stages, the C staging buffer and the barriers."""
        offsets = {
            "a": self.a.offset,
            "b": self.b.offset,
            "c": self.c.offset,
            "barriers": self.plan.barrier_regions[0].offset,
        }
        if self.tmem_ptr is not None:
            offsets["tmem_ptr"] = self.tmem_ptr.offset
            offsets["acc_barriers"] = self.plan.barrier_regions[1].offset
        return offsets

    @property
    def tmem_plan(self):
        """The accumulators' TMEM layout (Blackwell), else ``None``."""
        return None if self.tmem is None else self.tmem.plan

    def acc_columns(self) -> tuple[int, ...]:
        """First TMEM column of each accumulator buffer (empty without TMEM)."""
        return tuple(acc.offset for acc in self.accumulators)


def epilogue_access(config: GemmConfig) -> dict:
    """How the Hopper epilogue writes one C staging stage: ``stmatrix.x4`` from each of the
    eight consumer warps, warp ``w`` taking rows ``16w..16w+15`` of the tile (the warp tiling
    of the kernel's register-to-SMEM TiledCopy, traced on the CPU by a test), in the staged
    layout the kernel builds."""
    rows, _ = config.epi_tile
    return {
        "instruction": "stmatrix.x4",
        "layout": config.c_staging_layout,
        "warps": (rows // EPILOGUE_ROWS_PER_WARP, 1),
    }


def _build(config: GemmConfig, stages: int, check_arch: bool) -> GemmLayout:
    dtype = config.dtype
    per_a = config.tile_m * config.tile_k
    per_b = config.tile_n * config.tile_k
    epi = config.epi_tile[0] * config.epi_tile[1] * config.epi_stages
    # the modes the Hopper kernel builds are known here (a CPU test traces them); the
    # Blackwell kernel's come from the DSL's sm100 helpers and are not stated
    hopper = not config.uses_tmem
    ab_swizzle = config.ab_swizzle_mode if hopper else None
    a, b = (
        SmemAllocation(
            name, dtype=dtype, count=per * stages, stages=stages, alignment=SWIZZLE_128B_ALIGNMENT, swizzle=ab_swizzle
        )
        for name, per in (("gemm.a_stages", per_a), ("gemm.b_stages", per_b))
    )
    c = SmemAllocation(
        "gemm.c_staging",
        dtype=config.out_dtype,
        count=epi,
        alignment=SWIZZLE_128B_ALIGNMENT,
        stages=config.epi_stages,
        swizzle=config.c_swizzle_mode if hopper else None,
        access=epilogue_access(config) if hopper else None,
    )
    allocator = SmemAllocator(config.arch if check_arch else None)
    mainloop = Pipeline("gemm.mainloop", PipelineConfig(stages))
    if config.alias_epilogue:
        # the C staging buffer is written only after the last operand stage is consumed
        allocator.add_alias_group([[a, b], [c]])
    else:
        allocator.add(a)
        allocator.add(b)
        allocator.add(c)
    allocator.add_resource(mainloop)
    if not config.uses_tmem:
        allocator.compute_layout()
        return GemmLayout(replace(config, stages=stages), allocator, a, b, c, mainloop)
    # Blackwell: tcgen05.alloc writes the TMEM base into a 4-byte slot; the MMA hands each
    # finished accumulator to the epilogue through a second pipeline's mbarriers
    slot = allocator.add_tmem_ptr(SmemAllocation("gemm.tmem_ptr", size_bytes=4, alignment=4))
    acc_pipeline = Pipeline("gemm.accumulator", PipelineConfig(config.acc_stages))
    allocator.add_resource(acc_pipeline)
    allocator.compute_layout()
    tmem = TmemAllocator(config.arch if check_arch else None)
    # fp32 accumulators: one 32-bit column per output column, all 128 lanes (tile_m = 128)
    accumulators = tuple(TmemAllocation(f"gemm.acc{s}", config.tile_n) for s in range(config.acc_stages))
    for acc in accumulators:
        tmem.add(acc)
    tmem.compute_layout()
    return GemmLayout(
        replace(config, stages=stages),
        allocator,
        a,
        b,
        c,
        mainloop,
        tmem_ptr=slot,
        acc_pipeline=acc_pipeline,
        tmem=tmem,
        accumulators=accumulators,
    )


def _unified_bytes(config: GemmConfig, stages: int) -> int:
    return _build(config, stages, check_arch=False).unified_bytes


def max_stages(config: GemmConfig) -> int:
    """The most operand stages whose layout fits the architecture's per-block SMEM."""
    limit = hardware.get_arch(config.arch).smem_per_block
    per_stage = config.a_stage_bytes + config.b_stage_bytes
    stages = limit // per_stage + 1
    while stages >= 2 and _unified_bytes(config, stages) > limit:
        stages -= 1
    if stages < 2:
        need = _unified_bytes(config, 2)
        raise CapacityError(
            f"GEMM {config.label()}: even 2 stages need {need:,} B of SMEM, over the "
            f"{hardware.get_arch(config.arch).name} per-block limit of {limit:,} B by {need - limit:,} B"
        )
    return stages


def resolved_config(config: GemmConfig) -> GemmConfig:
    """``config`` with ``stages`` filled in (the most that fit when ``None``)."""
    return config if config.stages is not None else replace(config, stages=max_stages(config))


def gemm_layout(config: GemmConfig | None = None, **overrides) -> GemmLayout:
    """The SMEM layout of a GEMM config (keyword overrides replace config fields).

    Raises :class:`~smemviz.CapacityError` naming the largest regions when an
    explicit ``stages`` does not fit the architecture.
    """
    config = replace(config or GemmConfig(), **overrides) if overrides else (config or GemmConfig())
    config = resolved_config(config)
    assert config.stages is not None
    return _build(config, config.stages, check_arch=True)


def gemm_allocator(
    dtype: str = "f16",
    tile_n: int = 256,
    cluster_m: int = 1,
    stages: int = 0,
    alias_epilogue: bool = True,
    epi_stages: int = 2,
    c_swizzle: str = "auto",
    ab_swizzle: str = "auto",
) -> SmemAllocator:
    """The GEMM's computed allocator, as an explorer builder (``stages=0``: the most that fit;
    the swizzle controls lay the buffers out in another mode, which the Banks tab follows)."""
    config = config_from_controls(
        dtype=dtype,
        tile_n=tile_n,
        cluster_m=cluster_m,
        stages=stages,
        alias_epilogue=alias_epilogue,
        epi_stages=epi_stages,
        c_swizzle=c_swizzle,
        ab_swizzle=ab_swizzle,
    )
    return gemm_layout(config).allocator


def blackwell_gemm_allocators(
    dtype: str = "f16",
    tile_n: int = 256,
    stages: int = 0,
    alias_epilogue: bool = False,
    acc_stages: int = 2,
    epi_stages: int = 2,
) -> tuple[SmemAllocator, TmemAllocator]:
    """The sm_100a GEMM's computed SMEM and TMEM allocators, as an explorer builder
    (``stages=0``: the most that fit). Run it with ``gemm_runner(arch="sm_100a")``."""
    config = config_from_controls(
        dtype=dtype,
        tile_n=tile_n,
        stages=stages,
        alias_epilogue=alias_epilogue,
        acc_stages=acc_stages,
        epi_stages=epi_stages,
        arch="sm_100a",
    )
    layout = gemm_layout(config)
    assert layout.tmem is not None
    return layout.allocator, layout.tmem
