"""Ordering: whether a kernel's sharing of SMEM and TMEM bytes is safe.

Two buffers share bytes safely only if the last access of one is ordered before the
first write of the other: by a pipeline's mbarriers, a named barrier, a
``wait_group``, a ``tcgen05.commit``, a proxy fence. ``OrderingModel`` records a
kernel's sync objects, accesses and per-role programs (capture and declared plans
both produce it; ``to_dict`` / ``from_dict`` carry it in JSON); ``check_ordering``
runs it under the mbarrier rules and returns lint findings and every alias with its
edge; ``needed_edges`` / ``plan_needs`` state the edge each alias of a declared plan
needs before the kernel exists.
A tracer records flat ``(event, Context)`` pairs; ``programs_from_trace`` nests them.
"""

from ...layout.ordering._json import from_dict, to_dict
from ...layout.ordering._model import (
    ACCESS_KINDS,
    FREE_LOOP,
    PIPELINE_KINDS,
    Access,
    BarrierSync,
    CallSite,
    CommitGroup,
    Event,
    Fence,
    Group,
    Init,
    Loop,
    NamedBarrier,
    OrderingModel,
    Pipeline,
    PipelineOp,
    RegionSpan,
    RoleProgram,
    Rotation,
    SequenceOp,
    StateSpec,
    Step,
    Tcgen05Commit,
    Tcgen05Wait,
    TmemAlloc,
    TmemDealloc,
    TmemRelinquish,
    WaitGroup,
    WarpRole,
    When,
)
from ...layout.ordering._trace import Context, LoopInfo, contexts, programs_from_trace
from ._check import check_ordering, trip_cases
from ._edges import needed_edge
from ._plan import AliasNeed, PlanNeeds, needed_edges, plan_needs
from ._result import AliasEdge, OrderingReport

__all__ = [
    "ACCESS_KINDS",
    "FREE_LOOP",
    "PIPELINE_KINDS",
    "Access",
    "AliasEdge",
    "AliasNeed",
    "BarrierSync",
    "CallSite",
    "CommitGroup",
    "Context",
    "Event",
    "Fence",
    "Group",
    "Init",
    "Loop",
    "LoopInfo",
    "NamedBarrier",
    "OrderingModel",
    "OrderingReport",
    "PlanNeeds",
    "Pipeline",
    "PipelineOp",
    "RegionSpan",
    "RoleProgram",
    "Rotation",
    "SequenceOp",
    "StateSpec",
    "Step",
    "Tcgen05Commit",
    "Tcgen05Wait",
    "TmemAlloc",
    "TmemDealloc",
    "TmemRelinquish",
    "WaitGroup",
    "WarpRole",
    "When",
    "check_ordering",
    "contexts",
    "from_dict",
    "needed_edge",
    "needed_edges",
    "plan_needs",
    "programs_from_trace",
    "to_dict",
    "trip_cases",
]
