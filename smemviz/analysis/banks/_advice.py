"""Advice for a conflicting access: the swizzle and alignment that remove the conflicts while the
buffer stays legal for TMA and WGMMA, with the line of code to write; or why no swizzle can.

Legal here means what the hardware modes allow: a 32B/64B/128B swizzle permutes the
16-byte chunks of 8-row atoms whose rows are the mode's width, so the tile's
contiguous row must be a whole number of such rows (rows wider than 128 B are laid
as 128-byte atoms side by side), and the buffer must start on the atom's period
(256 / 512 / 1024 B), the lint rule for swizzled TMA buffers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..._dtypes import cutlass_type_name, dtype_name, dtype_width
from ._layout import SWIZZLE_ALIGNMENT, SWIZZLE_MODES, parse_cute_layout
from ._patterns import AccessAtom, AccessReport, _contiguous_mode, analyze_access

__all__ = ["Advice", "advise", "allocation_line"]


@dataclass(frozen=True)
class Advice:
    """What to change for one access of one region, and what it buys."""

    region: str
    current: AccessReport
    best: AccessReport  # the access with the recommended swizzle (``current`` when nothing helps)
    swizzle: str | None  # the recommended hardware mode; None: keep (or nothing helps)
    alignment: int  # bytes the region must start on for that mode
    fixes: bool  # the recommendation makes the access conflict-free
    dsl_line: str  # the CuTe DSL line for the tile's layout ("" when nothing to change)
    allocation_line: str  # the smemviz declaration of the region ("" when nothing to change)
    reason: str

    def __str__(self) -> str:
        lines = [self.current.summary(), self.reason]
        if self.dsl_line:
            lines += [f"  layout:     {self.dsl_line}", f"  allocation: {self.allocation_line}"]
        return "\n".join(lines)


def _dsl_layout_line(rows: int, cols: int, contiguous: int, mode: str, dtype: Any) -> str:
    """The CuTe DSL line for the tile: the warpgroup helper's swizzle atom tiled to the tile's shape
    (the form TMA and WGMMA take; the DSL prints it as ``S<B,4,3> o 0 o ...``, a byte swizzle)."""
    kind = ("K_SW" if contiguous == 1 else "MN_SW") + mode[:-1]
    shape = f"({rows}, {cols})" if contiguous == 1 else f"({cols}, {rows})"
    name = cutlass_type_name(dtype_name(dtype)) or str(dtype)
    return (
        f"cute.tile_to_shape(cute.nvgpu.warpgroup.make_smem_layout_atom("
        f"cute.nvgpu.warpgroup.SmemLayoutAtomKind.{kind}, cutlass.{name}), {shape}, (0, 1))"
    )


def advise(
    plan: Any,
    region: str,
    atom: AccessAtom,
    *,
    layout: object = None,
    dtype: Any = None,
    warps: tuple[int, int] = (1, 1),
    stage: int = 0,
    swizzle: object = "region",
) -> Advice:
    """The hardware swizzle mode (and alignment) that makes ``atom``'s access of ``region`` conflict-free.

    Tries every legal mode at the region's own offset and at that offset rounded up to
    the mode's period (what the allocator gives an aligned declaration); picks the
    fewest wavefronts, the narrower mode on a tie.
    """
    current = analyze_access(plan, region, atom, layout=layout, dtype=dtype, warps=warps, stage=stage, swizzle=swizzle)
    r = plan.region(region)
    lay = parse_cute_layout(layout if layout is not None else r.layout)
    if lay.swizzle is not None and lay.swizzle.bits == 0:  # S<0,M,S>: no swizzle, only an offset stated
        lay = lay.without_swizzle()
    eb = dtype_width(dtype if dtype is not None else r.dtype) // 8
    contiguous = _contiguous_mode(lay)
    rows, cols = lay.extent(1 - contiguous), lay.extent(contiguous)
    row_bytes = cols * eb
    if current.conflict_free:
        return _keep(
            current,
            r.alignment,
            f"{current.instruction} on {region!r} is already conflict-free: nothing to change.",
            swizzle=current.swizzle,
            fixes=True,
        )
    if lay.swizzle is not None:
        return _keep(
            current,
            r.alignment,
            f"the layout already carries {lay.swizzle}; give the layout without it to compare the hardware modes",
        )
    legal = [m for m, s in SWIZZLE_MODES.items() if row_bytes % (16 << s.bits) == 0]
    if not legal:
        return _keep(
            current,
            r.alignment,
            f"no swizzle mode is legal: a tile row is {row_bytes} B, not a multiple of the 32 B "
            f"the narrowest mode (32B) swizzles; pad the row to 32 B or change the access",
        )
    best: AccessReport | None = None
    best_mode = ""
    for mode in legal:
        align = SWIZZLE_ALIGNMENT[mode]
        base = r.offset + stage * (r.size // (r.stages or 1))
        aligned = -(-base // align) * align
        rep = analyze_access(
            plan, region, atom, layout=lay, dtype=dtype, warps=warps, stage=stage, swizzle=mode, base=aligned
        )
        if best is None or rep.wavefronts < best.wavefronts:
            best, best_mode = rep, mode
    assert best is not None
    align = SWIZZLE_ALIGNMENT[best_mode]
    dsl = _dsl_layout_line(rows, cols, contiguous, best_mode, dtype if dtype is not None else r.dtype)
    alloc = allocation_line(plan, r, max(align, r.alignment), best_mode)
    if best.wavefronts >= current.wavefronts:
        return _keep(current, r.alignment, _why_not(current, row_bytes, legal))
    if best.conflict_free:
        reason = (
            f"a {best_mode} swizzle, with the region on a {align}-byte boundary (the swizzle atom's "
            f"period, legal for TMA and WGMMA), removes every conflict: {current.wavefronts} -> "
            f"{best.wavefronts} wavefronts ({current.n_way}-way -> conflict-free)"
        )
        if row_bytes > 128 and best_mode == "128B":
            reason += "; rows wider than 128 B are laid as 128-byte swizzle atoms side by side"
        return Advice(region, current, best, best_mode, align, True, dsl, alloc, reason)
    reason = (
        f"the best legal swizzle, {best_mode} on a {align}-byte boundary, cuts {current.wavefronts} -> "
        f"{best.wavefronts} wavefronts but leaves {best.n_way}-way conflicts: " + _why_not(best, row_bytes, legal)
    )
    return Advice(region, current, best, best_mode, align, False, dsl, alloc, reason)


def allocation_line(plan: Any, r: Any, align: int, mode: str) -> str:
    """The declaration of region ``r`` on an ``align``-byte boundary with the ``mode`` swizzle,
    in the words of what declared it: smemviz's ``SmemAllocation``, a ``@cute.struct`` field
    (``Align[MemRange[...], N]``; the swizzle is the layout's), or for a kernel captured as
    compiled the DSL allocator's ``byte_alignment=`` (``Align`` for a struct field)."""
    from ...layout._plan import CAPTURE_SOURCE, STRUCT_SOURCE

    source = getattr(plan, "source", None)
    if source not in (STRUCT_SOURCE, CAPTURE_SOURCE):
        dtype = f", dtype={r.dtype!r}" if r.dtype else ""
        return f'SmemAllocation("{r.name}", {r.size}, alignment={align}, swizzle="{mode}"{dtype})'
    name = cutlass_type_name(r.dtype) if r.dtype else None
    element = f"cutlass.{name}" if name else "cutlass.Uint8"
    count = r.count if name and r.count else r.size
    field = f"{r.name.rsplit('.', 1)[-1]}: Align[MemRange[{element}, {count}], {align}]"
    if source == STRUCT_SOURCE:
        return field
    return (
        f"smem.allocate_tensor({element}, <the {mode} layout above>, byte_alignment={align}) (a struct field: {field})"
    )


def _keep(
    current: AccessReport, alignment: int, reason: str, *, swizzle: str | None = None, fixes: bool = False
) -> Advice:
    """Advice that changes nothing: the access stays as it is, for ``reason``."""
    return Advice(current.region, current, current, swizzle, alignment, fixes, "", "", reason)


def _why_not(rep: AccessReport, row_bytes: int, legal: list[str]) -> str:
    worst = rep.worst
    lanes = max(worst.phases, key=len)
    per_lane = max(1, sum(1 for lw in worst.lane_words if lw.lane == lanes[0]))
    return (
        f"the access itself conflicts, not the layout: {worst.instruction} serves {len(lanes)} lanes per "
        f"phase, each reaching {per_lane} bank word(s), and a swizzle only permutes 16-byte chunks "
        f"within 8 rows of {row_bytes} B (modes tried: {', '.join(legal)}), so lanes that share a "
        f"16-byte chunk, or rows 8 apart, still meet in one bank; use a wider access "
        f"(ldmatrix/stmatrix or 16-byte vectors) or change which lanes take which rows"
    )
