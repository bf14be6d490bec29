"""An export's layouts, each analysed once: the map, the tables and the JSON all read it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..analysis._analysed import Analysed, analyse
from ..sources._inputs import LayoutPair

__all__ = ["AnalysedPair", "analyse_pair"]


@dataclass(frozen=True, eq=False)
class AnalysedPair:
    """The SMEM and TMEM layouts of one export with their analyses on the export's arch."""

    pair: LayoutPair
    smem: Analysed | None
    tmem: Analysed | None

    @property
    def analysed(self) -> tuple[Analysed, ...]:
        """The analyses in the order the plans are shown: SMEM, then TMEM."""
        return tuple(a for a in (self.smem, self.tmem) if a is not None)


def analyse_pair(pair: LayoutPair | AnalysedPair, *, measured: Any = None) -> AnalysedPair:
    """``pair`` with each of its plans analysed (an :class:`AnalysedPair` is returned as it is);
    ``measured``: Nsight Compute's counts of the kernel (``smemviz.read_ncu``), on the SMEM plan."""
    if isinstance(pair, AnalysedPair):
        return pair
    if measured is not None and pair.smem is None:
        raise ValueError("measured= is Nsight Compute's shared-memory counts: the export needs the SMEM plan")
    return AnalysedPair(
        pair,
        analyse(pair.smem, pair.arch, measured=measured) if pair.smem is not None else None,
        analyse(pair.tmem, pair.arch) if pair.tmem is not None else None,
    )
