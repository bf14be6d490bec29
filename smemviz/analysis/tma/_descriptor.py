"""A TMA descriptor's parameters, checked for type and range before any rule reads them.

The check takes what ``cuTensorMapEncodeTiled`` takes, by name; a value the driver could not even be
handed (a string for a dimension, a negative stride, a swizzle it has no enum for, lists of the wrong
lengths) is a mistake in the call, not a broken rule, so it raises here, naming the parameter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ._enums import DATA_TYPES, INTERLEAVES, L2_PROMOTIONS, OOB_FILLS, SWIZZLES

__all__ = ["TmaDescriptor", "descriptor_of"]

_U32 = 2**32 - 1  # boxDim and elementStrides are cuuint32_t
_U64 = 2**64 - 1  # globalDim, globalStrides and the address are 64-bit
_MAX_LISTED_RANK = 8  # longer lists are a mistake in the call, not a rank the driver judges


@dataclass(frozen=True)
class TmaDescriptor:
    """The parameters of one ``cuTensorMapEncodeTiled`` call, normalised (names as the enums spell them)."""

    data_type: str
    global_dims: tuple[int, ...]
    global_strides: tuple[int, ...]
    box_dims: tuple[int, ...]
    element_strides: tuple[int, ...]
    interleave: str
    swizzle: str
    global_address: int
    l2_promotion: str
    oob_fill: str

    @property
    def rank(self) -> int:
        return len(self.global_dims)


def _choice(parameter: str, value: object, names: Mapping[str, int]) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{parameter} must be a name (one of {', '.join(names)}), got {value!r}")
    by_lower = {name.lower(): name for name in names}
    name = by_lower.get(value.strip().lower())
    if name is None:
        raise ValueError(f"{parameter} {value!r} is not one of {', '.join(names)}")
    return name


def _count(parameter: str, value: object, top: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{parameter} must hold integers, got {value!r}")
    if not 0 <= value <= top:
        raise ValueError(f"{parameter} holds {value}, outside the driver's type (0 .. {top})")
    return value


def _counts(parameter: str, values: object, top: int) -> tuple[int, ...]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise TypeError(f"{parameter} must be a list or tuple of integers, got {values!r}")
    if len(values) > _MAX_LISTED_RANK:
        raise ValueError(f"{parameter} has {len(values)} entries; a tensor map has at most 5 dimensions")
    return tuple(_count(parameter, v, top) for v in values)


def descriptor_of(  # noqa: PLR0913 - the driver call's own parameters
    data_type: object,
    global_dims: object,
    global_strides: object,
    box_dims: object,
    element_strides: object,
    interleave: object,
    swizzle: object,
    global_address: object,
    l2_promotion: object,
    oob_fill: object,
) -> TmaDescriptor:
    """Validate and normalise the call's arguments; TypeError/ValueError name the parameter."""
    dims = _counts("global_dims", global_dims, _U64)
    strides = _counts("global_strides", global_strides, _U64)
    box = _counts("box_dims", box_dims, _U32)
    rank = len(dims)
    if len(strides) != max(rank - 1, 0):
        raise ValueError(
            f"global_strides has {len(strides)} entries; a rank-{rank} tensor has {max(rank - 1, 0)} "
            "(the byte strides of every dimension but the first)"
        )
    if len(box) != rank:
        raise ValueError(f"box_dims has {len(box)} entries; global_dims has {rank}")
    estrides = (1,) * rank if element_strides is None else _counts("element_strides", element_strides, _U32)
    if len(estrides) != rank:
        raise ValueError(f"element_strides has {len(estrides)} entries; global_dims has {rank}")
    return TmaDescriptor(
        _choice("data_type", data_type, DATA_TYPES),
        dims,
        strides,
        box,
        estrides,
        _choice("interleave", interleave, INTERLEAVES),
        _choice("swizzle", swizzle, SWIZZLES),
        _count("global_address", global_address, _U64),
        _choice("l2_promotion", l2_promotion, L2_PROMOTIONS),
        _choice("oob_fill", oob_fill, OOB_FILLS),
    )
