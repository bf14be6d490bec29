"""A brute-force judge of small pipelines: every interleaving of the roles, explored.

Written apart from the checker, from the hardware rules alone: an mbarrier phase
completes when its pending arrivals and its tx count both reach zero; a parity wait
passes once the barrier's current phase has the other parity; a TMA load writes its
bytes from issue until it completes (at any later moment) and then subtracts its
bytes from the tx count; a WGMMA read lasts until a wait_group retires its group;
arriving more than a phase still expects is undefined. A state's bad outcome:

- race: two conflicting accesses (same bytes, one a write) can run at once: both
  roles poised at them, or one poised while the other is still in flight;
- proxy: an async-proxy read of bytes a generic write left unfenced;
- over-arrival, and deadlock: some role not done and nothing can move.

Only what the property test generates is understood: ``async`` / ``tma_async``
pipeline calls, st / ld / tma_load / wgmma_read, a proxy fence, WGMMA groups, one
named barrier (a generation completes when its threads arrived; bar.sync waits for
the generation it arrived in), one level of loops and the regions' slots.
"""

from __future__ import annotations

from dataclasses import dataclass

from smemviz.analysis.ordering import (
    Access,
    BarrierSync,
    CommitGroup,
    Fence,
    Loop,
    OrderingModel,
    PipelineOp,
    WaitGroup,
)

WRITES = {"st", "tma_load"}


@dataclass(frozen=True)
class _Op:
    what: str  # wait, arrive, access, fence, commit_group, wait_group
    key: tuple[str, int] = ("", 0)  # ("full" | "empty", stage)
    parity: int = 0
    amount: int = 0
    tx: int = 0
    kind: str = ""
    lo: int = 0
    hi: int = 0


def _flatten(model: OrderingModel, program) -> list[_Op]:
    pipe = model.pipelines[0]
    # each side's PipelineState: [stages, index, phase]
    state = {"producer": [pipe.stages, 0, 1], "consumer": [pipe.stages, 0, 0]}
    for spec in program.states:
        state[spec.side] = [spec.stages, 0, spec.phase]
    side_of_role = "producer" if any(_ops_of(program.body, "producer")) else "consumer"
    out: list[_Op] = []

    def emit_event(e) -> None:
        if isinstance(e, PipelineOp):
            side = "producer" if e.op.startswith("producer") else "consumer"
            st = state[side]
            if e.op.endswith("advance"):
                st[1] += 1
                if st[1] == st[0]:
                    st[1], st[2] = 0, st[2] ^ 1
            elif e.op == "producer_acquire":
                out.append(_Op("wait", ("empty", st[1]), parity=st[2]))
                if pipe.kind == "tma_async":
                    out.append(_Op("arrive", ("full", st[1]), amount=e.arrivals or 1, tx=pipe.tx_count))
            elif e.op == "producer_commit" and pipe.kind == "async":
                out.append(_Op("arrive", ("full", st[1]), amount=e.arrivals or pipe.producer.size))
            elif e.op == "consumer_wait":
                out.append(_Op("wait", ("full", st[1]), parity=st[2]))
            elif e.op == "consumer_release":
                out.append(_Op("arrive", ("empty", st[1]), amount=e.arrivals or pipe.consumer.size))
        elif isinstance(e, Access):
            region = model.region(e.region)
            stage = state[side_of_role][1] if isinstance(e.stage, str) else (e.stage or 0)
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

    for step in program.body:
        if isinstance(step, Loop):
            for _ in range(step.trips):
                for e in step.body:
                    emit_event(e)
        else:
            emit_event(step)
    return out


def _ops_of(steps, side):
    for s in steps:
        if isinstance(s, Loop):
            yield from _ops_of(s.body, side)
        elif isinstance(s, PipelineOp) and s.op.startswith(side):
            yield s


def _overlap(a: _Op, b_lo: int, b_hi: int) -> bool:
    return a.lo < b_hi and b_lo < a.hi


class _Found(Exception):
    pass


def outcomes(model: OrderingModel, stop_at_first: bool = False) -> set[str]:
    """Every bad outcome some interleaving reaches (empty when all are clean)."""
    pipe = model.pipelines[0]
    counts = {"full": pipe.full_init(), "empty": pipe.empty_init()}
    progs = [_flatten(model, p) for p in model.programs]
    # state: pcs, barriers ((key, completed, pending, tx)...), in-flight TMA loads (role, pc),
    # WGMMA reads (role, pc, committed), unfenced generic writes (role, pc)
    bars0 = tuple(sorted(((side, s), 0, counts[side], 0) for side in counts for s in range(8)))
    need = model.barriers[0].threads if model.barriers else 0
    start = (tuple(0 for _ in progs), bars0, frozenset(), frozenset(), frozenset(), (0, 0), tuple(0 for _ in progs))
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
        if not nxt and any(pc < len(p) for pc, p in zip(state[0], progs)):
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


def _race(progs, state) -> str | None:
    pcs, _, tma, wgmma, *_ = state
    poised = [(r, progs[r][pc]) for r, pc in enumerate(pcs) if pc < len(progs[r]) and progs[r][pc].what == "access"]
    in_flight = [(progs[r][pc], True) for r, pc in tma] + [(progs[r][pc], False) for r, pc, _ in wgmma]
    for i, (r, a) in enumerate(poised):
        for b, b_write in in_flight:
            if _overlap(a, b.lo, b.hi) and (a.kind in WRITES or b_write):
                return "race"
        for r2, b in poised[i + 1 :]:
            if r2 != r and _overlap(a, b.lo, b.hi) and (a.kind in WRITES or b.kind in WRITES):
                return "race"
    return None


def _successors(progs, counts, need, state, found: set[str]):
    pcs, bars, tma, wgmma, unfenced, nb, gens = state
    out = []
    for r, pc in tma:  # a TMA load completes
        op = progs[r][pc]
        out.append((pcs, _complete_tx(bars, counts, op.key, op.tx), tma - {(r, pc)}, wgmma, unfenced, nb, gens))
    for r, pc in enumerate(pcs):
        if pc >= len(progs[r]):
            continue
        try:
            moved = _step(progs, counts, need, state, r, progs[r][pc])
        except _Found as bad:
            found.add(str(bad))
            continue
        if moved is not None:
            out.append(moved)
    return out


def _step(progs, counts, need, state, r, op):
    pcs, bars, tma, wgmma, unfenced, nb, gens = state
    pc = pcs[r]
    pcs2 = pcs[:r] + (pc + 1,) + pcs[r + 1 :]
    if op.what == "bar_arrive":
        arrived, gen = nb
        if arrived + op.amount > need:
            raise _Found("over-arrival")
        arrived += op.amount
        gens2 = gens[:r] + (gen,) + gens[r + 1 :]
        nb2 = (0, gen + 1) if arrived == need else (arrived, gen)
        return (pcs2, bars, tma, wgmma, unfenced, nb2, gens2)
    if op.what == "bar_wait":
        return (pcs2, bars, tma, wgmma, unfenced, nb, gens) if nb[1] > gens[r] else None
    if op.what == "wait":
        done = _bar(bars, op.key)[1]
        return (pcs2, bars, tma, wgmma, unfenced, nb, gens) if done % 2 != op.parity else None
    if op.what == "arrive":
        return (pcs2, _arrive(bars, counts, op.key, op.amount, op.tx), tma, wgmma, unfenced, nb, gens)
    if op.what == "fence":
        return (pcs2, bars, tma, wgmma, frozenset(u for u in unfenced if u[0] != r), nb, gens)
    if op.what == "commit_group":
        return (pcs2, bars, tma, frozenset((a, b, a == r or c) for a, b, c in wgmma), unfenced, nb, gens)
    if op.what == "wait_group":
        return (pcs2, bars, tma, frozenset(w for w in wgmma if not (w[0] == r and w[2])), unfenced, nb, gens)
    # an access
    if op.kind == "tma_load":
        return (pcs2, bars, tma | {(r, pc)}, wgmma, unfenced, nb, gens)
    if op.kind == "wgmma_read":
        if any(_overlap(progs[a][b], op.lo, op.hi) for a, b in unfenced):
            raise _Found("proxy")
        return (pcs2, bars, tma, wgmma | {(r, pc, False)}, unfenced, nb, gens)
    if op.kind == "st":
        return (pcs2, bars, tma, wgmma, unfenced | {(r, pc)}, nb, gens)
    return (pcs2, bars, tma, wgmma, unfenced, nb, gens)
