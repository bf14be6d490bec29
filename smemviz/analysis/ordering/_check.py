"""The ordering check: unroll, run, and apply every rule, once per trip-count case.

A loop with a static trip count is unrolled as it is. Loops whose count is known
only at run time are checked with 1, S-1, S, S+1 and 2S+1 trips for every stage
count S of the kernel's pipelines (the counts where a pipeline's stages and phases
wrap), all together and, where there are several, each at the fewest while the others
take the most and the reverse; an ``info`` finding names each such loop: other counts
are not read.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

from ...layout.ordering import _model as m
from .._finding import SEVERITIES, Finding, Findings
from ._access_rules import Race, access_findings, more_pairs
from ._barrier_rules import barrier_findings, init_count_findings
from ._result import AliasEdge, OrderingReport, finding, not_read
from ._run import run
from ._tmem_rules import tmem_findings
from ._unroll import unroll

__all__ = ["check_ordering", "trip_cases", "unread_notes"]

Keyed = list[tuple[tuple[str, ...], Finding]]


def _loops(steps: tuple[m.Step, ...]) -> list[m.Loop]:
    out: list[m.Loop] = []
    for s in steps:
        if isinstance(s, m.Loop):
            out.append(s)
            out += _loops(s.body)
        elif isinstance(s, m.When):
            out += _loops(s.body)
    return out


def trip_cases(model: m.OrderingModel) -> tuple[int, ...]:
    """The trip counts a dynamic loop is checked with."""
    stages = {p.stages for p in model.pipelines if p.stages >= 1} or {1}
    cases = set()
    for s in stages:
        cases |= {1, s - 1, s, s + 1, 2 * s + 1}
    return tuple(sorted(c for c in cases if c >= 1))


def _dynamic(model: m.OrderingModel) -> list[str]:
    ids: dict[str, None] = {}
    for p in model.programs:
        for loop in _loops(p.body):
            if loop.trips is None:
                ids[loop.id] = None
    return list(ids)


def _one_case(
    model: m.OrderingModel, trips: dict[str, int], scenario: str
) -> tuple[Keyed, list[AliasEdge], list[Race]]:
    programs, unread = [], []
    for p in model.programs:
        ops, missing = unroll(model, p, p.body, trips)
        programs.append((p.role.name, ops))
        unread += missing
    prologue, missing = unroll(model, None, model.prologue, trips)
    unread += missing
    r = run(model, programs, prologue)
    unread += r.unread
    found: Keyed = [
        (
            ("unordered-alias", "unread", text),
            not_read(text),
        )
        for text in dict.fromkeys(unread)
    ]
    accesses, aliases, races = access_findings(r, scenario)
    found += barrier_findings(r, scenario) + accesses + tmem_findings(r, model.arch)
    return found, aliases, races


def _assignments(dynamic: list[str], cases: tuple[int, ...]) -> list[dict[str, int]]:
    """Every dynamic loop at each case count together; with several, also each one
    alone at the fewest trips while the others take the most, and the reverse."""
    out = [dict.fromkeys(dynamic, n) for n in cases]
    if len(dynamic) > 1:
        low, high = cases[0], cases[-1]
        for loop_id in dynamic:
            out.append({d: low if d == loop_id else high for d in dynamic})
            out.append({d: high if d == loop_id else low for d in dynamic})
    return out


def _trips(n: int) -> str:
    return f"{n} trip{'' if n == 1 else 's'}"


def _scenario(trips: dict[str, int]) -> str:
    if not trips:
        return ""
    counts = set(trips.values())
    if len(counts) == 1:
        return f", with {_trips(counts.pop())} of {', '.join(repr(d) for d in trips)}"
    return ", with " + ", ".join(f"{_trips(n)} of {d!r}" for d, n in trips.items())


def _turns(model: m.OrderingModel, trips: dict[str, int], by_stage: bool) -> dict[tuple[str, ...], int]:
    """How many times each role fills (``arrive``) and waits on each pipeline's full barriers
    (each stage apart with ``by_stage``)."""
    out: dict[tuple[str, ...], int] = {}
    for p in model.programs:
        ops, _ = unroll(model, p, p.body, trips)
        for op in ops:
            if (
                op.barrier is None
                or op.barrier[1] != "full"
                or op.what not in ("arrive", "wait", "tc_commit", "cp_arrive")
            ):
                continue
            if model.pipeline(op.barrier[0]).kind == "order":
                continue
            stage = str(op.barrier[2]) if by_stage else ""
            key = (op.barrier[0], stage, p.role.name, "wait" if op.what == "wait" else "fill")
            out[key] = out.get(key, 0) + 1
    return out


def _fills_cover_waits(turns: dict[tuple[str, ...], int]) -> bool:
    """No role waits on a pipeline more often than it is filled (a count the kernel cannot have)."""
    fills: dict[str, int] = {}
    for (pipe, _, _, kind), n in turns.items():
        if kind == "fill":
            fills[pipe] = fills.get(pipe, 0) + n
    return all(n <= fills.get(pipe, 0) for (pipe, _, _, kind), n in turns.items() if kind == "wait")


def _balanced(turns: dict[tuple[str, ...], int]) -> bool:
    """Each stage of each pipeline is waited on by every role that waits on it as often as it is filled."""
    per_stage: dict[tuple[str, str], set[int]] = {}
    for (pipe, stage, _, _), n in turns.items():
        per_stage.setdefault((pipe, stage), set()).add(n)
    return all(len(ns) == 1 for ns in per_stage.values())


def _balancing(
    model: m.OrderingModel, free: list[str], fixed: dict[str, int], cases: tuple[int, ...]
) -> list[dict[str, int]]:
    """Counts of the loops whose relation capture could not read at which every pipeline's
    stage is filled as often as each role waiting on it waits: the fewest, and the first
    reaching past the pipelines' stages and twice their stages where there is one. Totals are
    linear in each loop's count (read from one unroll per loop) and sift the candidates; each
    one kept is then unrolled to compare stage by stage."""
    base_trips = {**fixed, **dict.fromkeys(free, 1)}
    base = _turns(model, base_trips, False)
    slopes = []
    for loop_id in free:
        more = _turns(model, {**base_trips, loop_id: 2}, False)
        slopes.append({k: more.get(k, 0) - base.get(k, 0) for k in base.keys() | more.keys()})
    keys = set(base).union(*(s.keys() for s in slopes))
    candidates: list[dict[str, int]] = []
    for values in itertools.product(cases, repeat=len(free)):
        totals = {k: base.get(k, 0) + sum(s.get(k, 0) * (n - 1) for s, n in zip(slopes, values)) for k in keys}
        if _fills_cover_waits(totals):
            candidates.append(dict(zip(free, values)))
    candidates.sort(key=lambda t: (max(t.values()), sum(t.values())))
    stages = max((p.stages for p in model.pipelines), default=1)
    reaches = [0, stages + 1, 2 * stages + 1]
    picked: list[dict[str, int]] = []
    for tried, t in enumerate(candidates):
        if not reaches or tried >= 48:
            break
        if max(t.values()) < reaches[0]:
            continue
        if _balanced(_turns(model, {**fixed, **t}, True)):
            picked.append(t)
            reaches = [r for r in reaches if r > max(t.values())]
    return picked


def _free_loops(model: m.OrderingModel, dynamic: list[str]) -> list[str]:
    named = {text for key, text in model.meta if key == m.FREE_LOOP}
    return [d for d in dynamic if d in named]


def _gather(
    race: Race,
    races: dict[tuple[str, ...], tuple[Finding, str, dict[str, None]]],
    owner: dict[tuple[str, str], tuple[str, ...]],
) -> None:
    """Add one case's race to the findings over all cases: the first case's witness, and every
    case's other pairs. A pair of call sites is one finding's, whichever case (and whichever
    order of the two) shows it first."""
    key = next((owner[sites] for sites, _, _ in race.pairs if sites in owner), race.key)
    if key not in races:
        races[key] = (race.finding, race.pairs[0][2], {})
        owner[race.pairs[0][0]] = key
    _, later, more = races[key]
    for sites, earlier, late in race.pairs:
        if sites not in owner:
            owner[sites] = key
            more[earlier if late == later else f"{earlier} with {late}"] = None


def check_ordering(model: m.OrderingModel) -> OrderingReport:
    """Every ordering finding of a kernel's model, and each alias with its edge."""
    dynamic = _dynamic(model)
    cases = trip_cases(model) if dynamic else ()
    keyed: dict[tuple[str, ...], Finding] = dict(init_count_findings(model))
    aliases: dict[tuple[str, str], AliasEdge] = {}
    races: dict[tuple[str, ...], tuple[Finding, str, dict[str, None]]] = {}
    owner: dict[tuple[str, str], tuple[str, ...]] = {}
    free = _free_loops(model, dynamic)
    bound = [d for d in dynamic if d not in free]
    assignments = _assignments(bound, cases) if bound else [{}]
    balancing = _balancing(model, free, assignments[0], cases) if free else []
    if balancing:  # each case of the other loops with each balancing count of the free ones
        assignments = [{**a, **b} for a in assignments for b in balancing]
    else:
        free, bound = [], dynamic
        assignments = _assignments(dynamic, cases) if dynamic else [{}]
    for trips in assignments:
        found, edges, case_races = _one_case(model, trips, _scenario(trips))
        for race in case_races:
            _gather(race, races, owner)
        for key, f in found:
            prev = keyed.get(key)
            # the stronger finding of one barrier or alias over the trip-count cases: a case that
            # hangs (error) outranks one that leaves a phase part-filled at exit (warning)
            if prev is None or SEVERITIES.index(f.severity) < SEVERITIES.index(prev.severity):
                keyed[key] = f
        for a in edges:
            old = aliases.get((a.earlier, a.later))
            if old is None or (old.ordered and not a.ordered):
                aliases[(a.earlier, a.later)] = a
    for key, (first, _, more) in races.items():  # one finding per missing hand-over
        keyed[key] = replace(first, message=first.message + more_pairs(list(more)))
    mixed = ", and each with the others at the fewest or the most" if len(bound) > 1 else ""
    if free:
        tried = "; ".join(", ".join(f"{d}={t[d]}" for d in free) for t in balancing)
        msg = (
            f"loops {', '.join(repr(d) for d in free)} have counts capture could not relate to one another: "
            f"checked where every pipeline is filled as often as it is waited on ({tried}), other counts not read"
        )
        keyed[("mbarrier-parity", "free", ",".join(free))] = finding(
            "mbarrier-parity", "info", (), msg, "nothing to fix; a count capture reads is checked at its cases"
        )
    for loop_id in bound:
        text = ", ".join(str(c) for c in cases)
        msg = f"loop {loop_id!r} has a trip count known only at run time: checked with {text} trips{mixed}, other counts not read"
        keyed[("mbarrier-parity", "dynamic", loop_id)] = finding(
            "mbarrier-parity", "info", (), msg, "nothing to fix; a static count is checked exactly"
        )
    for note in unread_notes(model):
        keyed[("unread", note)] = not_read(note)
    # a finding keyed by a run's node (a TMEM alloc or free) repeats, word for word, in every
    # trip-count case: each is reported once
    unique: dict[tuple[object, ...], Finding] = {}
    for f in keyed.values():
        unique.setdefault((f.rule, f.severity, f.regions, f.message), f)
    items = sorted(unique.values(), key=lambda f: SEVERITIES.index(f.severity))
    return OrderingReport(Findings(tuple(items), model.arch), tuple(aliases.values()), cases)


def unread_notes(model: m.OrderingModel) -> tuple[str, ...]:
    """What the tracer that made ``model`` could not read (empty for a complete model)."""
    return tuple(dict.fromkeys(text for key, text in model.meta if key == m.UNREAD))
