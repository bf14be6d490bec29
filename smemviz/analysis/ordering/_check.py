"""The ordering check: unroll, run, and apply every rule, once per trip-count case.

A loop with a static trip count is unrolled as it is. Loops whose count is known
only at run time are checked with 1, S-1, S, S+1 and 2S+1 trips for every stage
count S of the kernel's pipelines (the counts where a pipeline's stages and phases
wrap), and an ``info`` finding names each such loop: other counts are not read.
"""

from __future__ import annotations

from .._finding import SEVERITIES, Finding, Findings
from . import _model as m
from ._access_rules import access_findings
from ._barrier_rules import barrier_findings, init_count_findings
from ._result import AliasEdge, OrderingReport, finding
from ._run import run
from ._tmem_rules import tmem_findings
from ._unroll import unroll

__all__ = ["check_ordering", "trip_cases"]

Keyed = list[tuple[tuple[str, ...], Finding]]


def _loops(steps: tuple[m.Step, ...]) -> list[m.Loop]:
    out: list[m.Loop] = []
    for s in steps:
        if isinstance(s, m.Loop):
            out.append(s)
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


def _one_case(model: m.OrderingModel, trips: dict[str, int], scenario: str) -> tuple[Keyed, list[AliasEdge]]:
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
            finding("unordered-alias", "info", (), f"ordering not read: {text}", "record it in the model"),
        )
        for text in dict.fromkeys(unread)
    ]
    races, aliases = access_findings(r, scenario)
    found += barrier_findings(r, scenario) + races + tmem_findings(r, model.arch)
    return found, aliases


def check_ordering(model: m.OrderingModel) -> OrderingReport:
    """Every ordering finding of a kernel's model, and each alias with its edge."""
    dynamic = _dynamic(model)
    cases = trip_cases(model) if dynamic else (0,)
    keyed: dict[tuple[str, ...], Finding] = dict(init_count_findings(model))
    aliases: dict[tuple[str, str], AliasEdge] = {}
    for n in cases:
        trips = dict.fromkeys(dynamic, n)
        scenario = f", with {n} trips of {', '.join(repr(d) for d in dynamic)}" if dynamic else ""
        found, edges = _one_case(model, trips, scenario)
        for key, f in found:
            keyed.setdefault(key, f)
        for a in edges:
            old = aliases.get((a.earlier, a.later))
            if old is None or (old.ordered and not a.ordered):
                aliases[(a.earlier, a.later)] = a
    for loop_id in dynamic:
        text = ", ".join(str(c) for c in cases)
        msg = f"loop {loop_id!r} has a trip count known only at run time: checked with {text} trips, other counts not read"
        keyed[("mbarrier-parity", "dynamic", loop_id)] = finding(
            "mbarrier-parity", "info", (), msg, "nothing to fix; a static count is checked exactly"
        )
    items = sorted(keyed.values(), key=lambda f: SEVERITIES.index(f.severity))
    return OrderingReport(Findings(tuple(items), model.arch), tuple(aliases.values()), cases if dynamic else ())
