"""Lifetimes in any integer time unit: clock values, instruction indices,
MiniMalloc's ``lower``/``upper``.

A program with few steps lists them; a compiler's schedule has millions of
time values, of which only the points where some buffer starts or ends
matter. :func:`timeline` cuts time at those points into *stretches* (the
half-open spans between consecutive points): every buffer is live in whole
stretches, so the stretches serve as the steps of the problem, weighted by
their length where the solver orders buffers by how long they live.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["Times", "MAX_TIME", "MAX_STRETCHES", "MAX_POINTS", "timeline", "runs_of"]

# time values are ints in [0, MAX_TIME): far beyond any clock, and well inside int64
MAX_TIME = 1 << 62
# a layout's lifetimes may cut time into at most this many stretches: each is a
# step of the plan (held to the named steps' limit, so every plan reads back
# from JSON) and a column of its lifetime map; 2,048 buffers with distinct
# start and end points
MAX_STRETCHES = 4096
# a live= set or list names at most this many time values (a range has no limit)
MAX_POINTS = 1 << 20


@dataclass(frozen=True)
class Times:
    """When a buffer is live, in time values rather than named steps: sorted,
    disjoint half-open runs ``[start, stop)`` that do not touch."""

    runs: tuple[tuple[int, int], ...]

    @classmethod
    def of_points(cls, points: Iterable[int]) -> Times:
        return cls(runs_of(points))

    def __str__(self) -> str:
        shown = " + ".join(f"[{a}, {b})" for a, b in self.runs[:4])
        return shown + (f" + ... ({len(self.runs)} runs)" if len(self.runs) > 4 else "")

    @property
    def first(self) -> int:
        return self.runs[0][0]

    @property
    def last(self) -> int:
        """The last time value live (one below the last run's stop)."""
        return self.runs[-1][1] - 1


def runs_of(points: Iterable[int]) -> tuple[tuple[int, int], ...]:
    """Time values as runs of consecutive values."""
    runs: list[tuple[int, int]] = []
    for t in sorted(set(points)):
        if runs and runs[-1][1] == t:
            runs[-1] = (runs[-1][0], t + 1)
        else:
            runs.append((t, t + 1))
    return tuple(runs)


def _runs(live: frozenset[int] | Times) -> tuple[tuple[int, int], ...]:
    return live.runs if isinstance(live, Times) else runs_of(live)


def timeline(
    lives: Sequence[frozenset[int] | Times | None],
) -> tuple[tuple[int, ...], list[frozenset[int]], tuple[int, ...]]:
    """Cut time where any lifetime starts or ends.

    Returns the stretches' first time values, each buffer's stretches (by
    index; ``None``, live throughout, is every stretch) and each stretch's
    length. Raises ValueError beyond :data:`MAX_STRETCHES` stretches.
    """
    runs = [_runs(live) if live is not None else () for live in lives]
    cuts = sorted({t for rs in runs for run in rs for t in run})
    if not cuts:
        cuts = [0, 1]
    if len(cuts) - 1 > MAX_STRETCHES:
        raise ValueError(
            f"the lifetimes start or end at {len(cuts):,} distinct time values, which cut time into "
            f"{len(cuts) - 1:,} stretches; at most {MAX_STRETCHES:,} (each is a step of the plan)"
        )
    index = {t: k for k, t in enumerate(cuts)}
    every = frozenset(range(len(cuts) - 1))
    stretches = [
        frozenset(k for a, b in rs for k in range(index[a], index[b])) if live is not None else every
        for live, rs in zip(lives, runs)
    ]
    lengths = tuple(b - a for a, b in zip(cuts, cuts[1:]))
    return tuple(cuts[:-1]), stretches, lengths
