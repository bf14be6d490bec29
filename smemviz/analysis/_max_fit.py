"""What fits: call a layout builder over a range of one argument (stages,
usually) and find the largest value whose layout fits an architecture.

This is the loop a kernel author otherwise writes by hand ("try 2..12 stages,
keep the last that fits"), with every tried layout kept for a look.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from html import escape
from typing import Any

from .. import device, hardware
from ..layout._allocator import capacity_checks_deferred
from ..layout._plan import LayoutPlan
from ..sources._inputs import built_plans

__all__ = ["max_fit", "MaxFit", "Tried"]


@dataclass(frozen=True)
class Tried:
    """One value of the swept argument and how its layout compares with the arch."""

    value: Any
    smem: LayoutPlan | None
    tmem: LayoutPlan | None
    fits: bool
    smem_used: int  # bytes (0 without an SMEM layout)
    smem_limit: int
    tmem_used: int  # columns (0 without a TMEM layout)


@dataclass(frozen=True)
class MaxFit:
    """The largest value of ``name`` whose layout fits ``arch`` (``best`` is
    ``None`` when none does), and every value tried, in the order given."""

    name: str
    arch: str
    best: Any
    tried: tuple[Tried, ...]

    @property
    def best_plans(self) -> tuple[LayoutPlan | None, LayoutPlan | None]:
        for t in self.tried:
            if t.fits and t.value == self.best:
                return t.smem, t.tmem
        return None, None

    def report(self) -> str:
        head = (
            f"largest {self.name} that fits {self.arch}: {self.best}"
            if self.best is not None
            else f"no {self.name} tried fits {self.arch}"
        )
        lines = [head]
        for t in self.tried:
            mark = "fits" if t.fits else "over"
            smem = f"SMEM {t.smem_used:,} of {t.smem_limit:,} B" if t.smem is not None else "no SMEM"
            tmem = f", TMEM {t.tmem_used:,} cols" if t.tmem is not None else ""
            lines.append(f"  {self.name}={t.value!r}: {smem}{tmem} ({mark})")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.report()

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td>{escape(repr(t.value))}</td><td style='text-align:right'>{t.smem_used:,}</td>"
            f"<td style='text-align:right'>{t.tmem_used:,}</td>"
            f"<td style='color:{'#2e7d32' if t.fits else '#c62828'}'>{'fits' if t.fits else 'over'}</td></tr>"
            for t in self.tried
        )
        head = escape(self.report().splitlines()[0])
        return (
            f"<div><b>{head}</b><table style='white-space:nowrap'><tr><th>{escape(self.name)}</th>"
            f"<th>SMEM B</th><th>TMEM cols</th><th></th></tr>{rows}</table></div>"
        )


def max_fit(builder: Callable[..., Any], /, arch: Any = None, **arguments: Any) -> MaxFit:
    """Call ``builder`` for each value of the one argument given as a range or
    list (``stages=range(1, 13)``; the other arguments are passed as they are)
    and return the largest value whose layout fits ``arch``.

    ``arch`` defaults to the arch the first layout was built for, else the one
    ``$CUTE_DSL_ARCH`` or the GPU present names (sm_100 for a TMEM layout; a
    ``ValueError`` when nothing names one). Allocators made with ``arch=`` that would
    refuse an over-capacity layout are computed anyway here, so each value's
    size is known. A builder error propagates, naming the value it failed on.
    """
    swept = [k for k, v in arguments.items() if isinstance(v, (range, list, tuple))]
    if len(swept) != 1:
        raise TypeError(
            "max_fit needs exactly one argument to sweep, given as a range, list or tuple "
            f"(e.g. stages=range(1, 13)); got {len(swept)}: {swept or 'none'}"
        )
    name = swept[0]
    values: Iterable[Any] = arguments[name]
    fixed = {k: v for k, v in arguments.items() if k != name}
    tried: list[Tried] = []
    chosen: hardware.Arch | None = hardware.get_arch(arch) if arch is not None else None
    for value in values:
        try:
            with capacity_checks_deferred():
                smem, tmem = built_plans(builder(**fixed, **{name: value}))
        except Exception as exc:
            if hasattr(exc, "add_note"):  # Python 3.11+
                exc.add_note(f"max_fit: building with {name}={value!r}")
            raise
        if chosen is None:
            own = next((p.arch for p in (smem, tmem) if p is not None and p.arch), None)
            chosen = hardware.get_arch(own) if own else device.default_arch("tmem" if tmem is not None else "smem")
            if chosen is None:
                raise ValueError(
                    "max_fit needs an arch to judge capacity against: pass arch=..., build plans that carry one, "
                    f"or set ${hardware.ARCH_ENV}"
                )
        smem_cap = smem.capacity(chosen) if smem is not None else None
        tmem_arch = chosen if chosen.has_tmem else device.default_arch("tmem")
        tmem_cap = tmem.capacity(tmem_arch) if tmem is not None else None
        fits = all(c.fits for c in (smem_cap, tmem_cap) if c is not None)
        tried.append(
            Tried(
                value,
                smem,
                tmem,
                fits,
                smem_cap.used if smem_cap else 0,
                smem_cap.limit if smem_cap else chosen.smem_per_block,
                tmem_cap.used if tmem_cap else 0,
            )
        )
    if not tried:
        raise ValueError(f"max_fit: {name} has no values to try")
    assert chosen is not None
    fitting = [t.value for t in tried if t.fits]
    best = max(fitting) if fitting else None
    return MaxFit(name, chosen.name, best, tuple(tried))
