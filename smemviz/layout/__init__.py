"""The model: allocations, the allocators that place them, and the frozen plan they compute.

Read this room first; every other room reads its :class:`LayoutPlan`.
"""

from ._access import SmemAccess
from ._allocation import ResourceContext, SmemAllocation, TmemAllocation
from ._allocator import SmemAllocator, TmemAllocator, compare_layouts, groups_to_lifetimes
from ._plan import AliasGroup, CapacityCheck, LayoutPlan, Region
from ._plan_json import plan_from_dict, plan_from_json

__all__ = [
    "SmemAllocation",
    "SmemAccess",
    "TmemAllocation",
    "ResourceContext",
    "SmemAllocator",
    "TmemAllocator",
    "compare_layouts",
    "groups_to_lifetimes",
    "LayoutPlan",
    "Region",
    "AliasGroup",
    "CapacityCheck",
    "plan_from_dict",
    "plan_from_json",
]
