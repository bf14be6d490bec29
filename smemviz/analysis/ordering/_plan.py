"""Declared plans: the edge each shared byte needs, stated before the kernel is written.

An author who lets ``epi_c`` reuse ``b_stages``' bytes declares who last touches
``b_stages`` (UMMA reads it) and who first writes ``epi_c`` (TMA, stmatrix); the edge
table says what must sit between them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...layout.ordering._model import ACCESS_KINDS
from ._edges import needed_edge

if TYPE_CHECKING:
    from ...layout import LayoutPlan, Region

__all__ = ["AliasNeed", "PlanNeeds", "needed_edges", "plan_needs"]

_WORDS = {
    "tma_load": "TMA writes",
    "tma_store": "a TMA store reads",
    "wgmma_read": "WGMMA reads",
    "umma_read": "UMMA reads",
    "umma_write_acc": "UMMA writes (accumulator)",
    "ld": "ld reads",
    "st": "st writes",
    "ldmatrix": "ldmatrix reads",
    "stmatrix": "stmatrix writes",
    "cp_async": "cp.async writes",
    "tcgen05_ld": "tcgen05.ld reads",
    "tcgen05_st": "tcgen05.st writes",
    "tcgen05_cp": "tcgen05.cp writes",
    "tmem_dealloc": "tcgen05.dealloc frees",
}


@dataclass(frozen=True)
class AliasNeed:
    """What one alias of a declared plan needs."""

    earlier: str
    earlier_kind: str
    later: str
    later_kind: str
    edge: str

    def line(self) -> str:
        return (
            f"{_WORDS[self.earlier_kind]} {self.earlier} -> {_WORDS[self.later_kind]} {self.later} over it: "
            f"needs {self.edge}"
        )


def needed_edges(pairs: Iterable[tuple[str, str, str, str]]) -> tuple[AliasNeed, ...]:
    """For each (earlier region, its last access kind, later region, its first write
    kind), the edge that must order them."""
    out = []
    known = set(ACCESS_KINDS) | {"tmem_dealloc"}
    for earlier, e_kind, later, l_kind in pairs:
        for kind in (e_kind, l_kind):
            if kind not in known:
                raise ValueError(f"unknown access kind {kind!r}; one of {', '.join(sorted(known))}")
        out.append(AliasNeed(earlier, e_kind, later, l_kind, needed_edge(e_kind, l_kind)))
    return tuple(out)


@dataclass(frozen=True)
class PlanNeeds:
    """The edges a laid-out plan's aliases need, and the regions whose access kinds
    were not given (their aliases are listed without an edge)."""

    needs: tuple[AliasNeed, ...]
    unknown: tuple[tuple[str, str], ...]  # (earlier, later) pairs with a kind missing

    def lines(self) -> list[str]:
        out = [n.line() for n in self.needs]
        out += [
            f"{a} -> {b} over it: declare the access kinds of both to see the edge it needs" for a, b in self.unknown
        ]
        return out


def _span(r: Region) -> tuple[int, int] | None:
    """When a region is in use: its alias phase, or its live steps (None: always)."""
    if r.group is not None and r.phase is not None:
        return (r.phase, r.phase)
    if r.live:
        return (min(r.live), max(r.live))
    return None


def _handovers(plan: LayoutPlan) -> list[tuple[Region, Region]]:
    """Pairs of regions over shared bytes, the earlier's use wholly before the later's,
    with no third region using those bytes in between."""
    regions = [r for r in plan.regions if r.kind == "data" and r.size > 0]
    pairs = []
    for a in regions:
        for b in regions:
            sa, sb = _span(a), _span(b)
            if a is b or sa is None or sb is None or (a.group is None) != (b.group is None):
                continue
            if a.group != b.group or not sa[1] < sb[0] or a.end <= b.offset or b.end <= a.offset:
                continue
            lo, hi = max(a.offset, b.offset), min(a.end, b.end)
            between = any(
                c is not a
                and c is not b
                and (sc := _span(c)) is not None
                and sa[1] < sc[0]
                and sc[1] < sb[0]
                and c.offset <= lo
                and hi <= c.end
                for c in regions
            )
            if not between:
                pairs.append((a, b))
    return pairs


def plan_needs(plan: LayoutPlan, kinds: Mapping[str, tuple[str, str]]) -> PlanNeeds:
    """The edge each alias of ``plan`` needs. ``kinds`` gives, per region, the kind of
    its first write and of its last access, e.g. ``{"b_stages": ("tma_load", "umma_read"),
    "epi_c": ("stmatrix", "tma_store")}``."""
    pairs, unknown = [], []
    for a, b in _handovers(plan):
        if a.name in kinds and b.name in kinds:
            pairs.append((a.name, kinds[a.name][1], b.name, kinds[b.name][0]))
        else:
            unknown.append((a.name, b.name))
    return PlanNeeds(needed_edges(pairs), tuple(unknown))
