"""A GEMM's shared-memory layout, independent of the GPU generation.

``C[m, n, l] = sum_k A[m, k, l] * B[n, k, l]`` with A and B K-major, C N-major,
fp32 accumulation. :class:`GemmConfig` holds the choices a kernel author tunes
(dtype, CTA tile, cluster, operand stages, whether the epilogue's C staging
buffer shares bytes with the operand stages); :func:`gemm_layout` turns one
into an :class:`~smemviz.SmemAllocator` whose plan *is* the kernel's shared
memory: operand stages, the C staging buffer and the mainloop mbarriers.

Pure Python: nothing here imports the CuTe DSL, so the explorer and the CPU
tests can size a layout without it. The per-generation kernels
(``_gemm_sm90.py``) read every byte they use from this plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from .. import hardware
from .._allocation import SmemAllocation
from .._allocator import SmemAllocator
from .._dtypes import dtype_name, dtype_width
from .._errors import CapacityError
from ._pipeline import PipelineConfig

__all__ = [
    "GEMM_DTYPES",
    "GEMM_TILES",
    "GEMM_CLUSTERS",
    "SWIZZLE_128B_ALIGNMENT",
    "GemmProblem",
    "GemmConfig",
    "GemmLayout",
    "MainloopPipeline",
    "gemm_layout",
    "max_stages",
    "supported_configs",
    "config_from_controls",
    "gemm_allocator",
]

GEMM_DTYPES = ("f16", "bf16")
GEMM_TILES = ((128, 128), (128, 256))
GEMM_CLUSTERS = ((1, 1), (2, 1))
# a 128B-swizzled TMA/MMA buffer repeats every 8 rows x 128 B, so each stage starts on 1 KiB
SWIZZLE_128B_ALIGNMENT = 1024
# contiguous rows of a TMA tensor must be a multiple of 16 B
TMA_ROW_BYTES = 16


@dataclass(frozen=True)
class GemmProblem:
    """Problem size: ``C (m x n) = A (m x k) @ B (n x k)^T``, batched ``l`` times."""

    m: int
    n: int
    k: int
    l: int = 1  # noqa: E741 - the batch mode's conventional name

    def __post_init__(self) -> None:
        for name in ("m", "n", "k", "l"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"GemmProblem.{name} must be a positive int, got {value!r}")

    @property
    def flops(self) -> int:
        return 2 * self.m * self.n * self.k * self.l

    def tflops(self, seconds: float) -> float:
        """TFLOP/s for one run of this problem taking ``seconds``."""
        return self.flops / seconds / 1e12

    def padded(self, dtype: str) -> GemmProblem:
        """The problem with N and K rounded up so every TMA row is a multiple of 16 B
        (the host pads with zeros and slices the result)."""
        per_row = TMA_ROW_BYTES * 8 // dtype_width(dtype)
        return replace(self, n=-(-self.n // per_row) * per_row, k=-(-self.k // per_row) * per_row)


@dataclass(frozen=True)
class GemmConfig:
    """What a kernel author tunes. ``stages=None`` means the most that fit."""

    dtype: str = "f16"
    tile_m: int = 128
    tile_n: int = 256
    cluster_m: int = 1
    cluster_n: int = 1
    stages: int | None = None
    alias_epilogue: bool = True
    epi_stages: int = 2
    arch: str = "sm_90a"

    def __post_init__(self) -> None:
        name = dtype_name(self.dtype)
        if name not in GEMM_DTYPES:
            raise ValueError(f"GEMM dtype {self.dtype!r} is not supported; choose one of {GEMM_DTYPES}")
        object.__setattr__(self, "dtype", name)
        if (self.tile_m, self.tile_n) not in GEMM_TILES:
            raise ValueError(f"GEMM tile {self.tile_m}x{self.tile_n} is not supported; choose one of {GEMM_TILES}")
        if (self.cluster_m, self.cluster_n) not in GEMM_CLUSTERS:
            raise ValueError(
                f"GEMM cluster {self.cluster_m}x{self.cluster_n} is not supported; choose one of {GEMM_CLUSTERS}"
            )
        if self.stages is not None and (not isinstance(self.stages, int) or self.stages < 2):
            raise ValueError(f"GEMM stages must be an int >= 2 (or None for the most that fit), got {self.stages!r}")
        if not isinstance(self.epi_stages, int) or not 1 <= self.epi_stages <= 4:
            raise ValueError(f"GEMM epi_stages must be 1..4, got {self.epi_stages!r}")

    # -- derived sizes ---------------------------------------------------------

    @property
    def elem_bytes(self) -> int:
        return dtype_width(self.dtype) // 8

    @property
    def tile_k(self) -> int:
        """K per stage: four 16-deep MMA k-blocks, 128 B of a 16-bit row (one swizzle row)."""
        return 128 // self.elem_bytes

    @property
    def epi_tile(self) -> tuple[int, int]:
        """The C sub-tile one TMA store writes: all rows of the CTA tile, 32 columns."""
        return (self.tile_m, 32)

    @property
    def a_stage_bytes(self) -> int:
        return self.tile_m * self.tile_k * self.elem_bytes

    @property
    def b_stage_bytes(self) -> int:
        return self.tile_n * self.tile_k * self.elem_bytes

    @property
    def c_staging_bytes(self) -> int:
        return self.epi_tile[0] * self.epi_tile[1] * self.epi_stages * self.elem_bytes

    @property
    def cluster_size(self) -> int:
        return self.cluster_m * self.cluster_n

    def resolved(self) -> GemmConfig:
        """This config with ``stages`` filled in (the most that fit when ``None``)."""
        if self.stages is not None:
            return self
        return replace(self, stages=max_stages(self))

    def label(self) -> str:
        stages = "max" if self.stages is None else str(self.stages)
        alias = "alias" if self.alias_epilogue else "no-alias"
        return (
            f"{self.dtype} {self.tile_m}x{self.tile_n} cl{self.cluster_m}x{self.cluster_n} "
            f"s{stages} {alias}"
        )


class MainloopPipeline:
    """The A/B mainloop pipeline as an allocator resource: its stages need
    ``stages`` full/empty mbarrier pairs, placed by the allocator."""

    def __init__(self, stages: int, name: str = "gemm.mainloop") -> None:
        self.name = name
        self.pipeline_config = PipelineConfig(num_stages=stages)
        self.pipeline_group = None

    def get_smem_requirements(self) -> list[SmemAllocation]:
        return []


@dataclass(frozen=True)
class GemmLayout:
    """A config's computed layout: the allocator (for trace-time ``allocate()``), its
    allocations and the pipeline resource whose barriers it placed."""

    config: GemmConfig
    allocator: SmemAllocator = field(repr=False, compare=False)
    a: SmemAllocation = field(repr=False)
    b: SmemAllocation = field(repr=False)
    c: SmemAllocation = field(repr=False)
    mainloop: MainloopPipeline = field(repr=False, compare=False)

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
        return {
            "a": self.a.offset,
            "b": self.b.offset,
            "c": self.c.offset,
            "barriers": self.plan.barrier_regions[0].offset,
        }


def _build(config: GemmConfig, stages: int, check_arch: bool) -> GemmLayout:
    dtype = config.dtype
    per_a = config.tile_m * config.tile_k
    per_b = config.tile_n * config.tile_k
    epi = config.epi_tile[0] * config.epi_tile[1] * config.epi_stages
    a = SmemAllocation("gemm.a_stages", dtype=dtype, count=per_a * stages, alignment=SWIZZLE_128B_ALIGNMENT)
    b = SmemAllocation("gemm.b_stages", dtype=dtype, count=per_b * stages, alignment=SWIZZLE_128B_ALIGNMENT)
    c = SmemAllocation("gemm.c_staging", dtype=dtype, count=epi, alignment=SWIZZLE_128B_ALIGNMENT)
    allocator = SmemAllocator(config.arch if check_arch else None)
    mainloop = MainloopPipeline(stages)
    if config.alias_epilogue:
        # the C staging buffer is written only after the last operand stage is consumed
        allocator.add_alias_group([[a, b], [c]])
    else:
        allocator.add(a)
        allocator.add(b)
        allocator.add(c)
    allocator.add_resource(mainloop)
    allocator.compute_layout()
    return GemmLayout(replace(config, stages=stages), allocator, a, b, c, mainloop)


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
            f"GEMM {config.label()}: even 2 stages need {need} B of SMEM, over the "
            f"{hardware.get_arch(config.arch).name} per-block limit of {limit} B by {need - limit} B"
        )
    return stages


def gemm_layout(config: GemmConfig | None = None, **overrides) -> GemmLayout:
    """The SMEM layout of a GEMM config (keyword overrides replace config fields).

    Raises :class:`~smemviz.CapacityError` naming the largest regions when an
    explicit ``stages`` does not fit the architecture.
    """
    config = replace(config or GemmConfig(), **overrides) if overrides else (config or GemmConfig())
    config = config.resolved()
    assert config.stages is not None
    return _build(config, config.stages, check_arch=True)


def supported_configs(arch: str = "sm_90a") -> list[GemmConfig]:
    """Every dtype x tile x cluster x aliasing combination, stages at their maximum."""
    return [
        GemmConfig(dtype=d, tile_m=tm, tile_n=tn, cluster_m=cm, cluster_n=cn, alias_epilogue=alias, arch=arch)
        for d in GEMM_DTYPES
        for (tm, tn) in GEMM_TILES
        for (cm, cn) in GEMM_CLUSTERS
        for alias in (True, False)
    ]


def config_from_controls(**controls) -> GemmConfig:
    """A config from explorer-style controls: GemmConfig fields, ``stages=0`` meaning
    the most that fit; other keys are refused by name."""
    known = {f for f in GemmConfig.__dataclass_fields__}
    unknown = sorted(set(controls) - known)
    if unknown:
        raise TypeError(f"GEMM control {unknown[0]!r} is not a GemmConfig field; fields: {', '.join(sorted(known))}")
    if controls.get("stages") == 0:
        controls["stages"] = None
    return GemmConfig(**controls)


def gemm_allocator(
    dtype: str = "f16",
    tile_n: int = 256,
    cluster_m: int = 1,
    stages: int = 0,
    alias_epilogue: bool = True,
    epi_stages: int = 2,
) -> SmemAllocator:
    """The GEMM's computed allocator, as an explorer builder (``stages=0``: the most that fit)."""
    config = config_from_controls(
        dtype=dtype, tile_n=tile_n, cluster_m=cluster_m, stages=stages,
        alias_epilogue=alias_epilogue, epi_stages=epi_stages,
    )
    return gemm_layout(config).allocator
