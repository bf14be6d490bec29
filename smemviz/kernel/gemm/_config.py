"""What a kernel author tunes in smemviz's GEMM, independent of the GPU generation.

``C[m, n, l] = sum_k A[m, k, l] * B[n, k, l]`` with A and B K-major, C N-major,
fp32 accumulation. :class:`GemmConfig` holds the choices a kernel author tunes
(dtype, CTA tile, cluster, operand stages, whether the epilogue's C staging
buffer shares bytes with the operand stages); :mod:`._layout` turns one into
the kernel's SMEM (and TMEM) layout.

Pure Python: nothing here imports the CuTe DSL, so the explorer and the CPU
tests can size a layout without it. The per-generation kernels
(``_sm90.py``, ``_sm100.py``) read every byte they use from its plan.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

from ... import hardware
from ..._dtypes import dtype_name, dtype_width

__all__ = [
    "GEMM_DTYPES",
    "GEMM_OUT_DTYPES",
    "GEMM_TILES",
    "GEMM_CLUSTERS",
    "GEMM_SWIZZLES",
    "SWIZZLE_128B_ALIGNMENT",
    "GemmProblem",
    "GemmConfig",
    "supported_configs",
    "config_from_controls",
]

GEMM_DTYPES = ("f16", "bf16", "f8e4m3")
# C's element type for each A/B type (8-bit inputs write 16-bit results)
GEMM_OUT_DTYPES = {"f16": "f16", "bf16": "bf16", "f8e4m3": "f16"}
GEMM_TILES = ((128, 128), (128, 256))
GEMM_CLUSTERS = ((1, 1), (2, 1))
# how a GEMM buffer is laid out. "auto": the CuTe DSL's own pick, the widest swizzle atom its
# rows fill; "32B"/"64B"/"128B": that swizzle atom; "interleaved": WGMMA's unswizzled canonical
# atom (8 rows x 16 B blocks, stacked down the rows first); "none" (C staging only): plain
# row-major rows, unswizzled, as a hand-written layout would be
GEMM_SWIZZLES = ("auto", "none", "interleaved", "32B", "64B", "128B")
_SWIZZLE_BYTES = {"32B": 32, "64B": 64, "128B": 128}
ATOM_ROWS = 8  # every K-major WGMMA layout atom is 8 rows deep
INTERLEAVED_BYTES = 16  # the interleaved atom's rows: one 16-byte block
# a 128B-swizzled TMA/MMA buffer repeats every 8 rows x 128 B, so each stage starts on 1 KiB
SWIZZLE_128B_ALIGNMENT = hardware.SWIZZLE_128B_ALIGNMENT
TMA_ROW_BYTES = hardware.TMA_ROW_BYTES


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
        """The problem with N and K rounded up so every TMA row (A and B rows of K
        inputs, C rows of N outputs) is a multiple of 16 B; the host pads with zeros
        and slices the result."""
        k_row = TMA_ROW_BYTES * 8 // dtype_width(dtype)
        n_row = TMA_ROW_BYTES * 8 // dtype_width(GEMM_OUT_DTYPES.get(dtype_name(dtype) or dtype, dtype))
        return replace(self, n=-(-self.n // n_row) * n_row, k=-(-self.k // k_row) * k_row)


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
    # TMEM accumulator buffers (Blackwell): 2 lets the epilogue drain one tile while the MMA fills the next
    acc_stages: int = 1
    # the swizzle of the operand stages (A and B) and of the C staging buffer (Hopper);
    # anything but "auto" is for experiments: TMA, WGMMA and stmatrix all follow it
    ab_swizzle: str = "auto"
    c_swizzle: str = "auto"

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
        if self.acc_stages not in (1, 2):
            raise ValueError(f"GEMM acc_stages must be 1 or 2, got {self.acc_stages!r}")
        _check_swizzles(self)
        if self.uses_tmem:
            _check_tmem_config(self)
        elif self.acc_stages != 1:
            raise ValueError(
                f"GEMM acc_stages={self.acc_stages} needs tensor memory (sm_100 family); "
                f"{self.arch} accumulates in registers"
            )

    @property
    def uses_tmem(self) -> bool:
        """Whether the kernel for this arch keeps its accumulators in TMEM (Blackwell)."""
        return hardware.get_arch(self.arch).has_tmem

    # -- derived sizes ---------------------------------------------------------

    @property
    def elem_bytes(self) -> int:
        return dtype_width(self.dtype) // 8

    @property
    def out_dtype(self) -> str:
        """C's element type: the input type, or f16 for 8-bit inputs."""
        return GEMM_OUT_DTYPES[self.dtype]

    @property
    def tile_k(self) -> int:
        """K per stage: 128 B of a row (one 128B-swizzle row): four MMA k-blocks."""
        return 128 // self.elem_bytes

    @property
    def epi_tile(self) -> tuple[int, int]:
        """The C sub-tile one TMA store writes: all rows of the CTA tile, 32 columns."""
        return (self.tile_m, 32)

    @property
    def ab_atom(self) -> str:
        """The operand stages' layout atom: "128B", "64B", "32B" or "interleaved" ("auto" resolved)."""
        return _resolve_atom(self.ab_swizzle, self.tile_k * self.elem_bytes)

    @property
    def c_atom(self) -> str:
        """The C staging buffer's layout: "64B", "32B", "interleaved" or "none" ("auto" resolved)."""
        return _resolve_atom(self.c_swizzle, self.epi_row_bytes)

    @property
    def ab_swizzle_mode(self) -> str | None:
        """The operand stages' swizzle as a plan states it ("128B", ..., ``None`` for none)."""
        return self.ab_atom if self.ab_atom in _SWIZZLE_BYTES else None

    @property
    def c_swizzle_mode(self) -> str | None:
        """The C staging buffer's swizzle as a plan states it ("64B", ..., ``None`` for none)."""
        return self.c_atom if self.c_atom in _SWIZZLE_BYTES else None

    @property
    def c_staging_layout(self) -> str:
        """The staged C tile's CuTe layout in elements, ``(rows, cols, stages)``, without its
        swizzle (the plan's ``swizzle`` carries it): the DSL's atom tiled down the rows
        first, or plain rows for "none". A CPU test holds it equal to the DSL's own."""
        rows, cols = self.epi_tile
        stages = self.epi_stages
        if self.c_atom == "none":
            return f"({rows},{cols},{stages}):({cols},1,{rows * cols})"
        atom_bytes = _SWIZZLE_BYTES.get(self.c_atom, INTERLEAVED_BYTES)
        width = atom_bytes * 8 // dtype_width(self.out_dtype)
        blocks = cols // width
        return (
            f"(({ATOM_ROWS},{rows // ATOM_ROWS}),({width},{blocks}),(1,{stages})):"
            f"(({width},{ATOM_ROWS * width}),(1,{rows * width if blocks > 1 else 0}),(0,{rows * cols}))"
        )

    @property
    def epi_row_bytes(self) -> int:
        """Bytes in one row of the C staging tile (what the widest swizzle mode must divide)."""
        return self.epi_tile[1] * dtype_width(self.out_dtype) // 8

    @property
    def a_stage_bytes(self) -> int:
        return self.tile_m * self.tile_k * self.elem_bytes

    @property
    def b_stage_bytes(self) -> int:
        return self.tile_n * self.tile_k * self.elem_bytes

    @property
    def c_staging_bytes(self) -> int:
        return self.epi_tile[0] * self.epi_tile[1] * self.epi_stages * dtype_width(self.out_dtype) // 8

    @property
    def cluster_size(self) -> int:
        return self.cluster_m * self.cluster_n

    def resolved(self) -> GemmConfig:
        """Deprecated: ``smemviz.kernel.gemm.resolved_config(config)`` (the layout is built
        from the config, so the config does not reach back into the layout)."""
        warnings.warn(
            "GemmConfig.resolved() is deprecated and will be removed in the next release; "
            "use smemviz.kernel.gemm.resolved_config(config)",
            DeprecationWarning,
            stacklevel=2,
        )
        from ._layout import resolved_config

        return resolved_config(self)

    def label(self) -> str:
        stages = "max" if self.stages is None else str(self.stages)
        alias = "alias" if self.alias_epilogue else "no-alias"
        acc = f" acc{self.acc_stages}" if self.uses_tmem else ""
        swizzles = "".join(
            f" {role}:{mode}" for role, mode in (("ab", self.ab_swizzle), ("c", self.c_swizzle)) if mode != "auto"
        )
        return (
            f"{self.dtype} {self.tile_m}x{self.tile_n} cl{self.cluster_m}x{self.cluster_n} s{stages} {alias}{acc}"
            f"{swizzles}"
        )


def _resolve_atom(mode: str, row_bytes: int) -> str:
    """``mode`` with "auto" replaced by the CuTe DSL's pick: the widest swizzle dividing ``row_bytes``."""
    if mode != "auto":
        return mode
    widest_first = sorted(_SWIZZLE_BYTES, key=_SWIZZLE_BYTES.__getitem__, reverse=True)
    return next((name for name in widest_first if row_bytes % _SWIZZLE_BYTES[name] == 0), "interleaved")


def _check_swizzles(config: GemmConfig) -> None:
    """Refuse a swizzle mode the GEMM cannot lay a buffer out in, naming the field and the rows."""
    rows = {"ab_swizzle": config.tile_k * config.elem_bytes, "c_swizzle": config.epi_row_bytes}
    for field_name, row_bytes in rows.items():
        mode = getattr(config, field_name)
        if mode not in GEMM_SWIZZLES:
            raise ValueError(f"GEMM {field_name} must be one of {GEMM_SWIZZLES}, got {mode!r}")
        if field_name == "ab_swizzle" and mode == "none":
            raise ValueError(
                "GEMM ab_swizzle='none': WGMMA reads A and B only in its canonical layouts; "
                "the unswizzled one is 'interleaved'"
            )
        width = _SWIZZLE_BYTES.get(mode)
        if width is not None and row_bytes % width:
            raise ValueError(
                f"GEMM {field_name}={mode!r}: the buffer's rows are {row_bytes} B, and a {mode} swizzle "
                f"needs rows that are a multiple of {width} B"
            )
        if mode != "auto" and config.uses_tmem:
            raise ValueError(
                f"GEMM {field_name}={mode!r}: the {config.arch} kernel lays its buffers out in the DSL's own "
                "modes only; swizzle experiments run on Hopper (sm_90a)"
            )


def _check_tmem_config(config: GemmConfig) -> None:
    """The Blackwell kernel's limits, refused by name before any layout is built."""
    if (config.cluster_m, config.cluster_n) != (1, 1):
        raise ValueError(
            f"GEMM cluster {config.cluster_m}x{config.cluster_n}: the {config.arch} kernel runs one CTA "
            "per cluster (1x1)"
        )
    if config.alias_epilogue and config.acc_stages > 1:
        raise ValueError(
            f"GEMM alias_epilogue with acc_stages={config.acc_stages}: with two accumulator buffers the "
            "next tile's operands load while the epilogue stores, so C staging cannot share their bytes; "
            "use acc_stages=1 or alias_epilogue=False"
        )


def supported_configs(arch: str = "sm_90a") -> list[GemmConfig]:
    """Every dtype x tile x cluster x aliasing combination, stages at their maximum
    (on Blackwell: dtype x tile x {aliased, apart, apart with 2 accumulator buffers})."""
    if hardware.get_arch(arch).has_tmem:
        return [
            GemmConfig(dtype=d, tile_m=tm, tile_n=tn, alias_epilogue=alias, acc_stages=acc, arch=arch)
            for d in GEMM_DTYPES
            for (tm, tn) in GEMM_TILES
            for (alias, acc) in ((True, 1), (False, 1), (False, 2))
        ]
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
