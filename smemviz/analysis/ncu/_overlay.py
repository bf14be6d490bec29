"""What Nsight Compute measured, per captured region, as the map shows it: beside the conflict
strip's prediction, one segment per region whose bytes ncu saw L1 shared wavefronts for, with a
verdict a reader takes in at a glance ("predicted 4-way, measured 4-way", or "measured 2-way,
predicted none: look here").

A segment sums the region's rows that the model predicts (so measured and predicted count the
same instructions, and its instruction count is theirs); a region with no predicted row shows all
its measured rows. Regions whose
rows move no L1 shared wavefronts (TMA copies, mbarrier operations) get no segment.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._attribute import NcuAttribution, NcuTotals

__all__ = ["MeasuredSegment", "measured_segments", "as_segments", "ways_text", "MEASURED_COLUMNS", "measured_rows"]


def ways_text(wavefronts: int, ideal: int) -> str:
    """Wavefronts over the ideal as a conflict degree: "conflict-free", "4-way", "2.5-way"."""
    if ideal <= 0 or wavefronts <= ideal:
        return "conflict-free"
    ways = wavefronts / ideal
    return f"{ways:.0f}-way" if ways == int(ways) else f"{ways:.2g}-way"


@dataclass(frozen=True)
class MeasuredSegment:
    """One captured region's measured shared-memory traffic beside the prediction."""

    region: str
    offset: int
    end: int
    source: str  # the totals it comes from: a region or regions read together ("sA+sB")
    executed: int
    wavefronts: int
    ideal: int
    conflicts: int
    predicted_wavefronts: int | None = None
    predicted_ideal: int | None = None
    predicted_conflicts: int | None = None

    @property
    def modelled(self) -> bool:
        return self.predicted_wavefronts is not None

    @property
    def verdict(self) -> str:
        """ "agrees", "disagrees", or "not modelled"."""
        if not self.modelled:
            return "not modelled"
        same = (self.wavefronts, self.ideal, self.conflicts) == (
            self.predicted_wavefronts,
            self.predicted_ideal,
            self.predicted_conflicts,
        )
        return "agrees" if same else "disagrees"

    @property
    def look_here(self) -> bool:
        """The counters say something the model did not: a disagreement, or conflicts it did not predict."""
        return self.verdict == "disagrees" or (not self.modelled and self.conflicts > 0)

    @property
    def measured_ways(self) -> str:
        return ways_text(self.wavefronts, self.ideal)

    @property
    def predicted_ways(self) -> str | None:
        if self.predicted_wavefronts is None or self.predicted_ideal is None:
            return None
        return ways_text(self.predicted_wavefronts, self.predicted_ideal)

    @property
    def ratio(self) -> float:
        """Measured wavefronts over the ideal (1.0: conflict-free), what the strip's colour shows."""
        return self.wavefronts / self.ideal if self.ideal else 1.0

    @property
    def label(self) -> str:
        predicted = self.predicted_ways
        if predicted is None:
            tail = ", predicted none: look here" if self.look_here else " (not modelled)"
            return f"measured {self.measured_ways}{tail}"
        if self.look_here:
            return f"measured {self.measured_ways}, predicted {predicted}: look here"
        return f"predicted {predicted}, measured {self.measured_ways}"

    def line(self) -> str:
        """The segment as one line of a text report."""
        return (
            f"{self.region} ({self.source}): {self.label}; wavefronts {_pair(self.wavefronts, self.predicted_wavefronts)}, "
            f"ideal {_pair(self.ideal, self.predicted_ideal)}, conflicts {_pair(self.conflicts, self.predicted_conflicts)} "
            f"(measured / predicted), {self.executed:,} instructions"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "region": self.region,
            "offset": self.offset,
            "end": self.end,
            "source": self.source,
            "executed": self.executed,
            "wavefronts": self.wavefronts,
            "ideal": self.ideal,
            "conflicts": self.conflicts,
            "predicted": None
            if not self.modelled
            else {
                "wavefronts": self.predicted_wavefronts,
                "ideal": self.predicted_ideal,
                "conflicts": self.predicted_conflicts,
            },
            "verdict": self.verdict,
            "look_here": self.look_here,
            "label": self.label,
        }


def _pair(measured: int, predicted: int | None) -> str:
    return f"{measured:,}" if predicted is None else f"{measured:,} / {predicted:,}"


def _measured_part(t: NcuTotals) -> tuple[int, int, int]:
    """The totals' wavefronts, ideal and conflicts over the rows the model predicts (all rows when none is)."""
    if not t.modelled:
        return t.wavefronts, t.ideal, t.conflicts
    return t.wavefronts - t.unmodelled[0], t.ideal - t.unmodelled[1], t.conflicts - t.unmodelled[2]


def _worse(a: MeasuredSegment, b: MeasuredSegment) -> bool:
    """``a`` says more than ``b``: a disagreement with the model first, then other conflicts
    nothing predicted, then more wavefronts over the ideal."""

    def key(s: MeasuredSegment) -> tuple[bool, bool, float, int]:
        return (s.verdict == "disagrees", s.look_here, s.ratio, s.wavefronts)

    return key(a) > key(b)


def measured_segments(attribution: NcuAttribution) -> tuple[MeasuredSegment, ...]:
    """One segment per captured region with measured L1 shared wavefronts, in address order; a
    region read in several groups (alone, and with another region by one WGMMA) keeps the one that
    says most."""
    spans = {name: (start, start + size) for name, start, size in attribution.spans}
    # the instructions of each region group's predicted rows (a group's totals count all its rows)
    predicted_executed: dict[str, int] = {}
    for r in attribution.rows:
        if r.modelled:
            key = "+".join(r.regions)
            predicted_executed[key] = predicted_executed.get(key, 0) + r.executed
    best: dict[str, MeasuredSegment] = {}
    for t in attribution.regions:
        wavefronts, ideal, conflicts = _measured_part(t)
        executed = predicted_executed.get(t.name, t.executed) if t.modelled else t.executed
        if wavefronts <= 0 and not t.modelled:
            continue
        for name in t.regions:
            if name not in spans:
                continue
            start, end = spans[name]
            seg = MeasuredSegment(
                region=name,
                offset=start,
                end=end,
                source=t.name,
                executed=executed,
                wavefronts=wavefronts,
                ideal=ideal,
                conflicts=conflicts,
                predicted_wavefronts=t.predicted_wavefronts,
                predicted_ideal=t.predicted_ideal,
                predicted_conflicts=t.predicted_conflicts,
            )
            if name not in best or _worse(seg, best[name]):
                best[name] = seg
    return tuple(sorted(best.values(), key=lambda s: (s.offset, s.region)))


def as_segments(measured: Any) -> tuple[MeasuredSegment, ...]:
    """Segments from an attribution (``read_ncu``'s result), or segments already made."""
    if measured is None:
        return ()
    if hasattr(measured, "regions") and hasattr(measured, "spans"):
        return measured_segments(measured)
    items = tuple(measured) if isinstance(measured, Iterable) else None
    if items is None or not all(isinstance(s, MeasuredSegment) for s in items):
        raise TypeError(
            f"measured= takes what smemviz.read_ncu returned (or its measured segments), not {type(measured).__name__}"
        )
    return items


MEASURED_COLUMNS = ("region", "bytes", "from", "instructions", "wavefronts", "ideal", "conflicts", "verdict")


def measured_rows(segments: Iterable[MeasuredSegment]) -> list[tuple[str, ...]]:
    """The reports' table: one row per segment, measured / predicted where predicted."""
    return [
        (
            s.region,
            f"{s.offset:,}-{s.end:,}",
            s.source,
            f"{s.executed:,}",
            _pair(s.wavefronts, s.predicted_wavefronts),
            _pair(s.ideal, s.predicted_ideal),
            _pair(s.conflicts, s.predicted_conflicts),
            s.label,
        )
        for s in segments
    ]
