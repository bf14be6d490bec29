"""Read a layout computed by CUTLASS's own allocators into a :class:`LayoutPlan`.

``cutlass.experimental.task_scheduling.memory`` keeps its declarations in
plain attributes; this reads them (nothing of CUTLASS is imported here), so
every smemviz view works on layouts written against CUTLASS itself.
"""

from __future__ import annotations

from typing import Any

from .. import hardware
from .._errors import LayoutStateError
from ..layout._allocator import barriers_per_stage
from ..layout._build import build_plan
from ..layout._plan import LayoutPlan

__all__ = ["plan_from_cutlass", "is_cutlass_allocator"]


def is_cutlass_allocator(obj: Any) -> bool:
    mod = type(obj).__module__ or ""
    return mod.startswith("cutlass.") and hasattr(obj, "_alias_groups") and hasattr(obj, "_allocations")


def _label(obj: Any) -> str:
    name = getattr(obj, "name", None)
    return name if isinstance(name, str) and name else type(obj).__name__


def plan_from_cutlass(allocator: Any, arch: str | None = None) -> LayoutPlan:
    """The plan of a computed CUTLASS ``SmemAllocator`` or ``TmemAllocator``."""
    if not is_cutlass_allocator(allocator):
        raise TypeError(f"expected a CUTLASS task_scheduling allocator, got {type(allocator).__name__}")
    if not getattr(allocator, "_layout_computed", False):
        raise LayoutStateError(f"call compute_layout() on the CUTLASS {type(allocator).__name__} first")
    is_tmem = type(allocator).__name__.startswith("Tmem")
    aliased: set[int] = getattr(allocator, "_aliased_ids", set())
    seen: set[int] = set()
    standalone = []
    for a in allocator._allocations:
        if id(a) not in aliased and id(a) not in seen:
            seen.add(id(a))
            standalone.append(a)
    if arch is not None:
        arch = hardware.get_arch(arch).name
    if is_tmem:
        return build_plan(
            "tmem",
            standalone,
            allocator._alias_groups,
            allocator._total,
            size_of=lambda a: a.num_columns,
            align_of=lambda a: 1,
            arch=arch,
            source="cutlass",
        )
    stage = hardware.BARRIER_BYTES_PER_STAGE
    barriers = [
        (f"{_label(r)}.barriers", r.pipeline_config.num_stages * stage)
        for r in getattr(allocator, "_barrier_resources", [])
    ] + [
        (f"{_label(g)}.barriers", barriers_per_stage(g) * g.pipeline_config.num_stages * stage)
        for g in getattr(allocator, "_barrier_groups", [])
    ]
    return build_plan(
        "smem",
        standalone,
        allocator._alias_groups,
        allocator._total,
        size_of=lambda a: a.size_bytes,
        align_of=lambda a: a.alignment,
        barriers=barriers,
        tmem_ptr=getattr(allocator, "_tmem_ptr_alloc", None),
        arch=arch,
        source="cutlass",
    )
