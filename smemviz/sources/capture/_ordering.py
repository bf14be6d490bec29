"""From what one trace recorded to the kernel's :class:`OrderingModel`.

Warp roles are the traced ``if`` conditions on the thread index, evaluated for
every thread of the block: each event runs on the threads its branches admit,
and the warps split into roles wherever two events' warps differ. Events every
warp runs before the first role branch form the prologue; after the roles join,
every role runs them. Loops are the ``scf.for`` ops around an event: a constant
trip count is kept; loops whose count is the same run-time value share one id,
and a loop starting later than its siblings (a peeled first iteration) has its
first iterations written out so that they all run the same count. Each access is
placed on the tensor view it was taken from (a struct field's ``get_tensor`` or a
``make_tensor`` over SMEM / TMEM) and on a stage: a constant slice picks that
stage, one indexed at run time takes the stage of the pipeline state the role
waited on last. Whatever cannot be read is kept as a note, and the check turns
each into an ``info`` finding: nothing unread is taken as ordered.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ...layout.ordering import Context, LoopInfo, programs_from_trace
from ...layout.ordering import _model as m
from ._ordering_hooks import GemmOperand, OrderingTrace, PipelineProbe, RawEvent, RegionView
from ._ordering_ir import (
    PASS_OPS,
    Condition,
    block_dim,
    capped_count,
    condition_threads,
    const_value,
    count_value,
    defining_op,
    encloses,
    guard_terms,
    loop_bounds,
    plain_values,
    pointer_offset,
    raw_value,
    same_value,
    thread_trips,
    thread_values,
)
from ._tmem_views import tmem_regions

__all__ = ["UNREAD", "BesideModel", "build_ordering", "unread_model"]

UNREAD = m.UNREAD  # the meta key of each note on what the trace could not read
# copies in which each thread moves its own part of the tensor (a tiled copy's partition)
PARTITIONED = ("ld", "st", "ldmatrix", "stmatrix", "cp_async", "tcgen05_ld", "tcgen05_st")
WARP = 32


@dataclass(frozen=True)
class _Role:
    role: m.WarpRole
    threads: frozenset[int]


@dataclass(frozen=True)
class BesideModel:
    """What one kernel's trace says that its ordering model leaves out: each GEMM operand read
    placed on its region with its role and its call's form, each pipeline probe."""

    gemm_operands: tuple[GemmOperand, ...] = ()
    probes: tuple[PipelineProbe, ...] = ()


def build_ordering(
    trace: OrderingTrace,
    module: Any,
    kernel: str,
    alloca_offset: Callable[[Any], int | None],
    regions_at: Callable[[int], str | None],
    arch: str | None,
) -> tuple[m.OrderingModel, BesideModel]:
    """The ordering model of ``kernel`` from the events ``trace`` recorded for it, and what the
    trace says beside it (see ``BesideModel``). ``alloca_offset`` gives an allocation's byte
    offset; ``regions_at`` the captured region holding a byte (for naming a pipeline's barrier
    storage)."""
    builder = _Builder(trace, module, kernel, alloca_offset, regions_at, arch)
    model = builder.model()
    probes = tuple(dict.fromkeys(p for k, p in trace.probes if k == kernel))
    return model, BesideModel(tuple(builder.operands), probes)


class _Builder:
    def __init__(  # noqa: PLR0913 - what one kernel's model is built from
        self,
        trace: OrderingTrace,
        module: Any,
        kernel: str,
        alloca_offset: Callable[[Any], int | None],
        regions_at: Callable[[int], str | None],
        arch: str | None,
    ) -> None:
        self.trace = trace
        self.indices = _snapshots_first(trace.indices, trace)
        self.counts = _snapshots_first(trace.counts, trace)
        self.kernel = kernel
        self.alloca_offset = alloca_offset
        self.regions_at = regions_at
        self.arch = arch
        self.notes: list[str] = list(trace.notes)
        self.events = [e for e in trace.events if e.kernel == kernel]
        self.threads = _kernel_threads(module, kernel)
        self.cond_cache: list[tuple[Any, Condition | None]] = []
        self.loop_ops: list[Any] = []
        self.loop_depth: dict[int, int] = {}  # loop uid -> how many loops lie around it
        self.spans: dict[str, m.RegionSpan] = {}
        self.guard_cache: list[tuple[Any, tuple[int, Any] | None]] = []  # if op -> (state key, bound)
        self.thread_stage: dict[int, tuple[Any, frozenset[int], str]] = {}  # id(access) -> (index value, threads, note)
        self.free: list[str] = []  # loop ids whose counts could not be related to the others'
        self.role_trips: dict[tuple[str, frozenset[int]], int | None] = {}
        self.groups: list[tuple[Any, str, int]] = []  # (upper value, shared loop id, its first trip's start)
        self.tmem = tmem_regions(trace.regions)  # TMEM views by placement: their columns, read from the IR
        self.spans.update({s.name: s for s in self.tmem.spans})
        # an access is placed on the nearest view that has a place (a TMEM view over a run-time slice has none)
        self.views = [v for v in trace.regions if v.memory != "tmem" or id(v) in self.tmem.of]
        self.operands: dict[GemmOperand, None] = {}  # each GEMM operand read as placed, in trace order

    # -- threads and roles ---------------------------------------------------------------

    def cond(self, op: Any) -> Condition | None:
        for seen, threads in self.cond_cache:
            if seen == op:
                return threads
        threads = condition_threads(op, self.threads)
        self.cond_cache.append((op, threads))
        return threads

    def guard(self, op: Any) -> tuple[int, Any] | None:
        """``(state key, bound)`` when the run-time part of an ``if`` is ``state.count < bound``."""
        for seen, found in self.guard_cache:
            if seen == op:
                return found
        found = None
        try:
            terms = guard_terms(op, self.threads)
        except Exception:
            terms = None
        if terms is not None and len(terms) == 1:
            _, lhs, bound = terms[0]
            lhs = count_value(lhs)[1]
            key = next((k for v, k in self.counts if k is not None and same_value(v, lhs)), None)
            found = (key, bound) if key is not None else None
        self.guard_cache.append((op, found))
        return found

    def event_threads(self, raw: RawEvent) -> frozenset[int]:
        out = frozenset(range(self.threads))
        for op, arm in raw.ctx.ifs:
            held = self.cond(op)
            if held is not None:
                out &= held.arm(arm)
            if arm == 0 and (held is None or held.partial) and self.guard(op) is not None:
                continue  # a guard on a state's count: the model keeps it (see ``loop_infos``)
            if (held is None or held.partial) and raw.event is not None and not isinstance(raw.event, m.Access):
                # an access taken as made when it is not can only add findings; a sync taken
                # as made when it is not could order what the kernel leaves unordered: say so
                how = "values known only at run time" if held is None else "run-time values as well as the thread index"
                self.notes.append(
                    f"{_what(raw.event)} at {raw.event.site} runs under a branch on {how}; it is taken as run on every pass"
                )
        return out

    def roles(self, warp_sets: list[frozenset[int]]) -> list[_Role]:
        warps = range(-(-self.threads // WARP))
        signature: dict[int, tuple[bool, ...]] = {w: tuple(w in s for s in warp_sets) for w in warps}
        runs: list[list[int]] = []
        for w in warps:
            if runs and signature[runs[-1][-1]] == signature[w] and runs[-1][-1] == w - 1:
                runs[-1].append(w)
            else:
                runs.append([w])
        out = []
        for run in runs:
            if not any(signature[run[0]]):
                continue  # warps that run nothing the trace recorded
            first, n = run[0], len(run)
            name = f"warp {first}" if n == 1 else f"warps {first}-{first + n - 1}"
            threads = frozenset(t for t in range(first * WARP, (first + n) * WARP) if t < self.threads)
            out.append(_Role(m.WarpRole(name, first, n), threads))
        return out

    # -- loops ------------------------------------------------------------------------------

    def loop_uid(self, op: Any, depth: int) -> str:
        index = next((i for i, seen in enumerate(self.loop_ops) if seen == op), None)
        if index is None:
            self.loop_ops.append(op)
            index = len(self.loop_ops) - 1
            self.loop_depth[index] = depth
        return f"#{index}"

    def loop_infos(self, raw: RawEvent) -> tuple[LoopInfo, ...]:
        infos = []
        for depth, op in enumerate(raw.ctx.loops):
            infos.append(LoopInfo(self.loop_uid(op, depth), loop_bounds(op).trips))
        keyed = [((d, 1), info) for d, info in enumerate(infos)]
        for op, arm in raw.ctx.ifs:
            if arm != 0 or self.guard(op) is None:
                continue
            gi = next(i for i, (seen, _) in enumerate(self.guard_cache) if seen == op)
            depth = sum(1 for loop in raw.ctx.loops if encloses(loop, op))
            placeholder = m.When(pipeline="", side="producer", loop=f"?{gi}", body=())
            keyed.append(((depth, 0), LoopInfo(f"when#{gi}", None, guard=placeholder)))
        keyed.sort(key=lambda k: k[0])
        return tuple(info for _, info in keyed)

    def role_loops(self, loops: tuple[LoopInfo, ...], threads: frozenset[int]) -> tuple[LoopInfo, ...]:
        """The loops as one role runs them: a count read from the thread index is the role's own."""
        out = []
        for info in loops:
            if info.trips is None and info.guard is None:
                key = (info.id, threads)
                if key not in self.role_trips:
                    op = self.loop_ops[int(info.id[1:])]
                    self.role_trips[key] = thread_trips(op, threads, self.threads)
                trips = self.role_trips[key]
                if trips is not None:
                    info = replace(info, id=f"{info.id}@{min(threads) // WARP}", trips=trips)
            out.append(info)
        return tuple(out)

    def loop_plan(self) -> dict[str, tuple[str, int, int | None]]:
        """Loop uid -> (shared id, iterations written out in front, its cap on the rest) for
        run-time counts. A loop up to ``min(c, k)`` shares ``k``'s id, capped."""
        groups: list[tuple[Any, list[tuple[int, int, int | None]]]] = []  # (upper value, [(uid, lower, cap)])
        plan: dict[str, tuple[str, int, int | None]] = {}
        strided: list[int] = []  # loops read as their own count, by uid
        whiles = [
            i
            for i, op in enumerate(self.loop_ops)
            if op.name == "scf.while" and not self.loop_depth.get(i) and loop_bounds(op).trips is None
        ]
        for i in whiles:
            plan[f"#{i}"] = ("tiles", 0, None)
        if len(whiles) > 1:
            self.notes.append(
                f"the {len(whiles)} outermost while loops (a persistent kernel's tile loops, one per role) "
                "are taken to run the same number of times: their counts are known only at run time"
            )
        for i, op in enumerate(self.loop_ops):
            b = loop_bounds(op)
            if b.trips is not None or i in whiles:
                continue
            if op.name != "scf.for":
                plan[f"#{i}"] = (f"loop{i}", 0, None)
                self.free.append(f"loop{i}")
                self.notes.append(f"loop #{i}: a while loop inside another loop; its count is read as its own")
                continue
            if b.step != 1 or b.lower is None or b.upper_value is None:
                # loops over the very same bounds (one role's ``range(bidx, tiles, grid)`` and
                # another's) run the same count whatever it is: they share one id
                twin = next((j for j in strided if _same_bounds(self.loop_ops[j], op)), None)
                if twin is not None:
                    plan[f"#{i}"] = plan[f"#{twin}"]
                    continue
                strided.append(i)
                plan[f"#{i}"] = (f"loop{i}", 0, None)
                self.notes.append(f"loop #{i}: its trip count is not a run-time bound from a constant start by step 1")
                continue
            for upper, members in groups:
                if same_value(upper, b.upper_value):
                    members.append((i, b.lower, b.cap))
                    break
            else:
                groups.append((b.upper_value, [(i, b.lower, b.cap)]))
        if len(groups) > 1:
            how = ", ".join(f"k{g}: {_bound_text(upper)}" for g, (upper, _) in enumerate(groups))
            self.notes.append(
                f"loops with run-time counts capture could not relate to one another ({how}); "
                "the check tries them apart, so some of its cases may never occur"
            )
        self.groups = []
        for g, (upper, members) in enumerate(groups):
            base = max(lower for _, lower, _ in members)
            shared = f"k{g}" if len(groups) > 1 else "k"
            self.groups.append((upper, shared, base))
            for i, lower, cap in members:
                at_most = None
                if cap is not None:
                    at_most = cap - base
                    if cap < base:
                        self.notes.append(f"loop #{i}: at most {cap} trips, fewer than the {base} written out in front")
                plan[f"#{i}"] = (shared, base - lower, at_most)
        return plan

    # -- accesses -----------------------------------------------------------------------------

    def tmem_stage(
        self, view: RegionView, span: m.RegionSpan, value: Any, what: str, states: dict[int, list[tuple[str, str]]]
    ) -> tuple[str | None, str] | None:
        """The stage of a TMEM access, where a pipeline state's index picks it: the view's
        columns picked by the index, or a slice on the way to the access indexed by it (an
        accumulator buffer); None: read as any other region's."""
        if id(view) in self.tmem.index_of:
            return self.picked_stage(view, what, states)
        key = _state_slice(value, view, self.indices) if span.stages > 1 else None
        if key is not None and states.get(key):
            return states[key][0][0], self.trace.states[key][0]
        return None

    def picked_stage(
        self, view: RegionView, what: str, states: dict[int, list[tuple[str, str]]]
    ) -> tuple[str | None, str]:
        """The stage of a TMEM view whose columns an index picks among its region's stages:
        the pipeline whose state that index is (and the state's name)."""
        key = _index_key(self.tmem.index_of[id(view)], self.indices)
        if key is not None and states.get(key):
            return states[key][0][0], self.trace.states[key][0]
        self.notes.append(
            f"{what}: the stage of {view.name!r} is picked by a run-time index not taken "
            "from a pipeline state, so it is taken as the whole region"
        )
        return None, ""

    def place(self, raw: RawEvent, states: dict[int, list[tuple[str, str]]]) -> m.Event | None:
        assert raw.access is not None and isinstance(raw.event, m.Access)
        a = raw.access
        site = raw.event.site
        found = _region_of(a.value, self.views, self.indices)
        if found is None:
            self.notes.append(
                f"{a.kind} at {site}: the {a.memory.upper()} it reaches is no tensor view capture saw made"
            )
            return None
        view, coord, by_state, slice_op = found
        span = self.span(view)
        if span is None:
            self.notes.append(f"{a.kind} at {site}: where {view.name!r} lies in {a.memory.upper()} is not constant")
            return None
        stage: int | str | None = None
        state = ""
        rotation: m.Rotation | None = None
        by_thread: Any = None
        offset, size = 0, None
        inner = self.tmem.of.get(id(view)) if view.memory == "tmem" else None
        if inner is not None and (inner[1] or inner[2] != span.size):
            offset, size = inner[1], inner[2]  # a view inside a region: its own columns of it
        elif view.memory == "tmem" and (picked := self.tmem_stage(view, span, a.value, f"{a.kind} at {site}", states)):
            stage, state = picked
        elif span.stages > 1:
            last = _last_coord(coord)
            if last is not None and last != "?":
                stage = int(last)
            elif a.barrier is not None:
                stage = a.barrier
                state = self.trace.states[a.barrier_state][0] if a.barrier_state in self.trace.states else ""
            elif isinstance(by_state, int) and 0 <= by_state < span.stages:
                stage = by_state
            elif isinstance(by_state, str) and states.get(int(by_state)):
                key = int(by_state)
                stage = states[key][0][0]
                state = self.trace.states[key][0]
            elif (slot := self.rotation(raw, slice_op, span.stages)) is not None:
                stage, rotation = (slot, None) if isinstance(slot, int) else (None, slot)
            elif (index := _last_index(slice_op)) is not None and thread_values(
                index, frozenset(range(0, self.threads, WARP)), self.threads
            ) is not None:
                by_thread = index  # a stage read from the thread index: each role's own (see ``per_role``)
            else:
                self.notes.append(
                    f"{a.kind} at {site}: the stage of {view.name!r} it reaches ({coord}) is a run-time index not taken "
                    "from a pipeline state, so it is taken as the whole region"
                )
            if (stage is not None or rotation is not None or by_thread is not None) and view.inner is not None:
                n, stride = view.inner
                fixed = _second_last_coord(coord)
                # the mode is the slot's outermost (n of them fill it) and no swizzle moves bytes across
                # its parts (a swizzle permutes within 4 KiB at most)
                if fixed is not None and n * stride == span.slot and 0 <= fixed < n and stride % 4096 == 0:
                    offset, size = fixed * stride, stride  # a slot split again by a constant index
        made = m.Access(
            kind=a.kind,
            region=span.name,
            site=site,
            stage=stage,
            state=state,
            offset=offset,
            bytes=size if size is not None else (a.bytes if a.kind == "tma_load" else None),
            barrier=a.barrier,
            multicast=a.multicast,
            rotation=rotation,
        )
        if by_thread is not None:
            note = f"{a.kind} at {site}: the stage of {view.name!r} it reaches ({coord}) differs among the threads of one role"
            self.thread_stage[id(made)] = (by_thread, frozenset(), note)
        return made

    def per_role(self, raw: RawEvent, e: m.Event, mine: frozenset[int], threads: frozenset[int]) -> m.Event | None:
        """What an event read from the thread index is for one role: a named barrier's id, an
        access's stage (then the threads sharing that stage split it, see ``share``)."""
        if isinstance(e, m.SequenceOp) and e.group < 0:
            groups = thread_values(raw.by_thread[0], mine, self.threads) if raw.by_thread is not None else None
            if groups is None or len(groups) != 1:
                self.notes.append(f"{e.op} of {e.pipeline!r} at {e.site}: its group is known only at run time")
                return None
            return replace(e, group=groups.pop())
        if isinstance(e, m.BarrierSync) and not e.barrier and raw.by_thread is not None:
            value, count = raw.by_thread
            ids = thread_values(value, mine, self.threads)
            if ids is None or len(ids) != 1:
                self.notes.append(f"a named barrier at {e.site} whose id is known only at run time")
                return None
            bid = ids.pop()
            name = f"bar{bid}"
            self.trace.named.setdefault(name, m.NamedBarrier(name, count, e.site, bid))
            return replace(e, barrier=name)
        found = self.thread_stage.get(id(e)) if isinstance(e, m.Access) else None
        if found is None or not isinstance(e, m.Access):
            return self.share(e, mine, threads)
        value, _, note = found
        stages = thread_values(value, mine, self.threads)
        span = self.spans[e.region]
        if stages is None or len(stages) != 1 or not 0 <= min(stages) < span.stages:
            self.notes.append(note)
            return self.share(replace(e, offset=0, bytes=None), mine, threads)
        stage = stages.pop()
        same = frozenset(t for t in threads if thread_values(value, frozenset({t}), self.threads) == {stage})
        return self.share(replace(e, stage=stage), mine, same)

    def rotation(self, raw: RawEvent, slice_op: Any, stages: int) -> m.Rotation | int | None:
        """The slot of ``(sum of terms) % stages`` where each term, times a constant, is a
        constant; the index of an enclosing loop counted from 0 by 1 (``buf = e % stages`` in
        ``for e in range(n)``); a value a loop carries from a constant by a constant step
        (``written += per_tile``); or the tiles a persistent loop has done (a tile scheduler's
        count read in that loop around its one ``advance_to_next_work``: the loop's trip index,
        plus one when read after the advance). Terms and loops whose step is a whole number of
        turns drop out, whatever their count; exactly one loop may remain (``(tiles_done * 8 + e)
        % 4`` is ``e % 4``)."""
        if slice_op is None:
            return None
        with plain_values():
            parsed = _slot_terms(slice_op, stages)
            if parsed is None:
                return None
            offset, terms = parsed
            per_loop: dict[int, int] = {}
            for value, coeff in terms:
                if coeff % stages == 0:  # whole turns whatever the (non-negative) count is
                    continue
                found = self.counted_by(raw, value)
                if found is None:
                    return None
                depth, start, step = found
                offset += start * coeff
                if depth is not None:
                    per_loop[depth] = per_loop.get(depth, 0) + step * coeff
        turning = {depth: per % stages for depth, per in per_loop.items() if per % stages}
        if not turning:  # every count makes whole turns: one slot on every trip
            return offset % stages
        if len(turning) != 1:
            return None
        ((depth, per),) = turning.items()
        return m.Rotation(self.loop_uid(raw.ctx.loops[depth], depth), per, offset % stages)

    def counted_by(self, raw: RawEvent, value: Any) -> tuple[int | None, int, int] | None:
        """``(the enclosing loop's depth, start, step)`` when ``value`` is ``start + t * step`` at
        trip ``t`` of that loop (depth None: the same value on every trip); None: not read."""
        for depth, loop in enumerate(raw.ctx.loops):
            if _is_induction(loop, value):
                b = loop_bounds(loop)
                return (depth, 0, 1) if b.lower == 0 and b.step == 1 else None
            carried = _carried_count(loop, value)
            if carried is not None:
                start, step = carried
                return (None if loop_bounds(loop).trips == 1 else depth), start, step
        read = next(((lp, at) for v, lp, at in self.trace.tile_counts if lp is not None and same_value(v, value)), None)
        if read is None or read[0] not in raw.ctx.loops:
            return None
        loop, read_at = read
        advances = [at for c, at in self.trace.tile_advances if c.loops and c.loops[-1] == loop]
        if len(advances) != 1:
            return None
        return raw.ctx.loops.index(loop), int(advances[0] < read_at), 1

    def span(self, view: RegionView) -> m.RegionSpan | None:
        if view.memory == "tmem":
            placed = self.tmem.of.get(id(view))
            return self.spans.get(placed[0]) if placed is not None else None
        if view.name in self.spans:
            return self.spans[view.name]
        if view.alloca is None or view.size is None:
            return None
        base = self.alloca_offset(view.alloca)
        if base is None:
            return None
        start = base + (view.offset or 0)
        stages = view.stages if view.stages > 1 and view.size % view.stages == 0 else 1
        span = m.RegionSpan(view.name, view.memory, start, view.size, stages)  # type: ignore[arg-type]
        self.spans[view.name] = span
        return span

    # -- the model ------------------------------------------------------------------------------

    def pipelines(self) -> tuple[m.Pipeline, ...]:
        out = []
        for spec, _obj, (storage, _partners) in self.trace.pipelines.values():
            if not any(isinstance(e.event, m.Init) and e.event.pipeline == spec.name for e in self.events):
                if not any(isinstance(e.event, m.PipelineOp) and e.event.pipeline == spec.name for e in self.events):
                    continue
            region = None
            ptr = getattr(storage, "value", storage)
            placed = pointer_offset(ptr) if ptr is not None else None
            if placed is not None:
                base = self.alloca_offset(placed[0])
                region = self.regions_at(base + placed[1]) if base is not None else None
            out.append(replace(spec, barrier_region=region))
        return tuple(out)

    def model(self) -> m.OrderingModel:
        if not self.threads:
            self.notes.append("the block size is not stated in the kernel, so warp roles are not read")
            self.threads = WARP
        pipelines = self.pipelines()
        partners = {spec.name: p for spec, _, (_, p) in self.trace.pipelines.values()}
        per_event = [(raw, self.event_threads(raw)) for raw in self.events]
        per_event = [(raw, t) for raw, t in per_event if t]  # under a branch no thread takes
        everyone = frozenset(range(self.threads))
        warp_sets = [frozenset(t // WARP for t in threads) for _, threads in per_event]
        roles = self.roles(list(dict.fromkeys(warp_sets)))
        first_split = next((i for i, (_, t) in enumerate(per_event) if t != everyone), len(per_event))
        states = self.state_pipelines()
        uses = [
            (raw.state, (raw.event.pipeline, "producer" if raw.event.op.startswith("producer") else "consumer"), t)
            for raw, t in per_event
            if isinstance(raw.event, m.PipelineOp) and raw.event.op != "advance" and raw.state is not None
        ]
        prologue: list[m.Event] = []
        records: list[tuple[m.Event, Context]] = []
        for i, (raw, threads) in enumerate(per_event):
            if raw.unread:
                self.notes.append(raw.unread)
                continue
            events = self.resolve(raw, states)
            if not events:
                continue
            loops = self.loop_infos(raw)
            if i < first_split:
                prologue += events
                continue
            for role in roles:
                mine = threads & role.threads
                if not mine:
                    continue
                mine_loops = self.role_loops(loops, role.threads)
                for e in self.advances(events, raw.state, uses, mine):
                    e = self.arrivals(e, raw.scale, mine, partners)
                    placed = self.per_role(raw, e, mine, threads)
                    if placed is not None:
                        records.append((placed, Context(placed.site, role.role, mine_loops)))
        programs = self.peel(programs_from_trace(records))
        used = {e.pipeline for e, _ in records if isinstance(e, (m.PipelineOp, m.SequenceOp))} | {
            e.pipeline for e in prologue if isinstance(e, m.Init)
        }
        return m.OrderingModel(
            self.kernel,
            pipelines=tuple(p for p in pipelines if p.name in used),
            barriers=tuple(self.trace.named.values()),
            regions=tuple(self.spans.values()),
            programs=programs,
            prologue=tuple(prologue),
            arch=self.arch,
            meta=tuple((UNREAD, n) for n in dict.fromkeys(self.notes))
            + tuple((m.FREE_LOOP, f) for f in dict.fromkeys(self.free)),
        )

    @staticmethod
    def advances(
        events: list[m.Event],
        key: int | None,
        uses: list[tuple[int, tuple[str, str], frozenset[int]]],
        mine: frozenset[int],
    ) -> list[m.Event]:
        """A state's ``advance`` as the role sees it: it moves that state on each pipeline side
        the role's own calls use it for (two roles may name their states alike)."""
        out: list[m.Event] = []
        for e in events:
            if not (isinstance(e, m.PipelineOp) and e.op == "advance"):
                out.append(e)
                continue
            pairs = dict.fromkeys(pair for k, pair, threads in uses if k == key and threads & mine)
            out += [m.PipelineOp(op=f"{side}_advance", pipeline=p, site=e.site, state=e.state) for p, side in pairs]
        return out

    def state_pipelines(self) -> dict[int, list[tuple[str, str]]]:
        """Each PipelineState object -> the (pipeline, side) pairs it is used with."""
        out: dict[int, list[tuple[str, str]]] = {}
        for raw in self.events:
            e = raw.event
            if isinstance(e, m.PipelineOp) and e.op != "advance" and raw.state is not None:
                side = "producer" if e.op.startswith("producer") else "consumer"
                pair = (e.pipeline, side)
                if pair not in out.setdefault(raw.state, []):
                    out[raw.state].append(pair)
        return out

    def resolve(
        self,
        raw: RawEvent,
        states: dict[int, list[tuple[str, str]]],
    ) -> list[m.Event]:
        e = raw.event
        if e is None:
            return []
        if isinstance(e, m.Access):
            placed = self.place(raw, states)
            if placed is None:
                return []
            if raw.access is not None and raw.access.operand:  # a GEMM's operand: noted beside the model
                assert isinstance(placed, m.Access)
                note = GemmOperand(placed.kind, placed.site, placed.region, raw.access.operand, raw.access.form)
                self.operands[note] = None
            return [placed]
        if isinstance(e, m.PipelineOp) and e.op == "advance":
            return [e]  # which pipelines and sides it moves depends on the role (see ``advances``)
        if isinstance(e, m.Init) and any(
            p.name == e.pipeline and p.kind == "tma_store" for p, _, _ in self.trace.pipelines.values()
        ):
            return []  # PipelineTmaStore has no barriers to initialise
        return [e]

    def arrivals(self, e: m.Event, scale: str, threads: frozenset[int], partners: dict[str, int]) -> m.Event:
        if not isinstance(e, (m.PipelineOp, m.SequenceOp)) or not scale:
            return e
        warps = len({t // WARP for t in threads})
        n = {"threads": len(threads), "warps": warps, "partners": warps * partners.get(e.pipeline, 1)}[scale]
        return replace(e, arrivals=n)

    def share(self, e: m.Event, mine: frozenset[int], threads: frozenset[int]) -> m.Event:
        """A copy every thread makes on its own part of a slot, run by several roles: each
        role's part, the slot split among the threads in order (no two threads' parts meet)."""
        if not isinstance(e, m.Access) or e.kind not in PARTITIONED or mine == threads:
            return e
        span = self.spans.get(e.region)
        if span is None:
            return e
        whole = span.slot if e.stage is not None or e.rotation is not None else span.size
        base = 0
        if span.memory == "smem" and e.bytes is not None:
            base, whole = e.offset, e.bytes  # a part of the slot the access itself names
        before = sum(1 for t in threads if t < min(mine))
        return replace(e, offset=base + whole * before // len(threads), bytes=whole * len(mine) // len(threads))

    def peel(self, programs: tuple[m.RoleProgram, ...]) -> tuple[m.RoleProgram, ...]:
        plan = self.loop_plan()
        states = self.state_pipelines()

        def walk(steps: tuple[m.Step, ...]) -> tuple[m.Step, ...]:
            out: list[m.Step] = []
            for s in steps:
                if isinstance(s, m.When):
                    body = walk(s.body)
                    when = self.resolve_guard(s, body, states)
                    out += [when] if when is not None else list(body)
                    continue
                rot = s.rotation if isinstance(s, m.Access) else None
                if isinstance(s, m.Access) and rot is not None and rot.loop in plan:
                    shared, ahead, _ = plan[rot.loop]
                    if ahead:
                        self.notes.append(f"{s.kind} at {s.site}: its slot counts trips of a loop written out in part")
                        s = replace(s, rotation=None)
                    else:
                        s = replace(s, rotation=replace(rot, loop=shared))
                if not isinstance(s, m.Loop):
                    out.append(s)
                    continue
                body = walk(s.body)
                if s.trips is not None or s.id not in plan:
                    out.append(m.Loop(s.id, s.trips, body))
                    continue
                shared, ahead, at_most = plan[s.id]
                for _ in range(ahead):
                    out += list(body)
                out.append(m.Loop(shared, None, body, at_most))
            return tuple(out)

        return tuple(replace(p, body=walk(p.body)) for p in programs)

    def resolve_guard(
        self, w: m.When, body: tuple[m.Step, ...], states: dict[int, list[tuple[str, str]]]
    ) -> m.When | None:
        """The guard's state and loop, read once the loops are planned; None (and a note)
        when its bound is no loop's count or its state serves more than one pipeline side."""
        op, found = self.guard_cache[int(w.loop[1:])]
        assert found is not None
        key, bound = found
        _, limit, cap = capped_count(bound)
        group = next((g for g in self.groups if cap is None and same_value(g[0], limit)), None)
        pairs = states.get(key, [])
        sites = ", ".join(dict.fromkeys(str(e.site) for e in _events_of(body)))
        if group is None or len(pairs) != 1:
            why = "no loop's count" if group is None else "a state used on more than one pipeline side"
            self.notes.append(
                f"a branch on a pipeline state's count (around {sites}) compares with {why}; its block is taken as run on every pass"
            )
            return None
        pipeline, side = pairs[0]
        name = self.trace.states[key][0] if key in self.trace.states else ""
        first = next(iter(_events_of(body)), None)
        return m.When(
            pipeline=pipeline,
            side=side,  # type: ignore[arg-type]
            loop=group[1],
            body=body,
            state=name,
            plus=group[2],
            site=first.site if first is not None else None,
        )


def _events_of(steps: tuple[m.Step, ...]) -> list[m.Event]:
    out: list[m.Event] = []
    for s in steps:
        if isinstance(s, (m.Loop, m.When)):
            out += _events_of(s.body)
        else:
            out.append(s)
    return out


def _snapshots_first(values: list[tuple[Any, int | None]], trace: OrderingTrace) -> list[tuple[Any, int | None]]:
    """A state's index (count) values with those a resource handle's copy gave first: a value
    read from a participant's state before it advances is also its handle's, and only the
    handle still names that stage after the advance (an access indexed by it after the
    advance takes the handle's stage, not the participant's next one)."""
    names = trace.snapshot_names

    def held(key: int | None) -> bool:
        return key is not None and key in trace.states and trace.states[key][0] in names

    return [x for x in values if held(x[1])] + [x for x in values if not held(x[1])]


def _state_slice(value: Any, view: RegionView, indices: list[tuple[Any, int | None]]) -> int | None:
    """The key of the pipeline state whose index a slice between ``view`` and the accessed
    ``value`` takes (the accumulator buffer a TMEM access reaches through further slices)."""
    with plain_values():
        stack: list[tuple[Any, tuple[Any, ...]]] = [(raw_value(value), ())]
        seen = 0
        while stack and seen < 400:
            v, slices = stack.pop()
            seen += 1
            if same_value(view.value, v):
                for op in reversed(slices):  # from the view's side
                    key = _state_of(op, indices)
                    if isinstance(key, str):
                        return int(key)
                return None
            op = defining_op(v)
            if op is None:
                continue
            if op.name == "cute.slice" and len(op.operands) > 1:
                slices = (*slices, op)
            stack += [(raw_value(o), slices) for o in reversed(list(op.operands))]
    return None


def _index_key(value: Any, indices: list[tuple[Any, int | None]]) -> int | None:
    """The pipeline state whose ``index`` is ``value``, by its key."""
    with plain_values():
        return next((key for v, key in indices if key is not None and same_value(v, value)), None)


def _same_bounds(a: Any, b: Any) -> bool:
    """Two ``scf.for`` loops over the same start, end and step values."""
    if a.name != "scf.for" or b.name != "scf.for":
        return False
    with plain_values():
        return all(_same_expr(a.operands[k], b.operands[k]) for k in range(3))


def _same_expr(x: Any, y: Any, depth: int = 0) -> bool:
    """One value, or the same pure computation of the same values (each role computes its
    tile loop's bounds again from the block index and the kernel's arguments)."""
    if same_value(x, y):
        return True
    ox, oy = defining_op(x), defining_op(y)
    if ox is None or oy is None or depth > 12 or ox.name != oy.name:
        return False
    if any(w in ox.name for w in ("load", "atomic", "call", "alloc", "shfl", "vote")):
        return False  # may read memory or other threads: two evaluations may differ
    if str(ox.attributes) != str(oy.attributes) or len(ox.operands) != len(oy.operands):
        return False
    if len(ox.results) != 1 or len(oy.results) != 1:
        return False
    return all(_same_expr(a, b, depth + 1) for a, b in zip(ox.operands, oy.operands))


def _bound_text(value: Any) -> str:
    op = defining_op(value)
    return f"up to a value from {op.name}" if op is not None else "up to a kernel argument or loop value"


def _what(e: m.Event) -> str:
    return e.op if isinstance(e, m.PipelineOp) else type(e).__name__


def _kernel_threads(module: Any, kernel: str) -> int:
    from ._compiled import _ops

    for op in _ops(module.operation):
        if op.name in ("cuda.kernel", "gpu.func", "func.func") and "sym_name" in op.attributes:
            attr = op.attributes["sym_name"]
            if str(getattr(attr, "value", attr)).strip('"') == kernel:
                return block_dim(op) or 0
    return 0


_COORD = re.compile(r'coord<"(.*)">')


def _last_coord(coord: str | None) -> str | None:
    """The last top-level component of a slice's coordinate, e.g. ``"(_,_,0,?)"`` -> ``"?"``."""
    if coord is None:
        return None
    tail = _last_text(coord)
    if tail == "?" or re.fullmatch(r"\?\{.*\}", tail):
        return "?"
    return tail if tail.isdigit() else None


def _region_of(
    value: Any, views: list[RegionView], indices: list[tuple[Any, int | None]]
) -> tuple[RegionView, str | None, int | str | None, Any] | None:
    """The view an accessed tensor comes from, the coordinate of the slice nearest the
    access, the pipeline state whose index that slice takes (if it takes one), and the slice."""
    if value is None:
        return None
    with plain_values():
        found = _walk_to_view(value, views)
        if found is None:
            return None
        view, coord, slice_op = found
        return view, coord, _state_of(slice_op, indices) if slice_op is not None else None, slice_op


def _strip(value: Any) -> Any:
    for _ in range(8):
        op = defining_op(value)
        if getattr(op, "name", None) not in PASS_OPS:
            break
        value = op.operands[0]
    return raw_value(value)


def _is_induction(loop: Any, value: Any) -> bool:
    """Whether ``value`` is the induction variable of the ``scf.for`` ``loop``."""
    if getattr(loop, "name", None) != "scf.for":
        return False
    try:
        return same_value(loop.regions[0].blocks[0].arguments[0], value)
    except Exception:  # no body block: not a loop of the shape scf.for has
        return False


def _carried_count(loop: Any, value: Any) -> tuple[int, int] | None:
    """``(start, step)`` when ``value`` is a value the ``scf.for`` ``loop`` carries from the
    constant ``start``, adding the constant ``step`` each trip."""
    if getattr(loop, "name", None) != "scf.for":
        return None
    try:
        body = loop.regions[0].blocks[0]
        args = list(body.arguments)
        i = next(j for j, arg in enumerate(args) if j > 0 and same_value(arg, value))
        start = const_value(loop.operands[3 + i - 1])
        added = defining_op(list(body.operations)[-1].operands[i - 1])
    except Exception:  # not carried by this loop
        return None
    if start is None or getattr(added, "name", None) != "arith.addi":
        return None
    for this, other in ((0, 1), (1, 0)):
        step = const_value(added.operands[other])
        if step is not None and same_value(added.operands[this], value):
            return start, step
    return None


def _one_constant(op: Any) -> tuple[int, Any] | None:
    """``(constant, the other operand)`` of a two-operand op with exactly one constant operand."""
    a, b = (const_value(o) for o in op.operands)
    if (a is None) == (b is None):
        return None
    return (a, _strip(op.operands[1])) if a is not None else (b, _strip(op.operands[0]))  # type: ignore[return-value]


def _slot_terms(slice_op: Any, stages: int) -> tuple[int, list[tuple[Any, int]]] | None:
    """``(constant, [(value, coefficient)])`` when the slice's last coordinate is
    ``(constant + sum of coefficient * value) % stages``, coefficients constant."""
    coord = defining_op(slice_op.operands[1]) if len(slice_op.operands) > 1 else None
    if coord is None or not len(coord.operands):
        return None
    rem = defining_op(_strip(coord.operands[len(coord.operands) - 1]))
    if getattr(rem, "name", None) not in ("arith.remsi", "arith.remui") or const_value(rem.operands[1]) != stages:
        return None
    offset, terms, todo = 0, [], [(_strip(rem.operands[0]), 1)]
    while todo:
        v, coeff = todo.pop()
        fixed = const_value(v)
        if fixed is not None:
            offset += fixed * coeff
            continue
        op = defining_op(v)
        name = getattr(op, "name", None)
        if name == "arith.addi":
            todo += [(_strip(o), coeff) for o in op.operands]
        elif name == "arith.muli" and (scale := _one_constant(op)) is not None:
            k, other = scale
            todo.append((other, coeff * k))
        else:
            terms.append((v, coeff))
    return offset, terms


def _state_of(slice_op: Any, indices: list[tuple[Any, int | None]]) -> int | str | None:
    """What the last run-time component of a slice's coordinate is: a constant (the stage
    itself), the ``index`` of a pipeline state (its key, as a string), or None (not read)."""
    coord = defining_op(slice_op.operands[1]) if len(slice_op.operands) > 1 else None
    if coord is None or not len(coord.operands):
        return None
    last = raw_value(coord.operands[len(coord.operands) - 1])
    fixed = const_value(last)
    if fixed is not None:
        return fixed
    stack = [(last, 0)]
    while stack:
        v, depth = stack.pop()
        for value, key in indices:
            if key is not None and same_value(value, v):
                return str(key)
        op = defining_op(v)
        if op is None or depth >= 6:
            continue
        stack += [(raw_value(o), depth + 1) for o in op.operands]
    return None


def _walk_to_view(value: Any, views: list[RegionView]) -> tuple[RegionView, str | None, Any] | None:
    """The view, and the slice on the path from it that picks its last (stage) mode: the
    first slice after the view whose last coordinate is not ``_`` (a slice of a slice,
    ``A[(None, None, k_block)]`` of ``tSrK[(None, None, None, stage)]``, indexes another mode)."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(raw_value(value), ())]
    seen = 0
    while stack and seen < 400:
        v, slices = stack.pop()
        seen += 1
        for view in views:
            if same_value(view.value, v):
                for op in reversed(slices):  # from the view's side
                    coord = str(op.operands[1].type)
                    if _last_text(coord) != "_":
                        return view, coord, op
                return view, None, None
        op = defining_op(v)
        if op is None:
            continue
        if op.name == "cute.slice" and len(op.operands) > 1:
            slices = (*slices, op)
        stack += [(raw_value(o), slices) for o in reversed(list(op.operands))]
    return None


def _last_index(slice_op: Any) -> Any:
    """The value of a slice's last coordinate."""
    if slice_op is None:
        return None
    with plain_values():
        coord = defining_op(slice_op.operands[1]) if len(slice_op.operands) > 1 else None
        if coord is None or not len(coord.operands):
            return None
        return raw_value(coord.operands[len(coord.operands) - 1])


def _second_last_coord(coord: str | None) -> int | None:
    """A slice's coordinate before the last one, when it is a constant: ``"(_,_,_,1,?)"`` -> 1."""
    if coord is None:
        return None
    m_ = _COORD.search(coord)
    text = m_.group(1) if m_ else coord
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1]
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return int(parts[-2]) if len(parts) >= 2 and parts[-2].isdigit() else None


def _last_text(coord: str) -> str:
    m_ = _COORD.search(coord)
    text = m_.group(1) if m_ else coord
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1]
    depth, last = 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            last = i + 1
    return text[last:].strip()


def unread_model(kernel: str, arch: str | None, why: str) -> m.OrderingModel:
    """A model with nothing in it but the reason it could not be read."""
    return m.OrderingModel(kernel, arch=arch, meta=((UNREAD, why),))
