"""Lifetimes of allocations: the program steps an allocator names, how a
``live=`` argument is read, and how alias groups become lifetimes.

An allocation is *live* in a set of steps (not necessarily contiguous); two
allocations live in a common step may not share a byte. Without ``live=`` an
allocation is live in every step.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from .._errors import DeclarationError, DeclarationTypeError
from .._names import first_unprintable
from ._times import MAX_POINTS, MAX_TIME, Times

__all__ = ["Steps", "check_steps", "read_live", "describe_live", "phase_lifetimes", "MAX_STEPS"]

# a kernel's program has a handful of steps; far more is a mistake (and every
# step is a column of the lifetime map), so more than this is refused up front
MAX_STEPS = 4096

Steps = tuple[str, ...]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_steps(steps: Any) -> Steps | None:
    """``steps=`` as given to an allocator: names (unique, non-empty strings), a
    count (steps ``"0"`` ... ``"n-1"``), or None (steps are ints, as many as used)."""
    if steps is None:
        return None
    if _is_int(steps):
        if steps <= 0 or steps > MAX_STEPS:
            raise ValueError(f"steps must be a count from 1 to {MAX_STEPS} or a sequence of names, got {steps}")
        return tuple(str(i) for i in range(steps))
    if isinstance(steps, (str, bytes)) or not isinstance(steps, Iterable):
        raise TypeError(f"steps must be a sequence of step names or a count, got {type(steps).__name__} {steps!r}")
    names = tuple(itertools.islice(steps, MAX_STEPS + 1))
    if not names:
        raise ValueError("steps must name at least one step")
    if len(names) > MAX_STEPS:
        raise ValueError(f"steps names more than {MAX_STEPS} steps")
    for name in names:
        if not isinstance(name, str) or not name:
            raise TypeError(f"step names must be non-empty strings, got {name!r} in {_cut(names)}")
        bad = first_unprintable(name)
        if bad is not None:
            raise ValueError(
                f"step name {name!r} holds the unprintable character {name[bad]!r} at index {bad}; "
                "names must be printable text (no control, format or line-break characters)"
            )
    dup = sorted(n for n, k in Counter(names).items() if k > 1)
    if dup:
        raise ValueError(f"step names must be unique; repeated: {', '.join(map(repr, dup))}")
    return names


def _cut(names: Steps) -> str:
    return repr(names) if len(names) <= 8 else f"({', '.join(map(repr, names[:8]))}, ... {len(names)} names)"


def _refused(label: str, message: str) -> DeclarationError:
    return DeclarationError(message, allocation=label, field="live")


def _mistyped(label: str, message: str) -> DeclarationTypeError:
    return DeclarationTypeError(message, allocation=label, field="live")


def read_live(live: Any, steps: Steps | None, label: str, what: str = "allocation") -> frozenset[int] | Times:
    """The steps ``live`` names, for the allocation (or ``what``) called ``label``.

    Accepts a step name, an int step, ``range(first, stop)`` (half-open), or a
    set/list/tuple of names and ints. Raises naming the allocation and the steps.

    Without named steps the ints are time values in any unit (clock values,
    instruction indices), from 0 to 2**62: a range is taken as it is, however
    long. Below :data:`MAX_STEPS` they are read as steps (a frozenset, as
    always); beyond, as :class:`~._times.Times`, which the solver cuts into
    stretches where lifetimes start and end.
    """
    where = f"{what} {label!r}: live="
    top = MAX_TIME if steps is None else len(steps)  # steps run from 0 to top - 1
    if isinstance(live, range):
        _check_range(live, steps, top, label, where)
        if live.stop > MAX_STEPS:
            return Times(((live.start, live.stop),))
    out = {_step_index(item, steps, top, label, where) for item in _live_items(live, label, where)}
    if out and max(out) >= MAX_STEPS:
        return Times.of_points(out)
    return frozenset(out)


def _check_range(live: range, steps: Steps | None, top: int, label: str, where: str) -> None:
    if live.step != 1:
        raise _refused(label, f"{where}{live!r} must be a range with step 1 (half-open [first, stop))")
    if not live:
        raise _refused(label, f"{where}{live!r} is empty; an allocation must be live in at least one step")
    if live.start < 0 or live.stop > top:
        raise _refused(label, f"{where}{live!r} reaches outside the {_domain(steps)} (0..{top - 1})")


def _live_items(live: Any, label: str, where: str) -> list[Any]:
    """The steps ``live`` lists, each still to be read (a checked range, one step, or a collection)."""
    if isinstance(live, range):
        return list(live)
    if isinstance(live, (str, int)) and not isinstance(live, bool):
        return [live]
    if isinstance(live, (set, frozenset, list, tuple)):
        if len(live) > MAX_POINTS:
            raise _refused(
                label,
                f"{where} names {len(live):,} steps, at most {MAX_POINTS:,}; "
                "give a range(first, stop) for a long stretch",
            )
        if not live:
            raise _refused(label, f"{where}{live!r} is empty; an allocation must be live in at least one step")
        return list(live)
    raise _mistyped(
        label,
        f"{where} must be a step name, an int step, a range or a set/list of steps, got {type(live).__name__} {live!r}",
    )


def _step_index(item: Any, steps: Steps | None, top: int, label: str, where: str) -> int:
    if isinstance(item, str):
        if steps is None or item not in steps:
            known = ", ".join(map(repr, steps)) if steps else "none (give the allocator steps=(...) to name them)"
            raise _refused(label, f"{where} unknown step {item!r}; steps: {known}")
        return steps.index(item)
    if _is_int(item):
        if item < 0 or item >= top:
            raise _refused(label, f"{where} step {item} is out of range (0..{top - 1})")
        return int(item)
    raise _mistyped(label, f"{where} steps must be names or ints, got {type(item).__name__} {item!r}")


def _domain(steps: Steps | None) -> str:
    return "time values" if steps is None else "steps"


def describe_live(live: frozenset[int] | Times) -> str:
    """Live steps as an error message shows them."""
    return str(live) if isinstance(live, Times) else str(sorted(live))


def phase_lifetimes(groups: Sequence[Sequence[Sequence[Any]]]) -> tuple[Steps, dict[int, frozenset[int]]]:
    """Steps and live sets that say what alias groups say, and nothing more.

    Each step is one combination of phases, one phase per group: the phases of
    a group never meet, while any two phases of different groups (and everything
    outside the groups) do, as in the hand-written layout where groups never
    share bytes with each other. Returns (step names, id(member) -> live steps).
    """
    counts = [len(g) for g in groups]
    total = 1
    for c in counts:
        total *= c
    if total > MAX_STEPS:
        raise ValueError(
            f"alias groups with {' x '.join(map(str, counts))} phases would need {total} steps "
            f"(at most {MAX_STEPS}); declare live= steps instead"
        )
    combos = list(itertools.product(*(range(c) for c in counts)))
    if len(groups) == 1:
        names = tuple(f"phase {t[0] + 1}" for t in combos)
    else:
        names = tuple(" ".join(f"g{g + 1}.p{p + 1}" for g, p in enumerate(t)) for t in combos)
    live: dict[int, frozenset[int]] = {}
    for g, group in enumerate(groups):
        for p, phase in enumerate(group):
            steps = frozenset(k for k, t in enumerate(combos) if t[g] == p)
            for a in phase:
                live[id(a)] = steps
    return names, live
