"""The explorer's "Banks" tab: how one access of one region hits the 32 banks, live.

Pick a region and one of its accesses (what the plan carries, from
``SmemAllocation(..., access=...)`` or a layout file's ``access`` key), toggle
the swizzle (as declared, none, 32B, 64B, 128B): the 32-banks-by-wavefronts grid
of its worst instruction and the numbers (instructions, wavefronts, ideal,
conflicts, n-way, the advice) follow. The grid is HTML (``_bank_grid``): a toggle
replaces its cells, which the browser draws in a few milliseconds; the analysis
itself takes a few milliseconds and is kept per (access, swizzle) of the plan shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from .._names import shown
from ..analysis._analysed import Analysed
from ..analysis.banks._access import advise_declared, analyse_declared
from ..analysis.banks._advice import Advice
from ..analysis.banks._patterns import AccessReport
from ..analysis.banks._plan_tables import bank_html
from ..layout._access import SmemAccess
from ..layout._plan import CAPTURE_SOURCE, LayoutPlan
from ._bank_grid import GRID_CSS, bank_grid_html, grid_title
from ._panels import message_html

if TYPE_CHECKING:
    from ..analysis.ncu._overlay import MeasuredSegment

__all__ = ["BankView", "SWIZZLE_OPTIONS", "DECLARED", "NO_ACCESSES", "CAPTURED_NO_ACCESSES", "no_accesses_text"]

DECLARED = "declared"
SWIZZLE_OPTIONS = (DECLARED, "none", "32B", "64B", "128B")
NO_ACCESSES = (
    "This layout declares no accesses. Say how the warps touch a buffer, e.g. "
    'SmemAllocation("epi_c", ..., access={"instruction": "stmatrix.x4", '
    '"layout": "(128,32):(32,1)", "warps": (8, 1)}), or an access key in a layout file, '
    "and this tab draws its banks."
)
# a plan captured from a compiled kernel: its regions are the compiler's, so there is nothing to declare
CAPTURED_NO_ACCESSES = (
    "This layout was captured from a compiled kernel: this tab shows the kernel's own shared-memory "
    "accesses when capture records them, and this capture recorded none. To see a buffer's banks now, "
    "give its access with the captured plan, e.g. smemviz.explore(dataclasses.replace(cap.plan, "
    'accesses=(smemviz.SmemAccess("sC", instruction="stmatrix.x4", layout="(128,32):(32,1)", warps=(8, 1)),))).'
)
SWIZZLE_LABELS = {DECLARED: "as declared"}  # a button's text, where it is not the value itself


class BankView(widgets.VBox):
    """Region and access pickers, the swizzle toggle, the bank grid and its numbers.
    :meth:`show` hands it the explorer's current SMEM plan."""

    def __init__(self) -> None:
        self.plan: LayoutPlan | None = None
        self._kept: dict[tuple[int, str], AccessReport | str] = {}  # (access index, swizzle) on self.plan
        self._advice: dict[int, Advice] = {}  # by access index, from the analysis shown
        self._quiet = False
        self.region = widgets.Dropdown(description="region", options=[], layout=widgets.Layout(width="260px"))
        self.access = widgets.Dropdown(description="access", options=[], layout=widgets.Layout(width="360px"))
        self.swizzle = widgets.ToggleButtons(
            options=[(SWIZZLE_LABELS.get(o, o), o) for o in SWIZZLE_OPTIONS],
            value=DECLARED,
            description="swizzle",
            tooltips=[
                "the swizzle the access declares (or its region's)",
                "no swizzle",
                "32B mode",
                "64B mode",
                "128B mode",
            ],
            style={"button_width": "104px"},  # room for "as declared" in full
        )
        self.numbers = widgets.HTML()
        self.measured = widgets.HTML()  # Nsight Compute's counts of a profiled launch, beside the model's
        self._segments: tuple[MeasuredSegment, ...] = ()
        self.table = widgets.HTML()
        self.message = widgets.HTML()
        self.grid = widgets.HTML(bank_grid_html(None))
        self.title = ""  # the grid's title line, as drawn
        self.drawn: AccessReport | None = None  # what the grid shows (None: nothing analysed)
        self.controls = widgets.VBox([widgets.HBox([self.region, self.access]), self.swizzle])
        self.body = widgets.VBox(
            [widgets.HTML(GRID_CSS), self.controls, self.numbers, self.grid, self.table],
            layout=widgets.Layout(width="100%"),
        )
        super().__init__([self.message, self.measured, self.body], layout=widgets.Layout(width="100%"))
        self.add_class("smemviz-banks-view")
        self.region.observe(self._on_region, names="value")
        self.access.observe(self._on_access, names="value")
        self.swizzle.observe(self._on_swizzle, names="value")

    # -- what is shown ---------------------------------------------------------------

    def show(self, source: Analysed | LayoutPlan | None) -> None:
        """Show the accesses of ``source`` (an SMEM plan, or its analysis, whose reports
        of the declared accesses are then read rather than made again), keeping the
        region, access and swizzle picked where they remain."""
        plan = source.plan if isinstance(source, Analysed) else source
        self._segments = source.measured if isinstance(source, Analysed) else ()
        if not self._segments:
            self.measured.value = ""
        if plan is not self.plan:
            self._kept.clear()  # analyses of the plan shown before
            self._advice.clear()
            for index, item in enumerate(source.banks if isinstance(source, Analysed) else ()):
                self._kept[(index, DECLARED)] = item.report if item.report is not None else (item.error or "")
                if item.advice is not None:
                    self._advice[index] = item.advice
        self.plan = plan
        accesses = plan.accesses if plan is not None else ()
        if not accesses:
            self.message.value = message_html(no_accesses_text(plan), "info")
            self.body.layout.display = "none"
            self.measured.value = measured_html(self._segments, None)
            return
        self.message.value = ""
        self.body.layout.display = None
        regions = list(dict.fromkeys(str(a.region) for a in accesses))
        self._quiet = True
        try:
            if list(self.region.options) != regions:
                first = self._warned()  # opened (or its region gone): on the access lint warns about
                keep = self.region.value if self.region.value in regions else None
                self.region.options = regions
                self.region.value = keep if keep is not None else (first[0] if first else regions[0])
                self._fill_accesses(None if keep is not None or first is None else first[1])
            else:
                self._fill_accesses()
        finally:
            self._quiet = False
        self.table.value = bank_html(source)
        self._redraw()

    def pick(self, region: str | None = None, access: int | None = None, swizzle: str | None = None) -> None:
        """Select ``region``'s ``access``-th access (and a swizzle), as the controls would; without
        them the tab stays where it is (opened, on the access lint warns about)."""
        if self.plan is None or not self.plan.accesses:
            raise ValueError("the layout shown declares no accesses")
        if region is not None:
            if region not in self.region.options:
                raise KeyError(
                    f"region {region!r} has no access; regions with accesses: "
                    f"{', '.join(map(repr, self.region.options))}"
                )
            self.region.value = region
        options = list(self.access.options)
        if access is not None:
            if not 0 <= access < len(options):
                raise IndexError(f"region {self.region.value!r} has {len(options)} access(es), not {access + 1}")
            self.access.value = options[access][1]
        if swizzle is not None:
            if swizzle not in SWIZZLE_OPTIONS:
                raise ValueError(f"swizzle must be one of {', '.join(SWIZZLE_OPTIONS)}, got {swizzle!r}")
            self.swizzle.value = swizzle

    @property
    def current(self) -> SmemAccess | None:
        """The access picked, or None."""
        if self.plan is None or self.access.value is None:
            return None
        return self.plan.accesses[self.access.value]

    def report(self) -> AccessReport | str | None:
        """The analysis of the picked access with the picked swizzle (text: why it could not be made)."""
        acc = self.current
        if acc is None or self.plan is None:
            return None
        return self._analysed(self.plan, int(self.access.value), acc, self.swizzle.value)

    # -- callbacks --------------------------------------------------------------------

    def _warned(self) -> tuple[str, int] | None:
        """(region, access index) of the first declared access with bank conflicts (lint's
        warning), else of the first that cannot be analysed; None when all are conflict-free."""
        if self.plan is None:
            return None
        plan = self.plan
        reports = [self._analysed(plan, i, acc, DECLARED) for i, acc in enumerate(plan.accesses)]
        bad = [i for i, r in enumerate(reports) if isinstance(r, AccessReport) and not r.conflict_free]
        bad += [i for i, r in enumerate(reports) if isinstance(r, str) and r]
        if not bad:
            return None
        return str(self.plan.accesses[bad[0]].region), bad[0]

    def _fill_accesses(self, prefer: int | None = None) -> None:
        assert self.plan is not None
        region = self.region.value
        options = [(a.label, i) for i, a in enumerate(self.plan.accesses) if a.region == region]
        values = [v for _, v in options]
        if list(self.access.options) != options or (prefer in values and self.access.value != prefer):
            keep = prefer if prefer in values else self.access.value if self.access.value in values else values[0]
            self.access.options = options
            self.access.value = keep

    def _on_region(self, _change: dict[str, Any]) -> None:
        if self._quiet or self.plan is None:
            return
        self._quiet = True
        try:
            self._fill_accesses()
        finally:
            self._quiet = False
        self._redraw()

    def _on_access(self, _change: dict[str, Any]) -> None:
        if not self._quiet:
            self._redraw()

    def _on_swizzle(self, _change: dict[str, Any]) -> None:
        if not self._quiet:
            self._redraw()

    # -- drawing ------------------------------------------------------------------------

    def _analysed(self, plan: LayoutPlan, index: int, acc: SmemAccess, swizzle: str) -> AccessReport | str:
        key = (index, swizzle)
        found = self._kept.get(key) if plan is self.plan else None
        if found is None:
            try:
                found = analyse_declared(plan, acc, swizzle=None if swizzle == DECLARED else swizzle)
            except (TypeError, ValueError, KeyError) as exc:
                found = str(exc).strip("\"'")
            if plan is self.plan:
                self._kept[key] = found
        return found

    def _redraw(self) -> None:
        rep = self.report()
        acc = self.current
        self.measured.value = measured_html(self._segments, self._bytes(acc))
        if rep is None or acc is None:
            return
        if isinstance(rep, str):
            self.drawn, self.title = None, f"{acc.region}: {acc.label} cannot be drawn"
            self.grid.value = bank_grid_html(None, title=self.title)
            self.numbers.value = message_html(rep, "warning")
            return
        self.drawn, self.title = rep, grid_title(rep)
        # as many rows as this access takes: no empty rows under a conflict-free one
        self.grid.value = bank_grid_html(rep, title=self.title)
        self.numbers.value = self._numbers_html(acc, rep)

    def _numbers_html(self, acc: SmemAccess, rep: AccessReport) -> str:
        state = (
            "<span style='color:#2e7d32'>conflict-free</span>"
            if rep.conflict_free
            else f"<span style='color:#c62828'>{rep.n_way}-way: {rep.excess:,} extra wavefronts</span>"
        )
        swizzle = "no" if rep.swizzle in (None, "none", "NONE") else rep.swizzle
        facts = (
            f"<b>{escape(shown(acc.region))}</b> {escape(rep.instruction)} over {escape(rep.layout)} "
            f"with {escape(str(swizzle))} swizzle at byte {rep.base:,} · {rep.warps} warp(s): "
            f"{rep.instructions:,} instructions, {rep.wavefronts:,} wavefronts (ideal {rep.ideal:,}), "
            f"{rep.conflicts:,} conflicts as ncu counts · {state}"
        )
        advice = ""
        if not rep.conflict_free and self.swizzle.value == DECLARED and self.plan is not None:
            adv = self._advice.get(int(self.access.value))
            if adv is None:
                try:
                    adv = advise_declared(self.plan, acc)
                except (TypeError, ValueError, KeyError):
                    adv = None
            advice = f"<div style='color:#546e7a'>{escape(adv.reason)}</div>" if adv is not None else ""
        return f"<div class='smemviz-bank-numbers' style='font-size:13px;line-height:1.5'>{facts}{advice}</div>"

    def _bytes(self, acc: SmemAccess | None) -> tuple[int, int] | None:
        """The bytes of the region the picked access reads (None: nothing picked)."""
        if acc is None or self.plan is None:
            return None
        try:
            region = self.plan.region(str(acc.region))
        except KeyError:
            return None
        return region.offset, region.end


def measured_html(segments: Sequence[MeasuredSegment], picked: tuple[int, int] | None) -> str:
    """Nsight Compute's counts per captured region, measured beside predicted; the regions whose
    bytes the picked access's region holds in bold, a disagreement (or a conflict nothing
    predicted) in red: the place to look."""
    if not segments:
        return ""
    rows = []
    for seg in segments:
        here = picked is not None and seg.offset < picked[1] and picked[0] < seg.end
        colour = "#c62828" if seg.look_here else "#2e7d32" if seg.verdict == "agrees" else "#546e7a"
        text = f"{escape(shown(seg.region))}: {escape(seg.label)}"
        rows.append(
            f"<li class='smemviz-measured{' smemviz-look-here' if seg.look_here else ''}' "
            f"style='color:{colour}' title='{escape(shown(seg.line()))}'>{f'<b>{text}</b>' if here else text}</li>"
        )
    return (
        "<div class='smemviz-bank-measured' style='font-size:13px'>Nsight Compute, on the profiled launch "
        f"(measured / predicted):<ul style='margin:2px 0'>{''.join(rows)}</ul></div>"
    )


def no_accesses_text(plan: LayoutPlan | None) -> str:
    """What the tab says for a layout without accesses: how to declare one, or, for a
    plan captured from a kernel (nothing to declare), where the kernel's own will come from."""
    if plan is not None and plan.source == CAPTURE_SOURCE:
        return CAPTURED_NO_ACCESSES
    return NO_ACCESSES
