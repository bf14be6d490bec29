"""The DSL's experimental front end (``cutlass.cute.experimental``, ``cute_ext``): refused by name.

Its kernels allocate through ``cute_ext.allocate``, which emits ``lir.allocate_buffer``
ops; they become SMEM allocations only in that front end's own lowering
(``lir-to-cute-dsl``), which can also add pipeline barriers and a TMEM-pointer slot
of its own. Capture records what ``cutlass.memory``'s allocators are asked for under
``cute.compile``, so it hooks the experimental front end's traces only to say, per
kernel, what it cannot place and why.
"""

from __future__ import annotations

from typing import Any

__all__ = ["experimental_dsl", "experimental_refusal"]

_EXPERIMENTAL_KINDS = {  # what the experimental front end's kernels allocate: (noun, where from)
    "allocator": ("SMEM allocation", "cutlass.memory.SmemAllocator"),
    "smem": ("SMEM buffer", "cute_ext.allocate"),
    "tmem": ("TMEM buffer", "cute_ext.allocate"),
}


def _counted(n: int, noun: str, origin: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'} ({origin})"


def experimental_dsl() -> Any:
    """The DSL's experimental front end (``cute_ext``), when this DSL version has one."""
    try:
        from cutlass.cutlass_dsl import CuteExperimentalDSL

        return CuteExperimentalDSL._get_dsl()
    except Exception:  # a DSL without it: nothing of it can be traced
        return None


def experimental_refusal(counts: dict[str, int]) -> str:
    """Why a kernel of the experimental front end gets no plan, with what it allocates (``counts`` by kind)."""
    what = " and ".join(_counted(n, *_EXPERIMENTAL_KINDS[k]) for k, n in sorted(counts.items()))
    return (
        "it is compiled by the DSL's experimental front end (cutlass.cute.experimental: "
        f"cute_ext.compile, @cute.experimental.kernel): its buffers ({what}) become allocations only in "
        "that front end's own lowering (lir-to-cute-dsl), which can add barriers and a TMEM-pointer slot "
        "of its own, and capture records only what cutlass.memory's allocators are asked for under cute.compile"
    )
