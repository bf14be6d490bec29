"""The explorer widget: controls, both maps, totals, usage table, exports.

A control change calls the builder again, turns its result into plans and
sends each map's changes to its existing ``FigureWidget`` as one batched
update (one message per map, SMEM first). A builder error or an
over-capacity layout is reported in the message area and the last good
layout stays on screen.

A layout solved from lifetimes also gets a "Lifetimes" tab (``_lifetimes``);
while that tab is open its maps are updated first, before the byte map.

Inside a running kernel the text panels (totals, usage table) follow the maps
after ``PANEL_DELAY_S``: the browser redraws the maps first instead of
rebuilding a large table in between, and a slider dragged through several
values rebuilds the table once. Without an event loop they update at once.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ipywidgets as widgets

from .. import hardware
from .._errors import CapacityError
from ..figures import smem_spec, tmem_spec
from ..layout._allocator import capacity_checks_deferred
from ..layout._plan import LayoutPlan
from ..sources._inputs import LayoutPair
from ..sources._struct import is_cute_struct
from ._banks import BankView
from ._controls import make_controls
from ._exports import export_row
from ._fit import EXPLORER_CLASS, make_fitter
from ._history import MAX_HISTORY, Attempt, history_html
from ._inputs import Plans, builder_plans, to_plans
from ._lifetimes import LifetimeView, both_solved, declared_allocators, lifetime_plan
from ._panels import TABLE_CSS, key_html, message_html, summary_html, tables_html
from ._sync import LiveFigure

__all__ = ["Explorer", "explore"]

ALL_PHASES = "all phases"
MIN_WIDTH = 300  # narrower reports (a collapsed output) leave the maps alone
WIDGET_MARGIN = 8  # px between the explorer's edge and a map's (ipywidgets margins)
TAB_INSET = 34  # px the tab panel's border and padding take from a figure in a tab
PANEL_DELAY_S = 0.2  # about one map redraw in the browser
_EMPTY_SMEM = LayoutPlan("smem", ())
_EMPTY_TMEM = LayoutPlan("tmem", ())


def _default_arch(plans: Plans) -> str:
    smem, tmem = plans
    for plan in plans:
        if plan is not None and plan.arch:
            return plan.arch
    found = hardware.default_arch("tmem" if tmem is not None else "smem")
    return (found or hardware.get_arch(hardware.VIEW_FALLBACK_ARCH)).name  # the arch menu needs a choice


class Explorer(widgets.VBox):
    """An interactive view of one SMEM and/or TMEM layout.

    ``target`` is a plan, an allocator, an (SMEM, TMEM) pair, or a builder
    function called with the control values (``controls`` as
    ``ipywidgets.interact`` takes them) that returns one of those.
    """

    def __init__(
        self, target: Any, *, arch: Any = None, controls: dict[str, Any] | None = None, run: Any = None
    ) -> None:
        self._builder: Callable[..., Any] | None = None
        self.controls: dict[str, Any] = {}
        self._fixed: dict[str, Any] = {}
        if (
            callable(target)
            and not isinstance(target, (LayoutPlan, tuple, list))
            and not hasattr(target, "compute_layout")
            and not is_cute_struct(target)
        ):
            self._builder = target
            self.controls, self._fixed = make_controls(target, dict(controls or {}))
        elif controls:
            raise TypeError(f"controls {sorted(controls)} need a builder function; got a {type(target).__name__}")

        self.smem_plan: LayoutPlan | None = None
        self.tmem_plan: LayoutPlan | None = None
        self.last_error: str | None = None
        self.last_fit: tuple[dict[str, Any], Plans] | None = None  # builder arguments and plans
        self._busy = False
        self._arch_pinned = arch is not None  # chosen by the caller or in the selector, not by a plan
        self._stale_tabs = {0: True, 1: True, 2: True}
        self.history: list[Attempt] = []  # builder calls, oldest first (see the "Tried" tab)
        self._initial_values: dict[str, Any] = {k: w.value for k, w in self.controls.items()}
        self._batch = False  # several controls set at once (reset): one rebuild at the end
        self._panels_timer: asyncio.TimerHandle | None = None
        self._declared: dict[str, Any] = {} if self._builder else declared_allocators(target)
        self.lifetimes: LifetimeView | None = None  # the "Lifetimes" tab, made for the first layout with steps

        plans = self._build() if self._builder else to_plans(target)
        arch_name = hardware.get_arch(arch).name if arch is not None else _default_arch(plans)
        self.arch_selector = widgets.Dropdown(
            options=list(hardware.ARCHS),
            value=arch_name,
            description="arch",
            layout=widgets.Layout(width="180px"),
        )
        # index, not value: a Dropdown whose value is None shows no selection at all
        self.phase_selector = widgets.Dropdown(
            options=[(ALL_PHASES, None)],
            index=0,
            description="highlight",
            layout=widgets.Layout(width="280px"),
        )
        self.message = widgets.HTML()
        self.summary = widgets.HTML()
        # built from the first layout, so the widgets' initial state is complete
        # before any browser sees them; later changes travel as updates
        first_smem, first_tmem = plans if plans != (None, None) else (None, None)
        self._smem_live = LiveFigure(smem_spec(first_smem or _EMPTY_SMEM, arch_name), legend=False)
        self._tmem_live = LiveFigure(tmem_spec(first_tmem or _EMPTY_TMEM), legend=False)
        self.banks = BankView()  # the "Banks" tab: a region's access on the 32 banks, the swizzle toggled live
        self.smem_widget = self._smem_live.widget
        self.tmem_widget = self._tmem_live.widget
        self.bank_widget = self.banks.grid  # the bank picture (HTML)
        self.table = widgets.HTML()
        table_box = widgets.Box([self.table], layout=widgets.Layout(width="100%"))
        self.history_table = widgets.HTML()
        tabs = [table_box, self.banks]
        if self._builder is not None:
            tabs.append(widgets.Box([self.history_table], layout=widgets.Layout(width="100%")))
        self.details = widgets.Tab(tabs)
        self.details.set_title(0, "Usage table")
        self.details.set_title(1, "Banks")
        if self._builder is not None:
            self.details.set_title(2, "Tried")
        self._fixed_tabs = len(tabs)  # the Lifetimes tab, when shown, comes after these
        self.reset_button = widgets.Button(
            description="reset", tooltip="put every control back where it started", layout=widgets.Layout(width="70px")
        )
        self.reset_button.on_click(lambda _: self.reset())
        self.export_path, self.export_buttons, self.export_offline, export_box = export_row(
            self._export_target, self._say
        )

        self.control_bar = bar = widgets.HBox(
            [
                *self.controls.values(),
                *([self.reset_button] if self._builder is not None else []),
                self.arch_selector,
                self.phase_selector,
            ],
            layout=widgets.Layout(flex_flow="row wrap", align_items="center"),
        )
        # column boxes stretch the figures to the full width, which the fitter
        # then hands to plotly once the maps are on the page
        self._smem_box = widgets.VBox(
            [self.smem_widget, widgets.HTML(key_html("smem"))], layout=widgets.Layout(width="100%")
        )
        self._tmem_box = widgets.VBox(
            [self.tmem_widget, widgets.HTML(key_html("tmem"))], layout=widgets.Layout(width="100%")
        )
        self._fitter = make_fitter()
        # the run action (compile, launch, measure the current controls), when a runner is given
        self.run_panel = _run_panel(run, lambda: self.values)
        super().__init__(
            [
                widgets.HTML(TABLE_CSS),
                bar,
                self.message,
                self.summary,
                self._smem_box,
                self._tmem_box,
                *([self.run_panel] if self.run_panel is not None else []),
                self.details,
                export_box,
                *([self._fitter] if self._fitter is not None else []),
            ]
        )
        self.add_class(EXPLORER_CLASS)

        self._accept(plans)
        for w in self.controls.values():
            w.observe(self._on_control, names="value")
        self.arch_selector.observe(self._on_arch, names="value")
        self.phase_selector.observe(self._on_phase, names="value")
        self.details.observe(self._on_tab, names="selected_index")
        if self._fitter is not None:
            self._fitter.observe(self._on_width, names="width")
        _warm_static_export()

    # -- public ------------------------------------------------------------------

    @property
    def arch(self) -> str:
        return self.arch_selector.value

    @property
    def values(self) -> dict[str, Any]:
        """The builder arguments the controls give now."""
        return {**self._fixed, **{k: w.value for k, w in self.controls.items()}}

    def __smemviz_layout__(self, arch: str | None = None) -> LayoutPair:
        """The layout on screen, so ``smemviz.export(explorer, path)`` writes what is shown."""
        return LayoutPair(self.smem_plan, self.tmem_plan, arch=arch or self.arch)

    def show_lifetimes(self, step: int | str | None = None) -> None:
        """Open the Lifetimes tab (a layout solved from lifetimes has one) and
        choose ``step`` (a name or an index) when given."""
        if self.lifetimes is None or self._lifetimes_index() is None:
            raise ValueError("this layout was not solved from lifetimes (steps= and live=): it has no Lifetimes tab")
        self.details.selected_index = self._fixed_tabs
        if step is not None:
            self.lifetimes.select_step(step)

    def show_banks(self, region: str | None = None, access: int = 0, swizzle: str | None = None) -> None:
        """Open the Banks tab on ``region``'s ``access``-th access (default: the first declared),
        drawn with ``swizzle`` ("declared", "none", "32B", "64B", "128B") when given."""
        self.details.selected_index = 1
        self._refresh_details()
        self.banks.pick(region, access, swizzle)

    def reset(self) -> None:
        """Put every control back where it started, then rebuild once."""
        self._batch = True
        try:
            for key, value in self._initial_values.items():
                self.controls[key].value = value
        finally:
            self._batch = False
        self.refresh()

    def refresh(self) -> None:
        """Call the builder again with the current control values."""
        if self._builder is not None:
            self._accept(self._build())
        else:
            self._render()

    # -- building ----------------------------------------------------------------

    def _build(self) -> Plans:
        """Plans from the builder, or ``(None, None)`` with ``last_error`` set."""
        assert self._builder is not None
        args = self.values
        try:
            with capacity_checks_deferred():  # an over-capacity layout is drawn, then reported
                result = self._builder(**args)
                plans = builder_plans(result)
            self._declared = declared_allocators(result)
            return plans
        except Exception as exc:  # the builder is user code: report, never raise into the widget
            where = ", ".join(f"{k}={v!r}" for k, v in args.items())
            frame = _user_frame(exc)
            at = f" (at {frame.name}, line {frame.lineno})" if frame else ""
            self.last_error = (
                f"{type(exc).__name__}: {exc}{at}\nwith {where}" if where else f"{type(exc).__name__}: {exc}{at}"
            )
            return None, None

    def _over_capacity(self, plans: Plans) -> str | None:
        problems = []
        for plan in plans:
            if plan is None:
                continue
            cap = plan.capacity(self.arch if plan.memory == "smem" else hardware.default_arch("tmem"))
            if not cap.fits:
                problems.append(cap.message())
        return "\n".join(problems) or None

    def _accept(self, plans: Plans) -> None:
        """Show ``plans``, over capacity or not; a builder error keeps the last layout that built.

        An over-capacity layout is drawn as asked (the overflow shaded past the
        capacity line, the summary in the error colour); the last layout that
        fit is only named in a note, never drawn in its place.
        """
        if plans == (None, None):
            self._record(plans)
            self._say(
                f"{self.last_error}\nShowing the last layout that built."
                if self.smem_plan or self.tmem_plan
                else self.last_error or "no layout",
                "error",
            )
            return
        self.smem_plan, self.tmem_plan = plans
        self._follow_plan_arch(plans)
        self._record(plans)
        self._render()
        problem = self._over_capacity(plans)
        if problem is None:
            self.last_error = None
            self.last_fit = (self.values, plans) if self._builder is not None else None
            self._say("")
            return
        self.last_error = f"{CapacityError.__name__}: {problem}"
        self._say(self.last_error, "error", note=self._last_fit_note())

    def _record(self, plans: Plans) -> None:
        """Add a builder call to :attr:`history` (not a repeat of the one before)."""
        if self._builder is None:
            return
        smem, tmem = plans
        failed = plans == (None, None)
        arch = self.arch
        fits = None if failed else self._over_capacity(plans) is None
        attempt = Attempt(
            tuple(self.values.items()),
            smem.total if smem is not None else None,
            tmem.data_total if tmem is not None else None,
            fits,
            arch,
        )
        if self.history and self.history[-1] == attempt:
            return
        self.history.append(attempt)
        del self.history[:-MAX_HISTORY]
        self._stale_tabs[2] = True
        if failed:  # no render follows a failed build: bring the open tab up to date now
            self._refresh_details()

    def _follow_plan_arch(self, plans: Plans) -> None:
        """Until an arch is chosen, show each plan against the arch it was built for."""
        if self._arch_pinned or not hasattr(self, "arch_selector"):
            return
        own = next((p.arch for p in plans if p is not None and p.arch), None)
        if own is None:
            return
        name = hardware.get_arch(own).name
        if name != self.arch_selector.value:
            self._busy = True
            try:
                self.arch_selector.value = name
            finally:
                self._busy = False

    def _last_fit_note(self) -> str:
        if self.last_fit is None:
            return ""
        values, (smem, tmem) = self.last_fit
        where = ", ".join(f"{k}={v!r}" for k, v in values.items())
        size = f" ({smem.total:,} B of SMEM)" if smem is not None else ""
        return f"Last layout that fit: {where}{size}."

    # -- drawing -----------------------------------------------------------------

    def _with_arch(self, plan: LayoutPlan | None) -> LayoutPlan | None:
        if plan is None or plan.memory != "smem" or plan.arch == self.arch:
            return plan
        return dataclasses.replace(plan, arch=self.arch)

    def _render(self) -> None:
        smem, tmem = self._with_arch(self.smem_plan), self.tmem_plan
        self._sync_phase_options()
        sel = self.phase_selector.value
        hl_smem = (sel[1], sel[2]) if sel and sel[0] == "smem" else None
        hl_tmem = (sel[1], sel[2]) if sel and sel[0] == "tmem" else None
        # the open Lifetimes tab is what is being looked at: its maps go first
        lifetimes_first = self._lifetimes_index() is not None and self.details.selected_index == self._fixed_tabs
        if lifetimes_first:
            self._sync_lifetimes(smem, tmem)
        # a FigureWidget's ``layout`` is plotly's, so its box is what hides
        self._smem_box.layout.display = None if smem is not None else "none"
        self._tmem_box.layout.display = None if tmem is not None else "none"
        if smem is not None:
            self._smem_live.show(smem_spec(smem, self.arch, hl_smem))
        if tmem is not None:
            self._tmem_live.show(tmem_spec(tmem, hl_tmem))
        self._stale_tabs = {0: True, 1: True, 2: True}
        if not lifetimes_first:
            self._sync_lifetimes(smem, tmem)
        self._schedule_panels()

    def _sync_lifetimes(self, smem: LayoutPlan | None, tmem: LayoutPlan | None) -> None:
        """Offer the Lifetimes tab while the layout was solved from lifetimes;
        while it is open, redraw it with the maps (not after them, as the text panels)."""
        plan = lifetime_plan(smem, tmem, self.lifetimes.memory if self.lifetimes is not None else "smem")
        if plan is None:
            if self._lifetimes_index() is not None:
                if self.details.selected_index == self._fixed_tabs:
                    self.details.selected_index = 0
                self.details.children = self.details.children[: self._fixed_tabs]
            return
        allocator = self._declared.get(plan.memory)
        if self.lifetimes is None:
            self.lifetimes = LifetimeView(plan, self.arch, allocator)
            self.lifetimes.on_memory = lambda: self._sync_lifetimes(self._with_arch(self.smem_plan), self.tmem_plan)
            if self._fitter is not None and self._fitter.width >= MIN_WIDTH:
                self.lifetimes.set_width(int(self._fitter.width) - WIDGET_MARGIN - TAB_INSET)
        self.lifetimes.offer_memories(both_solved(smem, tmem))
        if self._lifetimes_index() is None:
            self.details.children = (*self.details.children, self.lifetimes)
            self.details.set_title(self._fixed_tabs, "Lifetimes")
        if self.details.selected_index == self._fixed_tabs:
            self.lifetimes.show(plan, self.arch, allocator)
        self._stale_tabs[self._fixed_tabs] = self.details.selected_index != self._fixed_tabs

    def _lifetimes_index(self) -> int | None:
        return self._fixed_tabs if len(self.details.children) > self._fixed_tabs else None

    def _schedule_panels(self) -> None:
        """Update the text panels now, or after the maps where a kernel's loop runs."""
        if self._panels_timer is not None:
            self._panels_timer.cancel()
            self._panels_timer = None
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._update_panels()
            return
        self._panels_timer = loop.call_later(PANEL_DELAY_S, self._update_panels)

    def _update_panels(self) -> None:
        self._panels_timer = None
        self.summary.value = summary_html(self._with_arch(self.smem_plan), self.tmem_plan)
        self._refresh_details()

    def _refresh_details(self) -> None:
        """Redraw the open tab if it is stale; the hidden one waits until opened."""
        tab = self.details.selected_index
        if tab is None or not self._stale_tabs.get(tab):
            return
        smem, tmem = self._with_arch(self.smem_plan), self.tmem_plan
        if tab == self._lifetimes_index():
            plan = lifetime_plan(smem, tmem, self.lifetimes.memory if self.lifetimes is not None else "smem")
            if self.lifetimes is not None and plan is not None:
                self.lifetimes.show(plan, self.arch, self._declared.get(plan.memory))
        elif tab == 2:
            self.history_table.value = history_html(self.history)
        elif tab == 0:
            self.table.value = tables_html(smem, tmem)
        else:
            self.banks.show(smem)
        self._stale_tabs[tab] = False

    def _sync_phase_options(self) -> None:
        options: list[tuple[str, Any]] = [(ALL_PHASES, None)]
        for plan in (self.smem_plan, self.tmem_plan):
            if plan is None:
                continue
            what = plan.memory.upper()
            for g in plan.groups:
                for p in range(len(g.phase_sizes)):
                    options.append((f"{what} group {g.index + 1} · phase {p + 1}", (plan.memory, g.index, p)))
        if [v for _, v in options] != [v for _, v in self.phase_selector.options]:
            keep = self.phase_selector.value
            self._busy = True
            try:
                self.phase_selector.options = options
                self._show_phase(keep if keep in [v for _, v in options] else None)
            finally:
                self._busy = False

    def _say(self, text: str, level: str = "error", note: str = "") -> None:
        self.message.value = message_html(text, level, note)

    # -- callbacks -----------------------------------------------------------------

    def _on_control(self, change: dict[str, Any]) -> None:
        if not self._batch:
            self.refresh()

    def _on_arch(self, change: dict[str, Any]) -> None:
        if self._busy:
            return
        self._arch_pinned = True
        if self._builder is not None:
            self.refresh()  # the builder's layout may fit the new arch, or stop fitting
            if self.last_error is not None:
                self._render()  # the kept layout, against the new capacity line
            return
        self._render()
        problem = self._over_capacity((self.smem_plan, self.tmem_plan))
        self._say(f"{CapacityError.__name__}: {problem}" if problem else "")

    def _show_phase(self, value: Any) -> None:
        """Select ``value``; ``None`` selects "all phases" by index, so the box is never blank."""
        if value is None:
            self.phase_selector.index = 0
        else:
            self.phase_selector.value = value

    def _on_phase(self, change: dict[str, Any]) -> None:
        if change["new"] is None and self.phase_selector.index is None:
            busy, self._busy = self._busy, True
            try:
                self.phase_selector.index = 0
            finally:
                self._busy = busy
        if not self._busy:
            self._render()

    def _on_tab(self, change: dict[str, Any]) -> None:
        self._refresh_details()

    def _on_width(self, change: dict[str, Any]) -> None:
        """The explorer's width as the browser measured it: draw the maps at it."""
        width = int(change["new"])
        if width < MIN_WIDTH:
            return
        self._smem_live.set_width(width - WIDGET_MARGIN)
        self._tmem_live.set_width(width - WIDGET_MARGIN)
        if self.lifetimes is not None:
            self.lifetimes.set_width(width - WIDGET_MARGIN - TAB_INSET)

    # -- exports -------------------------------------------------------------------

    def _export_target(self) -> Any:
        smem, tmem = self._with_arch(self.smem_plan), self.tmem_plan
        if smem is not None and tmem is not None:
            return smem, tmem
        return smem if smem is not None else tmem


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


def _run_panel(runner: Any, values: Any) -> Any:
    if runner is None:
        return None
    from ._run import RunPanel

    return RunPanel(runner, values)


def _warm_static_export() -> None:
    """In a Jupyter kernel, start the static-export browser now, in the
    background: the explorer's SVG/PNG/PDF buttons then answer at once."""
    try:
        from .._export._static import in_jupyter_kernel, warm_renderer
    except ImportError:  # exports not installed: the buttons say so when pressed
        return
    if in_jupyter_kernel():
        warm_renderer()


def explore(target: Any, /, arch: Any = None, run: Any = None, **controls: Any) -> Explorer:
    """An explorer widget for a layout or a layout builder.

    ``explore(plan_or_allocator)``, ``explore((smem, tmem))``, or
    ``explore(build, stages=(1, 8), tile_n=[64, 128, 256], dtype=["bf16", "f8e4m3"])``:
    tuples become sliders, lists dropdowns, as with ``ipywidgets.interact``.
    ``arch`` picks the architecture whose capacity line is drawn first; for
    a builder that takes ``arch`` itself it is also (a list: the control of)
    the builder's argument. Otherwise each plan is judged against the arch it
    was built for, until one is picked in the explorer.
    ``run`` (e.g. ``smemviz.kernel.gemm_runner()``) adds a "Run on GPU" action
    that measures the current controls and keeps a history of runs.
    """
    if arch is not None and _takes_arch(target) and "arch" not in controls:
        # the builder's own ``arch``: a list or a widget is its control, one name a fixed value
        if isinstance(arch, (list, tuple, widgets.Widget)):
            controls["arch"], arch = arch, None
        else:
            controls["arch"] = widgets.fixed(arch)
    return Explorer(target, arch=arch, controls=controls, run=run)


def _takes_arch(target: Any) -> bool:
    if isinstance(target, (LayoutPlan, tuple, list)) or not callable(target) or hasattr(target, "compute_layout"):
        return False
    try:
        return "arch" in inspect.signature(target).parameters
    except (TypeError, ValueError):
        return False
