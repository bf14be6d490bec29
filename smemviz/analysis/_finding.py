"""A lint finding and the findings of one run: plain results, apart from the rules, so that
rules kept elsewhere (the bank analysis) can make them without importing the rule set."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Finding", "Findings", "Severity", "SEVERITIES"]

Severity = Literal["error", "warning", "info"]
SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Finding:
    """One broken rule: which, how bad, where, and what to do."""

    rule: str
    severity: Severity
    regions: tuple[str, ...]
    message: str
    fix: str
    fact: str  # the hardware fact the rule rests on, e.g. "hardware.TMA_ALIGNMENT = 128"

    def line(self) -> str:
        return f"{self.severity}[{self.rule}] {self.message}; fix: {self.fix}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "severity": self.severity,
            "regions": list(self.regions),
            "message": self.message,
            "fix": self.fix,
            "fact": self.fact,
        }


@dataclass(frozen=True)
class Findings:
    """The findings of one lint run, errors first."""

    items: tuple[Finding, ...]
    arch: str | None

    def __iter__(self) -> Iterator[Finding]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __bool__(self) -> bool:
        return bool(self.items)

    def of(self, severity: Severity) -> tuple[Finding, ...]:
        return tuple(f for f in self.items if f.severity == severity)

    @property
    def errors(self) -> tuple[Finding, ...]:
        return self.of("error")

    @property
    def warnings(self) -> tuple[Finding, ...]:
        return self.of("warning")

    def rules(self) -> set[str]:
        return {f.rule for f in self.items}

    def text(self) -> str:
        if not self.items:
            return "no findings"
        return "\n".join(f.line() for f in self.items)

    def to_list(self) -> list[dict[str, Any]]:
        return [f.to_dict() for f in self.items]

    def __repr__(self) -> str:
        return f"Findings({len(self.errors)} errors, {len(self.warnings)} warnings, {len(self.items)} in all)"
