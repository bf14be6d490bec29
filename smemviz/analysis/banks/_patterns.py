"""Access patterns of real code: a plan region, its tile layout, a swizzle, an access atom and
the CTA's warps give every warp's per-lane addresses at the region's real offset.

The atom works in memory terms: its "rows" run along the tile's strided mode and its
"columns" along the contiguous one (the top-level mode whose first stride is 1), so
one atom serves K-major and MN-major tiles alike. A hardware swizzle mode ("128B"
...) applies to the absolute shared-memory address, as TMA, WGMMA and CuTe's
swizzled smem pointers apply it; that is why a region not aligned to the swizzle's
period (1024 B for 128B) conflicts where an aligned one does not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ... import _limits
from ..._dtypes import dtype_name, dtype_width
from ..._errors import DeclarationError, DeclarationTypeError
from ..._limits import clip, int_size, shorten
from ..._smem_instructions import WARP, lookup
from ._layout import CuteLayout, Swizzle, parse_cute_layout, parse_swizzle
from ._model import BankConflicts, bank_conflicts, conflicts_html

__all__ = [
    "AccessAtom",
    "AccessReport",
    "analyze_access",
    "ldmatrix_atom",
    "stmatrix_atom",
    "vector_atom",
    "cp_async_atom",
    "instruction_atom",
    "tile_addresses",
]


@dataclass(frozen=True)
class AccessAtom:
    """One warp instruction's footprint: the rows x columns of elements it covers and where each
    lane's address points inside them (``None``: a lane whose address the instruction ignores)."""

    instruction: str
    rows: int
    cols: int
    lane_coords: tuple[tuple[int, int] | None, ...]
    elements_per_lane: int  # contiguous elements one lane's address covers

    def __str__(self) -> str:
        return f"{self.instruction} ({self.rows}x{self.cols} elements per warp instruction)"


def _element_bytes(element_bytes: object) -> int:
    """``element_bytes`` checked: a positive whole number of bytes (an element is 1 to 16 B)."""
    if isinstance(element_bytes, bool) or not isinstance(element_bytes, int):
        raise DeclarationTypeError(
            f"element_bytes must be an integer, got {type(element_bytes).__name__} {shorten(element_bytes)}",
            field="element_bytes",
        )
    if element_bytes < 1:
        raise DeclarationError(f"element_bytes must be positive, got {int_size(element_bytes)}", field="element_bytes")
    return element_bytes


def _matrix_atom(op: str, n: int, trans: bool, element_bytes: int) -> AccessAtom:
    if isinstance(n, bool) or n not in (1, 2, 4):
        raise ValueError(f"{op} takes 1, 2 or 4 matrices, got {shorten(n)}")
    if _element_bytes(element_bytes) != 2:
        raise ValueError(f"{op} moves 16-bit elements (8 per 16-byte row); the tile's are {int_size(element_bytes)} B")
    coords: list[tuple[int, int] | None] = []
    for lane in range(32):
        j, r = divmod(lane, 8)
        if j >= n:
            coords.append(None)
            continue
        # matrices in the order the MMA fragments take them: (rows 0-7, cols 0-7), (rows 8-15, cols 0-7),
        # (rows 0-7, cols 8-15), (rows 8-15, cols 8-15)
        coords.append((r + 8 * (j % 2), 8 * (j // 2)))
    rows = 8 if n == 1 else 16
    cols = 16 if n == 4 else 8
    name = f"{op}.x{n}{'.trans' if trans else ''}"
    return AccessAtom(name, rows, cols, tuple(coords), 8)


def ldmatrix_atom(n: int = 4, trans: bool = False, element_bytes: int = 2) -> AccessAtom:
    """``ldmatrix.xN``: 8x8 16-bit matrices, lanes 8j..8j+7 pointing at the rows of matrix j."""
    return _matrix_atom("ldmatrix", n, trans, element_bytes)


def stmatrix_atom(n: int = 4, trans: bool = False, element_bytes: int = 2) -> AccessAtom:
    """``stmatrix.xN``: the store twin of :func:`ldmatrix_atom` (the smemviz GEMM's epilogue uses x4)."""
    return _matrix_atom("stmatrix", n, trans, element_bytes)


def vector_atom(instruction: str, element_bytes: int, threads: tuple[int, int] = (8, 4)) -> AccessAtom:
    """Per-thread ld/st (or cp.async): lanes laid row-major over ``threads`` = (rows, lanes per row),
    each covering the instruction's width of contiguous elements."""
    spec = lookup(instruction)
    if spec.kind in ("ldmatrix", "stmatrix"):
        raise ValueError(f"{spec.name} is a matrix instruction: use ldmatrix_atom / stmatrix_atom")
    element_bytes = _element_bytes(element_bytes)
    tr, tc = _limits.check_pair(threads, "threads")
    if tr * tc != WARP:
        raise DeclarationError(
            f"threads {shorten(tuple(threads))} must arrange the {WARP} lanes of a warp, not {tr * tc}", field="threads"
        )
    if spec.width % element_bytes:
        raise ValueError(
            f"{spec.name} moves {spec.width} B per lane, not a whole number of {element_bytes}-byte elements"
        )
    per_lane = spec.width // element_bytes
    coords = tuple((lane // tc, (lane % tc) * per_lane) for lane in range(32))
    return AccessAtom(spec.name, tr, tc * per_lane, coords, per_lane)


def cp_async_atom(size: int, element_bytes: int, threads: tuple[int, int] = (4, 8)) -> AccessAtom:
    """``cp.async.ca`` of ``size`` bytes per thread into the tile (the global side does not touch banks)."""
    return vector_atom(f"cp.async.ca.{shorten(size)}", element_bytes, threads)


def instruction_atom(instruction: str, element_bytes: int, threads: tuple[int, int] | None = None) -> AccessAtom:
    """The atom of a PTX spelling over elements of ``element_bytes`` (per-thread accesses laid over
    ``threads``, (8, 4) by default; matrix instructions place their lanes themselves)."""
    spec = lookup(instruction)
    if spec.kind in ("ldmatrix", "stmatrix"):
        if threads is not None:
            raise DeclarationError(f"{spec.name} places its lanes itself: give no threads", field="threads")
        make = ldmatrix_atom if spec.kind == "ldmatrix" else stmatrix_atom
        return make(spec.lanes // 8, spec.name.endswith(".trans"), element_bytes)
    return vector_atom(spec.name, element_bytes, threads or (8, 4))


@dataclass(frozen=True)
class AccessReport:
    """One access of one region by a CTA's warps: totals over every instruction they issue."""

    region: str
    instruction: str
    layout: str
    swizzle: str | None
    base: int  # shared-memory address of the tile's element 0
    warps: int
    instructions: int
    wavefronts: int
    ideal: int
    conflicts: int  # ncu's count, summed
    n_way: int  # worst phase over every instruction
    worst: BankConflicts  # the instruction with the most excess wavefronts (the picture shows it)

    @property
    def excess(self) -> int:
        """Wavefronts beyond the ideal: the replays the conflicts cost."""
        return self.wavefronts - self.ideal

    @property
    def conflict_free(self) -> bool:
        return self.wavefronts == self.ideal

    @property
    def wavefronts_per_instruction(self) -> float:
        return self.wavefronts / self.instructions

    def summary(self) -> str:
        state = "conflict-free" if self.conflict_free else f"{self.n_way}-way, {self.excess} extra wavefronts"
        return (
            f"{self.region}: {self.instruction} over {self.layout}"
            f"{' with ' + self.swizzle + ' swizzle' if self.swizzle else ''} at {self.base}: "
            f"{self.instructions} instructions, {self.wavefronts} wavefronts (ideal {self.ideal}), "
            f"{self.conflicts} conflicts; {state}"
        )

    def _repr_html_(self) -> str:
        """In a notebook: the summary over its worst instruction's grid of banks."""
        return conflicts_html(self)


def _contiguous_mode(layout: CuteLayout) -> int:
    strides = [layout.stride] if isinstance(layout.stride, int) else list(layout.stride)
    for mode, st in enumerate(strides):
        first = st
        while not isinstance(first, int):
            first = first[0]
        if first == 1:
            return mode
    raise ValueError(
        f"layout {clip(str(layout), 120)} has no mode of stride 1: no run of contiguous elements for a lane"
    )


def tile_addresses(
    layout: CuteLayout,
    element_bytes: int,
    base: int,
    swizzle: Swizzle | None,
    coords: Sequence[tuple[int, int] | None],
    *,
    absolute: bool = True,
    stage: int = 0,
) -> list[int | None]:
    """Byte addresses of (strided, contiguous) coordinates of a tile at ``base``; a third mode
    (the DSL's stage mode) takes coordinate ``stage``."""
    _check_modes(layout)
    contiguous = _contiguous_mode(layout)
    extra = (stage,) if layout.modes == 3 else ()
    out: list[int | None] = []
    for c in coords:
        if c is None:
            out.append(None)
            continue
        coord = ((c[0], c[1]) if contiguous == 1 else (c[1], c[0])) + extra
        off = layout.byte_offset(coord, element_bytes)
        if swizzle is not None:
            off = swizzle(base + off) if absolute else base + swizzle(off)
        else:
            off = base + off
        out.append(off)
    return out


def _check_modes(layout: CuteLayout) -> None:
    if layout.modes not in (2, 3):
        raise ValueError(
            f"layout {clip(str(layout), 120)} has {layout.modes} top-level modes; the access analysis takes "
            f"2 (rows, columns) or 3 (with stages last)"
        )


def _check_run(layout: CuteLayout, element_bytes: int, atom: AccessAtom, coords: tuple[int, int]) -> None:
    """A lane's address covers ``elements_per_lane`` elements: they must be contiguous in the layout."""
    contiguous = _contiguous_mode(layout)
    first = None
    extra = (0,) if layout.modes == 3 else ()
    for k in range(atom.elements_per_lane):
        c = (coords[0], coords[1] + k)
        coord = (c if contiguous == 1 else (c[1], c[0])) + extra
        off = layout.byte_offset(coord, element_bytes)
        if first is None:
            first = off
        elif off != first + k * element_bytes:
            raise ValueError(
                f"{atom.instruction} needs {atom.elements_per_lane} contiguous elements per lane; "
                f"layout {clip(str(layout), 120)} breaks the run at element {k} of coordinate {coords}"
            )


def analyze_access(  # noqa: PLR0913 - keyword options, each defaulting to the region's own
    plan: Any,
    region: str,
    atom: AccessAtom | str,
    *,
    layout: object = None,
    dtype: Any = None,
    swizzle: object = "region",
    warps: tuple[int, int] = (1, 1),
    stage: int = 0,
    base: int | None = None,
) -> AccessReport:
    """Every instruction a CTA's warps issue to cover region ``region``'s tile with ``atom`` (an
    :class:`AccessAtom`, or an instruction spelling whose atom the tile's element size gives).

    ``layout`` (CuTe shape:stride in elements, a ComposedLayout's text or a CuTe DSL layout
    object) and ``dtype`` default to the region's own; ``swizzle`` to the region's hardware
    mode ("region"), or give "32B"/"64B"/"128B", ``None`` or a :class:`Swizzle` (a byte one
    applies to the absolute address, an element one to the tile's offsets). ``warps`` =
    (rows, columns) arranges the warps over the grid of atom tiles, each warp taking every
    ``warps``-th tile in each direction. ``stage`` picks one stage of a staged region;
    ``base`` overrides the tile's address (what-if: another alignment). Every bound of
    :mod:`smemviz._limits` (warps per CTA, instructions per access, the layout's size) is
    checked before the walk starts.
    """
    r = plan.region(region)
    wr, wc = _limits.check_warps(warps, "warps")
    _limits.check_int64(stage, "stage", minimum=0)
    if base is not None:
        _limits.check_int64(base, "base", minimum=0)
    if isinstance(dtype, str) and len(dtype) > _limits.MAX_DTYPE_TEXT:
        raise DeclarationError(f"dtype {shorten(dtype)} is no dtype name (too long)", field="dtype")
    text = layout if layout is not None else r.layout
    if text is None:
        raise ValueError(f"region {shorten(region)} has no tile layout: pass layout='shape:stride' (elements)")
    dt = dtype if dtype is not None else r.dtype
    if dt is None:
        raise ValueError(f"region {shorten(region)} has no dtype: pass dtype=")
    bits = dtype_width(dt)
    if bits % 8:
        raise ValueError(f"region {shorten(region)}: {bits}-bit elements are not whole bytes")
    eb = bits // 8
    if isinstance(atom, str):
        atom = instruction_atom(atom, eb)
    elif not isinstance(atom, AccessAtom):
        raise DeclarationTypeError(
            f"atom must be an AccessAtom (ldmatrix_atom(), vector_atom() ...) or an instruction spelling such as "
            f"'stmatrix.x4', not {type(atom).__name__} {shorten(atom)}",
            field="atom",
        )
    lay, swz, shown_swizzle = _one_swizzle(
        region, parse_cute_layout(text), r.swizzle if swizzle == "region" else swizzle
    )
    start = _tile_start(r, lay, eb, stage, base)
    tiles_r, tiles_c = _atom_tiles(region, lay, atom)
    if tiles_r * tiles_c > _limits.MAX_INSTRUCTIONS:
        raise DeclarationError(
            f"region {shorten(region)}: layout {clip(str(lay), 120)} takes {int_size(tiles_r * tiles_c)} "
            f"{atom.instruction} instructions; an access is analysed up to {_limits.MAX_INSTRUCTIONS} "
            f"(more than reading the largest shared memory once with the narrowest instruction)",
            field="layout",
        )
    _check_run(lay, eb, atom, next(c for c in atom.lane_coords if c is not None))
    total_wf = total_ideal = total_conf = worst_way = count = 0
    worst: BankConflicts | None = None
    cache: dict[tuple[int | None, ...], BankConflicts] = {}
    for w in range(wr * wc):
        for ti in range(w // wc, tiles_r, wr):
            for tj in range(w % wc, tiles_c, wc):
                coords = [
                    None if c is None else (ti * atom.rows + c[0], tj * atom.cols + c[1]) for c in atom.lane_coords
                ]
                addrs = tuple(tile_addresses(lay, eb, start, swz, coords, absolute=True, stage=stage))
                res = cache.get(addrs)
                if res is None:
                    res = cache[addrs] = bank_conflicts(atom.instruction, addrs)
                count += 1
                total_wf += res.wavefronts
                total_ideal += res.ideal
                total_conf += res.conflicts
                worst_way = max(worst_way, res.n_way)
                if worst is None or res.replays > worst.replays:
                    worst = res
    assert worst is not None
    return AccessReport(
        region,
        atom.instruction,
        f"{lay}" + (f" {dtype_name(dt)}" if dtype_name(dt) else ""),
        shown_swizzle,
        start,
        wr * wc,
        count,
        total_wf,
        total_ideal,
        total_conf,
        worst_way,
        worst,
    )


def _one_swizzle(region: str, lay: CuteLayout, swz_obj: object) -> tuple[CuteLayout, Swizzle | None, str | None]:
    """The tile's layout and the one swizzle on its addresses (given, or carried by the layout),
    and how to name it: a byte swizzle acts on the absolute address, an element one on the layout.
    ``S<0,M,S>`` is the identity: a layout that writes it (to state an offset) carries no swizzle."""
    if lay.swizzle is not None and lay.swizzle.bits == 0:
        lay = lay.without_swizzle()
    if lay.swizzle is not None and swz_obj is not None:
        same = (
            isinstance(swz_obj, str)
            and lay.swizzle.unit == "byte"
            and parse_swizzle(swz_obj) == Swizzle(lay.swizzle.bits, lay.swizzle.base, lay.swizzle.shift)
        )
        if not same:
            raise ValueError(
                f"region {shorten(region)}: the layout {clip(str(lay), 120)} carries a swizzle and swizzle={shorten(swz_obj)} gives another; give one"
            )
        swz_obj = None  # one swizzle, stated twice (a captured region's mode and its layout)
    swz = parse_swizzle(swz_obj) if not isinstance(swz_obj, Swizzle) else swz_obj
    shown_swizzle = swz_obj if isinstance(swz_obj, str) else (str(swz_obj) if swz_obj is not None else None)
    if lay.swizzle is not None and lay.swizzle.unit == "byte":
        # a byte swizzle in the layout (as the DSL prints one) acts on the absolute address
        swz, lay = lay.swizzle, lay.without_swizzle()
        shown_swizzle = f"S<{swz.bits},{swz.base},{swz.shift}> (bytes)"
    if swz is not None and swz.unit == "element":
        lay = CuteLayout(lay.shape, lay.stride, swz, lay.offset)
        swz = None
    elif lay.swizzle is not None:
        shown_swizzle = f"S<{lay.swizzle.bits},{lay.swizzle.base},{lay.swizzle.shift}> (elements)"
    return lay, swz, shown_swizzle


def _tile_start(r: Any, lay: CuteLayout, eb: int, stage: int, base: int | None) -> int:
    """The byte address the tile of ``stage`` starts at (``base`` overrides it), checked to fit its stage."""
    staged_layout = lay.modes == 3
    stages = lay.extent(2) if staged_layout else (r.stages or 1)
    if not 0 <= stage < stages:
        raise ValueError(f"region {shorten(r.name)} has {stages} stage(s); stage {stage} does not exist")
    stage_bytes = r.size if staged_layout else r.size // stages
    if base is not None:
        return base
    tile_bytes = lay.cosize * eb
    if tile_bytes > stage_bytes:
        raise ValueError(
            f"region {shorten(r.name)}: layout {clip(str(lay), 120)} reaches {tile_bytes} B, past its "
            f"{stage_bytes} B{' per stage' if stages > 1 else ''}"
        )
    return r.offset if staged_layout else r.offset + stage * stage_bytes


def _atom_tiles(region: str, lay: CuteLayout, atom: AccessAtom) -> tuple[int, int]:
    """How many atom tiles the tile holds, down and across (it must hold a whole number)."""
    _check_modes(lay)
    contiguous = _contiguous_mode(lay)
    if contiguous > 1:
        raise ValueError(
            f"layout {clip(str(lay), 120)}: the contiguous mode must be one of the first two (rows, columns)"
        )
    rows_total = lay.extent(1 - contiguous)
    cols_total = lay.extent(contiguous)
    if rows_total % atom.rows or cols_total % atom.cols:
        raise ValueError(
            f"region {shorten(region)}: the {rows_total}x{cols_total} tile is no whole number of "
            f"{atom.rows}x{atom.cols} {atom.instruction} tiles"
        )
    return rows_total // atom.rows, cols_total // atom.cols
