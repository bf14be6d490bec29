"""The packing problem in the form the solvers search: buffers, the sections
of time in which they coexist, who conflicts with whom, and lower bounds.

A *section* is a set of buffers that may not share a byte pairwise: the
buffers live together at some step, and, where a lifetime has a gap, also
sets of buffers that meet pairwise at different steps (they stack all the
same). Only the maximal ones matter: two buffers conflict exactly when they
share a maximal section, and a section contained in another can never bound
the peak higher.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .._units import align_up

__all__ = ["Problem", "align_up", "step_bound", "packed_bound", "packed_bound_reference", "stacked_beyond_steps"]

# steps of at most this many buffers are packed over all their subsets (2**n x n
# steps, no cap); larger ones by a search of orders within _PACK_NODES nodes
PACK_ALL_SUBSETS = 16
_PACK_NODES = 20_000


def step_bound(sizes: Iterable[int], alignments: Iterable[int]) -> int:
    """The least peak that buffers all live at one step can have.

    Their sizes add up; and for every alignment ``a``, the buffers aligned to at
    least ``a`` start on multiples of ``a``, so each of them but the topmost one
    takes its size rounded up to ``a`` (smaller-aligned buffers may fill the gaps).
    """
    pairs = list(zip(sizes, alignments))
    best = sum(s for s, _ in pairs)
    for a in sorted({al for _, al in pairs if al > 1}):
        rounded = [(align_up(s, a), s) for s, al in pairs if al >= a]
        bound = sum(r for r, _ in rounded) - max(r - s for r, s in rounded)
        if bound > best:
            best = bound
    return best


def packed_bound(sizes: Sequence[int], alignments: Sequence[int]) -> int:
    """The least peak of buffers that are all live at one step: exact up to
    ``PACK_ALL_SUBSETS`` buffers, and beyond when the search fits its node
    allowance, else :func:`step_bound`.

    All of them are pairwise disjoint, so a layout is an order, each buffer
    bump-placed after the previous; a subset placed with a lower end is never
    worse. Both run in the solver's kernel (:func:`._core.pack_subsets`,
    :func:`._core.pack`); :func:`packed_bound_reference` does the same in plain
    Python, for sections of 63 buffers or more and for the tests.
    """
    simple, sz, al, first = _packing_start(sizes, alignments)
    if first <= simple:
        return simple
    if len(sz) >= 63 or first >= 1 << 62:
        return packed_bound_reference(sizes, alignments)
    from ._loader import core

    kernel = core()
    sizes_, aligns_ = kernel.as_array(sz), kernel.as_array(al)
    if len(sz) <= PACK_ALL_SUBSETS:
        return int(kernel.pack_subsets(sizes_, aligns_))
    return int(kernel.pack(sizes_, aligns_, first, simple, _PACK_NODES))


def packed_bound_reference(sizes: Sequence[int], alignments: Sequence[int]) -> int:
    """:func:`packed_bound` in plain Python (any number of buffers)."""
    simple, sz, al, first = _packing_start(sizes, alignments)
    if first <= simple:
        return simple
    n = len(sz)
    if n <= PACK_ALL_SUBSETS:
        return _pack_subsets_reference(sz, al)
    full = (1 << n) - 1
    best = [first]
    seen: dict[int, int] = {}
    remaining = sum(sz)
    nodes = [0]

    class _Stop(Exception):
        pass

    def dfs(mask: int, end: int, left: int) -> None:
        nodes[0] += 1
        if nodes[0] > _PACK_NODES:
            raise _Stop
        if mask == full:
            best[0] = min(best[0], end)
            return
        if end + left >= best[0] or seen.get(mask, 1 << 62) <= end:
            return
        seen[mask] = end
        for i in range(n):
            if not mask >> i & 1:
                dfs(mask | 1 << i, align_up(end, al[i]) + sz[i], left - sz[i])
                if best[0] <= simple:
                    return

    try:
        dfs(0, 0, remaining)
    except _Stop:
        return simple
    return best[0]


def _pack_subsets_reference(sizes: Sequence[int], alignments: Sequence[int]) -> int:
    """The least end over every order, one subset at a time (as the kernel's ``pack_subsets``)."""
    end = [0] * (1 << len(sizes))
    for mask in range(1, len(end)):
        end[mask] = min(
            align_up(end[mask ^ (1 << i)], a) + s for i, (s, a) in enumerate(zip(sizes, alignments)) if mask >> i & 1
        )
    return end[-1]


def _packing_start(sizes: Sequence[int], alignments: Sequence[int]) -> tuple[int, list[int], list[int], int]:
    """(the simple bound, sizes and alignments in the search's order, the end of
    that order as the first answer); the first answer is the simple bound when
    there is nothing to search."""
    simple = step_bound(sizes, alignments)
    n = len(sizes)
    order = sorted(range(n), key=lambda i: (-alignments[i], -sizes[i]))
    sz = [sizes[i] for i in order]
    al = [alignments[i] for i in order]
    return simple, sz, al, simple if n <= 1 else _bump(sz, al, range(n))


def _bump(sizes: Sequence[int], alignments: Sequence[int], order: Iterable[int]) -> int:
    end = 0
    for i in order:
        end = align_up(end, alignments[i]) + sizes[i]
    return end


def stacked_beyond_steps(sizes: Sequence[int], lives: Sequence[Iterable[int]]) -> list[tuple[int, ...]]:
    """Sets of buffers that meet pairwise but never all at one step (the
    heaviest few, as sorted index tuples); none when every lifetime is a range."""
    lives = [list(live) for live in lives]
    return sorted(tuple(_bits(m)) for m in _stacked_masks(sizes, lives, _step_masks(sizes, lives)))


def _step_masks(sizes: Sequence[int], lives: Sequence[Iterable[int]]) -> set[int]:
    """The buffers live at each step, as bitmasks (empty buffers conflict with nothing)."""
    by_step: dict[int, int] = {}
    for i, live in enumerate(lives):
        if sizes[i]:
            for step in live:
                by_step[step] = by_step.get(step, 0) | 1 << i
    return set(by_step.values())


def _stacked_masks(sizes: Sequence[int], lives: Sequence[Iterable[int]], step_masks: set[int]) -> set[int]:
    """:func:`_cliques_beyond_steps`, looked for only where some lifetime has a gap."""
    if not any(_has_gap(live) for live in lives):
        return set()
    return _cliques_beyond_steps(step_masks, sizes)


def _has_gap(live: Iterable[int]) -> bool:
    steps = sorted(set(live))
    return bool(steps) and steps[-1] - steps[0] + 1 != len(steps)


# cliques beyond the steps only tighten bounds, and each one costs the search
# time at every node: look for at most this many, and keep the heaviest few
_MAX_CLIQUE_NODES = 20_000
_MAX_CLIQUES = 1024
_KEPT_CLIQUES = 64


def _cliques_beyond_steps(step_masks: set[int], sizes: Sequence[int]) -> set[int]:
    """Maximal sets of buffers that pairwise share a step, as bitmasks.

    With lifetimes that are ranges of steps, these are exactly the steps'
    sets. A buffer live at two separate times can meet each of two others that
    never meet at one step together (``x`` in {0, 1}, ``y`` in {1, 2}, ``z`` in
    {0, 2}): the three still stack, so their sum bounds the peak. Bron and
    Kerbosch's enumeration (with a pivot), capped; the heaviest of those it
    finds are returned (any clique is a valid bound on its own).
    """
    adj = [0] * len(sizes)
    for m in step_masks:
        rest = m
        while rest:
            low = rest & -rest
            adj[low.bit_length() - 1] |= m & ~low
            rest ^= low
    found: set[int] = set()
    everyone = 0
    for m in step_masks:
        everyone |= m
    stack = [(0, everyone, 0)]
    nodes = 0
    while stack and len(found) < _MAX_CLIQUES and nodes < _MAX_CLIQUE_NODES:
        chosen, candidates, excluded = stack.pop()
        nodes += 1
        if not candidates:
            if not excluded:
                found.add(chosen)
            continue
        pivot = max(_bits(candidates | excluded), key=lambda u: (candidates & adj[u]).bit_count())
        for v in _bits(candidates & ~adj[pivot]):
            bit = 1 << v
            stack.append((chosen | bit, candidates & adj[v], excluded & adj[v]))
            candidates &= ~bit
            excluded |= bit
    found -= step_masks
    heaviest = sorted(found, key=lambda m: (-sum(sizes[i] for i in _bits(m)), m))
    return set(heaviest[:_KEPT_CLIQUES])


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


@dataclass(frozen=True)
class Problem:
    """Buffers (size, alignment, live steps) reduced to maximal sections.

    ``sections[k]`` is a sorted tuple of buffer indices; ``buffer_sections[i]``
    the sections buffer ``i`` lies in; ``neighbours[i]`` the buffers that may
    not share a byte with ``i``.
    """

    sizes: tuple[int, ...]
    alignments: tuple[int, ...]
    sections: tuple[tuple[int, ...], ...]
    buffer_sections: tuple[tuple[int, ...], ...]
    neighbours: tuple[tuple[int, ...], ...]
    section_bounds: tuple[int, ...]  # the least peak of each section's buffers alone
    spans: tuple[int, ...]  # how long each buffer lives (steps, or time units of an interval)
    crowding: tuple[int, ...]  # bytes live in the most crowded section each buffer lies in

    @property
    def lower_bound(self) -> int:
        return max(self.section_bounds, default=0)

    def section_bounds_of(self, component: Sequence[int]) -> int:
        """The lower bound of one component (its sections' largest bound)."""
        mine = set(component)
        return max((b for s, b in zip(self.sections, self.section_bounds) if s and s[0] in mine), default=0)

    @classmethod
    def build(
        cls,
        sizes: Sequence[int],
        alignments: Sequence[int],
        lives: Sequence[Iterable[int]],
        step_lengths: Sequence[int] | None = None,
    ) -> Problem:
        """``lives[i]``: the steps buffer ``i`` is live in; ``step_lengths``: how long each
        step lasts (stretches of time, see :func:`._times.timeline`; default 1 each)."""
        sets = [set(live) for live in lives]
        if step_lengths is None:
            spans = tuple(len(live) for live in sets)
        else:
            spans = tuple(sum(step_lengths[t] for t in live) for live in sets)
        masks = _step_masks(sizes, sets)
        masks |= _stacked_masks(sizes, sets, masks)
        return cls._from_masks(tuple(sizes), tuple(alignments), len(sizes), masks, spans)

    @classmethod
    def from_intervals(
        cls, sizes: Sequence[int], alignments: Sequence[int], intervals: Sequence[tuple[int, int]]
    ) -> Problem:
        """Half-open ``[lower, upper)`` lifetimes, swept without listing every step."""
        events: dict[int, list[tuple[int, int]]] = {}
        for i, (lo, hi) in enumerate(intervals):
            if sizes[i] == 0 or hi <= lo:
                continue
            events.setdefault(lo, []).append((1, i))
            events.setdefault(hi, []).append((0, i))
        masks = set()
        live = 0
        for t in sorted(events):
            for starts, i in sorted(events[t]):  # ends first: [lo, hi) is half-open
                live = live | (1 << i) if starts else live & ~(1 << i)
            if live:
                masks.add(live)
        spans = tuple(max(0, hi - lo) for lo, hi in intervals)
        return cls._from_masks(tuple(sizes), tuple(alignments), len(sizes), masks, spans)

    @classmethod
    def _from_masks(
        cls, sizes: tuple[int, ...], alignments: tuple[int, ...], n: int, masks: set[int], spans: tuple[int, ...]
    ) -> Problem:
        maximal: list[int] = []
        for m in sorted(masks, key=lambda m: -m.bit_count()):
            if not any(m & ~k == 0 for k in maximal):
                maximal.append(m)
        maximal.sort(key=lambda m: ((m & -m).bit_length(), m))  # time-like, ties by mask: one order however built
        sections = tuple(tuple(i for i in range(n) if m >> i & 1) for m in maximal)
        buffer_sections: list[list[int]] = [[] for _ in range(n)]
        reach = [0] * n
        for k, m in enumerate(maximal):
            for i in sections[k]:
                buffer_sections[i].append(k)
                reach[i] |= m
        neighbours = tuple(tuple(j for j in range(n) if j != i and reach[i] >> j & 1) for i in range(n))
        bounds = tuple(packed_bound([sizes[i] for i in s], [alignments[i] for i in s]) for s in sections)
        totals = [sum(sizes[i] for i in s) for s in sections]
        crowding = tuple(max((totals[k] for k in buffer_sections[i]), default=0) for i in range(n))
        return cls(
            sizes, alignments, sections, tuple(tuple(b) for b in buffer_sections), neighbours, bounds, spans, crowding
        )

    @property
    def membership(self) -> int:
        """Buffers summed over sections: what one search node's work grows with."""
        return sum(len(s) for s in self.sections)

    @property
    def count(self) -> int:
        return len(self.sizes)

    def components(self) -> list[list[int]]:
        """Groups of buffers that never conflict across groups (solvable apart).

        Empty buffers are left out: they sit at offset 0.
        """
        seen = [False] * self.count
        out = []
        for start in range(self.count):
            if seen[start] or self.sizes[start] == 0:
                continue
            seen[start] = True
            stack, comp = [start], []
            while stack:
                i = stack.pop()
                comp.append(i)
                for j in self.neighbours[i]:
                    if not seen[j]:
                        seen[j] = True
                        stack.append(j)
            out.append(sorted(comp))
        return out

    def peak(self, offsets: Sequence[int]) -> int:
        return max((o + s for o, s in zip(offsets, self.sizes) if s), default=0)

    def violations(self, offsets: Sequence[int]) -> list[str]:
        """What is wrong with ``offsets`` (misaligned, overlapping); empty when valid."""
        bad = []
        for i, (o, s, a) in enumerate(zip(offsets, self.sizes, self.alignments)):
            if o < 0 or o % a:
                bad.append(f"buffer {i} at {o} is not aligned to {a}")
            for j in self.neighbours[i]:
                if j > i and o < offsets[j] + self.sizes[j] and offsets[j] < o + s:
                    bad.append(f"buffers {i} and {j} are live together and overlap")
        return bad
