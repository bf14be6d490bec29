"""CuTe layouts and swizzles as plain values: enough to turn a tile coordinate into a byte address.

A layout is CuTe's ``shape:stride`` in elements, nested tuples allowed
(``"((8,8),(8,4)):((64,1),(8,512))"``); a coordinate gives one integer per top-level
mode, split colexicographically over that mode's sub-shape, as CuTe does. A swizzle
is CuTe's ``Swizzle(B, M, S)``: XOR bits ``[M, M+B)`` of an offset with bits
``[M+S, M+S+B)``. Its unit must be stated: ``"byte"`` (the hardware modes: 128B is
``Swizzle(3, 4, 3)`` in bytes) or ``"element"`` (as a ``ComposedLayout`` in a kernel
applies it, before the element size). The CuTe DSL's own layout objects are read
through their printed form, so this module never imports the DSL.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TypeAlias

from ... import _limits, hardware
from ..._limits import clip, int_size, shorten
from ...layout._access import read_layout_text

__all__ = ["CuteLayout", "Swizzle", "SWIZZLE_MODES", "SWIZZLE_ALIGNMENT", "parse_cute_layout", "parse_swizzle"]

IntTuple: TypeAlias = "int | tuple[IntTuple, ...]"


@dataclass(frozen=True)
class Swizzle:
    """CuTe's ``Swizzle(B, M, S)`` applied to offsets in ``unit`` ("byte" or "element")."""

    bits: int
    base: int
    shift: int
    unit: str = "byte"

    def __post_init__(self) -> None:
        for name in ("bits", "base", "shift"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"Swizzle {name} must be a non-negative integer, got {value!r}")
        if self.shift < self.bits and self.bits:
            raise ValueError(
                f"Swizzle({self.bits}, {self.base}, {self.shift}): the shift must be at least "
                f"the bit count, or the XOR reads the bits it writes"
            )
        problem = _limits.swizzle_problem(self.bits, self.base, self.shift)
        if problem:
            raise ValueError(
                f"Swizzle({int_size(self.bits)}, {int_size(self.base)}, {int_size(self.shift)}): {problem}"
            )
        if self.unit not in ("byte", "element"):
            raise ValueError(f"Swizzle unit must be 'byte' or 'element', got {shorten(self.unit)}")

    def __call__(self, offset: int) -> int:
        mask = ((1 << self.bits) - 1) << self.base
        return offset ^ ((offset >> self.shift) & mask)

    def in_bytes(self, element_bytes: int) -> Swizzle:
        """The same permutation stated on byte offsets, for elements of ``element_bytes``."""
        if self.unit == "byte":
            return self
        if element_bytes < 1 or element_bytes & (element_bytes - 1):
            raise ValueError(f"an element swizzle needs a power-of-two element size, got {element_bytes} B")
        base = self.base + element_bytes.bit_length() - 1
        if _limits.swizzle_problem(self.bits, base, self.shift):
            raise ValueError(
                f"{self} over {element_bytes}-byte elements reaches bit {self.bits + base + self.shift} of a byte "
                f"address; CuTe's swizzles work on {_limits.MAX_SWIZZLE_BITS}-bit offsets"
            )
        return Swizzle(self.bits, base, self.shift, "byte")

    @property
    def period_bytes(self) -> int:
        """Bytes after which a byte swizzle repeats: the alignment its base needs."""
        return 1 << (self.base + self.shift + self.bits) if self.bits else 1

    def __str__(self) -> str:
        return f"Swizzle({self.bits}, {self.base}, {self.shift}) in {self.unit}s"


# the hardware's swizzle modes (TMA, WGMMA descriptors) as byte swizzles, and the alignment each needs
SWIZZLE_MODES: dict[str, Swizzle] = {mode: Swizzle(*bits) for mode, bits in hardware.SWIZZLE_MODE_BITS.items()}
SWIZZLE_ALIGNMENT: dict[str, int] = {mode: s.period_bytes for mode, s in SWIZZLE_MODES.items()}


def _checked(t: object, what: str, *, positive: bool) -> None:
    """``t`` is an IntTuple within the bounds (nesting, integers, 64 bits), walked without recursion."""
    stack: list[tuple[object, int]] = [(t, 0)]
    count = 0
    while stack:
        x, depth = stack.pop()
        if isinstance(x, tuple):
            if depth >= _limits.MAX_NESTING or not x:
                raise ValueError(
                    f"layout {what} nests more than {_limits.MAX_NESTING} levels deep"
                    if x
                    else f"layout {what} holds an empty tuple"
                )
            stack.extend((y, depth + 1) for y in x)
            continue
        if isinstance(x, bool) or not isinstance(x, int):
            raise TypeError(f"layout {what} holds {shorten(x)}, not an integer")
        count += 1
        if count > _limits.MAX_MODES:
            raise ValueError(f"layout {what} holds more than {_limits.MAX_MODES} integers")
        if not _limits.INT64_MIN <= x <= _limits.INT64_MAX:
            raise ValueError(f"layout {what} holds {int_size(x)}, which does not fit in 64 bits")
        if positive and x <= 0:
            raise ValueError(f"layout {what}: every extent must be positive, got {x}")


def _flat(t: IntTuple) -> list[int]:
    return [t] if isinstance(t, int) else [x for sub in t for x in _flat(sub)]


def _size(t: IntTuple) -> int:
    n = 1
    for x in _flat(t):
        n *= x
    return n


@dataclass(frozen=True)
class CuteLayout:
    """A CuTe layout (shape:stride in elements), with the swizzle and offset of a ComposedLayout."""

    shape: IntTuple
    stride: IntTuple
    swizzle: Swizzle | None = None  # applied to offset + layout(coord), in the swizzle's unit
    offset: int = 0

    def __post_init__(self) -> None:
        _checked(self.shape, "shape", positive=True)
        _checked(self.stride, "stride", positive=False)
        if isinstance(self.offset, bool) or not isinstance(self.offset, int):
            raise TypeError(f"layout offset must be an integer, got {shorten(self.offset)}")
        if not 0 <= self.offset <= _limits.INT64_MAX:
            raise ValueError(f"layout offset must be a non-negative 64-bit integer, got {int_size(self.offset)}")
        if self.swizzle is not None and not isinstance(self.swizzle, Swizzle):
            raise TypeError(f"layout swizzle must be a Swizzle or None, got {shorten(self.swizzle)}")
        if _structure(self.shape) != _structure(self.stride):
            raise ValueError(f"layout {clip(str(self), 120)}: shape and stride differ in structure")

    @property
    def modes(self) -> int:
        return 1 if isinstance(self.shape, int) else len(self.shape)

    def extent(self, mode: int) -> int:
        """Number of coordinates of top-level ``mode``."""
        return _size(self.shape if isinstance(self.shape, int) else self.shape[mode])

    @property
    def size(self) -> int:
        return _size(self.shape)

    @property
    def cosize(self) -> int:
        """One past the largest element offset the layout reaches (before any swizzle)."""
        return 1 + sum((s - 1) * d for s, d in zip(_flat(self.shape), _flat(self.stride)))

    @cached_property
    def _modes(self) -> tuple[tuple[int, tuple[tuple[int, int], ...]], ...]:
        """Each top-level mode's extent and its (sub-extent, stride) pairs, worked out once."""
        shapes = [self.shape] if isinstance(self.shape, int) else list(self.shape)
        strides = [self.stride] if isinstance(self.stride, int) else list(self.stride)
        return tuple((_size(sh), tuple(zip(_flat(sh), _flat(st)))) for sh, st in zip(shapes, strides))

    def __call__(self, *coord: int) -> int:
        """Element offset of ``coord`` (one integer per top-level mode), before the swizzle."""
        modes = self._modes
        if len(coord) != len(modes):
            raise ValueError(f"layout {clip(str(self), 120)} takes {len(modes)} coordinates, got {len(coord)}")
        total = 0
        for c, (extent, pairs) in zip(coord, modes):
            if not 0 <= c < extent:
                raise ValueError(f"coordinate {c} is outside mode of extent {extent} of layout {clip(str(self), 120)}")
            for s, d in pairs:
                total += (c % s) * d
                c //= s
        return total

    def without_swizzle(self) -> CuteLayout:
        return CuteLayout(self.shape, self.stride, None, self.offset)

    def byte_offset(self, coord: tuple[int, ...], element_bytes: int) -> int:
        """Byte offset from the tile's start, with an element swizzle applied (a byte one is the caller's)."""
        off = self.offset + self(*coord)
        if self.swizzle is not None and self.swizzle.unit == "element":
            off = self.swizzle(off)
        return off * element_bytes

    def __str__(self) -> str:
        core = f"{_text(self.shape)}:{_text(self.stride)}"
        if self.swizzle is None:
            return core
        return f"S<{self.swizzle.bits},{self.swizzle.base},{self.swizzle.shift}> o {self.offset} o {core}"


def _structure(t: IntTuple) -> object:
    return None if isinstance(t, int) else tuple(_structure(x) for x in t)


def _text(t: IntTuple) -> str:
    return str(t) if isinstance(t, int) else "(" + ",".join(_text(x) for x in t) + ")"


def parse_cute_layout(layout: object, swizzle_unit: str = "byte") -> CuteLayout:
    """A :class:`CuteLayout` from text (``"(64,8):(1,64)"``, ``"S<3,4,3> o 0 o (8,64):(64,1)"``), a
    :class:`CuteLayout`, or a CuTe DSL layout / ComposedLayout (read through its printed form).

    A swizzle written into a layout (``S<B,M,S> o ...``) is read in ``swizzle_unit``:
    bytes by default, as the CuTe DSL prints a shared-memory ComposedLayout (its
    ``S<3,4,3>`` is the 128B mode whatever the element type: the DSL applies it to the
    byte address of the swizzled smem pointer). Text past the bounds of
    :mod:`smemviz._limits` (length, nesting, integers, swizzle bits) is refused.
    """
    if isinstance(layout, CuteLayout):
        return layout
    text = layout if isinstance(layout, str) else str(layout)
    lt = read_layout_text(text)
    swz = None if lt.swizzle is None else Swizzle(*lt.swizzle, swizzle_unit)
    return CuteLayout(lt.shape, lt.stride, swz, lt.offset)


def parse_swizzle(swizzle: object) -> Swizzle | None:
    """A byte :class:`Swizzle` from a hardware mode ("32B"/"64B"/"128B"), a :class:`Swizzle`, or None."""
    if swizzle is None or isinstance(swizzle, Swizzle):
        return swizzle
    if isinstance(swizzle, str):
        key = swizzle.strip().upper()
        if key in ("NONE", "", "0B"):
            return None
        if key in SWIZZLE_MODES:
            return SWIZZLE_MODES[key]
        raise ValueError(
            f"swizzle {shorten(swizzle)} is not a hardware mode ({', '.join(SWIZZLE_MODES)}) or a Swizzle(B, M, S, unit)"
        )
    raise TypeError(
        f"swizzle must be None, 'NONE', {', '.join(repr(m) for m in SWIZZLE_MODES)} or a Swizzle, "
        f"not {type(swizzle).__name__}"
    )
