"""The explorer's "Lifetimes" tab, for a layout solved from lifetimes.

Three live figures, each updated in place like the byte map: the lifetime map
(steps across, addresses up) with the chosen step outlined, the 1-D byte map
of what is live at that step, and, while "compare layouts" is on, the data
totals of the same declarations laid out as written, greedily and optimally.

Choosing a step (the slider, or a click on a step's column of live bytes
under the map) only redraws from the plan on screen: nothing is solved again.
The comparison lays the declarations out three times, so it is computed
only while shown, once per layout.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import ipywidgets as widgets

from ..figures._lifetime import STEP_WIDTH, comparison_spec, lifetime_spec
from ..figures._spec import FigureSpec
from ..figures._step import step_map_spec
from ..layout._allocator import _BaseAllocator, compare_layouts
from ..layout._plan import LayoutPlan
from ._exports import export_row
from ._inputs import declared_allocators
from ._panels import message_html
from ._sync import LiveFigure

__all__ = [
    "LifetimeView",
    "AS_BUILT",
    "step_spec",
    "marked_lifetime_spec",
    "with_lifetimes_of",
    "declared_allocators",
    "lifetime_plan",
    "both_solved",
]

AS_BUILT = "as built"
STEP_OUTLINE = "#1565c0"
REGIONS_TRACE = 0  # the lifetime map's rectangles: one bar per region and run of steps
GAPS_TRACE = 1  # the unused stretches: one bar per stretch and run of steps
PROFILE_TRACE = 2  # the live bytes: one bar per step


def lifetime_plan(smem: LayoutPlan | None, tmem: LayoutPlan | None, prefer: str = "smem") -> LayoutPlan | None:
    """The plan the tab shows: that of memory ``prefer`` ("smem" or "tmem")
    when it was solved from lifetimes, else the other's, else none."""
    order = (tmem, smem) if prefer == "tmem" else (smem, tmem)
    return next((p for p in order if p is not None and p.steps), None)


def both_solved(smem: LayoutPlan | None, tmem: LayoutPlan | None) -> bool:
    """Whether both memories were solved from lifetimes (the tab then offers a choice)."""
    return all(p is not None and bool(p.steps) for p in (smem, tmem))


def marked_lifetime_spec(plan: LayoutPlan, step: int, arch: Any = None) -> FigureSpec:
    """The lifetime map with ``step``'s column outlined (the first shape, so a
    new step changes two numbers of the figure)."""
    spec = lifetime_spec(plan, arch)
    outline = {
        "type": "rect",
        "xref": "x",
        "yref": "paper",
        "x0": step - 0.5,
        "x1": step + 0.5,
        "y0": 0,
        "y1": 1,
        "line": {"color": STEP_OUTLINE, "width": 2},
        "fillcolor": "rgba(0,0,0,0)",
        "layer": "above",
    }
    layout = {**spec.layout, "shapes": [outline, *spec.layout["shapes"]]}
    return FigureSpec(spec.traces, layout, {**spec.meta, "step": step})


def step_spec(plan: LayoutPlan, step: int, arch: Any = None) -> FigureSpec:
    """The byte (or column) map of what is live at ``step``, titled with the step
    (see :func:`smemviz.figures._step.step_map_spec`)."""
    return step_map_spec(plan, step, arch)


def with_lifetimes_of(plan: LayoutPlan, solved: LayoutPlan) -> LayoutPlan:
    """``plan`` (laid out without lifetimes: alias groups, or no sharing) drawn
    over ``solved``'s steps, each region live when its namesake is there, so
    its lifetime map can be set beside the solved one's."""
    if plan.steps:
        return plan
    live = {r.name: r.live for r in solved.regions}
    regions = tuple(replace(r, live=live.get(r.name), group=None, phase=None) for r in plan.regions)
    return replace(
        plan,
        regions=regions,
        groups=(),
        steps=solved.steps,
        lower_bound=solved.lower_bound,
        optimal=plan.data_total == solved.lower_bound,
        solver="as written",
    )


class LifetimeView(widgets.VBox):
    """The lifetime map, a step control with that step's byte map, and a
    comparison of layouts. :meth:`show` hands it the explorer's current plan."""

    def __init__(self, plan: LayoutPlan, arch: Any, allocator: _BaseAllocator | None = None) -> None:
        self.plan = plan  # the explorer's layout
        self.arch = arch
        self._allocator = allocator
        self._compared: dict[str, LayoutPlan] | None = None  # compare_layouts of the current declarations
        self._busy = False
        self.step_control = widgets.SelectionSlider(
            options=self._step_options(plan),
            index=0,
            description="step",
            continuous_update=True,
            layout=widgets.Layout(width="420px"),
        )
        self.compare_toggle = widgets.ToggleButton(
            value=False,
            description="compare layouts",
            tooltip="lay the same declarations out as written, greedily and optimally (solves them again)",
            layout=widgets.Layout(width="150px"),
        )
        # which memory's lifetimes, when both were solved from lifetimes (see offer_memories)
        self.memory_choice = widgets.ToggleButtons(
            options=[("SMEM", "smem"), ("TMEM", "tmem")], value=plan.memory, layout=widgets.Layout(display="none")
        )
        self.memory_choice.style.button_width = "60px"
        self.on_memory: Any = None  # called with no argument when the choice changes
        self.layout_choice = widgets.ToggleButtons(
            options=[AS_BUILT], value=AS_BUILT, layout=widgets.Layout(display="none")
        )
        self.layout_choice.style.button_width = "110px"
        self.note = widgets.HTML()
        self._map = LiveFigure(marked_lifetime_spec(plan, 0, arch), legend=False)
        self._step_maps = {plan.memory: LiveFigure(step_spec(plan, 0, arch), legend=False)}
        self._totals: LiveFigure | None = None
        self._compare_box = widgets.Box(layout=widgets.Layout(width="100%", display="none"))
        self._step_box = widgets.Box([self._step_maps[plan.memory].widget], layout=widgets.Layout(width="100%"))
        self.map_widget = self._map.widget
        bar = widgets.HBox(
            [self.memory_choice, self.step_control, self.compare_toggle, self.layout_choice],
            layout=widgets.Layout(flex_flow="row wrap", align_items="center"),
        )
        # the lifetime map drawn now (also a compared layout), as a diagram; JSON writes its plan
        self.export_path, self.export_buttons, _, export_box = export_row(
            lambda: self.shown,
            self._say,
            figure=lambda: lifetime_spec(self.shown, self.arch).to_figure(),
            stem="smemviz-lifetimes",
        )
        super().__init__(
            [bar, self.note, self._compare_box, self.map_widget, self._step_box, export_box],
            layout=widgets.Layout(width="100%"),
        )
        self.step_control.observe(self._on_step, names="value")
        self.compare_toggle.observe(self._on_compare, names="value")
        self.layout_choice.observe(self._on_choice, names="value")
        self.memory_choice.observe(self._on_memory, names="value")
        for trace in (REGIONS_TRACE, GAPS_TRACE, PROFILE_TRACE):
            self.map_widget.data[trace].on_click(self._on_click)

    def _say(self, text: str, level: str = "error") -> None:
        self.note.value = message_html(text, level)

    def _on_memory(self, change: dict[str, Any]) -> None:
        if self.on_memory is not None:
            self.on_memory()

    def offer_memories(self, both: bool) -> None:
        """Show the SMEM/TMEM choice only while both memories have lifetimes."""
        self.memory_choice.layout.display = None if both else "none"

    @property
    def memory(self) -> str:
        """The memory whose lifetimes the tab prefers to show ("smem" or "tmem")."""
        return str(self.memory_choice.value)

    # -- public ------------------------------------------------------------------

    @property
    def step(self) -> int:
        """The index of the chosen step."""
        return int(self.step_control.value)

    @property
    def shown(self) -> LayoutPlan:
        """The plan drawn now: the explorer's, or one of the compared layouts."""
        choice = self.layout_choice.value
        if choice == AS_BUILT or self._compared is None or choice not in self._compared:
            return self.plan
        other = self._compared[choice]
        return with_lifetimes_of(other, self._compared.get("optimal", self.plan))

    @property
    def step_widget(self) -> Any:
        """The byte map of the chosen step."""
        return self._step_maps[self.plan.memory].widget

    def show(self, plan: LayoutPlan, arch: Any, allocator: _BaseAllocator | None = None) -> None:
        """Draw ``plan`` (solved from lifetimes), keeping the chosen step by name."""
        if not plan.steps:
            raise ValueError("the lifetimes view needs a layout solved from lifetimes")
        if allocator is not self._allocator:  # new declarations: compare them again when asked
            self._compared = None
        self.plan, self.arch, self._allocator = plan, arch, allocator
        self._sync_steps(plan)
        if self.compare_toggle.value and self._compared is None:
            self._run_comparison()
        self._draw()

    def set_width(self, width: int) -> None:
        self._map.set_width(width)
        for live in self._step_maps.values():
            live.set_width(width)
        if self._totals is not None:
            self._totals.set_width(width)
        self._width = width

    _width: int | None = None

    def select_step(self, step: int | str) -> None:
        """Choose ``step`` (a name or an index) as the slider would."""
        self.step_control.value = self.plan.step_index(step)

    # -- drawing -----------------------------------------------------------------

    @staticmethod
    def _step_options(plan: LayoutPlan) -> list[tuple[str, int]]:
        # SelectionSlider labels must be unique; step names are (the allocator checks)
        return [(name, k) for k, name in enumerate(plan.steps)]

    def _sync_steps(self, plan: LayoutPlan) -> None:
        options = self._step_options(plan)
        if options == list(self.step_control.options):
            return
        old = self.step_control.label
        index = plan.steps.index(old) if old in plan.steps else min(self.step, len(options) - 1)
        self._busy = True
        try:
            self.step_control.options = options
            self.step_control.index = index
        finally:
            self._busy = False

    def _draw(self, step_first: bool = False) -> None:
        """Redraw the tab; ``step_first`` when only the step changed: the step's
        map is what was asked for, so its update goes out (and is drawn, the
        view draws one map per frame) before the lifetime map's moved outline."""
        plan, step = self.shown, self.step
        if not step_first:
            self._map.show(marked_lifetime_spec(plan, step, self.arch))
        live = self._step_maps.get(plan.memory)
        if live is None:  # the tab now shows the other memory: its map kind has other traces
            live = self._step_maps[plan.memory] = LiveFigure(step_spec(plan, step, self.arch), legend=False)
            if self._width is not None:
                live.set_width(self._width)
        else:
            live.show(step_spec(plan, step, self.arch))
        if self._step_box.children != (live.widget,):
            self._step_box.children = (live.widget,)
        if step_first:
            self._map.show(marked_lifetime_spec(plan, step, self.arch))
        if self._totals is not None and self._compared is not None:
            self._totals.show(comparison_spec(self._compared, self._choice_name()))

    def _choice_name(self) -> str | None:
        choice = self.layout_choice.value
        return choice if choice != AS_BUILT else None

    def _run_comparison(self) -> None:
        """Lay the declarations out three ways (once per layout) and offer each to draw."""
        if self._allocator is None:
            self._compared = None
            self.note.value = (
                "<span style='color:#546e7a;font-size:12px'>Comparing needs the declarations: "
                "explore an allocator, or a builder that returns one.</span>"
            )
            self._set_choices([AS_BUILT])
            return
        if self._compared is None:
            self._compared = compare_layouts(self._allocator)
        spec = comparison_spec(self._compared, self._choice_name())
        if self._totals is None:
            self._totals = LiveFigure(spec, legend=False)
            if self._width is not None:
                self._totals.set_width(self._width)
            self._compare_box.children = (self._totals.widget,)
        self.note.value = ""
        self._set_choices([AS_BUILT, *self._compared])

    def _set_choices(self, choices: list[str]) -> None:
        keep = self.layout_choice.value if self.layout_choice.value in choices else AS_BUILT
        self._busy = True
        try:
            if list(self.layout_choice.options) != choices:
                self.layout_choice.options = choices
            self.layout_choice.value = keep
        finally:
            self._busy = False
        shown = self.compare_toggle.value and len(choices) > 1
        self.layout_choice.layout.display = None if shown else "none"
        self._compare_box.layout.display = None if shown else "none"

    # -- callbacks -----------------------------------------------------------------

    def _on_step(self, change: dict[str, Any]) -> None:
        if not self._busy:
            self._draw(step_first=True)

    def _on_compare(self, change: dict[str, Any]) -> None:
        if change["new"]:
            self._run_comparison()
        else:
            self.note.value = ""
            self._set_choices(list(self.layout_choice.options))
            if self.layout_choice.value != AS_BUILT:
                self.layout_choice.value = AS_BUILT  # redraws the explorer's own layout
                return
        self._draw()

    def _on_choice(self, change: dict[str, Any]) -> None:
        if not self._busy:
            self._draw()

    def _on_click(self, trace: Any, points: Any, state: Any) -> None:
        """A click on a step's column of live bytes chooses that step; on a
        region (or a gap) spanning several steps, the one of them nearest to
        the chosen step (the click's own position is not reported)."""
        if not points.point_inds:
            return
        i = points.point_inds[0]
        x, width = trace.x[i], (trace.width[i] if trace.width is not None else STEP_WIDTH)
        half = (width - STEP_WIDTH) / 2  # 0 for one step
        first, last = round(x - half), round(x + half)
        step = min(max(self.step, first), last)
        if 0 <= step < len(self.plan.steps):
            self.step_control.value = step
