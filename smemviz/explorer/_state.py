"""What an explorer shows, apart from how it is drawn.

:class:`ExplorerState` holds the builder (or the fixed layout), the plans it
returned, the configurations tried, the last one that fit and the arch they
are judged against, and analyses the layout on screen once per change
(:meth:`ExplorerState.analysed`). The widget (``_widget.Explorer``) renders
it. Nothing here imports ipywidgets or plotly: the state is tested directly.
"""

from __future__ import annotations

import dataclasses
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import device, hardware
from .._errors import CapacityError
from ..layout._allocator import capacity_checks_deferred
from ..layout._plan import LayoutPlan
from ..sources._struct import is_cute_struct
from ._history import MAX_HISTORY, Attempt
from ._inputs import Plans, builder_plans, declared_allocators, to_plans

if TYPE_CHECKING:
    from ..analysis import Analysed, Finding, Occupancy

__all__ = ["ExplorerState", "Analysis", "Outcome", "is_builder", "default_arch"]


def is_builder(target: Any) -> bool:
    """Whether ``target`` is a function that builds a layout (called with the
    controls' values), rather than a layout itself."""
    return (
        callable(target)
        and not isinstance(target, (LayoutPlan, tuple, list))
        and not hasattr(target, "compute_layout")
        and not is_cute_struct(target)
    )


def default_arch(plans: Plans) -> str:
    """The arch a layout is first shown against: its own, else the machine's."""
    smem, tmem = plans
    for plan in plans:
        if plan is not None and plan.arch:
            return plan.arch
    found = device.default_arch("tmem" if tmem is not None else "smem")
    return (found or hardware.get_arch(hardware.VIEW_FALLBACK_ARCH)).name  # the arch menu needs a choice


@dataclass(frozen=True)
class Analysis:
    """The layout on screen analysed once per change: one
    :class:`~smemviz.analysis.Analysed` per memory, which the maps, the summary
    and the Banks tab all read."""

    arch: str
    smem: Analysed | None  # the SMEM plan judged against ``arch``
    tmem: Analysed | None

    @property
    def plans(self) -> Plans:
        return (self.smem.plan if self.smem else None, self.tmem.plan if self.tmem else None)

    @property
    def occupancy(self) -> Occupancy | None:
        return self.smem.occupancy if self.smem is not None else None

    @property
    def findings(self) -> tuple[Finding, ...]:
        """The lint findings beyond capacity (capacity has its own line), SMEM first."""
        return tuple(f for a in (self.smem, self.tmem) if a is not None for f in a.beyond_capacity)

    @property
    def ordered(self) -> tuple[Analysed, ...]:
        """The analyses with an ordering to show (a checked kernel model, or a declared
        plan's needed edges), SMEM first; where both plans carry one model, the SMEM one."""
        out: list[Analysed] = []
        for a in (self.smem, self.tmem):
            if a is None or not a.has_ordering:
                continue
            if a.plan.ordering is not None and any(b.plan.ordering == a.plan.ordering for b in out):
                continue
            out.append(a)
        return tuple(out)

    @property
    def over_capacity(self) -> str | None:
        """Why the layout does not fit (one line per memory), or ``None``."""
        problems = [a.capacity.message() for a in (self.smem, self.tmem) if a is not None and not a.capacity.fits]
        return "\n".join(problems) or None


def analyse_pair(smem: LayoutPlan | None, tmem: LayoutPlan | None, arch: str, measured: Any = None) -> Analysis:
    """The :class:`Analysis` of ``smem`` (already carrying ``arch``, and ``measured``: Nsight
    Compute's counts of it) and ``tmem``: the one place the explorer has a layout analysed."""
    from ..analysis import analyse

    return Analysis(
        arch,
        analyse(smem, arch, measured=measured) if smem is not None else None,
        analyse(tmem) if tmem is not None else None,
    )


@dataclass(frozen=True)
class Outcome:
    """What one change came to: whether the maps are redrawn and what the message area says."""

    drawn: bool
    message: str = ""
    note: str = ""


class ExplorerState:
    """The explorer's state: ``target`` is a plan, an allocator, an (SMEM, TMEM)
    pair, or a builder (:func:`is_builder`) called with ``fixed`` plus the values
    :meth:`apply` is given."""

    def __init__(self, target: Any, *, arch: Any = None, fixed: dict[str, Any] | None = None) -> None:
        self.builder: Callable[..., Any] | None = target if is_builder(target) else None
        self.fixed: dict[str, Any] = dict(fixed or {})
        self.smem_plan: LayoutPlan | None = None
        self.tmem_plan: LayoutPlan | None = None
        self.last_error: str | None = None
        self.last_fit: tuple[dict[str, Any], Plans] | None = None  # builder arguments and plans
        self.history: list[Attempt] = []  # builder calls, oldest first
        self.declared: dict[str, Any] = {} if self.builder else declared_allocators(target)
        self.arch_pinned = arch is not None  # chosen by the caller or in the selector, not by a plan
        self._analysis: Analysis | None = None  # of the layout on screen; None: not made since the last change
        self._target = target
        self._arch: str | None = hardware.get_arch(arch).name if arch is not None else None
        # Nsight Compute's counts and the SMEM plan they were measured on: shown while it is on screen
        self._measured: tuple[tuple[Any, ...], LayoutPlan] | None = None

    # -- what is shown ---------------------------------------------------------------

    @property
    def arch(self) -> str:
        """The arch the SMEM layout is judged against (the arch menu's choice)."""
        if self._arch is None:
            self._arch = default_arch((self.smem_plan, self.tmem_plan))
        return self._arch

    @property
    def plans(self) -> Plans:
        """``(smem, tmem)`` as shown: the SMEM plan judged against :attr:`arch`."""
        return self.analysed().plans

    @property
    def plan(self) -> LayoutPlan | None:
        """The layout on screen: the SMEM plan (judged against :attr:`arch`), or the
        TMEM plan of a layout without SMEM."""
        smem, tmem = self.plans
        return smem if smem is not None else tmem

    def analysed(self) -> Analysis:
        """The analysis of the layout on screen, made once per change of layout or arch.

        Every capacity, occupancy, lint and bank result the explorer shows comes from here."""
        if self._analysis is None:
            smem = self.smem_plan
            if smem is not None and smem.arch != self.arch:
                smem = dataclasses.replace(smem, arch=self.arch)
            self._analysis = analyse_pair(smem, self.tmem_plan, self.arch, self.measured or None)
        return self._analysis

    @property
    def measured(self) -> tuple[Any, ...]:
        """Nsight Compute's counts per region (``MeasuredSegment``) while the layout they were
        measured on is the one on screen; () once a change shows another."""
        if self._measured is None or self._measured[1] != self.smem_plan:
            return ()
        return self._measured[0]

    def set_measured(self, measured: Any) -> None:
        """Show ``measured`` (what :func:`smemviz.read_ncu` made of a profiled launch of the layout on
        screen, or its segments) on it; ``None`` takes it away."""
        if measured is None:
            self._measured = None
        elif self.smem_plan is None:
            raise ValueError("measured= is Nsight Compute's shared-memory counts: the explorer shows no SMEM layout")
        else:
            from ..analysis.ncu._overlay import as_segments

            self._measured = (as_segments(measured), self.smem_plan)
        self._analysis = None

    # -- changes ----------------------------------------------------------------------

    def start(self, values: dict[str, Any] | None = None) -> Outcome:
        """Show the first layout: the builder's for ``values``, or the one given."""
        if self.builder is not None:
            return self.apply(values or {})
        plans = to_plans(self._target)
        self._show_plans(plans)
        return self._judge(None)

    def apply(self, values: dict[str, Any]) -> Outcome:
        """Call the builder with ``values`` (the controls' values now) and show its layout.

        A builder error keeps the last layout that built; an over-capacity layout
        is shown as asked, with the last layout that fit named in a note. Without
        a builder the layout given is judged again (against :attr:`arch`)."""
        if self.builder is None:
            return self._judge(None)
        args = {**self.fixed, **values}
        plans = self._build(args)
        if plans == (None, None):
            self._record(args, plans)
            shown = self.smem_plan is not None or self.tmem_plan is not None
            error = self.last_error or "no layout"
            return Outcome(False, f"{error}\nShowing the last layout that built." if shown else error)
        self._show_plans(plans)
        self._record(args, plans)
        return self._judge(args)

    def _judge(self, args: dict[str, Any] | None) -> Outcome:
        """The capacity verdict on the layout on screen; ``args``: the builder arguments that made it."""
        problem = self.analysed().over_capacity
        if problem is None:
            self.last_error = None
            self.last_fit = (args, (self.smem_plan, self.tmem_plan)) if args is not None else None
            return Outcome(True)
        self.last_error = f"{CapacityError.__name__}: {problem}"
        return Outcome(True, self.last_error, self.last_fit_note())

    def choose_arch(self, name: str) -> None:
        """The arch picked in the menu: from now on every plan is judged against it."""
        self.arch_pinned = True
        self._arch = hardware.get_arch(name).name
        self._analysis = None

    def capacity_message(self) -> str:
        """The capacity error of the layout on screen, or ``""``."""
        problem = self.analysed().over_capacity
        return f"{CapacityError.__name__}: {problem}" if problem else ""

    def last_fit_note(self) -> str:
        """The builder arguments (and SMEM size) of the last layout that fit, or ``""``."""
        if self.last_fit is None:
            return ""
        values, (smem, _tmem) = self.last_fit
        where = ", ".join(f"{k}={v!r}" for k, v in values.items())
        size = f" ({smem.total:,} B of SMEM)" if smem is not None else ""
        return f"Last layout that fit: {where}{size}."

    # -- steps ------------------------------------------------------------------------

    def _build(self, args: dict[str, Any]) -> Plans:
        """Plans from the builder, or ``(None, None)`` with ``last_error`` set."""
        assert self.builder is not None
        try:
            with capacity_checks_deferred():  # an over-capacity layout is drawn, then reported
                result = self.builder(**args)
                plans = builder_plans(result)
            self.declared = declared_allocators(result)
            return plans
        except Exception as exc:  # the builder is user code: report, never raise into the widget
            where = ", ".join(f"{k}={v!r}" for k, v in args.items())
            frame = _user_frame(exc)
            at = f" (at {frame.name}, line {frame.lineno})" if frame else ""
            self.last_error = f"{type(exc).__name__}: {exc}{at}" + (f"\nwith {where}" if where else "")
            return None, None

    def _record(self, args: dict[str, Any], plans: Plans) -> bool:
        """Add a builder call to :attr:`history` unless it repeats the one before; whether added."""
        smem, tmem = plans
        failed = plans == (None, None)
        attempt = Attempt(
            tuple(args.items()),
            smem.total if smem is not None else None,
            tmem.data_total if tmem is not None else None,
            None if failed else self.analysed().over_capacity is None,
            self.arch,
        )
        if self.history and self.history[-1] == attempt:
            return False
        self.history.append(attempt)
        del self.history[:-MAX_HISTORY]
        return True

    def _show_plans(self, plans: Plans) -> None:
        """Put ``plans`` on screen; until an arch is chosen, judged against the arch they were built for."""
        self.smem_plan, self.tmem_plan = plans
        self._analysis = None
        own = next((p.arch for p in plans if p is not None and p.arch), None)
        if own is not None and not self.arch_pinned:
            self._arch = hardware.get_arch(own).name


_PACKAGE_DIR = str(Path(__file__).resolve().parents[1])


def _user_frame(exc: BaseException) -> traceback.FrameSummary | None:
    """The innermost frame of the traceback outside smemviz: the builder's own
    line that made the failing call, not the check inside smemviz that refused it."""
    frames = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ else []
    # "<string>": code that dataclasses and the like generate, not a line anyone wrote
    outside = [
        f for f in frames if f.filename != "<string>" and not str(Path(f.filename).resolve()).startswith(_PACKAGE_DIR)
    ]
    chosen = outside or frames
    return chosen[-1] if chosen else None
