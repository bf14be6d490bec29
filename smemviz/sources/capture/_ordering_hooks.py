"""The DSL calls capture wraps to record a kernel's ordering, and what each one notes.

Pipelines (``cutlass.pipeline``'s ``create`` and their producer / consumer calls),
``PipelineState`` objects and their ``advance``, ``cute.copy`` and ``cute.gemm`` on
SMEM / TMEM tensors, fences, named barriers and CTA / cluster syncs, bulk and
WGMMA commit / wait groups, ``tcgen05.commit`` and TMEM alloc / relinquish /
dealloc. Each wrapper calls the original first or last and returns what it
returns, so the kernel is unchanged; a wrapper that cannot read a call notes
what it could not read instead (the check then says so). The DSL's own calls
made inside a pipeline call are part of that call and are not recorded again.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from ...layout.ordering import _model as m
from ._ordering_ir import TraceContext, pointer_offset, raw_value, trace_context
from ._where import _assigned_name, _package_dirs, call_site

__all__ = ["GemmOperand", "OrderingTrace", "PipelineProbe", "RawEvent", "RegionView", "ordering_targets"]

# the pipeline call in progress: "op" (its inner DSL calls are part of it) or "create"
_INSIDE: ContextVar[str] = ContextVar("smemviz_capture_ordering_inside", default="")

PIPELINE_CLASSES = {
    "PipelineTmaAsync": "tma_async",
    "PipelineTmaUmma": "tma_umma",
    "PipelineUmmaAsync": "umma_async",
    "PipelineAsyncUmma": "async_umma",
    "PipelineAsync": "async",
    "PipelineCpAsync": "cp_async",
    "PipelineTmaStore": "tma_store",
    "PipelineTmaMultiConsumersAsync": "tma_multi_consumers",
    "PipelineOrder": "order",
}
PIPELINE_OPS = ("producer_acquire", "producer_commit", "consumer_wait", "consumer_release", "producer_tail")
UNREAD_OPS = ("producer_try_acquire", "consumer_try_wait")


@dataclass
class RawEvent:
    """One event as traced. ``scale`` says how its arrivals follow the threads that run
    it ("warps": one per warp, "threads": one per thread, "partners": one per warp and
    multicast partner, "": as the pipeline declares)."""

    event: m.Event | None
    ctx: TraceContext
    kernel: str | None
    scale: str = ""
    state: int | None = None  # id of the PipelineState object it takes
    access: RawAccess | None = None
    unread: str = ""  # what could not be read about this call
    by_thread: Any = None  # (value, threads): a named barrier whose id is read per role from the thread index


@dataclass
class RawAccess:
    """An access still to be placed on a region."""

    kind: str
    value: Any  # the accessed tensor's ir.Value
    bytes: int | None
    multicast: int
    barrier: str | None  # the pipeline whose full barrier a TMA load completes on
    barrier_state: int | None
    memory: str
    operand: str = ""  # a GEMM's operand: "A" or "B"
    form: str = ""  # that GEMM call's form: "SS", "RS" or "TS" (see ``GemmOperand``)


@dataclass(frozen=True)
class GemmOperand:
    """One operand a captured GEMM call read from SMEM or TMEM, on its region: which operand it
    is (``"A"``, ``"B"``) and the call's form: ``"SS"`` (A and B from shared memory), ``"RS"``
    (A from registers, B from shared memory) or ``"TS"`` (A from tensor memory). The ordering
    model holds the read as an ``Access`` at the call's site; this keeps what that does not say."""

    kind: str  # "wgmma_read" or "umma_read"
    site: m.CallSite
    region: str
    operand: str
    form: str


@dataclass(frozen=True)
class PipelineProbe:
    """A pipeline's ``consumer_try_wait`` / ``producer_try_acquire``: a test of one of its
    barriers that orders nothing (the wait given its result does), so no program of the
    ordering model holds it; kept to say which barriers the call's line reads."""

    op: str
    pipeline: str
    site: m.CallSite


@dataclass
class RegionView:
    """A tensor the kernel made over an allocation: its name and where it lies."""

    name: str
    value: Any
    memory: str
    alloca: Any
    offset: int | None  # bytes from the allocation's start (SMEM); columns for TMEM
    size: int | None
    stages: int
    site: str | None
    field: str | None = None  # the struct field it views, when it came from get_tensor
    inner: tuple[int, int] | None = None  # (size, byte stride) of the mode before the stage mode


@dataclass
class OrderingTrace:
    """Everything one capture records about ordering, in trace order."""

    events: list[RawEvent] = field(default_factory=list)
    pipelines: dict[int, tuple[m.Pipeline, Any, Any]] = field(default_factory=dict)  # id -> (spec, obj, storage)
    states: dict[int, tuple[str, Any]] = field(default_factory=dict)  # id(PipelineState) -> (name, obj)
    barriers: dict[int, tuple[str, str]] = field(default_factory=dict)  # id(barrier ptr) -> (pipeline, side)
    barrier_keep: list[Any] = field(default_factory=list)
    regions: list[RegionView] = field(default_factory=list)
    named: dict[str, m.NamedBarrier] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    indices: list[tuple[Any, int | None]] = field(default_factory=list)  # (a state's index value, its state key)
    counts: list[tuple[Any, int | None]] = field(default_factory=list)  # (a state's count value, its state key)
    snapshots: dict[int, str] = field(default_factory=dict)  # id(a handle's PipelineState) -> the handle's name
    snapshot_names: set[str] = field(default_factory=set)
    kept: list[Any] = field(default_factory=list)  # objects keyed by id() above, kept alive so no id is reused
    tile_counts: list[tuple[Any, Any, int]] = field(default_factory=list)  # (tiles-done value, loop read in, when)
    tile_advances: list[tuple[TraceContext, int]] = field(default_factory=list)  # where a scheduler moved on, and when
    tc_ld_registers: list[Any] = field(default_factory=list)  # the register tensors tcgen05.ld filled, not yet read
    probes: list[tuple[str | None, PipelineProbe]] = field(default_factory=list)  # (kernel, probe)

    def clear(self) -> None:
        self.__init__()  # type: ignore[misc]


def _traces() -> list[OrderingTrace]:
    """The record of the active capture and of each capture open around it (each sees it all)."""
    from ._active import ACTIVE

    out = []
    rec = ACTIVE.get()
    while rec is not None:
        t = getattr(rec, "ordering_trace", None)
        if t is not None:
            out.append(t)
        rec = getattr(rec, "_outer", None)
    return out


def _site() -> m.CallSite:
    """The kernel's own line making the call: the innermost frame outside cutlass and capture
    (as ``call_site`` finds it, without reading the assigned name: this runs on every call)."""
    import sys

    from ._where import _inside

    dirs = _package_dirs()
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        generated = name.startswith("<") and "cutlass" in (frame.f_globals.get("__name__") or "")
        if not generated and not _inside(name, dirs):
            return m.CallSite(os.path.basename(name), frame.f_lineno or 0)
        frame = frame.f_back
    return m.CallSite("?", 0)


def _context() -> tuple[TraceContext, str | None]:
    from ._active import _current_kernel

    return trace_context(), _current_kernel()


def _add(t: OrderingTrace, event: m.Event | None, **kw: Any) -> RawEvent:
    ctx, kernel = _context()
    raw = RawEvent(event, ctx, kernel, **kw)
    t.events.append(raw)
    return raw


def _guarded(record: Callable[..., None], allow_in_create: bool = False) -> Callable[..., Any]:
    """A wrapper factory: call the original, then ``record`` (never failing the kernel)."""

    def make(orig: Any) -> Any:
        @functools.wraps(orig)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            ts = _traces()
            inside = _INSIDE.get()
            if not ts or (inside and not (allow_in_create and inside == "create")):
                return orig(*args, **kwargs)
            site = _site()
            token = _INSIDE.set(inside or "call")  # the DSL's own calls inside this one are part of it
            try:
                result = orig(*args, **kwargs)
            finally:
                _INSIDE.reset(token)
            for t in ts:
                try:
                    record(t, site, result, *args, **kwargs)
                except Exception as e:  # never let recording break the kernel
                    t.notes.append(f"{getattr(orig, '__name__', 'a DSL call')} at {site}: {type(e).__name__}: {e}")
            return result

        return wrapper

    return make


def _arg(args: tuple[Any, ...], kwargs: dict[str, Any], i: int, name: str, default: Any = None) -> Any:
    if len(args) > i:
        return args[i]
    return kwargs.get(name, default)


def _static_int(x: Any) -> int | None:
    if isinstance(x, bool):
        return int(x)
    if isinstance(x, int):
        return x
    if isinstance(x, float) and x.is_integer():
        return int(x)  # a count written as a division (128 / 32 threads per warp)
    return None


# -- pipelines -----------------------------------------------------------------------------------


def _group(cg: Any) -> m.Group:
    agent = str(getattr(getattr(cg, "agent", None), "name", "Thread"))
    size = _static_int(getattr(cg, "size", 1)) or 1
    if agent == "Warp":
        return m.Group("warp", size)
    if agent in ("ThreadBlock", "ThreadBlockCluster"):
        return m.Group("thread", size)
    return m.Group("thread", size)


def _partners(layout: Any, mode: Any) -> int:
    """How many CTAs of the cluster a consumer warp signals (its row and column, as the DSL counts)."""
    if layout is None:
        return 1
    import cutlass.cute as cute

    shape = [int(s) for s in cute.flatten(layout.shape)]
    if int(cute.size(layout)) == 1 or len(shape) < 3:
        return 1
    mm, mn = mode if mode is not None else (1, 1)
    m_size = shape[2] if mm else 0
    n_size = shape[1] if mn else 0
    return max(1, m_size + n_size - (1 if (mm and mn) else 0))


def _create_wrapper(kind: str) -> Callable[[Any], Any]:
    def make(orig: Any) -> Any:
        func = orig.__func__ if isinstance(orig, staticmethod) else orig

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            ts = _traces()
            if not ts or _INSIDE.get():
                return func(*args, **kwargs)
            site = _site()
            s = call_site(2)
            ctx, kernel = _context()
            token = _INSIDE.set("create")
            init_at = [len(t.events) for t in ts]
            try:
                result = func(*args, **kwargs)
            finally:
                _INSIDE.reset(token)
            for t, at in zip(ts, init_at):
                try:
                    _note_pipeline(t, kind, result, kwargs, site, s.assigned if s else None)
                    spec = t.pipelines[id(result)][0]
                    t.events.insert(at, RawEvent(m.Init(pipeline=spec.name, site=site), ctx, kernel))
                except Exception as e:  # never let recording break the kernel
                    t.notes.append(f"the {kind} pipeline created at {site}: {type(e).__name__}: {e}")
            return result

        return staticmethod(wrapper) if isinstance(orig, staticmethod) else wrapper

    return make


def _note_pipeline(
    t: OrderingTrace, kind: str, obj: Any, kwargs: dict[str, Any], site: m.CallSite, assigned: str | None
) -> None:
    names = {p.name for p, _, _ in t.pipelines.values()}
    given = kwargs.get("name")
    name = (given if isinstance(given, str) and given else None) or assigned or f"{kind}@{site}"
    if name in names:
        name = f"{name}#{sum(1 for n in names if n.split('#')[0] == name) + 1}"
    full = getattr(obj, "sync_object_full", None)
    empty = getattr(obj, "sync_object_empty", None)
    stages = _static_int(kwargs.get("num_stages", getattr(obj, "num_stages", 0))) or 0
    groups = 1
    if kind == "order":  # PipelineOrder: ``depth`` stages for each of ``length`` groups
        stages = _static_int(kwargs.get("depth")) or 0
        groups = _static_int(kwargs.get("length")) or 0
    producer = _group(kwargs.get("producer_group"))
    consumer_cg = kwargs.get("consumer_group")
    consumer = _group(consumer_cg) if consumer_cg is not None else m.Group("thread", 1)
    full_count = _static_int(getattr(full, "arrive_count", None))
    empty_count = _static_int(getattr(empty, "arrive_count", None))
    if kind == "tma_async" and empty is not None and getattr(empty, "cg", None) is not None:
        consumer = _group(empty.cg)  # the DSL recomputes it for multicast signalling
    spec = m.Pipeline(
        name=name,
        kind=kind,
        stages=stages,
        producer=producer,
        consumer=consumer,
        site=site,
        tx_count=_static_int(kwargs.get("tx_count", 0)) or 0,
        barrier_region=None,
        multicast=1,
        full_count=full_count if kind != "tma_store" else None,
        empty_count=empty_count if kind not in ("tma_store", "order") else None,
        groups=groups,
    )
    partners = _partners(kwargs.get("cta_layout_vmnk"), kwargs.get("mcast_mode_mn"))
    t.pipelines[id(obj)] = (spec, obj, (kwargs.get("barrier_storage"), partners))


def _scale(kind: str, op: str) -> str:
    if op == "producer_acquire":
        return "warps" if kind in ("tma_async", "tma_umma", "tma_multi_consumers") else ""
    if op == "producer_commit":
        return "warps" if kind == "umma_async" else "threads"
    if op == "consumer_release":
        if kind == "tma_async":
            return "partners"
        if kind in ("tma_umma", "async_umma"):
            return "warps"
        if kind == "tma_multi_consumers":
            return ""
        return "threads"
    return ""


def _op_wrapper(op: str) -> Callable[[Any], Any]:
    def make(orig: Any) -> Any:
        @functools.wraps(orig)
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            ts = _traces()
            if not ts or _INSIDE.get():
                return orig(self, *args, **kwargs)
            site = _site()
            token = _INSIDE.set("op")
            try:
                result = orig(self, *args, **kwargs)
            finally:
                _INSIDE.reset(token)
            for t in ts:
                try:
                    _note_op(t, op, self, args, kwargs, site, result)
                except Exception as e:  # never let recording break the kernel
                    t.notes.append(f"{op} at {site}: {type(e).__name__}: {e}")
            return result

        return wrapper

    return make


def _order_wrapper(op: str) -> Callable[[Any], Any]:
    """``PipelineOrder.wait`` / ``arrive``: a turn of the group the order was made for (its
    ``group_id``, read per role when it comes from the thread index)."""

    def make(orig: Any) -> Any:
        @functools.wraps(orig)
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            ts = _traces()
            if not ts or _INSIDE.get():
                return orig(self, *args, **kwargs)
            site = _site()
            token = _INSIDE.set("op")
            try:
                result = orig(self, *args, **kwargs)
            finally:
                _INSIDE.reset(token)
            for t in ts:
                try:
                    found = t.pipelines.get(id(self))
                    if found is None or _arg(args, kwargs, 0, "state") is not None:
                        _add(t, None, unread=f"PipelineOrder.{op} at {site} on an order or state capture did not see")
                        continue
                    gid = getattr(self, "group_id", None)
                    group = _static_int(gid)
                    event = m.SequenceOp(op=op, pipeline=found[0].name, site=site, group=-1 if group is None else group)  # type: ignore[arg-type]
                    by_thread = (raw_value(gid), None) if group is None else None
                    _add(t, event, scale="threads" if op == "arrive" else "", by_thread=by_thread)
                except Exception as e:  # never let recording break the kernel
                    t.notes.append(f"PipelineOrder.{op} at {site}: {type(e).__name__}: {e}")
            return result

        return wrapper

    return make


def _state_name(t: OrderingTrace, state: Any) -> tuple[str, int | None]:
    """The state's name: the kernel's variable holding it (the DSL makes a new object for
    each loop-carried state, so the variable names it across loops), else its own."""
    if state is None:
        return "", None
    held = t.snapshots.get(id(state)) or _variable_of(state)
    if held is not None:
        key = hash(("state", held))
        t.states.setdefault(key, (held, state))
        return held, key
    found = t.states.get(id(state))
    if found is None:
        t.states[id(state)] = (f"state{len(t.states) + 1}", state)
        found = t.states[id(state)]
    return found[0], id(state)


def _note_op(
    t: OrderingTrace, op: str, pipe: Any, args: tuple[Any, ...], kwargs: dict[str, Any], site: m.CallSite, result: Any
) -> None:
    found = t.pipelines.get(id(pipe))
    if found is None:
        _add(t, None, unread=f"{op} at {site} on a pipeline created outside the capture")
        return
    spec = found[0]
    state = _arg(args, kwargs, 0, "state")
    name, sid = _state_name(t, state)
    if state is not None and id(state) not in t.snapshots and _variable_of(state) is None and op in PIPELINE_OPS:
        t.notes.append(
            f"{op} on {spec.name!r} at {site}: its PipelineState is held by no kernel variable (a "
            "PipelineProducer / PipelineConsumer or a resource handle keeps it), so the stage it takes "
            "from one loop iteration to the next is not read"
        )
    if op in ("producer_get_barrier", "consumer_get_barrier"):
        t.barriers[id(result)] = (spec.name, "full" if op == "producer_get_barrier" else "empty")
        t.barrier_keep.append((result, sid))
        return
    if op in UNREAD_OPS:  # a test that orders nothing (the wait that takes its token does): noted beside the model
        t.probes.append((_context()[1], PipelineProbe(op=op, pipeline=spec.name, site=site)))
        return

    if spec.kind == "tma_async" and op == "producer_commit":
        return  # a no-op: the TMA's completion fills the stage
    # a wait given a try-wait's token skips only when that phase already completed: it orders as a wait
    _add(t, m.PipelineOp(op=op, pipeline=spec.name, site=site, state=name), scale=_scale(spec.kind, op), state=sid)


def _index_wrapper(orig: Any, what: str = "index") -> Any:
    """``PipelineState.index`` (``count``): the value it gives is remembered, so a slice
    indexed by it is known to take that state's stage (a branch on it, that state's count)."""
    getter = orig.fget

    @functools.wraps(getter)
    def get(self: Any) -> Any:
        result = getter(self)
        for t in _traces() if not _INSIDE.get() else ():
            try:
                _, key = _state_name(t, self)
                (t.indices if what == "index" else t.counts).append((raw_value(result), key))
            except Exception as e:  # never let recording break the kernel
                t.notes.append(f"a PipelineState.{what}: {type(e).__name__}: {e}")
        return result

    return property(get, orig.fset, orig.fdel, orig.__doc__)


# where cutlass.pipeline's participants keep their PipelineState (name-mangled private attributes),
# and where a resource handle keeps the copy it was acquired with
_PARTICIPANT_STATES = (
    "_PipelineProducer__state",
    "_PipelineConsumer__state",
    "_ImmutableResourceHandle__immutable_state",
)
_PARTICIPANT_PIPELINES = {"producer": "_PipelineProducer__pipeline", "consumer": "_PipelineConsumer__pipeline"}


def _variable_of(obj: Any) -> str | None:
    """The name of a local variable of the kernel's innermost frame that holds ``obj``, or
    holds the ``PipelineProducer`` / ``PipelineConsumer`` that keeps it as its state."""
    import sys

    from ._where import _inside

    dirs = _package_dirs()
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        if not _inside(frame.f_code.co_filename, dirs) and not frame.f_code.co_filename.startswith("<"):
            for name, value in frame.f_locals.items():
                if value is obj or any(getattr(value, a, None) is obj for a in _PARTICIPANT_STATES):
                    return name
            return None
        frame = frame.f_back
    return None


def _outer_assigned() -> str | None:
    """The variable the kernel assigns the DSL call's result to, looking a few frames out
    (a helper of the kernel's may make the call for it)."""
    import sys

    from ._where import _inside

    dirs = _package_dirs()
    frame: FrameType | None = sys._getframe(2)
    seen = 0
    while frame is not None and seen < 4:
        if not _inside(frame.f_code.co_filename, dirs) and not frame.f_code.co_filename.startswith("<"):
            name = _assigned_name(frame)
            if name:
                return name
            seen += 1
        frame = frame.f_back
    return None


def _advance_wrapper(orig: Any) -> Any:
    @functools.wraps(orig)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = orig(self, *args, **kwargs)
        for t in _traces() if not _INSIDE.get() else ():
            try:
                name, sid = _state_name(t, self)
                _add(t, m.PipelineOp(op="advance", pipeline="", site=_site_outer(), state=name), state=sid)
            except Exception as e:  # never let recording break the kernel
                t.notes.append(f"a PipelineState.advance: {type(e).__name__}: {e}")
        return result

    return wrapper


def _handle_wrapper(side: str) -> Callable[[Any], Any]:
    """``PipelineProducer.acquire`` / ``PipelineConsumer.wait`` / ``current_handle``: the
    handle they return keeps a copy of the participant's state as it is now. The pipeline
    call inside is recorded on its own; this records the copy, named after the variable
    the kernel assigns the handle to, so the handle's later calls and indices take it."""

    def make(orig: Any) -> Any:
        @functools.wraps(orig)
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            result = orig(self, *args, **kwargs)
            for t in _traces() if not _INSIDE.get() else ():
                try:
                    _note_snapshot(t, side, self, result)
                except Exception as e:  # never let recording break the kernel
                    t.notes.append(f"a pipeline resource handle: {type(e).__name__}: {e}")
            return result

        return wrapper

    return make


def _note_snapshot(t: OrderingTrace, side: str, participant: Any, handle: Any) -> None:
    site = _site()
    found = t.pipelines.get(id(getattr(participant, _PARTICIPANT_PIPELINES[side], None)))
    copy = getattr(handle, "_ImmutableResourceHandle__immutable_state", None)
    source = getattr(participant, f"_Pipeline{side.capitalize()}__state", None)
    if found is None or copy is None or source is None:
        _add(t, None, unread=f"a resource handle made at {site} on a pipeline or state capture did not see")
        return
    src_name, _ = _state_name(t, source)
    name = _outer_assigned() or f"handle@{site}"
    t.snapshots[id(copy)] = name
    t.kept.append(copy)
    t.snapshot_names.add(name)
    t.states.setdefault(hash(("state", name)), (name, copy))
    op = m.PipelineOp(op=f"{side}_snapshot", pipeline=found[0].name, site=site, state=name, source=src_name)
    _add(t, op, state=hash(("state", name)))  # the handle's state serves this pipeline side


def _tiles_done_wrapper(orig: Any) -> Any:
    """A tile scheduler's ``num_tiles_executed``: the value is remembered with the loop it is
    read in, so a slot index counted from it can be read as rotating with that loop."""
    getter = orig.fget

    @functools.wraps(getter)
    def get(self: Any) -> Any:
        result = getter(self)
        for t in _traces() if not _INSIDE.get() else ():
            try:
                ctx = trace_context()
                t.tile_counts.append((raw_value(result), ctx.loops[-1] if ctx.loops else None, len(t.events)))
            except Exception as e:  # never let recording break the kernel
                t.notes.append(f"a tile scheduler's num_tiles_executed: {type(e).__name__}: {e}")
        return result

    return property(get, orig.fset, orig.fdel, orig.__doc__)


def _tile_advance(t: OrderingTrace, site: m.CallSite, result: Any, sched: Any, *args: Any, **kwargs: Any) -> None:
    if _static_int(kwargs.get("advance_count", 1)) != 1:
        t.notes.append(f"a tile scheduler at {site} advances by more than one tile")
        return
    t.tile_advances.append((trace_context(), len(t.events)))


def _site_outer() -> m.CallSite:
    return _site()


# -- tensors the kernel makes over SMEM / TMEM ---------------------------------------------------------


def _value(x: Any) -> Any:
    from cutlass._mlir import ir

    v = raw_value(x)
    return v if isinstance(v, ir.Value) else None  # type: ignore[attr-defined]


def _memory(tensor: Any) -> str | None:
    try:
        space = str(getattr(tensor, "memspace", ""))
    except Exception:  # a coordinate tensor (global memory through TMA) has no memory space
        return None
    if "smem" in space:
        return "smem"
    if "tmem" in space:
        return "tmem"
    return None


def _last_mode(layout: Any) -> int:
    import cutlass.cute as cute

    try:
        outer = getattr(layout, "outer", layout)
        rank = cute.rank(outer)
        if rank >= 2:
            n = cute.size(outer, mode=[rank - 1])
            return int(n) if isinstance(n, int) and n > 1 else 1
    except Exception:
        return 1
    return 1


def _inner_mode(layout: Any, width: int) -> tuple[int, int] | None:
    """The size and byte stride of the mode before the last (stage) one, when both are static."""
    import cutlass.cute as cute

    try:
        outer = getattr(layout, "outer", layout)
        rank = cute.rank(outer)
        if rank < 3:
            return None
        n = cute.size(outer, mode=[rank - 2])
        shapes = cute.flatten(outer.shape[rank - 2])
        strides = cute.flatten(outer.stride[rank - 2])
        shapes = shapes if isinstance(shapes, tuple) else (shapes,)
        strides = strides if isinstance(strides, tuple) else (strides,)
        moving = [d for s, d in zip(shapes, strides) if s != 1]  # a mode (1, 2): only its 2 moves
        if isinstance(n, int) and n > 1 and len(moving) == 1 and isinstance(moving[0], int) and moving[0] > 0:
            return n, moving[0] * width // 8
    except Exception:
        return None
    return None


def _note_view(t: OrderingTrace, result: Any, name: str | None, site: str | None, field_name: str | None) -> None:
    import cutlass.cute as cute

    memory = _memory(result)
    value = _value(result)
    if memory is None or value is None:
        return
    layout = result.layout
    width = int(getattr(result.element_type, "width", 8))
    try:
        cos = cute.cosize(layout)
        size = int(cos) * width // 8 if isinstance(cos, int) else None
    except Exception:
        size = None
    ptr = _value(result.iterator)
    placed = pointer_offset(ptr) if ptr is not None and memory == "smem" else None
    t.regions.append(
        RegionView(
            name=name or f"view@{site}",
            value=value,
            memory=memory,
            alloca=placed[0] if placed else None,
            offset=placed[1] if placed else None,
            size=size,
            stages=_last_mode(layout),
            inner=_inner_mode(layout, width),
            site=site,
            field=field_name,
        )
    )


def _make_tensor_wrapper(orig: Any) -> Any:
    @functools.wraps(orig)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        result = orig(*args, **kwargs)
        for t in _traces() if not _INSIDE.get() else ():
            try:
                if _memory(result) is not None:
                    s = call_site(2)
                    _note_view(
                        t, result, _outer_assigned(), f"{os.path.basename(s.file)}:{s.line}" if s else None, None
                    )
            except Exception as e:  # never let recording break the kernel
                t.notes.append(f"make_tensor: {type(e).__name__}: {e}")
        return result

    return wrapper


# -- accesses ----------------------------------------------------------------------------------------


def _op_kind(atom: Any) -> str:
    op = getattr(atom, "op", None)
    return type(op).__name__ if op is not None else type(atom).__name__


def _copy_kind(op_name: str, src_mem: str | None, dst_mem: str | None) -> tuple[str, str] | None:
    """(access kind, "src" | "dst": which side is the region) for a copy atom's op."""
    if "BulkTensorTileG2S" in op_name or "G2STile" in op_name:
        return ("tma_load", "dst")
    if "BulkTensorTileS2G" in op_name or "S2GTile" in op_name or "BulkTensorTileS2G" in op_name:
        return ("tma_store", "src")
    if op_name.startswith("StMatrix"):
        return ("stmatrix", "dst")
    if op_name.startswith("LdMatrix"):
        return ("ldmatrix", "src")
    if op_name.startswith(("Ld16", "Ld32", "LdRed", "LdSP")):
        return ("tcgen05_ld", "src")
    if op_name.startswith("St16") or op_name.startswith("St32"):
        return ("tcgen05_st", "dst")
    if op_name.startswith("Cp") and ("128" in op_name or "256" in op_name or "x32" in op_name):
        return ("tcgen05_cp", "dst")
    if op_name.startswith("CopyG2SOp"):
        return ("cp_async", "dst")
    if dst_mem in ("smem", "tmem"):
        return ("st", "dst")
    if src_mem in ("smem", "tmem"):
        return ("ld", "src")
    return None


def _copy_bits(atom: Any) -> tuple[int | None, int]:
    """The box bytes a TMA atom moves per issue and the CTAs it lands in, from its type."""
    import re

    text = str(getattr(atom, "type", "")) or str(getattr(getattr(atom, "_trait", None), "value", ""))
    try:
        text = text or str(_value(atom).type)
    except Exception:
        pass
    bits = re.search(r"copy_bits = (\d+)", text)
    cta = re.search(r"num_cta = (\d+)", text)
    return (int(bits.group(1)) // 8 if bits else None, int(cta.group(1)) if cta else 1)


def _record_copy(t: OrderingTrace, site: m.CallSite, result: Any, atom: Any, src: Any, dst: Any, **kw: Any) -> None:
    src_mem, dst_mem = _memory(src), _memory(dst)
    found = _copy_kind(_op_kind(atom), src_mem, dst_mem)
    if found is None:
        return
    kind, side = found
    tensor = dst if side == "dst" else src
    memory = _memory(tensor) or "smem"
    nbytes: int | None = None
    multicast = 1
    barrier: str | None = None
    bstate: int | None = None
    if kind == "tcgen05_ld":
        from ._tmem_views import register_root

        t.tc_ld_registers.append(register_root(_value(dst)))
    if kind in ("tma_load", "tma_store"):
        nbytes, cta = _copy_bits(atom)
        whole = _tensor_bytes(tensor)
        if nbytes is None or (cta == 1 and whole is not None and whole > nbytes and whole % nbytes == 0):
            nbytes = whole  # one copy issues a box per part of its tensor (a head dim over two 128 B boxes)
        if kind == "tma_load":
            if kw.get("mcast_mask") is not None and cta > 1:
                multicast = cta
            bar = kw.get("tma_bar_ptr")
            if bar is not None and id(bar) in t.barriers:
                barrier = t.barriers[id(bar)][0]
                bstate = next((sid for b, sid in t.barrier_keep if b is bar), None)
    else:
        nbytes = _tensor_bytes(tensor)
    access = RawAccess(kind, _value(tensor), nbytes, multicast, barrier, bstate, memory)
    _add(t, m.Access(kind=kind, region="", site=site), access=access)


def _tensor_bytes(tensor: Any) -> int | None:
    import cutlass.cute as cute

    try:
        n = cute.size(tensor)
        width = int(getattr(tensor.element_type, "width", 8))
        return int(n) * width // 8 if isinstance(n, int) else None
    except Exception:
        return None


def _record_gemm(
    t: OrderingTrace, site: m.CallSite, result: Any, mma: Any, d: Any, a: Any, b: Any, *rest: Any, **kw: Any
) -> None:
    family = type(getattr(mma, "op", mma)).__module__
    if "warpgroup" in family:
        read = "wgmma_read"
    elif "tcgen05" in family:
        read = "umma_read"
    else:
        return
    where = [_operand_memory(read, operand) for operand in (a, b)]
    # a WGMMA's A is in shared memory or in registers; a tcgen05 MMA's in shared or tensor memory
    form = {"smem": "SS", "tmem": "TS"}.get(where[0] or "", "RS" if read == "wgmma_read" else "")
    for name, operand, memory in zip("AB", (a, b), where):
        if memory is not None:
            _add(
                t,
                m.Access(kind=read, region="", site=site),
                access=RawAccess(read, _value(operand), None, 1, None, None, memory, operand=name, form=form),
            )
    if read == "umma_read" and _memory(d) == "tmem":
        _add(
            t,
            m.Access(kind="umma_write_acc", region="", site=site),
            access=RawAccess("umma_write_acc", _value(d), None, 1, None, None, "tmem"),
        )


def _operand_memory(read: str, operand: Any) -> str | None:
    """Where a GEMM operand is read from: "smem" (a tensor or descriptor), "tmem" (a tcgen05 A
    operand in TMEM, P in place of S), or None (registers)."""
    if read == "umma_read" and _memory(operand) == "tmem":
        return "tmem"
    if _memory(operand) == "smem" or "desc" in str(getattr(operand, "type", "")).lower() or _smem_desc(operand):
        return "smem"
    return None


def _record_element(kind: str) -> Callable[..., None]:
    """``tensor[i] = v`` (a store) or ``tensor[i]`` giving a value (a load) on SMEM / TMEM."""

    def record(t: OrderingTrace, site: m.CallSite, result: Any, tensor: Any, *args: Any, **kwargs: Any) -> None:
        memory = _memory(tensor)
        if memory is None and kind == "ld":
            _registers_read(t, site, tensor)
        if memory is None or (kind == "ld" and _memory(result) is not None):
            return  # not shared memory, or a slice (a view, not a load)
        if kind == "ld" and getattr(result, "value", None) is None and not hasattr(result, "owner"):
            return  # a static value: nothing was read
        _add(
            t,
            m.Access(kind=kind, region="", site=site),
            access=RawAccess(kind, _value(tensor), None, 1, None, None, memory),
        )

    return record


def _registers_read(t: OrderingTrace, site: m.CallSite, tensor: Any, *args: Any, **kwargs: Any) -> None:
    """A read of registers a tcgen05.ld filled: the read waits for the load (no wait::ld is written)."""
    if not t.tc_ld_registers:
        return
    from ._tmem_views import register_root

    root = register_root(_value(tensor))
    if root is not None and any(r is not None and r == root for r in t.tc_ld_registers):
        t.tc_ld_registers.clear()
        _add(t, m.Tcgen05Wait(kind="ld", site=site, registers=True))


def _register_load(t: OrderingTrace, site: m.CallSite, result: Any, tensor: Any, *args: Any, **kwargs: Any) -> None:
    if _memory(tensor) is None:
        _registers_read(t, site, tensor)


def _smem_desc(tensor: Any) -> bool:
    it = getattr(tensor, "iterator", None)
    return "desc" in type(it).__name__.lower() or "smem_desc" in str(getattr(_value(tensor), "type", ""))


# -- fences, barriers, groups, TMEM ---------------------------------------------------------------


def _simple(make_event: Callable[..., m.Event | None]) -> Callable[..., None]:
    def record(t: OrderingTrace, site: m.CallSite, result: Any, *args: Any, **kwargs: Any) -> None:
        event = make_event(site, *args, **kwargs)
        if event is not None:
            _add(t, event)

    return record


def _fence_proxy(site: m.CallSite, kind: Any = None, *args: Any, **kwargs: Any) -> m.Event | None:
    kind = kwargs.get("kind", kind)
    return m.Fence(kind="proxy_async", site=site) if "async" in str(kind) else None


def _named_barrier(wait: bool) -> Callable[..., None]:
    def record(t: OrderingTrace, site: m.CallSite, result: Any, *args: Any, **kwargs: Any) -> None:
        bid = _static_int(kwargs.get("barrier_id"))
        threads = _static_int(kwargs.get("number_of_threads"))
        if bid is None and kwargs.get("barrier_id") is None:
            bid = 0
        if bid is None and threads is not None:  # an id the builder may read per role (``barrier_id=warp_group_idx``)
            value = (raw_value(kwargs.get("barrier_id")), threads)
            _add(t, m.BarrierSync(barrier="", site=site, wait=wait), by_thread=value)
            return
        if bid is None or (threads is None and kwargs.get("number_of_threads") is not None):
            _add(t, None, unread=f"a named barrier at {site} whose id or thread count is known only at run time")
            return
        if threads is None:
            _add(t, m.BarrierSync(barrier="cta", site=site, wait=wait))
            return
        name = f"bar{bid}"
        t.named.setdefault(name, m.NamedBarrier(name, threads, site, bid))
        _add(t, m.BarrierSync(barrier=name, site=site, wait=wait))

    return record


def _wait_group(unit: str) -> Callable[..., m.Event | None]:
    def make(site: m.CallSite, group: Any = 0, *args: Any, **kwargs: Any) -> m.Event | None:
        n = _static_int(kwargs.get("group", group))
        return m.WaitGroup(unit=unit, site=site, pending=n if n is not None else 0, read=bool(kwargs.get("read")))

    return make


def _tc_commit(t: OrderingTrace, site: m.CallSite, result: Any, mbar: Any = None, *args: Any, **kwargs: Any) -> None:
    found = t.barriers.get(id(kwargs.get("mbar_ptr", mbar)))
    if found is None:
        _add(t, None, unread=f"tcgen05.commit at {site} to a barrier no pipeline of the capture hands out")
        return
    _add(t, m.Tcgen05Commit(pipeline=found[0], side=found[1], site=site), scale="warps")  # type: ignore[arg-type]


def _tmem_alloc(site: m.CallSite, num_columns: Any = None, *args: Any, **kwargs: Any) -> m.Event | None:
    cols = _static_int(kwargs.get("num_columns", num_columns)) or 0
    two = bool(kwargs.get("is_two_cta", args[1] if len(args) > 1 else False))
    return m.TmemAlloc(columns=cols, site=site, cta_group=2 if two else 1)


def _tmem_dealloc(site: m.CallSite, ptr: Any = None, num_columns: Any = None, *args: Any, **kwargs: Any) -> m.Event:
    return m.TmemDealloc(columns=_static_int(kwargs.get("num_columns", num_columns)) or 0, site=site)


def _get_tensor_record(
    t: OrderingTrace, site: m.CallSite, result: Any, field_obj: Any, *args: Any, **kwargs: Any
) -> None:
    from ._active import ACTIVE

    rec = ACTIVE.get()
    found = rec.field_of(field_obj) if rec is not None else None
    if found is None or _memory(result) is None:
        return
    pending, path = found
    _note_view(t, result, path, f"{site.file}:{site.line}", path)
    t.regions[-1].alloca = pending.op


def ordering_targets() -> list[tuple[Any, str, Callable[[Any], Any]]]:
    """``(owner, attribute, wrapper factory)`` for every DSL call the ordering record needs."""
    import cutlass.cute as cute
    import cutlass.pipeline as pipeline
    from cutlass.cute import struct
    from cutlass.cute import tensor as tensor_module
    from cutlass.cute.nvgpu import tcgen05, warpgroup
    from cutlass.pipeline import helpers

    out: list[tuple[Any, str, Callable[[Any], Any]]] = []
    for cls_name, kind in PIPELINE_CLASSES.items():
        cls = getattr(pipeline, cls_name, None)
        if cls is None:
            continue
        if "create" in cls.__dict__:
            out.append((cls, "create", _create_wrapper(kind)))
        for op in (*PIPELINE_OPS, *UNREAD_OPS, "producer_get_barrier", "consumer_get_barrier"):
            if op in cls.__dict__:
                out.append((cls, op, _op_wrapper(op)))
    out.append((helpers.PipelineState, "advance", _advance_wrapper))
    order = getattr(pipeline, "PipelineOrder", None)
    for op in ("wait", "arrive"):
        if order is not None and op in order.__dict__:
            out.append((order, op, _order_wrapper(op)))
    for cls_name, side in (("PipelineProducer", "producer"), ("PipelineConsumer", "consumer")):
        cls = getattr(pipeline, cls_name, None)
        for meth in ("acquire", "wait", "current_handle"):
            if cls is not None and meth in cls.__dict__:
                out.append((cls, meth, _handle_wrapper(side)))
    out.append((helpers.PipelineState, "index", _index_wrapper))
    out.append((helpers.PipelineState, "count", lambda orig: _index_wrapper(orig, "count")))
    out.append((cute, "make_tensor", _make_tensor_wrapper))
    import cutlass.utils as cutlass_utils

    scheduler = getattr(cutlass_utils, "StaticPersistentTileScheduler", None)
    if scheduler is not None:
        out.append((scheduler, "num_tiles_executed", _tiles_done_wrapper))
        out.append((scheduler, "advance_to_next_work", _guarded(_tile_advance)))
    out.append((struct._MemRangeData, "get_tensor", _guarded(_get_tensor_record)))
    out.append((cute, "copy", _guarded(_record_copy)))
    out.append((tensor_module._Tensor, "__setitem__", _guarded(_record_element("st"))))
    out.append((tensor_module._Tensor, "__getitem__", _guarded(_record_element("ld"))))
    out.append((tensor_module._Tensor, "load", _guarded(_register_load)))
    out.append((cute, "gemm", _guarded(_record_gemm)))
    arch = cute.arch
    out += [
        (arch, "fence_proxy", _guarded(_simple(_fence_proxy))),
        (
            arch,
            "fence_view_async_shared",
            _guarded(_simple(lambda s, *a, **k: m.Fence(kind="view_async_shared", site=s))),
        ),
        (
            arch,
            "mbarrier_init_fence",
            _guarded(_simple(lambda s, *a, **k: m.Fence(kind="mbarrier_init", site=s)), True),
        ),
        (arch, "barrier", _guarded(_named_barrier(True))),
        (arch, "barrier_arrive", _guarded(_named_barrier(False))),
        (arch, "sync_threads", _guarded(_simple(lambda s, *a, **k: m.BarrierSync(barrier="cta", site=s)), True)),
        (arch, "cluster_wait", _guarded(_simple(lambda s, *a, **k: m.BarrierSync(barrier="cluster", site=s)), True)),
        (arch, "cp_async_bulk_commit_group", _guarded(_simple(lambda s, *a, **k: m.CommitGroup(unit="bulk", site=s)))),
        (arch, "cp_async_bulk_wait_group", _guarded(_simple(_wait_group("bulk")))),
        (arch, "cp_async_commit_group", _guarded(_simple(lambda s, *a, **k: m.CommitGroup(unit="cp_async", site=s)))),
        (arch, "cp_async_wait_group", _guarded(_simple(_wait_group("cp_async")))),
        (arch, "alloc_tmem", _guarded(_simple(_tmem_alloc))),
        (arch, "dealloc_tmem", _guarded(_simple(_tmem_dealloc))),
        (arch, "relinquish_tmem_alloc_permit", _guarded(_simple(lambda s, *a, **k: m.TmemRelinquish(site=s)))),
        (arch, "fence_view_async_tmem_load", _guarded(_simple(lambda s, *a, **k: m.Tcgen05Wait(kind="ld", site=s)))),
        (arch, "fence_view_async_tmem_store", _guarded(_simple(lambda s, *a, **k: m.Tcgen05Wait(kind="st", site=s)))),
        (warpgroup, "commit_group", _guarded(_simple(lambda s, *a, **k: m.CommitGroup(unit="wgmma", site=s)))),
        (warpgroup, "wait_group", _guarded(_simple(_wait_group("wgmma")))),
        (tcgen05, "commit", _guarded(_tc_commit)),
    ]
    return [(owner, name, make) for owner, name, make in out if name in vars(owner)]
