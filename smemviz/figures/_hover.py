"""Hover and label text for regions, built once per region as plain text.

This runs for every region on every explorer update, so each text is one
f-string (about 2 us) rather than a list of parts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..analysis._report import live_steps
from ._style import fmt_units, plain

if TYPE_CHECKING:
    from ..layout._plan import LayoutPlan, Region

__all__ = ["region_hover", "region_label"]

_KIND_LINE = {"data": "", "barrier": "<br>pipeline mbarriers", "tmem_ptr": "<br>TMEM-pointer slot"}


def region_label(region: Region) -> str:
    return plain(region.name)


def region_hover(region: Region, plan: LayoutPlan) -> str:
    """Name, offset (decimal and hex), size, end, alignment, padding before,
    dtype x count, group and phase (1-based), for a layout solved from
    lifetimes the steps it is live in, and for a region read from a kernel
    its layout and source line, one per line."""
    r = region
    typed = f"<br>{plain(r.dtype)} × {r.count:,}" if r.dtype else ""
    if r.shape is not None:
        typed += f" as {' × '.join(map(str, r.shape))}"
    if r.stages:
        typed += f"<br>{r.stages} stages of {fmt_units(r.size // r.stages, plan.unit)}"
    alias = f"<br>alias group {r.group + 1}, phase {(r.phase or 0) + 1}" if r.group is not None else ""
    if plan.steps:  # regions at one offset take turns: say when this one holds the bytes
        alias += f"<br>live: {plain(live_steps(r, plan.steps))}"
    if r.layout is not None:  # read from a kernel: its CuTe layout and the line that declares it
        alias += f"<br>layout {plain(r.layout)}"
    if r.source is not None:
        alias += f"<br>declared at {plain(r.source)}"
    if plan.memory == "smem":
        size = fmt_units(r.size, "B")  # KiB written as every other figure and table writes it
        return (
            f"<b>{plain(r.name)}</b>{_KIND_LINE[r.kind]}<br>offset {r.offset:,} (0x{r.offset:x})"
            f"<br>size {size}<br>end {r.end:,} (0x{r.end:x})<br>alignment {r.alignment:,} B"
            f"<br>padding before {r.padding_before:,} B{typed}{alias}"
        )
    return (
        f"<b>{plain(r.name)}</b>{_KIND_LINE[r.kind]}<br>columns {r.offset:,} to {r.end - 1:,} "
        f"({fmt_units(r.size, 'cols')}, all 128 lanes)<br>padding before {r.padding_before:,} cols{typed}{alias}"
    )
