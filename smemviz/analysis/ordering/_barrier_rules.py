"""The mbarrier rules over one run: hangs (with a witness), over-arrivals, phases a
parity wait cannot tell apart, barriers used before init, and counts that only
happen not to hang at these trip counts."""

from __future__ import annotations

from ...layout.ordering import _model as m
from .._finding import Finding
from ._describe import role_text, who
from ._result import finding
from ._run import RoleState, Run, barrier_text

__all__ = ["barrier_findings", "init_count_findings"]

Keyed = list[tuple[tuple[str, ...], Finding]]


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _arrivers(run: Run, key: tuple[str, str, int]) -> str:
    nodes = sorted({n for n, k, _ in run.arrivals if k == key})
    if nodes:
        return "arrivals come from " + ", ".join(sorted({who(run, n) for n in nodes}))
    side = any(
        op.barrier is not None and op.barrier[:2] == key[:2] and op.what != "wait" for r in run.roles for op in r.ops
    )
    if not side:
        call = "producer_commit" if key[1] == "full" else "consumer_release"
        return f"no role arrives on any {key[1]} barrier of {key[0]!r} (no {call} in any program)"
    return "nothing arrives on it"


def _hang(run: Run, role: int, scenario: str) -> tuple[tuple[str, ...], Finding] | None:
    r = run.roles[role]
    op = r.ops[r.pc]
    e = op.event
    if op.barrier is None or op.what != "wait":
        return None
    key = op.barrier
    b = run.bar(key)
    got = b.count - b.pending
    expect_tx = sum(t for _, _, t in b.current if t > 0)
    brought = -sum(t for _, _, t in b.current if t < 0)
    head = f"{barrier_text(key)} waits phase {b.completed} ({role_text(run, role)} at {e.site}{scenario})"
    arrived = sorted({who(run, n) for n, a, _ in b.current if a > 0})
    source = f", from {', '.join(arrived)}" if arrived else f"; {_arrivers(run, key)}"
    regions = (key[0],)
    if b.pending == 0 and b.tx != 0:
        msg = (
            f"{head}: expect_tx is {expect_tx:,} B but the TMA loads completing on it bring {brought:,} B, so it hangs"
        )
        fix = f"make the tx_count of {key[0]!r} equal the bytes its TMA boxes land per stage (x receiving CTAs when multicast)"
        return ("mbarrier-tx-bytes", key[0]), finding("mbarrier-tx-bytes", "error", regions, msg, fix)
    if got > 0:
        msg = f"{head}, expects {_plural(b.count, 'arrival')}, gets {got:,}{source}, so it hangs"
        fix = f"initialise the {key[1]} barriers of {key[0]!r} for the arrivals each phase gets (threads x multicast CTAs), or arrive from every member of the group"
        return ("mbarrier-arrive-count", key[0]), finding("mbarrier-arrive-count", "error", regions, msg, fix)
    msg = f"{head}, expects {_plural(b.count, 'arrival')}, gets 0{source}, so it hangs"
    fix = f"give producer and consumer of {key[0]!r} the same stages, trip counts and starting phases, and pair every wait with an arrive (commit/release)"
    return ("mbarrier-parity", key[0]), finding("mbarrier-parity", "error", regions, msg, fix)


def _bar_hang(run: Run, role: int, scenario: str) -> tuple[tuple[str, ...], Finding]:
    r = run.roles[role]
    assert r.waiting_bar is not None
    name, _ = r.waiting_bar
    need = run.bar_threads(name) or 0
    got = run.bar_gens[name][-1].threads
    e = r.ops[r.pc - 1].event if r.pc else None
    where = f" at {e.site}" if e is not None else ""
    msg = f"named barrier {name!r} ({role_text(run, role)}{where}{scenario}) expects {_plural(need, 'thread')}, gets {got:,}, so it hangs"
    fix = f"declare {name!r} with the threads of every warp that syncs on it, and have each of them reach it"
    return ("mbarrier-arrive-count", name), finding("mbarrier-arrive-count", "error", (name,), msg, fix)


def _waits_on(r: RoleState) -> tuple[object, ...] | None:
    if r.waiting_bar is not None:
        return ("bar", r.waiting_bar[0])
    if r.done:
        return None
    op = r.ops[r.pc]
    return ("mbar", *op.barrier) if op.barrier is not None and op.what == "wait" else None


def _would_arrive(r: RoleState, on: tuple[object, ...]) -> bool:
    """The blocked role has, still to run, an arrival on what another role waits on."""
    for op in r.ops[r.pc :]:
        if on[0] == "bar" and op.what == "bar" and getattr(op.event, "barrier", None) == on[1]:
            return True
        if on[0] == "mbar" and op.what in ("arrive", "tc_commit", "access") and op.barrier == on[1:]:
            return True
    return False


def _hangs(run: Run, scenario: str) -> Keyed:
    """Hangs, the first causes only: a role stuck on a barrier that another stuck role
    would still arrive on is stuck because of it (unless all of them wait in a cycle)."""
    stuck = [(r, on) for r in run.roles if not r.done and (on := _waits_on(r)) is not None]
    roots = [(r, on) for r, on in stuck if not any(o is not r and _would_arrive(o, on) for o, _ in stuck)]
    out: Keyed = []
    for r, on in roots or stuck:
        hang = _bar_hang(run, r.index, scenario) if on[0] == "bar" else _hang(run, r.index, scenario)
        if hang is not None:
            out.append(hang)
    if not roots:  # a cycle: a wrong count or tx is the cause; an empty phase its consequence
        counted = [h for h in out if h[1].rule != "mbarrier-parity"]
        return counted or out
    return out


def _overflows(run: Run, scenario: str) -> Keyed:
    out: Keyed = []
    for node, key, phase in run.overflows:
        b = run.bar(key)
        msg = (
            f"{barrier_text(key)} is initialised for {_plural(b.count, 'arrival')} but phase {phase} "
            f"gets more, the last from {who(run, node)}{scenario}"
        )
        fix = f"initialise the {key[1]} barriers of {key[0]!r} for the arrivals each phase gets, or arrive from fewer threads (elect one)"
        out.append((("mbarrier-arrive-count", key[0]), finding("mbarrier-arrive-count", "error", (key[0],), msg, fix)))
    for node, key, phase in run.tx_late:
        b = run.bar(key)
        msg = (
            f"{barrier_text(key)} completes phase {phase} before the TMA load by {who(run, node)} lands"
            f"{scenario}: expect_tx is less than the bytes of the boxes completing on it"
        )
        fix = f"make the tx_count of {key[0]!r} equal the bytes its TMA boxes land per stage (x receiving CTAs when multicast)"
        out.append((("mbarrier-tx-bytes", key[0]), finding("mbarrier-tx-bytes", "error", (key[0],), msg, fix)))
    for node, name in run.bar_overflows:
        msg = f"named barrier {name!r} gets more threads than it is declared for, the last from {who(run, node)}{scenario}"
        out.append(
            (
                ("mbarrier-arrive-count", name),
                finding("mbarrier-arrive-count", "error", (name,), msg, "declare its real thread count"),
            )
        )
    return out


def _ambiguous_phases(run: Run, scenario: str) -> Keyed:
    """Waits that could see a later phase, and arrivals that could count toward an earlier one."""
    out: Keyed = []
    fix = "acquire a stage (wait its empty barrier) before re-filling it and release it after use, with the same stage count on both sides"
    for node, key, seen in run.waits:
        b = run.barriers[key]
        if len(b.history) > seen and not any(run.before(node, c) for c, _, _ in b.history[seen]):
            msg = (
                f"{barrier_text(key)} may complete phase {seen} before the wait by {who(run, node)} looks "
                f"(its arrivals, from {', '.join(sorted({who(run, c) for c, _, _ in b.history[seen]}))}, are not ordered after it){scenario}; "
                f"the parity wait then sees the wrong phase"
            )
            out.append((("mbarrier-parity", key[0]), finding("mbarrier-parity", "error", (key[0],), msg, fix)))
    late = {n for n, _, _ in run.tx_late}
    for node, key, phase in run.arrivals:
        b = run.barriers[key]
        if node in late:
            continue  # a tx-bytes error already
        if phase >= 1 and not all(run.before(c, node) for c, _, _ in b.history[phase - 1]):
            msg = (
                f"the arrival on {barrier_text(key)} by {who(run, node)} may count toward phase {phase - 1}: "
                f"it is not ordered after that phase completes{scenario}"
            )
            out.append((("mbarrier-parity", key[0]), finding("mbarrier-parity", "error", (key[0],), msg, fix)))
    return out


def _ambiguous_generations(run: Run, scenario: str) -> Keyed:
    """Named-barrier arrivals that could count toward the generation before theirs."""
    out: Keyed = []
    for name, gens in run.bar_gens.items():
        roles = {run.node_role[n] for gen in gens for n in gen.arrivals}
        if len(roles) > 1 and any(len({run.node_role[n] for n in gen.arrivals}) == 1 for gen in gens[:-1]):
            msg = f"named barrier {name!r} is used by {len(roles)} roles but completes with one role's arrivals{scenario}, so it orders nothing between them"
            fix = f"declare {name!r} with the threads of every warp that syncs or arrives on it"
            out.append(
                (
                    ("mbarrier-arrive-count", name, "alone"),
                    finding("mbarrier-arrive-count", "warning", (name,), msg, fix),
                )
            )
        for g in range(1, len(gens)):
            if len(gens[g - 1].arrivals) == 1:
                continue  # one arrival completed it: whichever generation it is, it pairs with no one
            for node in gens[g].arrivals:
                if all(run.before(a, node) for a in gens[g - 1].arrivals):
                    continue
                msg = (
                    f"the arrival on named barrier {name!r} by {who(run, node)} may count toward generation {g - 1}: "
                    f"it is not ordered after that generation's arrivals{scenario}"
                )
                fix = f"declare {name!r} with the threads of every warp that syncs on it, so each generation waits for all of them"
                out.append(
                    (("mbarrier-arrive-count", name), finding("mbarrier-arrive-count", "error", (name,), msg, fix))
                )
    return out


def _before_init(run: Run) -> Keyed:
    out: Keyed = []
    if not any(isinstance(e, m.Init) for e in _all_events(run.model)):
        if run.barrier_uses:
            msg = "the model records no barrier initialisation, so init before use is not checked"
            out.append(
                (("mbarrier-init", "absent"), finding("mbarrier-init", "info", (), msg, "record the pipelines' init"))
            )
        return out
    for node, pipeline in run.barrier_uses:
        inits = run.inits.get(pipeline, [])
        if any(run.before(i, node) for i in inits):
            continue
        if inits:
            msg = f"{pipeline!r} is used by {who(run, node)} without being ordered after its init"
        else:
            msg = f"{pipeline!r} is used by {who(run, node)} but never initialised"
        fix = "initialise the barriers, fence the init and sync the CTA (or cluster) before any role uses them"
        out.append((("mbarrier-init", pipeline), finding("mbarrier-init", "error", (pipeline,), msg, fix)))
    return out


def _all_events(model: m.OrderingModel) -> list[m.Event]:
    out: list[m.Event] = list(model.prologue)

    def walk(steps: tuple[m.Step, ...]) -> None:
        for s in steps:
            if isinstance(s, (m.Loop, m.When)):
                walk(s.body)
            else:
                out.append(s)

    for p in model.programs:
        walk(p.body)
    return out


def _leftovers(run: Run, scenario: str) -> Keyed:
    """Phases left part-filled at exit: wrong counts that hang only at other trip counts."""
    out: Keyed = []
    for key, b in sorted(run.barriers.items()):
        if not b.current:
            continue
        got = b.count - b.pending
        if b.pending == 0 and b.tx != 0:
            msg = f"{barrier_text(key)}'s phase {b.completed} is left with {b.tx:,} B of expect_tx not landed{scenario}"
            rule = "mbarrier-tx-bytes"
        elif 0 < got < b.count:
            msg = f"{barrier_text(key)}'s phase {b.completed} is left with {got:,} of {_plural(b.count, 'arrival')}{scenario}; a wait on it would hang"
            rule = "mbarrier-arrive-count"
        else:
            continue
        out.append(
            (
                (rule, key[0]),
                finding(rule, "warning", (key[0],), msg, "check the counts against the arrivals per phase"),
            )
        )
    return out


def barrier_findings(run: Run, scenario: str) -> Keyed:
    """Every mbarrier and named-barrier finding of one run, keyed for de-duplication."""
    found = _hangs(run, scenario) + _overflows(run, scenario) + _ambiguous_phases(run, scenario)
    found += _ambiguous_generations(run, scenario) + _before_init(run)
    errors = {k for k, f in found if f.severity == "error"}
    found += [(k, f) for k, f in _leftovers(run, scenario) if k not in errors]
    return found


def init_count_findings(model: m.OrderingModel) -> Keyed:
    out: Keyed = []
    for p in model.pipelines:
        if p.kind == "tma_store":
            continue
        for side, count in (("full", p.full_init()), ("empty", p.empty_init())):
            if count < 1:
                msg = f"the {side} barriers of {p.name!r} (created at {p.site}) are initialised with count {count}"
                fix = "initialise every mbarrier with the arrivals a phase gets, at least 1"
                out.append((("mbarrier-init", p.name, side), finding("mbarrier-init", "error", (p.name,), msg, fix)))
        if p.stages < 1:
            msg = f"{p.name!r} (created at {p.site}) has {p.stages} stages"
            out.append(
                (
                    ("mbarrier-init", p.name, "stages"),
                    finding("mbarrier-init", "error", (p.name,), msg, "give it at least one stage"),
                )
            )
    return out
