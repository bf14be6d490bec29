"""``check_tma_descriptor``: will the driver encode this TMA descriptor? Answered on the CPU.

A box whose inner bytes exceed the swizzle span, or a stride that is not a multiple of 16, compiles
and then fails when the driver encodes the descriptor at launch. The check applies the same rules
first, so that such a descriptor is refused where it is written, with the parameter named.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ...hardware import get_arch
from ._descriptor import TmaDescriptor, descriptor_of
from ._rules import NOTES, RULES, Target, TmaProblem

__all__ = ["TmaDescriptorCheck", "check_tma_descriptor"]


@dataclass(frozen=True)
class TmaDescriptorCheck:
    """The check's answer: ``ok`` when the driver would encode the descriptor, else the problems.

    ``notes`` are what the documentation asks that the driver does not refuse (rows that overlap,
    interleave '32B' without swizzle '32B'): worth a look, but they leave ``ok`` alone.
    """

    descriptor: TmaDescriptor
    arch: str
    problems: tuple[TmaProblem, ...]
    notes: tuple[TmaProblem, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems

    def __iter__(self) -> Iterator[TmaProblem]:
        return iter(self.problems)

    def __len__(self) -> int:
        return len(self.problems)

    def lines(self) -> list[str]:
        """One line per problem, then per note, as a report prints them."""
        return [f"error: {p}" for p in self.problems] + [f"note: {n}" for n in self.notes]


def check_tma_descriptor(  # noqa: PLR0913 - the driver call's own parameters
    data_type: str,
    global_dims: Sequence[int],
    global_strides: Sequence[int],
    box_dims: Sequence[int],
    element_strides: Sequence[int] | None = None,
    interleave: str = "none",
    swizzle: str = "none",
    global_address: int = 0,
    l2_promotion: str = "none",
    oob_fill: str = "none",
    *,
    arch: str = "sm_90a",
) -> TmaDescriptorCheck:
    """Check a tiled TMA descriptor against the rules of ``cuTensorMapEncodeTiled``.

    The parameters mirror the driver's: ``global_dims``, ``box_dims`` and ``element_strides`` in
    elements, innermost first; ``global_strides`` in bytes, one fewer than the dimensions;
    ``element_strides`` defaults to all ones. Names are the enums' in lower case: ``data_type``
    ``"float16"``, ``interleave`` ``"none"``/``"16B"``/``"32B"``, ``swizzle`` ``"none"``/``"32B"``/
    ``"64B"``/``"128B"``/``"128B_atom_32B"``/..., ``l2_promotion`` ``"none"``/``"64B"``/``"128B"``/
    ``"256B"``, ``oob_fill`` ``"none"``/``"nan_request_zero_fma"``.

    Raises TypeError or ValueError, naming the parameter, for a value the driver could not be handed
    at all; a value it would refuse is a problem in the answer instead.
    """
    target_arch = get_arch(arch)
    descriptor = descriptor_of(
        data_type,
        global_dims,
        global_strides,
        box_dims,
        element_strides,
        interleave,
        swizzle,
        global_address,
        l2_promotion,
        oob_fill,
    )
    target = Target(target_arch.name, target_arch.number, target_arch.smem_per_block)
    problems = tuple(p for rule in RULES for p in rule(descriptor, target))
    notes = tuple(n for rule in NOTES for n in rule(descriptor, target))
    return TmaDescriptorCheck(descriptor, target_arch.name, problems, notes)
