"""A brute-force judge of small pipelines: every interleaving of the roles, explored.

Written apart from the checker, from the hardware rules alone: an mbarrier phase
completes when its pending arrivals and its tx count both reach zero; a parity wait
passes once the barrier's current phase has the other parity; a TMA load writes its
bytes from issue until it completes (at any later moment) and then subtracts its
bytes from the tx count; a WGMMA read lasts until a wait_group retires its group; a
UMMA read lasts until the ``tcgen05.commit`` after it arrives, which happens at any
later moment, one thread's commits in order;
arriving more than a phase still expects is undefined (the search goes no further
down that path). A state's bad outcome:

- race: two conflicting accesses (same bytes, one a write) can run at once: both
  roles poised at them, or one poised while the other is still in flight;
- proxy: an async-proxy read of bytes a generic write left unfenced;
- over-arrival, and deadlock: some role not done and nothing can move.

Only what the property test generates is understood: ``async`` / ``tma_async``
/ ``tma_umma`` pipeline calls (a consumer's resource handle: a copy of its state taken after
the wait, read and released through; a producer loop capped by ``at_most`` or its body
guarded by the consumer loop's count, ``When``), st / ld / tma_load / wgmma_read / umma_read, a proxy
fence, WGMMA groups, one
named barrier (a generation completes when its threads arrived; bar.sync waits for
the generation it arrived in), one level of loops and the regions' slots.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from smemviz.analysis.ordering import (
    Access,
    BarrierSync,
    CommitGroup,
    Fence,
    Loop,
    OrderingModel,
    PipelineOp,
    WaitGroup,
    When,
)

WRITES = {"st", "tma_load"}


@dataclass(frozen=True)
class _Op:
    what: str  # wait, arrive, access, fence, commit_group, wait_group, tc_commit, bar_arrive, bar_wait
    key: tuple[str, int] = ("", 0)  # ("full" | "empty", stage)
    parity: int = 0
    amount: int = 0
    tx: int = 0
    kind: str = ""
    lo: int = 0
    hi: int = 0


def _flatten(model: OrderingModel, program) -> list[_Op]:
    pipe = model.pipelines[0]
    # each side's PipelineState: [stages, index, phase, advances]; a handle's copy under its own name
    state = {("producer", ""): [pipe.stages, 0, 1, 0], ("consumer", ""): [pipe.stages, 0, 0, 0]}
    for spec in program.states:
        state[(spec.side, "")] = [spec.stages, 0, spec.phase, 0]
    counts = {s.id: s.trips for p in model.programs for s in p.body if isinstance(s, Loop)}
    side_of_role = "producer" if any(_ops_of(program.body, "producer")) else "consumer"
    out: list[_Op] = []

    def emit_event(e) -> None:
        if isinstance(e, PipelineOp):
            side = "producer" if e.op.startswith("producer") else "consumer"
            if e.op.endswith("snapshot"):
                state[(side, e.state)] = list(state[(side, e.source)])
                return
            st = state[(side, e.state)]
            if e.op.endswith("advance"):
                st[3] += 1
                st[1] += 1
                if st[1] == st[0]:
                    st[1], st[2] = 0, st[2] ^ 1
            elif e.op == "producer_acquire":
                out.append(_Op("wait", ("empty", st[1]), parity=st[2]))
                if pipe.kind in ("tma_async", "tma_umma"):
                    out.append(_Op("arrive", ("full", st[1]), amount=e.arrivals or 1, tx=pipe.tx_count))
            elif e.op == "producer_commit" and pipe.kind == "async":
                out.append(_Op("arrive", ("full", st[1]), amount=e.arrivals or pipe.producer.size))
            elif e.op == "consumer_wait":
                out.append(_Op("wait", ("full", st[1]), parity=st[2]))
            elif e.op == "consumer_release" and pipe.kind == "tma_umma":  # the MMA warp commits
                out.append(_Op("tc_commit", ("empty", st[1]), amount=e.arrivals or 1))
            elif e.op == "consumer_release":
                out.append(_Op("arrive", ("empty", st[1]), amount=e.arrivals or pipe.consumer.size))
        elif isinstance(e, Access):
            region = model.region(e.region)
            stage = state[(side_of_role, e.state)][1] if isinstance(e.stage, str) else (e.stage or 0)
            lo = region.start + stage * region.slot
            tx = region.slot if e.kind == "tma_load" else 0
            out.append(_Op("access", ("full", stage), kind=e.kind, lo=lo, hi=lo + region.slot, tx=tx))
        elif isinstance(e, Fence):
            out.append(_Op("fence"))
        elif isinstance(e, CommitGroup):
            out.append(_Op("commit_group"))
        elif isinstance(e, WaitGroup):
            out.append(_Op("wait_group"))
        elif isinstance(e, BarrierSync):
            out.append(_Op("bar_arrive", amount=e.threads or program.role.threads))
            if e.wait:
                out.append(_Op("bar_wait"))

    def emit_step(e) -> None:
        if isinstance(e, When):  # the block runs while the state advanced fewer times than the loop's count
            if state[(e.side, e.state)][3] < counts[e.loop] + e.plus:
                for inner in e.body:
                    emit_event(inner)
        else:
            emit_event(e)

    for step in program.body:
        if isinstance(step, Loop):
            trips = step.trips if step.at_most is None else min(step.trips, step.at_most)
            for _ in range(trips):
                for e in step.body:
                    emit_step(e)
        else:
            emit_event(step)
    return out


def _ops_of(steps, side):
    for s in steps:
        if isinstance(s, (Loop, When)):
            yield from _ops_of(s.body, side)
        elif isinstance(s, PipelineOp) and s.op.startswith(side):
            yield s


def _overlap(a: _Op, b_lo: int, b_hi: int) -> bool:
    return a.lo < b_hi and b_lo < a.hi


class _Found(Exception):
    pass


class State(NamedTuple):
    pcs: tuple[int, ...]
    bars: tuple  # ((side, stage), completed, pending, tx) per barrier
    tma: frozenset  # TMA loads in flight: (role, pc)
    wgmma: frozenset  # WGMMA reads not retired: (role, pc, committed)
    unfenced: frozenset  # generic writes no proxy fence has followed yet: (role, pc)
    named: tuple[int, int]  # the named barrier: threads arrived, generations completed
    gens: tuple[int, ...]  # per role: the generation it last arrived in
    umma: frozenset  # UMMA reads no commit has taken yet: (role, pc)
    commits: tuple  # per role: its commits in flight, in order: (key, amount, reads)


def outcomes(model: OrderingModel, stop_at_first: bool = False) -> set[str]:
    """Every bad outcome some interleaving reaches (empty when all are clean)."""
    pipe = model.pipelines[0]
    counts = {"full": pipe.full_init(), "empty": pipe.empty_init()}
    progs = [_flatten(model, p) for p in model.programs]
    bars0 = tuple(sorted(((side, s), 0, counts[side], 0) for side in counts for s in range(8)))
    need = model.barriers[0].threads if model.barriers else 0
    none = tuple(0 for _ in progs)
    empty = frozenset()
    start = State(none, bars0, empty, empty, empty, (0, 0), none, empty, tuple(() for _ in progs))
    seen = set()
    stack = [start]
    found: set[str] = set()
    while stack and not (stop_at_first and found):
        state = stack.pop()
        if state in seen:
            continue
        seen.add(state)
        race = _race(progs, state)
        if race:
            found.add(race)
        nxt = _successors(progs, counts, need, state, found)
        if not nxt and any(pc < len(p) for pc, p in zip(state.pcs, progs)):
            found.add("deadlock")
        stack.extend(nxt)
    return found


def judge(model: OrderingModel) -> str | None:
    """The first bad outcome any interleaving reaches, or None when every one is clean."""
    found = outcomes(model, stop_at_first=True)
    return min(found) if found else None


def _bar(bars, key):
    for b in bars:
        if b[0] == key:
            return b
    raise KeyError(key)


def _set_bar(bars, new):
    return tuple(new if b[0] == new[0] else b for b in bars)


def _arrive(bars, counts, key, amount, tx):
    _, done, pending, have = _bar(bars, key)
    if amount > pending:
        raise _Found("over-arrival")
    pending, have = pending - amount, have + tx
    if pending == 0 and have == 0:
        done, pending = done + 1, counts[key[0]]
    return _set_bar(bars, (key, done, pending, have))


def _complete_tx(bars, counts, key, tx):
    _, done, pending, have = _bar(bars, key)
    have -= tx
    if pending == 0 and have == 0:
        done, pending = done + 1, counts[key[0]]
    return _set_bar(bars, (key, done, pending, have))


def _in_flight(progs, state: State):
    """(access, is a write) for every async access still running."""
    yield from ((progs[r][pc], True) for r, pc in state.tma)
    yield from ((progs[r][pc], False) for r, pc, _ in state.wgmma)
    yield from ((progs[r][pc], False) for r, pc in state.umma)
    for r, queue in enumerate(state.commits):
        for _, _, reads in queue:
            yield from ((progs[r][pc], False) for pc in reads)


def _race(progs, state: State) -> str | None:
    pcs = state.pcs
    poised = [(r, progs[r][pc]) for r, pc in enumerate(pcs) if pc < len(progs[r]) and progs[r][pc].what == "access"]
    in_flight = list(_in_flight(progs, state))
    for i, (r, a) in enumerate(poised):
        for b, b_write in in_flight:
            if _overlap(a, b.lo, b.hi) and (a.kind in WRITES or b_write):
                return "race"
        for r2, b in poised[i + 1 :]:
            if r2 != r and _overlap(a, b.lo, b.hi) and (a.kind in WRITES or b.kind in WRITES):
                return "race"
    return None


def _successors(progs, counts, need, state: State, found: set[str]):
    out = []
    for r, pc in state.tma:  # a TMA load completes
        op = progs[r][pc]
        out.append(state._replace(bars=_complete_tx(state.bars, counts, op.key, op.tx), tma=state.tma - {(r, pc)}))
    for r, queue in enumerate(state.commits):  # a thread's oldest commit arrives
        if queue:
            key, amount, _ = queue[0]
            try:
                bars = _arrive(state.bars, counts, key, amount, 0)
            except _Found as bad:
                found.add(str(bad))
                continue
            commits = state.commits[:r] + (queue[1:],) + state.commits[r + 1 :]
            out.append(state._replace(bars=bars, commits=commits))
    for r, pc in enumerate(state.pcs):
        if pc >= len(progs[r]):
            continue
        try:
            moved = _step(progs, counts, need, state, r, progs[r][pc], found)
        except _Found as bad:
            found.add(str(bad))
            continue
        if moved is not None:
            out.append(moved)
    return out


def _step(progs, counts, need, state: State, r, op, found: set[str]):  # noqa: C901 - one branch per operation
    pc = state.pcs[r]
    s = state._replace(pcs=state.pcs[:r] + (pc + 1,) + state.pcs[r + 1 :])
    if op.what == "bar_arrive":
        arrived, gen = s.named
        if arrived + op.amount > need:
            raise _Found("over-arrival")
        arrived += op.amount
        gens = s.gens[:r] + (gen,) + s.gens[r + 1 :]
        return s._replace(named=(0, gen + 1) if arrived == need else (arrived, gen), gens=gens)
    if op.what == "bar_wait":
        return s if s.named[1] > s.gens[r] else None
    if op.what == "wait":
        return s if _bar(s.bars, op.key)[1] % 2 != op.parity else None
    if op.what == "arrive":
        return s._replace(bars=_arrive(s.bars, counts, op.key, op.amount, op.tx))
    if op.what == "tc_commit":
        reads = frozenset(p for q, p in s.umma if q == r)
        queue = (*s.commits[r], (op.key, op.amount, reads))
        umma = frozenset(u for u in s.umma if u[0] != r)
        return s._replace(umma=umma, commits=s.commits[:r] + (queue,) + s.commits[r + 1 :])
    if op.what == "fence":
        return s._replace(unfenced=frozenset(u for u in s.unfenced if u[0] != r))
    if op.what == "commit_group":
        return s._replace(wgmma=frozenset((a, b, a == r or c) for a, b, c in s.wgmma))
    if op.what == "wait_group":
        return s._replace(wgmma=frozenset(w for w in s.wgmma if not (w[0] == r and w[2])))
    return _access(progs, s, r, pc, op, found)


def _access(progs, s: State, r, pc, op, found: set[str]):
    if op.kind == "tma_load":
        return s._replace(tma=s.tma | {(r, pc)})
    if op.kind in ("wgmma_read", "umma_read") and any(_overlap(progs[a][b], op.lo, op.hi) for a, b in s.unfenced):
        found.add("proxy")  # stale data read; the run goes on
    if op.kind == "wgmma_read":
        return s._replace(wgmma=s.wgmma | {(r, pc, False)})
    if op.kind == "umma_read":
        return s._replace(umma=s.umma | {(r, pc)})
    if op.kind == "st":
        return s._replace(unfenced=s.unfenced | {(r, pc)})
    return s
