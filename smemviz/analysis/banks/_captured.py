"""The bank counts of a captured kernel's copies, from the lane addresses capture read.

``smemviz.capture`` records every shared-memory ld/st, ldmatrix/stmatrix and cp.async copy
a kernel makes with the 32 addresses each warp instruction gives, as compiled
(``KernelCapture.banks``). Here each copy's instructions go through
:func:`bank_conflicts` as they are, with no tile, warp arrangement or swizzle stated: the
totals a declared access (``plan.accesses``) must reproduce, and the count for a copy no
declared access describes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ._model import bank_conflicts

__all__ = ["CapturedTotals", "analyse_captured"]


@dataclass(frozen=True)
class CapturedTotals:
    """One captured copy's warp instructions, summed as ncu counts them."""

    copy: Any  # smemviz.sources.capture's CapturedCopy
    instructions: int
    wavefronts: int
    ideal: int
    conflicts: int
    n_way: int  # the worst phase of any of its instructions

    @property
    def conflict_free(self) -> bool:
        return self.wavefronts == self.ideal

    def summary(self) -> str:
        c = self.copy
        state = "conflict-free" if self.conflict_free else f"{self.n_way}-way"
        where = f"{c.view or c.region} ({c.site})"
        return (
            f"{c.instruction} on {where}: {self.instructions} instructions, {self.wavefronts} wavefronts "
            f"(ideal {self.ideal}), {self.conflicts} conflicts; {state}"
        )


def _records(source: Any) -> Iterable[Any]:
    banks = getattr(source, "banks", None)
    if banks is not None:
        return banks
    kernels = getattr(source, "kernels", None)
    if kernels is not None:  # a Capture: every kernel's copies
        return [r for kc in kernels.values() for r in kc.banks]
    return source


def analyse_captured(source: Any) -> tuple[CapturedTotals, ...]:
    """The totals of every captured copy whose lane addresses were read (``source``: a
    ``KernelCapture``, a capture, or its ``banks`` records); a copy capture could not read
    (its ``unread`` says why, and it holds no addresses) is left out."""
    out = []
    for rec in _records(source):
        if rec.instruction is None or not rec.addresses:
            continue
        cache: dict[tuple[int | None, ...], Any] = {}
        wf = ideal = conf = worst = 0
        for addrs in rec.addresses:
            res = cache.get(addrs)
            if res is None:
                res = cache[addrs] = bank_conflicts(rec.instruction, addrs)
            wf += res.wavefronts
            ideal += res.ideal
            conf += res.conflicts
            worst = max(worst, res.n_way)
        out.append(CapturedTotals(rec, len(rec.addresses), wf, ideal, conf, worst))
    return tuple(out)
