"""What the SMEM probe writes where, and what it must read back (pure Python).

Each placed region gets a one-byte tag. The probe kernel writes the tag into
every byte of the region, through a view of the region's own element type
where it has one, step by step: step 0 writes every standalone region (data,
pipeline barriers, the TMEM-pointer slot) and phase 1 of every alias group;
step ``k`` writes phase ``k + 1`` of every group that has one. After each step
the kernel copies the whole SMEM block out. The host then expects, byte for
byte, the last tag written there, and 0 where nothing was written.

Tags stay in 0x08..0x7B so that a byte repeated over 2, 4 or 8 bytes is a
normal, finite value in every float format a region may use (f16, bf16, f32,
f64, fp8): writing it through a float view stores exactly those bytes.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

__all__ = ["RegionWrite", "ProbeSchedule", "schedule_for", "TAG_FIRST", "TAG_COUNT"]

TAG_FIRST = 0x08
TAG_COUNT = 0x7B - TAG_FIRST + 1

_INT_TYPES = {"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"}
_FLOAT_TYPES = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}
_WIDTH = {
    "i8": 8,
    "u8": 8,
    "i16": 16,
    "u16": 16,
    "i32": 32,
    "u32": 32,
    "i64": 64,
    "u64": 64,
    "f16": 16,
    "bf16": 16,
    "f32": 32,
    "f64": 64,
}
_UNSIGNED = {8: "u8", 16: "u16", 32: "u32", 64: "u64"}


def tag_for(index: int) -> int:
    return TAG_FIRST + index % TAG_COUNT


def _element_value(dtype: str, tag: int) -> int | float:
    """The element of ``dtype`` whose bytes all equal ``tag``."""
    width = _WIDTH[dtype]
    pattern = int.from_bytes(bytes([tag]) * (width // 8), "little")
    if dtype.startswith("u"):
        return pattern
    if dtype.startswith("i"):
        return pattern - (1 << width) if pattern >= 1 << (width - 1) else pattern
    if dtype == "f16":
        return struct.unpack("<e", pattern.to_bytes(2, "little"))[0]
    if dtype == "bf16":
        return struct.unpack("<f", (pattern << 16).to_bytes(4, "little"))[0]
    if dtype == "f32":
        return struct.unpack("<f", pattern.to_bytes(4, "little"))[0]
    return struct.unpack("<d", pattern.to_bytes(8, "little"))[0]


@dataclass(frozen=True)
class RegionWrite:
    """One region's writes: a typed part, then a byte-wise tail.

    ``dtype`` is the short element type the typed part is written through
    (the region's own type when smemviz can store it exactly, else an unsigned
    integer of the same width, or bytes), ``count`` its elements and ``value``
    the element whose bytes all equal ``tag``.
    """

    region_index: int
    name: str
    kind: str
    offset: int
    size: int
    tag: int
    step: int
    dtype: str
    count: int
    value: int | float
    tail_offset: int
    tail_count: int
    through_own_type: bool


@dataclass(frozen=True)
class ProbeSchedule:
    """Every write, grouped into steps, and the bytes each snapshot must hold."""

    unified_bytes: int
    steps: tuple[tuple[RegionWrite, ...], ...]

    @property
    def writes(self) -> tuple[RegionWrite, ...]:
        return tuple(w for step in self.steps for w in step)

    def expected(self, step: int) -> bytes:
        """The SMEM block as it must read after ``step``: last tag written, else 0."""
        image = bytearray(self.unified_bytes)
        for s in range(step + 1):
            for w in self.steps[s]:
                image[w.offset : w.offset + w.size] = bytes([w.tag]) * w.size
        return bytes(image)


def _write_for(index: int, region: Any, step: int) -> RegionWrite:
    tag = tag_for(index)
    dtype = region.dtype
    width = _WIDTH.get(dtype) if dtype else None
    count = region.count or 0
    if width and count * width // 8 <= region.size and region.offset % (width // 8) == 0:
        own = dtype in _INT_TYPES or dtype in _FLOAT_TYPES
        write_dtype = dtype if own else _UNSIGNED[width]
        typed_bytes = count * width // 8
    elif region.offset % 4 == 0 and region.size >= 4:
        # untyped or sub-byte/odd types: 32-bit words, then bytes
        own = False
        write_dtype = "u32"
        count = region.size // 4
        typed_bytes = count * 4
    else:
        own = False
        write_dtype = "u8"
        count = region.size
        typed_bytes = region.size
    return RegionWrite(
        region_index=index,
        name=region.name,
        kind=region.kind,
        offset=region.offset,
        size=region.size,
        tag=tag,
        step=step,
        dtype=write_dtype,
        count=count,
        value=_element_value(write_dtype, tag),
        tail_offset=region.offset + typed_bytes,
        tail_count=region.size - typed_bytes,
        through_own_type=own,
    )


def schedule_for(plan: Any) -> ProbeSchedule:
    """The probe's writes for an SMEM :class:`~smemviz.LayoutPlan`."""
    if plan.memory != "smem":
        raise ValueError(f"the SMEM probe needs an SMEM plan, got a {plan.memory} plan")
    if plan.unified_bytes == 0:
        raise ValueError("the plan places no SMEM bytes; there is nothing to probe")
    n_steps = max([1] + [len(g.phase_sizes) for g in plan.groups])
    steps: list[list[RegionWrite]] = [[] for _ in range(n_steps)]
    for index, region in enumerate(plan.regions):
        if region.size == 0:
            continue
        step = region.phase if region.group is not None else 0
        steps[step].append(_write_for(index, region, step))
    return ProbeSchedule(plan.unified_bytes, tuple(tuple(s) for s in steps))
