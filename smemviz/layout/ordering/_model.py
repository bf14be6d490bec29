"""The ordering model: the sync objects, accesses and programs of one kernel.

Capture and declared plans both produce this model; the checker reads only it. Every
class is a frozen dataclass, so a model can be hashed, compared and stored in a plan's
JSON (see ``_json``). Sizes are bytes for shared memory and columns for tensor memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ...hardware import WARP_THREADS

__all__ = [
    "UNREAD",
    "FREE_LOOP",
    "ACCESS_KINDS",
    "PIPELINE_KINDS",
    "Access",
    "BarrierSync",
    "CallSite",
    "CommitGroup",
    "Event",
    "Fence",
    "Group",
    "Init",
    "Loop",
    "NamedBarrier",
    "OrderingModel",
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
]

# the meta key under which a tracer notes what it could not read: the checker reports each
# note as an info finding, and a model with any is incomplete (its errors may follow from them)
UNREAD = "unread"
# the meta key naming a loop id whose count a tracer could not relate to the other loops'
# (``(FREE_LOOP, id)``): the checker tries such loops at counts where every pipeline balances
FREE_LOOP = "free_loop"

# how each pipeline kind's producer and consumer signal (cutlass.pipeline's classes, by kind)
PIPELINE_KINDS = (
    "tma_async",
    "tma_umma",
    "umma_async",
    "async_umma",
    "async",
    "cp_async",
    "tma_store",
    "tma_multi_consumers",
    "order",
)
ACCESS_KINDS = (
    "tma_load",
    "tma_store",
    "wgmma_read",
    "umma_read",
    "umma_write_acc",
    "ld",
    "st",
    "ldmatrix",
    "stmatrix",
    "cp_async",
    "tcgen05_ld",
    "tcgen05_st",
    "tcgen05_cp",
)
Memory = Literal["smem", "tmem"]


@dataclass(frozen=True)
class CallSite:
    """Where in the kernel's source an event is written."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class WarpRole:
    """A warp-specialised branch: the warps ``first_warp .. first_warp + warps - 1``."""

    name: str
    first_warp: int
    warps: int = 1

    @property
    def threads(self) -> int:
        return self.warps * WARP_THREADS

    def warp_text(self) -> str:
        last = self.first_warp + self.warps - 1
        return f"warp {self.first_warp}" if self.warps == 1 else f"warps {self.first_warp}-{last}"


@dataclass(frozen=True)
class Group:
    """A cooperative group of a pipeline side: who arrives, and how many of them."""

    agent: Literal["thread", "warp", "elect"]
    size: int


@dataclass(frozen=True)
class Pipeline:
    """A multi-stage pipeline: one full and one empty mbarrier per stage.

    ``full_count`` / ``empty_count`` are the arrivals each barrier was initialised for
    (None: what the DSL derives from the groups and the multicast CTA count)."""

    name: str
    kind: str
    stages: int
    producer: Group
    consumer: Group
    site: CallSite
    tx_count: int = 0
    barrier_region: str | None = None
    multicast: int = 1
    full_count: int | None = None
    empty_count: int | None = None
    groups: int = 1  # an "order" pipeline: the groups that take turns (its barriers: stages x groups)

    @property
    def producer_arrive_async(self) -> bool:
        """The producer's arrival is made by hardware (expect_tx + TMA, or tcgen05.commit)."""
        return self.kind in ("tma_async", "tma_umma", "tma_multi_consumers", "umma_async")

    @property
    def has_tx(self) -> bool:
        return self.kind in ("tma_async", "tma_umma", "tma_multi_consumers")

    @property
    def consumer_commits(self) -> bool:
        """The consumer releases a stage by ``tcgen05.commit`` (an MMA warp consumes it)."""
        return self.kind in ("tma_umma", "async_umma")

    @property
    def producer_commits(self) -> bool:
        return self.kind == "umma_async"

    def full_init(self) -> int:
        if self.full_count is not None:
            return self.full_count
        return 1 if self.producer_arrive_async else self.producer.size

    def empty_init(self) -> int:
        if self.empty_count is not None:
            return self.empty_count
        return (1 if self.consumer_commits else self.consumer.size) * self.multicast


@dataclass(frozen=True)
class NamedBarrier:
    """A ``bar.sync`` barrier: a generation completes when ``threads`` threads arrived.
    The names ``cta`` and ``cluster`` need no declaration: every role takes part."""

    name: str
    threads: int
    site: CallSite
    barrier_id: int | None = None


@dataclass(frozen=True)
class RegionSpan:
    """Where a region lives: SMEM bytes or TMEM columns, split into ``stages`` equal slots."""

    name: str
    memory: Memory
    start: int
    size: int
    stages: int = 1

    @property
    def slot(self) -> int:
        return self.size // self.stages


# ---- events: each carries its call site; role and loop come from where it sits


@dataclass(frozen=True)
class Rotation:
    """A slot index counted by a loop: at trip ``t`` of loop ``loop`` the access takes slot
    ``(t * per_trip + offset) % stages`` (a rotating epilogue buffer indexed by how many
    tiles the role has done, ``(tiles_done * epi_tiles + i) % stages``)."""

    loop: str
    per_trip: int
    offset: int = 0


@dataclass(frozen=True, kw_only=True)
class Access:
    """A read or write of a region. ``stage``: a fixed slot, a pipeline's name (the slot
    the role's state of that pipeline points at), or None (the whole region, or the slot
    ``rotation`` gives when it is set).
    ``bytes`` is what moves (TMA box bytes; None: the slot), ``barrier`` the pipeline
    whose full barrier a TMA load completes on, ``multicast`` the CTAs it lands in;
    ``state`` the role's state object the slot index comes from (see ``PipelineOp``)."""

    kind: str
    region: str
    site: CallSite
    stage: int | str | None = None
    state: str = ""
    offset: int = 0
    bytes: int | None = None
    barrier: str | None = None
    multicast: int = 1
    rotation: Rotation | None = None


@dataclass(frozen=True, kw_only=True)
class PipelineOp:
    """A pipeline call: producer_acquire / producer_commit / consumer_wait /
    consumer_release / producer_tail / producer_advance / consumer_advance.
    ``arrivals``: how many arrivals it makes as traced (None: what the group
    declares). ``state``: which of the role's ``PipelineState`` objects it takes, where
    a role keeps more than one per side (a WGMMA consumer releasing one stage behind
    the one it reads).

    ``producer_snapshot`` / ``consumer_snapshot`` make ``state`` a copy of the role's state
    ``source`` as it is now (a resource handle: ``handle = consumer.wait_and_advance()``
    keeps the stage it was acquired at; ``handle.release()`` then takes that stage)."""

    op: str
    pipeline: str
    site: CallSite
    arrivals: int | None = None
    state: str = ""
    source: str = ""


@dataclass(frozen=True, kw_only=True)
class SequenceOp:
    """A turn of an ``order`` pipeline (``PipelineOrder``: groups taking turns, a warpgroup
    after the other): ``wait`` for this group's turn (its full barrier of the role's current
    stage, ``stage * groups + group``, at the role's phase), ``arrive`` to hand the turn to
    the next group (``(group + 1) % groups``) and advance. Group 0 starts at phase 1 (its first
    turn is its own)."""

    op: Literal["wait", "arrive"]
    pipeline: str
    site: CallSite
    group: int = 0
    arrivals: int | None = None


@dataclass(frozen=True, kw_only=True)
class BarrierSync:
    """``bar.sync`` (wait=True) or ``bar.arrive`` on a named barrier by the whole role."""

    barrier: str
    site: CallSite
    wait: bool = True
    threads: int | None = None


@dataclass(frozen=True, kw_only=True)
class Fence:
    """A fence: ``proxy_async`` / ``view_async_shared`` order generic writes before
    async-proxy reads; ``mbarrier_init``, ``tcgen05_before`` / ``tcgen05_after`` too."""

    kind: str
    site: CallSite


@dataclass(frozen=True, kw_only=True)
class CommitGroup:
    """Closes the open group of async ops of ``unit`` ("bulk", "wgmma", "cp_async")."""

    unit: str
    site: CallSite


@dataclass(frozen=True, kw_only=True)
class WaitGroup:
    """Waits until at most ``pending`` groups of ``unit`` are outstanding (``read``: only
    until their sources are read, ``cp.async.bulk.wait_group.read``)."""

    unit: str
    site: CallSite
    pending: int = 0
    read: bool = False


@dataclass(frozen=True, kw_only=True)
class Tcgen05Commit:
    """``tcgen05.commit``: an asynchronous arrive on a pipeline's ``side`` barrier of the
    role's current stage, made once every tcgen05 op the role issued before is done."""

    pipeline: str
    side: Literal["full", "empty"]
    site: CallSite


@dataclass(frozen=True, kw_only=True)
class Tcgen05Wait:
    """``tcgen05.wait::ld`` or ``::st``: the role's earlier tcgen05.ld / st are done.
    ``registers``: no wait is written; the thread reads the registers its tcgen05.ld
    filled, which waits for the load (its earlier loads are taken as done with it)."""

    kind: Literal["ld", "st"]
    site: CallSite
    registers: bool = False


@dataclass(frozen=True, kw_only=True)
class TmemAlloc:
    columns: int
    site: CallSite
    cta_group: int = 1


@dataclass(frozen=True, kw_only=True)
class TmemRelinquish:
    site: CallSite


@dataclass(frozen=True, kw_only=True)
class TmemDealloc:
    columns: int
    site: CallSite


@dataclass(frozen=True, kw_only=True)
class Init:
    """Initialisation of a pipeline's barriers (``mbarrier.init`` of every stage)."""

    pipeline: str
    site: CallSite


Event = (
    Access
    | PipelineOp
    | SequenceOp
    | BarrierSync
    | Fence
    | CommitGroup
    | WaitGroup
    | Tcgen05Commit
    | Tcgen05Wait
    | TmemAlloc
    | TmemRelinquish
    | TmemDealloc
    | Init
)


@dataclass(frozen=True)
class Loop:
    """A loop in a role's program. Loops with one ``id`` share one trip count, also
    across roles (the same K-tile count); ``trips`` None: known only at run time.
    ``at_most``: this loop runs ``min(at_most, count)`` trips of its id's count (a
    prefetch of at most as many tiles as there are stages)."""

    id: str
    trips: int | None
    body: tuple[Step, ...]
    at_most: int | None = None


@dataclass(frozen=True)
class When:
    """A block that runs only while the role's ``state`` of a pipeline ``side`` has
    advanced fewer times than loop ``loop``'s count plus ``plus`` (``if
    producer_state.count < k_tile_cnt``: a refill that stops once every tile is loaded)."""

    pipeline: str
    side: Literal["producer", "consumer"]
    loop: str
    body: tuple[Step, ...]
    state: str = ""
    plus: int = 0
    site: CallSite | None = None


Step = Event | Loop | When


@dataclass(frozen=True)
class StateSpec:
    """A role's own ``PipelineState`` for a pipeline side, where it differs from the
    pipeline: its stage count and starting phase (producers start at 1)."""

    pipeline: str
    side: Literal["producer", "consumer"]
    stages: int
    phase: int
    state: str = ""


@dataclass(frozen=True)
class RoleProgram:
    """What one warp role runs, in order."""

    role: WarpRole
    body: tuple[Step, ...]
    states: tuple[StateSpec, ...] = ()


@dataclass(frozen=True)
class OrderingModel:
    """A kernel's ordering: its sync objects, regions and one program per warp role.

    ``prologue`` is run by every thread before the roles branch (barrier inits, the
    TMEM alloc, the CTA sync); only what a ``cta`` or ``cluster`` sync in it closes is
    ordered before the roles."""

    name: str
    pipelines: tuple[Pipeline, ...] = ()
    barriers: tuple[NamedBarrier, ...] = ()
    regions: tuple[RegionSpan, ...] = ()
    programs: tuple[RoleProgram, ...] = ()
    prologue: tuple[Event, ...] = ()
    arch: str | None = None
    meta: tuple[tuple[str, str], ...] = field(default=())  # (UNREAD, what) notes what a tracer could not read

    def pipeline(self, name: str) -> Pipeline:
        for p in self.pipelines:
            if p.name == name:
                return p
        raise KeyError(f"no pipeline named {name!r}")

    def region(self, name: str) -> RegionSpan:
        for r in self.regions:
            if r.name == name:
                return r
        raise KeyError(f"no region named {name!r}")

    @property
    def threads(self) -> int:
        return sum(p.role.threads for p in self.programs)
