"""Unrolling: each role's program as the flat list of low-level operations it runs for
given trip counts, with every pipeline call turned into what it does to a barrier.

A pipeline call depends on the role's ``PipelineState`` (stage index and phase), which
advances as the loops run, so it is resolved here, iteration by iteration: the
checker after this sees only waits on a barrier parity, arrivals, tx bytes and
accesses to concrete slots.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ...layout.ordering import _model as m

__all__ = ["BarrierKey", "Op", "unroll"]

# (pipeline, "full" | "empty", stage)
BarrierKey = tuple[str, str, int]


@dataclass(frozen=True)
class Op:
    """One low-level operation of a role, in program order.

    ``what``: access, arrive, wait, bar, fence, commit_group, wait_group, tc_commit,
    cp_arrive (``cp.async.mbarrier.arrive``), tc_wait, alloc, relinquish, dealloc, init."""

    what: str
    event: m.Event
    iters: tuple[tuple[str, int], ...] = ()
    barrier: BarrierKey | None = None
    parity: int = 0
    arrivals: int = 0
    tx: int = 0
    stage: int | None = None
    unit: str = ""
    pending: int = 0


@dataclass
class _Cursor:
    stages: int
    index: int
    phase: int
    count: int = 0  # how many times it advanced

    def advance(self) -> None:
        self.count += 1
        self.index += 1
        if self.index >= self.stages:
            self.index = 0
            self.phase ^= 1


class _Unroller:
    def __init__(self, model: m.OrderingModel, program: m.RoleProgram | None, trips: Mapping[str, int]):
        self.model = model
        self.program = program
        self.trips = trips
        self.cursors: dict[tuple[str, str, str], _Cursor] = {}
        self.ops: list[Op] = []
        self.iters: tuple[tuple[str, int], ...] = ()
        self.counts: dict[str, int] = {}  # loop id -> its count (before any at_most)
        self.unread: list[str] = []

    def cursor(self, pipeline: str, side: str, state: str = "") -> _Cursor:
        """The role's ``PipelineState`` for a pipeline side (one per state object)."""
        key = (pipeline, side, state)
        if key not in self.cursors:
            p = self.model.pipeline(pipeline)
            stages, phase = p.stages, (1 if side == "producer" else 0)
            for spec in self.program.states if self.program else ():
                if (spec.pipeline, spec.side, spec.state) == key:
                    stages, phase = spec.stages, spec.phase
            self.cursors[key] = _Cursor(stages, 0, phase)
        return self.cursors[key]

    def cursor_of(self, pipeline: str, state: str = "") -> _Cursor:
        """The state an access or a commit indexes by: the producer's if the role has one."""
        if (pipeline, "producer", state) in self.cursors:
            return self.cursors[(pipeline, "producer", state)]
        return self.cursor(pipeline, "consumer", state)

    def emit(self, what: str, event: m.Event, **kw: object) -> None:
        self.ops.append(Op(what, event, self.iters, **kw))  # type: ignore[arg-type]

    def run(self, steps: tuple[m.Step, ...]) -> None:
        for step in steps:
            if isinstance(step, m.Loop):
                self.loop(step)
                continue
            if isinstance(step, m.When):
                self.when(step)
                continue
            try:
                self.event(step)
            except KeyError as exc:  # a pipeline or region the model does not declare
                self.unread.append(f"{exc.args[0]} (at {step.site})")

    def loop(self, loop: m.Loop) -> None:
        count = loop.trips if loop.trips is not None else self.trips.get(loop.id, 1)
        self.counts.setdefault(loop.id, count)
        if loop.at_most is not None:
            count = min(count, max(loop.at_most, 0))
        outer = self.iters
        for i in range(count):
            self.iters = (*outer, (loop.id, i))
            self.run(loop.body)
        self.iters = outer

    def when(self, w: m.When) -> None:
        """Run the block if the state's count is below the loop's count (plus ``plus``)."""
        count = self.counts.get(w.loop, self.trips.get(w.loop, _static_counts(self.model).get(w.loop)))
        if count is None:
            self.unread.append(f"a block guarded by loop {w.loop!r}'s count, which is not known there (at {w.site})")
            self.run(w.body)
            return
        try:
            cur = self.cursor(w.pipeline, w.side, w.state)
        except KeyError as exc:
            self.unread.append(f"{exc.args[0]} (at {w.site})")
            return
        if cur.count < count + w.plus:
            self.run(w.body)

    def event(self, e: m.Event) -> None:  # noqa: C901 - one branch per event type
        if isinstance(e, m.PipelineOp):
            self.pipeline_op(e)
        elif isinstance(e, m.SequenceOp):
            self.sequence_op(e)
        elif isinstance(e, m.Access):
            self.access(e)
        elif isinstance(e, m.BarrierSync):
            self.emit("bar", e)
        elif isinstance(e, m.Fence):
            self.emit("fence", e)
        elif isinstance(e, m.CommitGroup):
            self.emit("commit_group", e, unit=e.unit)
        elif isinstance(e, m.WaitGroup):
            self.emit("wait_group", e, unit=e.unit, pending=e.pending)
        elif isinstance(e, m.Tcgen05Commit):
            cur = self.cursor_of(e.pipeline)
            self.emit("tc_commit", e, barrier=(e.pipeline, e.side, cur.index), arrivals=1)
        elif isinstance(e, m.Tcgen05Wait):
            self.emit("tc_wait", e, unit=e.kind)
        elif isinstance(e, m.TmemAlloc):
            self.emit("alloc", e)
        elif isinstance(e, m.TmemRelinquish):
            self.emit("relinquish", e)
        elif isinstance(e, m.TmemDealloc):
            self.emit("dealloc", e)
        elif isinstance(e, m.Init):
            self.emit("init", e)

    def access(self, e: m.Access) -> None:
        stage: int | None
        if isinstance(e.stage, str):
            stage = self.cursor_of(e.stage, e.state).index
        elif e.stage is None and e.rotation is not None:
            stage = self.rotated(e, e.rotation)
        else:
            stage = e.stage
        barrier_name = e.barrier if e.barrier is not None else (e.stage if isinstance(e.stage, str) else None)
        barrier: BarrierKey | None = None
        tx = 0
        if e.kind == "tma_load" and barrier_name is not None:
            barrier = (barrier_name, "full", self.cursor_of(barrier_name, e.state).index)
            size = e.bytes if e.bytes is not None else self.model.region(e.region).slot
            tx = size * e.multicast
        self.emit("access", e, stage=stage, barrier=barrier, tx=tx)

    def rotated(self, e: m.Access, rot: m.Rotation) -> int | None:
        trip = dict(self.iters).get(rot.loop)
        if trip is None:
            self.unread.append(f"{e.kind} at {e.site}: its slot counts trips of loop {rot.loop!r}, which it is not in")
            return None
        return (trip * rot.per_trip + rot.offset) % max(self.model.region(e.region).stages, 1)

    def pipeline_op(self, e: m.PipelineOp) -> None:
        p = self.model.pipeline(e.pipeline)
        if e.op in ("producer_advance", "consumer_advance"):
            self.cursor(p.name, e.op.split("_")[0], e.state).advance()
            return
        if e.op in ("producer_snapshot", "consumer_snapshot"):
            side = e.op.split("_")[0]
            src = self.cursor(p.name, side, e.source)
            self.cursors[(p.name, side, e.state)] = _Cursor(src.stages, src.index, src.phase, src.count)
            return
        side = "producer" if e.op.startswith("producer") else "consumer"
        cur = self.cursor(p.name, side, e.state)
        if p.kind == "tma_store":
            self.tma_store_op(e, p)
            return
        if e.op == "producer_acquire":
            self.emit("wait", e, barrier=(p.name, "empty", cur.index), parity=cur.phase)
            if p.has_tx:
                arrivals = e.arrivals if e.arrivals is not None else 1
                self.emit("arrive", e, barrier=(p.name, "full", cur.index), arrivals=arrivals, tx=p.tx_count)
        elif e.op == "producer_commit":
            if p.has_tx:
                return  # the TMA's completion fills the stage
            arrivals = e.arrivals if e.arrivals is not None else (1 if p.producer_commits else p.producer.size)
            what = "tc_commit" if p.producer_commits else "cp_arrive" if p.kind == "cp_async" else "arrive"
            self.emit(what, e, barrier=(p.name, "full", cur.index), arrivals=arrivals)
        elif e.op == "consumer_wait":
            self.emit("wait", e, barrier=(p.name, "full", cur.index), parity=cur.phase)
        elif e.op == "consumer_release":
            per_cta = 1 if p.consumer_commits else p.consumer.size
            arrivals = e.arrivals if e.arrivals is not None else per_cta * p.multicast
            what = "tc_commit" if p.consumer_commits else "arrive"
            self.emit(what, e, barrier=(p.name, "empty", cur.index), arrivals=arrivals)
        elif e.op == "producer_tail":
            for _ in range(cur.stages):
                self.emit("wait", e, barrier=(p.name, "empty", cur.index), parity=cur.phase)
                cur.advance()
        else:
            self.unread.append(f"pipeline call {e.op!r} on {p.name!r} at {e.site}")

    def sequence_op(self, e: m.SequenceOp) -> None:
        """A turn of an order pipeline: the group waits its own barrier, arrives on the next one's."""
        p = self.model.pipeline(e.pipeline)
        key = (p.name, "order", str(e.group))
        if key not in self.cursors:
            self.cursors[key] = _Cursor(max(p.stages, 1), 0, 1 if e.group == 0 else 0)
        cur = self.cursors[key]
        groups = max(p.groups, 1)
        if e.op == "wait":
            self.emit("wait", e, barrier=(p.name, "full", cur.index * groups + e.group), parity=cur.phase)
        else:
            arrivals = e.arrivals if e.arrivals is not None else p.producer.size
            target = cur.index * groups + (e.group + 1) % groups
            self.emit("arrive", e, barrier=(p.name, "full", target), arrivals=arrivals)
            cur.advance()

    def tma_store_op(self, e: m.PipelineOp, p: m.Pipeline) -> None:
        """PipelineTmaStore has no barriers: acquire waits for the bulk-group reads,
        commit closes a bulk group."""
        if e.op == "producer_acquire":
            self.emit("wait_group", e, unit="bulk", pending=max(p.stages - 1, 0))
        elif e.op == "producer_commit":
            self.emit("commit_group", e, unit="bulk")
        elif e.op == "producer_tail":
            self.emit("wait_group", e, unit="bulk", pending=0)


def _static_counts(model: m.OrderingModel) -> dict[str, int]:
    """Each loop id's count where some role's loop of that id states it (another role's
    block may be guarded by it)."""
    out: dict[str, int] = {}

    def walk(steps: tuple[m.Step, ...]) -> None:
        for s in steps:
            if isinstance(s, m.Loop):
                if s.trips is not None:
                    out.setdefault(s.id, s.trips)
                walk(s.body)
            elif isinstance(s, m.When):
                walk(s.body)

    for p in model.programs:
        walk(p.body)
    return out


def unroll(
    model: m.OrderingModel, program: m.RoleProgram | None, steps: tuple[m.Step, ...], trips: Mapping[str, int]
) -> tuple[list[Op], list[str]]:
    """The role's operations in order, and what could not be read."""
    u = _Unroller(model, program, trips)
    u.run(steps)
    return u.ops, u.unread
