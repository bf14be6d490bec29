"""Where each region sits on a map: address span and lane within its band.

Standalone regions fill the whole band. The phases of an alias group share the
group's address span, so each phase gets its own lane (a horizontal strip of
the band): every phase stays visible over the same addresses. Standalone
regions that share bytes for another reason (placed on the same addresses
because their lifetimes never meet) get lanes the same way: one lane per
region in a run of overlapping regions, so none is drawn over another.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..layout._plan import LayoutPlan, Region

__all__ = ["Lane", "lane_of", "lanes", "gaps"]

LANE_FILL = 0.92  # share of a lane a bar covers, leaving a thin gap between phases


@dataclass(frozen=True)
class Lane:
    """A strip of the band ``[0, 1]``: ``center`` and ``height`` in band units."""

    center: float
    height: float
    index: int  # phase index, 0 for standalone regions
    count: int  # lanes in this span


def lane_of(region: Region, phase_counts: dict[int, int]) -> Lane:
    """The lane a region is drawn in; ``phase_counts`` maps group -> phases."""
    if region.group is None:
        return Lane(0.5, 1.0, 0, 1)
    n = phase_counts[region.group]
    p = region.phase or 0
    # phase 1 on top, as the usage table lists it first
    return Lane((n - p - 0.5) / n, LANE_FILL / n, p, n)


def lanes(plan: LayoutPlan) -> dict[str, Lane]:
    """The lane of every region of ``plan`` that does not fill the band, by name.

    Phases of an alias group: one lane per phase. Standalone regions whose
    bytes overlap: each run of overlapping regions (a cluster) is split into
    as many lanes as it needs, each region in the topmost lane free at its
    offset (greedy interval colouring, which needs no more lanes than the most
    regions over any one byte). Larger regions first at a shared offset, so
    the region that starts a cluster is on top. Regions missing here fill
    the band (:func:`lane_of` gives their lane).
    """
    counts = phase_counts(plan)
    out: dict[str, Lane] = {r.name: lane_of(r, counts) for r in plan.regions if r.group is not None}
    alone = sorted(
        (r for r in plan.regions if r.group is None and r.kind == "data" and r.size),
        key=lambda r: (r.offset, -r.size, r.index),
    )
    cluster: list[tuple[Region, int]] = []
    ends: list[int] = []  # per lane of the open cluster: where its last region ends

    def close() -> None:
        n = len(ends)
        if n > 1:
            for r, k in cluster:
                out[r.name] = Lane((n - k - 0.5) / n, LANE_FILL / n, k, n)

    for r in alone:
        if ends and r.offset >= max(ends):  # nothing open reaches it: a new cluster
            close()
            cluster, ends = [], []
        k = next((i for i, end in enumerate(ends) if end <= r.offset), len(ends))
        if k == len(ends):
            ends.append(r.end)
        else:
            ends[k] = r.end
        cluster.append((r, k))
    close()
    return out


def phase_counts(plan: LayoutPlan) -> dict[int, int]:
    return {g.index: len(g.phase_sizes) for g in plan.groups}


def gaps(plan: LayoutPlan, end: int | None = None) -> list[tuple[int, int]]:
    """Address ranges ``[start, stop)`` in ``[0, end)`` covered by no region of any phase."""
    end = plan.total if end is None else end
    out: list[tuple[int, int]] = []
    cursor = 0
    for start, stop in sorted((r.offset, r.end) for r in plan.regions if r.size):
        if start > cursor:
            out.append((cursor, min(start, end)))
        cursor = max(cursor, stop)
        if cursor >= end:
            break
    if cursor < end:
        out.append((cursor, end))
    return [(a, b) for a, b in out if b > a]
