"""The rules ``cuTensorMapEncodeTiled`` applies to a tiled TMA descriptor, one function each.

Written from the CUDA driver API's documentation of the call (section "Tensor Map Object
Management") and corrected where the H200's driver (580.159.04, CUDA 13.0) answers otherwise:
``results/tma_descriptor_h200.md`` lists those places, and a CPU test replays every recorded answer.
Each rule yields the problems it finds; a rule that only makes sense once another holds (a box's
inner bytes need a known element size) reads values that the descriptor's own validation already
guaranteed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ._descriptor import TmaDescriptor
from ._enums import ELEMENT_BITS, FLOAT_TYPES, MAX_RANK, PACKED_TYPES, SWIZZLE_SPAN_BYTES

__all__ = ["TmaProblem", "RULES", "NOTES", "DOCUMENTED", "MEASURED", "UNENFORCED"]

DOCUMENTED = "CUDA driver API, cuTensorMapEncodeTiled"
MEASURED = "H200 driver 580.159.04 (results/tma_descriptor_h200.md)"
UNENFORCED = "CUDA driver API, cuTensorMapEncodeTiled; the H200 driver encodes it anyway"

MAX_GLOBAL_ADDRESS = 2**57  # exclusive: 2**57 - 16 was encoded, 2**57 refused
MAX_GLOBAL_DIM = 2**32
MAX_GLOBAL_STRIDE = 2**40  # exclusive
MAX_BOX_DIM = 256
MAX_ELEMENT_STRIDE = 8
_ALIGN16_PACKED = frozenset({"16u4_align16b", "16u6_align16b"})
# swizzles each packed type may use (the documentation's lists, loads and stores together)
_PACKED_SWIZZLES = {
    "16u6_align16b": frozenset({"none", "128B", "128B_atom_32B", "128B_atom_64B"}),
    "16u4_align16b": frozenset({"none", "128B", "128B_atom_32B"}),
}


@dataclass(frozen=True)
class TmaProblem:
    """One broken rule: the parameter, its value, the rule, and where the rule comes from."""

    parameter: str
    value: object
    rule: str
    source: str = DOCUMENTED

    def __str__(self) -> str:
        return f"{self.parameter} = {self.value!r}: {self.rule}"


@dataclass(frozen=True)
class Target:
    """What a rule needs to know of the architecture the descriptor is for."""

    name: str
    number: int  # e.g. 90 for sm_90a
    smem_per_block: int  # bytes a box may take: a CTA's opt-in shared memory


Rule = Callable[[TmaDescriptor, Target], Iterator[TmaProblem]]


def inner_box_bits(d: TmaDescriptor) -> int:
    """The bits one row of the box takes: box_dims[0] elements (packed values count singly)."""
    return d.box_dims[0] * ELEMENT_BITS[d.data_type] if d.box_dims else 0


def _arch(d: TmaDescriptor, t: Target) -> Iterator[TmaProblem]:
    if t.number < 90:
        yield TmaProblem("arch", t.name, "tensor maps need compute capability 9.0 or higher")
    if d.data_type in PACKED_TYPES and t.number < 100:
        yield TmaProblem("data_type", d.data_type, f"the packed types need sm_100 or later, not {t.name}", MEASURED)


def _rank(d: TmaDescriptor, t: Target) -> Iterator[TmaProblem]:
    if not 1 <= d.rank <= MAX_RANK:
        yield TmaProblem("global_dims", d.global_dims, f"the rank (entries of global_dims) must be 1 to {MAX_RANK}")
    elif d.interleave != "none" and d.rank < 3:
        yield TmaProblem("interleave", d.interleave, f"an interleaved tensor needs rank 3 or more, not {d.rank}")


def _address(d: TmaDescriptor, t: Target) -> Iterator[TmaProblem]:
    need, why = 16, "a multiple of 16"
    if d.interleave == "32B":
        need, why = 32, "a multiple of 32 with interleave '32B'"
    elif d.data_type in _ALIGN16_PACKED:
        need, why = 32, f"a multiple of 32 for {d.data_type}"
    if d.global_address % need:
        yield TmaProblem("global_address", d.global_address, f"must be {why} (it is {d.global_address % need} past)")
    if d.global_address >= MAX_GLOBAL_ADDRESS:
        yield TmaProblem("global_address", d.global_address, "must be below 2**57", MEASURED)


def _dims(d: TmaDescriptor, t: Target) -> Iterator[TmaProblem]:
    for i, dim in enumerate(d.global_dims):
        if not 1 <= dim <= MAX_GLOBAL_DIM:
            yield TmaProblem(f"global_dims[{i}]", dim, "each dimension must be 1 to 2**32")
    if d.global_dims and d.data_type in _ALIGN16_PACKED and d.global_dims[0] % 128:
        yield TmaProblem("global_dims[0]", d.global_dims[0], f"must be a multiple of 128 for {d.data_type}")
    if d.global_dims and d.data_type == "16u4_align8b" and d.global_dims[0] % 2:
        yield TmaProblem("global_dims[0]", d.global_dims[0], "must be even for 16u4_align8b")


def _strides(d: TmaDescriptor, t: Target) -> Iterator[TmaProblem]:
    multiple = 32 if d.interleave == "32B" or d.data_type in _ALIGN16_PACKED else 16
    for i, stride in enumerate(d.global_strides):
        if stride % multiple:
            yield TmaProblem(f"global_strides[{i}]", stride, f"each byte stride must be a multiple of {multiple}")
        if stride >= MAX_GLOBAL_STRIDE:
            yield TmaProblem(f"global_strides[{i}]", stride, "each byte stride must be below 2**40")


def _box(d: TmaDescriptor, t: Target) -> Iterator[TmaProblem]:
    for i, box in enumerate(d.box_dims):
        if not 1 <= box <= MAX_BOX_DIM:
            yield TmaProblem(f"box_dims[{i}]", box, f"each box dimension must be 1 to {MAX_BOX_DIM}")
    if not d.box_dims:
        return
    if inner_box_bits(d) % 128:
        # documented for interleave "none" only; the driver refuses it under every interleave
        yield TmaProblem(
            "box_dims[0]",
            d.box_dims[0],
            f"the box's inner bytes ({inner_box_bits(d) / 8:g}) must be a multiple of 16",
            DOCUMENTED if d.interleave == "none" else MEASURED,
        )
    if d.data_type in _ALIGN16_PACKED and d.box_dims[0] != 128:
        yield TmaProblem("box_dims[0]", d.box_dims[0], f"must be 128 for {d.data_type}")


def box_bytes(d: TmaDescriptor) -> int:
    """The bytes the driver counts for one box: floor(box / element stride) elements per dimension.

    The documentation says TMA loads ceil(box / stride) elements along a dimension; the driver's size
    test counts the floor (a box narrower than its stride counts as empty), the stride of dimension 0
    included even without interleave. Measured on the H200: see results/tma_descriptor_h200.md.
    """
    elements = 1
    for box, stride in zip(d.box_dims, d.element_strides):
        elements *= box // stride if stride else box
    return elements * ELEMENT_BITS[d.data_type] // 8


def _box_size(d: TmaDescriptor, t: Target) -> Iterator[TmaProblem]:
    if any(not 1 <= b <= MAX_BOX_DIM for b in d.box_dims) or any(not 1 <= e for e in d.element_strides):
        return  # a box dimension or stride out of range is refused on its own
    size = box_bytes(d)
    if size > t.smem_per_block:
        yield TmaProblem(
            "box_dims",
            d.box_dims,
            f"the box takes {size} B (floor(box / element stride) elements per dimension), more than the "
            f"{t.smem_per_block} B of shared memory a CTA of {t.name} can have",
            MEASURED,
        )


def _element_strides(d: TmaDescriptor, t: Target) -> Iterator[TmaProblem]:
    for i, stride in enumerate(d.element_strides):
        if not 1 <= stride <= MAX_ELEMENT_STRIDE:
            yield TmaProblem(f"element_strides[{i}]", stride, f"each element stride must be 1 to {MAX_ELEMENT_STRIDE}")


def _swizzle(d: TmaDescriptor, t: Target) -> Iterator[TmaProblem]:
    span = SWIZZLE_SPAN_BYTES[d.swizzle]
    if d.interleave == "none" and span and d.box_dims and inner_box_bits(d) > span * 8:
        yield TmaProblem(
            "box_dims[0]",
            d.box_dims[0],
            f"the box's inner bytes ({inner_box_bits(d) / 8:g}) exceed the {span} B span of swizzle {d.swizzle!r}",
        )
    if d.swizzle.startswith("128B_atom") and t.number < 100:
        yield TmaProblem("swizzle", d.swizzle, f"the 128B atom swizzles need sm_100 or later, not {t.name}", MEASURED)
    allowed = _PACKED_SWIZZLES.get(d.data_type)
    if allowed is not None and d.swizzle not in allowed:
        yield TmaProblem("swizzle", d.swizzle, f"{d.data_type} takes only swizzle {', '.join(sorted(allowed))}")
    if d.data_type == "16u6_align16b" and d.interleave != "none":
        yield TmaProblem("interleave", d.interleave, "16u6_align16b needs interleave 'none'")


def _oob_fill(d: TmaDescriptor, t: Target) -> Iterator[TmaProblem]:
    if d.oob_fill != "none" and (d.data_type not in FLOAT_TYPES or d.data_type in PACKED_TYPES):
        yield TmaProblem("oob_fill", d.oob_fill, f"a NaN fill needs a floating-point data type, not {d.data_type}")


def _interleave_swizzle(d: TmaDescriptor, t: Target) -> Iterator[TmaProblem]:
    if d.interleave == "32B" and d.swizzle != "32B":
        yield TmaProblem(
            "swizzle", d.swizzle, "the documentation pairs interleave '32B' with swizzle '32B'", UNENFORCED
        )


def _overlapping_rows(d: TmaDescriptor, t: Target) -> Iterator[TmaProblem]:
    if d.interleave != "none" or not d.global_strides:
        return  # an interleaved tensor's first dimension is not its row
    reach = -(-d.global_dims[0] * ELEMENT_BITS[d.data_type] // 8)  # bytes of one row
    for i, stride in enumerate(d.global_strides):
        if stride < reach:
            yield TmaProblem(
                f"global_strides[{i}]",
                stride,
                f"the rows it steps over take {reach} B, so they overlap (the documentation asks for padding >= 0)",
                UNENFORCED,
            )
        reach = stride * d.global_dims[i + 1]


def _ignored_element_stride(d: TmaDescriptor, t: Target) -> Iterator[TmaProblem]:
    if d.interleave == "none" and d.element_strides and d.element_strides[0] != 1:
        yield TmaProblem(
            "element_strides[0]",
            d.element_strides[0],
            "TMA ignores the first element stride without interleave (the driver still counts it in the box size)",
            UNENFORCED,
        )


# what the documentation asks that the driver does not refuse: reported beside the answer, not in it
NOTES: tuple[Rule, ...] = (_interleave_swizzle, _overlapping_rows, _ignored_element_stride)

RULES: tuple[Rule, ...] = (
    _arch,
    _rank,
    _address,
    _dims,
    _strides,
    _box,
    _box_size,
    _element_strides,
    _swizzle,
    _oob_fill,
)
