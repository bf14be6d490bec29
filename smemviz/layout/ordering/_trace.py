"""Events with their context, flat, as a tracer sees them; and back to per-role programs.

A tracer (capture) meets each event once, under a warp-role branch and inside a stack
of loops; ``programs_from_trace`` nests such records into the model's programs, and
``contexts`` lists a model's events with the same context (for reports and pictures).
Loop ids name one loop each: two sibling loops need two ids.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

from . import _model as m

__all__ = ["Context", "LoopInfo", "contexts", "programs_from_trace"]


@dataclass(frozen=True)
class LoopInfo:
    """A loop an event sits in: its id and trip count (None: known only at run time).
    With ``guard`` set it is no loop but a conditional block (``guard`` with an empty
    body; ``id`` tells two such blocks apart); ``at_most`` is the loop's own cap."""

    id: str
    trips: int | None
    guard: m.When | None = None
    at_most: int | None = None


@dataclass(frozen=True)
class Context:
    """Where an event runs: its call site, its warp role, and its loops, outermost first."""

    site: m.CallSite
    role: m.WarpRole
    loops: tuple[LoopInfo, ...] = ()

    @property
    def loop(self) -> LoopInfo | None:
        """The innermost loop, if any."""
        return self.loops[-1] if self.loops else None


def contexts(model: m.OrderingModel) -> Iterator[tuple[m.Event, Context]]:
    """Every event of every role's program, in program order, with its context."""

    def walk(
        steps: tuple[m.Step, ...], role: m.WarpRole, loops: tuple[LoopInfo, ...]
    ) -> Iterator[tuple[m.Event, Context]]:
        for s in steps:
            if isinstance(s, m.Loop):
                yield from walk(s.body, role, (*loops, LoopInfo(s.id, s.trips, at_most=s.at_most)))
            elif isinstance(s, m.When):
                yield from walk(s.body, role, loops)
            else:
                yield s, Context(s.site, role, loops)

    for p in model.programs:
        yield from walk(p.body, p.role, ())


def _nest(records: list[tuple[m.Event, tuple[LoopInfo, ...]]], depth: int) -> tuple[m.Step, ...]:
    out: list[m.Step] = []
    i = 0
    while i < len(records):
        event, loops = records[i]
        if len(loops) <= depth:
            out.append(event)
            i += 1
            continue
        head = loops[depth]
        j = i
        while j < len(records) and len(records[j][1]) > depth and records[j][1][depth] == head:
            j += 1
        body = _nest(records[i:j], depth + 1)
        if head.guard is not None:
            out.append(replace(head.guard, body=body))
        else:
            out.append(m.Loop(head.id, head.trips, body, head.at_most))
        i = j
    return tuple(out)


def programs_from_trace(records: Iterable[tuple[m.Event, Context]]) -> tuple[m.RoleProgram, ...]:
    """One program per role (in order of first appearance), loops nested from the contexts."""
    by_role: dict[m.WarpRole, list[tuple[m.Event, tuple[LoopInfo, ...]]]] = {}
    for event, ctx in records:
        by_role.setdefault(ctx.role, []).append((event, ctx.loops))
    return tuple(m.RoleProgram(role, _nest(recs, 0)) for role, recs in by_role.items())
