"""``compute_layout(fit=N)``: a capacity stated in units (bytes of SMEM, TMEM
columns), with no architecture to name.

It asks what an arch's capacity asks, of a number the caller gives: the
layout (for SMEM the one array: data rounded up to 8 bytes, then the
barriers) must take at most ``fit`` units. The solver is then asked a yes/no
question, as MiniMalloc asks it: it stops at the first layout within ``fit``
rather than looking on for smaller ones.
"""

from __future__ import annotations

from typing import Any

from .. import hardware
from .._errors import CapacityError
from .._units import align_up
from ._allocation import _is_int

__all__ = ["check_fit", "data_room", "refuse_over_fit", "MAX_FIT"]

# a capacity beyond any memory, and still exact as an int64 in the search kernel
MAX_FIT = 1 << 62


def check_fit(fit: Any) -> int | None:
    """``fit=`` as given: None, or an int from 1 to 2**62."""
    if fit is None:
        return None
    if not _is_int(fit):
        raise TypeError(f"fit must be an int (units the layout may take), got {type(fit).__name__} {fit!r}")
    if not 1 <= fit <= MAX_FIT:
        raise ValueError(f"fit must be from 1 to 2**62 units, got {fit}")
    return fit


def data_room(memory: str, fit: int, barrier_bytes: int) -> int:
    """The most units the data may take so that the whole layout stays within ``fit``."""
    if memory == "tmem":
        return fit
    room = fit - barrier_bytes
    return room - room % hardware.MBARRIER_ALIGNMENT  # the data total is aligned up before the barriers


def refuse_over_fit(allocator: Any, total: int, fit: int, barrier_bytes: int, solved: bool) -> None:
    """Raise :class:`CapacityError` naming the overshoot and the largest allocations
    when a layout of ``total`` data units does not fit ``fit``."""
    smem = allocator._memory == "smem"
    used = align_up(total, hardware.MBARRIER_ALIGNMENT) + barrier_bytes if smem else total
    if used <= fit:
        return
    unit = "B" if smem else "columns"
    largest = sorted(allocator.allocations, key=lambda a: -allocator._size(a))[:3]
    names = ", ".join(f"{a.name} ({allocator._size(a):,} {unit})" for a in largest)
    how = f" (data {total:,} B + barriers {barrier_bytes:,} B)" if smem and barrier_bytes else ""
    hint = "; the solver found no smaller layout within its node budget (a larger node_budget may)" if solved else ""
    raise CapacityError(
        f"{type(allocator).__name__}: the {'SMEM' if smem else 'TMEM'} layout needs {used:,} {unit}{how}, "
        f"over fit={fit:,} by {used - fit:,} {unit}; largest: {names}{hint}"
    )
