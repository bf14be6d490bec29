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

import re
from dataclasses import dataclass
from typing import TypeAlias

from ... import hardware

__all__ = ["Layout", "Swizzle", "SWIZZLE_MODES", "SWIZZLE_ALIGNMENT", "parse_layout", "parse_swizzle"]

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
        if self.unit not in ("byte", "element"):
            raise ValueError(f"Swizzle unit must be 'byte' or 'element', got {self.unit!r}")

    def __call__(self, offset: int) -> int:
        mask = ((1 << self.bits) - 1) << self.base
        return offset ^ ((offset >> self.shift) & mask)

    def in_bytes(self, element_bytes: int) -> Swizzle:
        """The same permutation stated on byte offsets, for elements of ``element_bytes``."""
        if self.unit == "byte":
            return self
        if element_bytes & (element_bytes - 1):
            raise ValueError(f"an element swizzle needs a power-of-two element size, got {element_bytes} B")
        return Swizzle(self.bits, self.base + element_bytes.bit_length() - 1, self.shift, "byte")

    @property
    def period_bytes(self) -> int:
        """Bytes after which a byte swizzle repeats: the alignment its base needs."""
        return 1 << (self.base + self.shift + self.bits) if self.bits else 1

    def __str__(self) -> str:
        return f"Swizzle({self.bits}, {self.base}, {self.shift}) in {self.unit}s"


# the hardware's swizzle modes (TMA, WGMMA descriptors) as byte swizzles, and the alignment each needs
SWIZZLE_MODES: dict[str, Swizzle] = {mode: Swizzle(*bits) for mode, bits in hardware.SWIZZLE_MODE_BITS.items()}
SWIZZLE_ALIGNMENT: dict[str, int] = {mode: s.period_bytes for mode, s in SWIZZLE_MODES.items()}


def _flat(t: IntTuple) -> list[int]:
    return [t] if isinstance(t, int) else [x for sub in t for x in _flat(sub)]


def _size(t: IntTuple) -> int:
    n = 1
    for x in _flat(t):
        n *= x
    return n


@dataclass(frozen=True)
class Layout:
    """A CuTe layout (shape:stride in elements), with the swizzle and offset of a ComposedLayout."""

    shape: IntTuple
    stride: IntTuple
    swizzle: Swizzle | None = None  # applied to offset + layout(coord), in the swizzle's unit
    offset: int = 0

    def __post_init__(self) -> None:
        if _structure(self.shape) != _structure(self.stride):
            raise ValueError(f"layout {self}: shape and stride differ in structure")
        if any(s <= 0 for s in _flat(self.shape)):
            raise ValueError(f"layout {self}: every extent must be positive")

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

    def __call__(self, *coord: int) -> int:
        """Element offset of ``coord`` (one integer per top-level mode), before the swizzle."""
        shapes = [self.shape] if isinstance(self.shape, int) else list(self.shape)
        strides = [self.stride] if isinstance(self.stride, int) else list(self.stride)
        if len(coord) != len(shapes):
            raise ValueError(f"layout {self} takes {len(shapes)} coordinates, got {len(coord)}")
        total = 0
        for c, sh, st in zip(coord, shapes, strides):
            extent = _size(sh)
            if not 0 <= c < extent:
                raise ValueError(f"coordinate {c} is outside mode of extent {extent} of layout {self}")
            for s, d in zip(_flat(sh), _flat(st)):
                total += (c % s) * d
                c //= s
        return total

    def without_swizzle(self) -> Layout:
        return Layout(self.shape, self.stride, None, self.offset)

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


_TOKEN = re.compile(r"\s*(\(|\)|,|-?\d+)")


def _parse_tuple(text: str, what: str) -> IntTuple:
    pos = 0
    tokens: list[str] = []
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ValueError(f"cannot read {what} {text!r} at character {pos}")
        tokens.append(m.group(1))
        pos = m.end()

    def parse(i: int) -> tuple[IntTuple, int]:
        if i >= len(tokens):
            raise ValueError(f"{what} {text!r} ends early")
        if tokens[i] == "(":
            items: list[IntTuple] = []
            i += 1
            while True:
                item, i = parse(i)
                items.append(item)
                if i < len(tokens) and tokens[i] == ",":
                    i += 1
                    continue
                if i < len(tokens) and tokens[i] == ")":
                    return tuple(items), i + 1
                raise ValueError(f"{what} {text!r}: expected ',' or ')'")
        if tokens[i] in (")", ","):
            raise ValueError(f"{what} {text!r}: unexpected {tokens[i]!r}")
        return int(tokens[i]), i + 1

    value, end = parse(0)
    if end != len(tokens):
        raise ValueError(f"{what} {text!r}: text after the end")
    return value


_COMPOSED = re.compile(r"^\s*S<\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*>\s*o\s*(?:(\d+)\s*o\s*)?(.*)$")


def parse_layout(layout: object, swizzle_unit: str = "byte") -> Layout:
    """A :class:`Layout` from text (``"(64,8):(1,64)"``, ``"S<3,4,3> o 0 o (8,64):(64,1)"``), a
    :class:`Layout`, or a CuTe DSL layout / ComposedLayout (read through its printed form).

    A swizzle written into a layout (``S<B,M,S> o ...``) is read in ``swizzle_unit``:
    bytes by default, as the CuTe DSL prints a shared-memory ComposedLayout (its
    ``S<3,4,3>`` is the 128B mode whatever the element type: the DSL applies it to the
    byte address of the swizzled smem pointer).
    """
    if isinstance(layout, Layout):
        return layout
    text = layout if isinstance(layout, str) else str(layout)
    swz = None
    offset = 0
    m = _COMPOSED.match(text)
    if m:
        swz = Swizzle(int(m.group(1)), int(m.group(2)), int(m.group(3)), swizzle_unit)
        offset = int(m.group(4) or 0)
        text = m.group(5)
    if ":" not in text:
        raise ValueError(f"layout {text!r} is not CuTe's 'shape:stride' form")
    shape_text, stride_text = text.split(":", 1)
    shape = _parse_tuple(shape_text, "layout shape")
    stride = _parse_tuple(stride_text, "layout stride")
    return Layout(shape, stride, swz, offset)


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
            f"swizzle {swizzle!r} is not a hardware mode ({', '.join(SWIZZLE_MODES)}) or a Swizzle(B, M, S, unit)"
        )
    raise TypeError(
        f"swizzle must be None, 'NONE', {', '.join(repr(m) for m in SWIZZLE_MODES)} or a Swizzle, "
        f"not {type(swizzle).__name__}"
    )
