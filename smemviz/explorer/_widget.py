"""The explorer widget: controls, both maps, totals, usage table, exports.

A control change calls the builder again, turns its result into plans and
sends each map's changes to its existing ``FigureWidget`` as one batched
update (one message per map, SMEM first). A builder error or an
over-capacity layout is reported in the message area and the last good
layout stays on screen.

A layout solved from lifetimes also gets a "Lifetimes" tab (``_lifetimes``);
while that tab is open its maps are updated once per change, right after the
byte map has been sent (the map being moved is drawn first), and not again
with the text panels; a hidden tab is drawn when opened. A layout with an
ordering to show (a captured kernel's model, or a declared plan's hand-overs)
gets an "Ordering" tab (``_ordering``): the pipeline diagram, every alias with
its edge, and the ordering findings.

Inside a running kernel the text panels (totals, usage table) follow the maps
after ``PANEL_DELAY_S``: the browser redraws the maps first instead of
rebuilding a large table in between, and a slider dragged through several
values rebuilds the table once. Without an event loop they update at once.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import ipywidgets as widgets

from .. import hardware
from ..figures import smem_spec, tmem_spec
from ..layout._plan import LayoutPlan
from ..sources._inputs import LayoutPair
from ._banks import BankView
from ._controls import make_controls
from ._exports import export_row
from ._fit_width import EXPLORER_CLASS, make_fitter
from ._history import Attempt, history_html, option_labels
from ._inputs import Plans
from ._lifetimes import LifetimeView, both_solved, lifetime_plan
from ._ordering import OrderingView
from ._panels import TABLE_CSS, key_html, message_html, summary_html, tables_html
from ._state import ExplorerState, Outcome, is_builder
from ._sync import LiveFigure
from ._tabs import NamedTabs

__all__ = ["Explorer", "explore", "TABS"]

ALL_PHASES = "all phases"
MIN_WIDTH = 300  # narrower reports (a collapsed output) leave the maps alone
WIDGET_MARGIN = 8  # px between the explorer's edge and a map's (ipywidgets margins)
TAB_INSET = 34  # px the tab panel's border and padding take from a figure in a tab
PANEL_DELAY_S = 0.2  # about one map redraw in the browser
_EMPTY_SMEM = LayoutPlan("smem", ())
_EMPTY_TMEM = LayoutPlan("tmem", ())

USAGE_TAB, BANKS_TAB, TRIED_TAB, LIFETIMES_TAB = "Usage table", "Banks", "Tried", "Lifetimes"
ORDERING_TAB = "Ordering"
# every tab an explorer can have, in the order shown; "Tried" needs a builder,
# "Lifetimes" a layout solved from lifetimes, "Ordering" a plan with an ordering model
# (a captured kernel's) or a declared plan whose hand-overs need edges
TABS = (USAGE_TAB, BANKS_TAB, TRIED_TAB, LIFETIMES_TAB, ORDERING_TAB)


class Explorer(widgets.VBox):
    """An interactive view of one SMEM and/or TMEM layout.

    ``target`` is a plan, an allocator, an (SMEM, TMEM) pair, or a builder
    function called with the control values (``controls`` as
    ``ipywidgets.interact`` takes them) that returns one of those. What is
    shown lives in :attr:`state` (an :class:`~smemviz.explorer.ExplorerState`);
    this widget draws it.
    """

    def __init__(
        self,
        target: Any,
        *,
        arch: Any = None,
        controls: dict[str, Any] | None = None,
        run: Any = None,
        measured: Any = None,
    ) -> None:
        self.controls: dict[str, Any] = {}
        fixed: dict[str, Any] = {}
        if is_builder(target):
            self.controls, fixed = make_controls(target, dict(controls or {}))
        elif controls:
            raise TypeError(f"controls {sorted(controls)} need a builder function; got a {type(target).__name__}")
        self.state = ExplorerState(target, arch=arch, fixed=fixed)
        self._busy = False
        self._initial_values: dict[str, Any] = {k: w.value for k, w in self.controls.items()}
        self._batch = False  # several controls set at once (reset): one rebuild at the end
        self._panels_timer: asyncio.TimerHandle | None = None
        self.lifetimes: LifetimeView | None = None  # the "Lifetimes" tab, made for the first layout with steps
        self.ordering: OrderingView | None = None  # the "Ordering" tab, made for the first layout with an ordering

        started = self.state.start(self._control_values())
        if measured is not None:  # Nsight Compute's counts of the first layout, on its map
            self.state.set_measured(measured)
        self.arch_selector = widgets.Dropdown(
            options=list(hardware.ARCHS),
            value=self.state.arch,
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
        first = self.state.analysed()
        smem_first = smem_spec(first.smem) if first.smem is not None else smem_spec(_EMPTY_SMEM, self.state.arch)
        self._smem_live = LiveFigure(smem_first, legend=False)
        self._tmem_live = LiveFigure(tmem_spec(first.tmem or _EMPTY_TMEM), legend=False)
        self.banks = BankView()  # the "Banks" tab: a region's access on the 32 banks, the swizzle toggled live
        self.smem_widget = self._smem_live.widget
        self.tmem_widget = self._tmem_live.widget
        self.bank_widget = self.banks.grid  # the bank picture (HTML)
        self.table = widgets.HTML()
        self.history_table = widgets.HTML()
        pages: dict[str, Any] = {
            USAGE_TAB: widgets.Box([self.table], layout=widgets.Layout(width="100%")),
            BANKS_TAB: self.banks,
        }
        if self.state.builder is not None:
            pages[TRIED_TAB] = widgets.Box([self.history_table], layout=widgets.Layout(width="100%"))
        self._tabs = NamedTabs(pages)
        self.details = self._tabs.widget
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
                *([self.reset_button] if self.state.builder is not None else []),
                self.arch_selector,
                self.phase_selector,
            ],
            layout=widgets.Layout(flex_flow="row wrap", align_items="center"),
        )
        # column boxes stretch the figures to the full width, which the fitter
        # then hands to plotly once the maps are on the page
        # each key lists what its map draws now (set with every layout)
        self.smem_key = widgets.HTML(key_html("smem", first.smem.plan if first.smem is not None else None))
        self.tmem_key = widgets.HTML(key_html("tmem", first.tmem.plan if first.tmem is not None else None))
        self._smem_box = widgets.VBox([self.smem_widget, self.smem_key], layout=widgets.Layout(width="100%"))
        self._tmem_box = widgets.VBox([self.tmem_widget, self.tmem_key], layout=widgets.Layout(width="100%"))
        self._fitter = make_fitter()
        # the run action (compile, launch, measure the controls on screen), when a runner is given
        self.run_panel = _run_panel(run, lambda: self.values, self.controls, self.show_measured)
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

        self._show(started)
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
        return self.state.arch

    @property
    def values(self) -> dict[str, Any]:
        """The builder arguments the controls give now."""
        return {**self.state.fixed, **self._control_values()}

    @property
    def plan(self) -> LayoutPlan | None:
        """The layout on screen: the SMEM plan (judged against the chosen arch), or
        the TMEM plan of a layout without SMEM (both: :attr:`smem_plan`, :attr:`tmem_plan`)."""
        return self.state.plan

    @property
    def smem_plan(self) -> LayoutPlan | None:
        """The SMEM plan the builder (or the caller) gave, as built."""
        return self.state.smem_plan

    @property
    def tmem_plan(self) -> LayoutPlan | None:
        return self.state.tmem_plan

    @property
    def last_error(self) -> str | None:
        """The builder's error, or the capacity error, of the last change; ``None`` when it fit."""
        return self.state.last_error

    @property
    def last_fit(self) -> tuple[dict[str, Any], Plans] | None:
        """The builder arguments and plans of the last layout that fit."""
        return self.state.last_fit

    @property
    def history(self) -> list[Attempt]:
        """Builder calls, oldest first (see the "Tried" tab)."""
        return self.state.history

    @property
    def tab_names(self) -> tuple[str, ...]:
        """The tabs offered now, in order (a subset of :data:`TABS`)."""
        return self._tabs.names

    @property
    def open_tab(self) -> str | None:
        """The name of the tab open now."""
        return self._tabs.open

    def show_tab(self, name: str) -> None:
        """Open the tab called ``name`` ("Usage table", "Banks", "Tried", "Lifetimes", "Ordering")."""
        self._tabs.show(name)

    def __smemviz_layout__(self, arch: str | None = None) -> LayoutPair:
        """The layout on screen, so ``smemviz.export(explorer, path)`` writes what is shown."""
        return LayoutPair(self.smem_plan, self.tmem_plan, arch=arch or self.arch)

    def show_lifetimes(self, step: int | str | None = None) -> None:
        """Open the Lifetimes tab (a layout solved from lifetimes has one) and
        choose ``step`` (a name or an index) when given."""
        if self.lifetimes is None or LIFETIMES_TAB not in self._tabs.names:
            raise ValueError("this layout was not solved from lifetimes (steps= and live=): it has no Lifetimes tab")
        self.show_tab(LIFETIMES_TAB)
        if step is not None:
            self.lifetimes.select_step(step)

    def show_banks(self, region: str | None = None, access: int | None = None, swizzle: str | None = None) -> None:
        """Open the Banks tab on ``region``'s ``access``-th access (default: the region's access
        picked, at first the one lint warns about), drawn with ``swizzle`` ("declared", "none",
        "32B", "64B", "128B") when given."""
        self.show_tab(BANKS_TAB)
        self._refresh_details()
        self.banks.pick(region, access, swizzle)

    def show_measured(self, measured: Any) -> None:
        """Draw Nsight Compute's counts of a profiled launch (``smemviz.read_ncu``'s result) on the
        layout on screen: the byte map's strip, its labels and the Banks tab show measured beside
        predicted until the layout changes; ``None`` takes them away."""
        self.state.set_measured(measured)
        self._render()

    @property
    def measured(self) -> tuple[Any, ...]:
        """The measured segments shown now (see :meth:`show_measured`)."""
        return self.state.measured

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
        self._show(self.state.apply(self._control_values()))

    # -- showing the state ---------------------------------------------------------

    def _control_values(self) -> dict[str, Any]:
        return {k: w.value for k, w in self.controls.items()}

    def _show(self, outcome: Outcome) -> None:
        """Bring the widgets up to the state after a change: the maps (unless a
        builder error kept the last layout), the Tried tab and the message area."""
        self._tabs.stale.add(TRIED_TAB)
        self._follow_state_arch()
        if outcome.drawn:
            self._render()
        else:  # no render follows a failed build: bring the open tab up to date now
            self._refresh_details()
        self._say(outcome.message, "error", note=outcome.note)

    def _follow_state_arch(self) -> None:
        """Show the arch the state judges against (a plan's own, until one is picked)."""
        if self.arch_selector.value != self.state.arch:
            self._busy = True
            try:
                self.arch_selector.value = self.state.arch
            finally:
                self._busy = False

    # -- drawing -----------------------------------------------------------------

    def _render(self) -> None:
        analysis = self.state.analysed()
        smem, tmem = analysis.plans
        self._sync_phase_options()
        sel = self.phase_selector.value
        hl_smem = (sel[1], sel[2]) if sel and sel[0] == "smem" else None
        hl_tmem = (sel[1], sel[2]) if sel and sel[0] == "tmem" else None
        # a FigureWidget's ``layout`` is plotly's, so its box is what hides
        self._smem_box.layout.display = None if smem is not None else "none"
        self._tmem_box.layout.display = None if tmem is not None else "none"
        # the maps read the analysis on screen: nothing is analysed again; each shows the aliases
        # of its memory, from whichever plan carries the kernel's ordering model
        if analysis.smem is not None:
            self._smem_live.show(smem_spec(analysis.smem, None, hl_smem, ordering_from=analysis.tmem))
        if analysis.tmem is not None:
            self._tmem_live.show(tmem_spec(analysis.tmem, hl_tmem, ordering_from=analysis.smem))
        self._tabs.stale = set(TABS)
        # the byte map has been sent: an open Lifetimes tab redraws now (once: it is then not
        # stale, so the text panels that follow leave it alone), a hidden one when opened
        self._sync_lifetimes(smem, tmem)
        self._sync_ordering()
        self._schedule_panels()

    def _sync_lifetimes(self, smem: LayoutPlan | None, tmem: LayoutPlan | None) -> None:
        """Offer the Lifetimes tab while the layout was solved from lifetimes;
        while it is open, redraw it right after the maps (not later, with the text panels)."""
        plan = lifetime_plan(smem, tmem, self.lifetimes.memory if self.lifetimes is not None else "smem")
        if plan is None:
            self._tabs.withdraw(LIFETIMES_TAB)
            return
        allocator = self.state.declared.get(plan.memory)
        if self.lifetimes is None:
            self.lifetimes = LifetimeView(plan, self.arch, allocator)
            self.lifetimes.on_memory = lambda: self._sync_lifetimes(*self.state.plans)
            if self._fitter is not None and self._fitter.width >= MIN_WIDTH:
                self.lifetimes.set_width(int(self._fitter.width) - WIDGET_MARGIN - TAB_INSET)
        self.lifetimes.offer_memories(both_solved(smem, tmem))
        self._tabs.offer(LIFETIMES_TAB, self.lifetimes)
        if self.open_tab == LIFETIMES_TAB:
            self.lifetimes.show(plan, self.arch, allocator)
            self._tabs.stale.discard(LIFETIMES_TAB)
        else:
            self._tabs.stale.add(LIFETIMES_TAB)

    def _sync_ordering(self) -> None:
        """Offer the Ordering tab while the layout on screen has an ordering to show; it is
        drawn when open (stale until then, like every tab)."""
        if not self.state.analysed().ordered:
            self._tabs.withdraw(ORDERING_TAB)
            return
        if self.ordering is None:
            self.ordering = OrderingView()
            if self._fitter is not None and self._fitter.width >= MIN_WIDTH:
                self.ordering.set_width(int(self._fitter.width) - WIDGET_MARGIN - TAB_INSET)
        self._tabs.offer(ORDERING_TAB, self.ordering)

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
        smem, tmem = self.state.plans
        # each map's key follows its map with the text panels (a changed key is rarely needed at once)
        if smem is not None:
            _set_html(self.smem_key, key_html("smem", smem))
        if tmem is not None:
            _set_html(self.tmem_key, key_html("tmem", tmem))
        self.summary.value = summary_html(self.state.analysed())
        self._refresh_details()

    def _refresh_details(self) -> None:
        """Redraw the open tab if it is stale; the hidden ones wait until opened."""
        tab = self.open_tab
        if tab is None or tab not in self._tabs.stale:
            return
        smem, tmem = self.state.plans
        if tab == LIFETIMES_TAB:
            plan = lifetime_plan(smem, tmem, self.lifetimes.memory if self.lifetimes is not None else "smem")
            if self.lifetimes is not None and plan is not None:
                self.lifetimes.show(plan, self.arch, self.state.declared.get(plan.memory))
        elif tab == TRIED_TAB:
            labels = {name: option_labels(w) for name, w in self.controls.items()}
            self.history_table.value = history_html(self.history, labels)
        elif tab == USAGE_TAB:
            self.table.value = tables_html(smem, tmem)
        elif tab == ORDERING_TAB:
            if self.ordering is not None:
                self.ordering.show(self.state.analysed().ordered)
        else:
            self.banks.show(self.state.analysed().smem)
        self._tabs.stale.discard(tab)

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
        self.state.choose_arch(change["new"])
        if self.state.builder is not None:
            self.refresh()  # the builder's layout may fit the new arch, or stop fitting
            if self.last_error is not None:
                self._render()  # the kept layout, against the new capacity line
            return
        self._render()
        self._say(self.state.capacity_message())

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
        if self.ordering is not None:
            self.ordering.set_width(width - WIDGET_MARGIN - TAB_INSET)

    # -- exports -------------------------------------------------------------------

    def _export_target(self) -> Any:
        smem, tmem = self.state.plans
        if smem is not None and tmem is not None:
            return smem, tmem
        return smem if smem is not None else tmem


def _set_html(widget: Any, value: str) -> None:
    """Set an HTML widget's text only when it changed (an unchanged one sends nothing)."""
    if widget.value != value:
        widget.value = value


def _run_panel(runner: Any, values: Any, controls: dict[str, Any], on_measured: Any) -> Any:
    if runner is None:
        return None
    from ._run import RunPanel

    return RunPanel(runner, values, controls=controls, on_measured=on_measured)


def _warm_static_export() -> None:
    """In a Jupyter kernel, start the static-export browser now, in the
    background: the explorer's SVG/PNG/PDF buttons then answer at once."""
    try:
        from .._export._static import in_jupyter_kernel, warm_renderer
    except ImportError:  # exports not installed: the buttons say so when pressed
        return
    if in_jupyter_kernel():
        warm_renderer()


def explore(target: Any, /, arch: Any = None, run: Any = None, measured: Any = None, **controls: Any) -> Explorer:
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
    ``measured`` (``smemviz.read_ncu``'s result for the kernel shown) draws Nsight Compute's
    counts beside the prediction, on the byte map and in the Banks tab.
    """
    if arch is not None and _takes_arch(target) and "arch" not in controls:
        # the builder's own ``arch``: a list or a widget is its control, one name a fixed value
        if isinstance(arch, (list, tuple, widgets.Widget)):
            controls["arch"], arch = arch, None
        else:
            controls["arch"] = widgets.fixed(arch)
    return Explorer(target, arch=arch, controls=controls, run=run, measured=measured)


def _takes_arch(target: Any) -> bool:
    if isinstance(target, (LayoutPlan, tuple, list)) or not callable(target) or hasattr(target, "compute_layout"):
        return False
    try:
        return "arch" in inspect.signature(target).parameters
    except (TypeError, ValueError):
        return False
