"""What changed between two layouts: regions added, removed, moved, resized,
and the totals, so "what did 4 -> 5 stages cost?" has a one-line answer.

Regions are matched by name (the n-th region of a name with the n-th of the
same name, for plans read from allocators that allow repeated names).
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING

from .._names import shown

if TYPE_CHECKING:
    from ..layout._plan import LayoutPlan, Region

__all__ = ["PlanDiff", "RegionChange", "diff_plans"]


@dataclass(frozen=True)
class RegionChange:
    """One region present in both layouts whose offset or size differs."""

    name: str
    before: Region
    after: Region

    @property
    def moved_by(self) -> int:
        return self.after.offset - self.before.offset

    @property
    def resized_by(self) -> int:
        return self.after.size - self.before.size


@dataclass(frozen=True)
class PlanDiff:
    """``after`` compared with ``before``, both of one memory (units: ``unit``)."""

    memory: str
    unit: str
    added: tuple[Region, ...]
    removed: tuple[Region, ...]
    moved: tuple[RegionChange, ...]  # same size, another offset
    resized: tuple[RegionChange, ...]  # another size (the offset may differ too)
    unchanged: int
    total_before: int
    total_after: int
    padding_before: int
    padding_after: int

    @property
    def total_delta(self) -> int:
        return self.total_after - self.total_before

    @property
    def same(self) -> bool:
        return not (self.added or self.removed or self.moved or self.resized) and self.total_delta == 0

    def report(self) -> str:
        u = self.unit
        sign = "+" if self.total_delta >= 0 else ""
        lines = [
            f"{self.memory.upper()} total {self.total_before:,} -> {self.total_after:,} {u} "
            f"({sign}{self.total_delta:,} {u}); padding {self.padding_before:,} -> {self.padding_after:,} {u}"
        ]
        if self.same:
            lines.append("  no region changed")
        for r in self.added:
            lines.append(f"  + {shown(r.name)}: {r.size:,} {u} at {r.offset:,}")
        for r in self.removed:
            lines.append(f"  - {shown(r.name)}: {r.size:,} {u} at {r.offset:,}")
        for c in self.resized:
            lines.append(
                f"  ~ {shown(c.name)}: {c.before.size:,} -> {c.after.size:,} {u}"
                + (f", at {c.before.offset:,} -> {c.after.offset:,}" if c.moved_by else "")
            )
        for c in self.moved:
            lines.append(f"  > {shown(c.name)}: at {c.before.offset:,} -> {c.after.offset:,} ({c.moved_by:+,} {u})")
        if self.unchanged:
            lines.append(f"  {self.unchanged:,} {'region' if self.unchanged == 1 else 'regions'} unchanged")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.report()

    def _repr_html_(self) -> str:
        return f"<pre style='white-space:pre'>{escape(self.report())}</pre>"


def _keyed(plan: LayoutPlan) -> dict[tuple[str, int], Region]:
    seen: dict[str, int] = {}
    out: dict[tuple[str, int], Region] = {}
    for r in sorted(plan.regions, key=lambda r: (r.index, r.offset)):
        n = seen.get(r.name, 0)
        seen[r.name] = n + 1
        out[(r.name, n)] = r
    return out


def diff_plans(before: LayoutPlan, after: LayoutPlan) -> PlanDiff:
    """``after`` against ``before``; both must describe the same memory."""
    if before.memory != after.memory:
        raise ValueError(f"cannot compare an {before.memory.upper()} layout with a {after.memory.upper()} one")
    old, new = _keyed(before), _keyed(after)
    added = tuple(sorted((new[k] for k in new.keys() - old.keys()), key=lambda r: r.offset))
    removed = tuple(sorted((old[k] for k in old.keys() - new.keys()), key=lambda r: r.offset))
    moved: list[RegionChange] = []
    resized: list[RegionChange] = []
    unchanged = 0
    for key in sorted(old.keys() & new.keys(), key=lambda k: new[k].offset):
        a, b = old[key], new[key]
        if a.size != b.size:
            resized.append(RegionChange(key[0], a, b))
        elif a.offset != b.offset:
            moved.append(RegionChange(key[0], a, b))
        else:
            unchanged += 1
    return PlanDiff(
        before.memory,
        before.unit,
        added,
        removed,
        tuple(moved),
        tuple(resized),
        unchanged,
        before.total,
        after.total,
        before.padding,
        after.padding,
    )
