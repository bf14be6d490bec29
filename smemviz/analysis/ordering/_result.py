"""The checker's answer: lint findings, and every alias with the edge that orders it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._finding import Finding, Findings, Severity

__all__ = ["AliasEdge", "OrderingReport", "finding", "not_read", "FACTS", "NOT_READ"]

# how an info finding on what the check could not read begins (lint gathers them into one line)
NOT_READ = "ordering not read: "

FACTS = {
    "unordered-alias": "two accesses to the same bytes, one a write, race unless an edge orders them",
    "proxy-fence": "generic-proxy writes reach the async proxy (TMA, WGMMA, UMMA) only after fence.proxy.async",
    "mbarrier-arrive-count": "an mbarrier phase completes when its pending arrivals reach zero (and its tx count)",
    "mbarrier-tx-bytes": "an mbarrier phase completes when its tx count reaches zero: expect_tx adds, TMA completion subtracts",
    "mbarrier-init": "an mbarrier must be initialised, with a count of at least 1, before any thread uses it",
    "mbarrier-parity": "a parity wait passes once the phase of that parity completed; it cannot tell phases two apart",
    "tmem-lifecycle": "TMEM columns are usable between tcgen05.alloc and tcgen05.dealloc by the allocating warp",
}


def not_read(what: str) -> Finding:
    """The info finding that the check could not read ``what``: it proves nothing there."""
    return finding("unordered-alias", "info", (), NOT_READ + what, "record it in the model")


def finding(rule: str, severity: Severity, regions: tuple[str, ...], message: str, fix: str) -> Finding:
    """A finding of one ordering rule, with the rule's hardware fact."""
    return Finding(rule, severity, regions, message, fix, FACTS[rule])


@dataclass(frozen=True)
class AliasEdge:
    """Two regions sharing bytes, and what orders the earlier's access before the later's write."""

    earlier: str
    later: str
    earlier_access: str  # "umma_read at file:line"
    later_access: str
    edge: str  # the chain of sync operations, or "unordered"

    @property
    def ordered(self) -> bool:
        return self.edge != "unordered"

    def line(self) -> str:
        return f"{self.earlier} ({self.earlier_access}) -> {self.later} ({self.later_access}): {self.edge}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "earlier": self.earlier,
            "later": self.later,
            "earlier_access": self.earlier_access,
            "later_access": self.later_access,
            "edge": self.edge,
        }


@dataclass(frozen=True)
class OrderingReport:
    """What the ordering check found for one kernel."""

    findings: Findings
    aliases: tuple[AliasEdge, ...]
    trips: tuple[int, ...]  # the trip counts a dynamic loop was checked with (empty: all static)

    def to_dict(self) -> dict[str, Any]:
        """The findings and aliases as JSON data (for exports and reports)."""
        return {
            "findings": self.findings.to_list(),
            "aliases": [a.to_dict() for a in self.aliases],
            "trips": list(self.trips),
        }

    def text(self) -> str:
        lines = [self.findings.text()]
        lines += [f"alias {a.line()}" for a in self.aliases]
        return "\n".join(lines)
