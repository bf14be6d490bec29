"""The explorer's "Ordering" tab, offered while the layout on screen has an ordering to
show (a captured kernel's model, checked once in the plan's analysis, or a declared
plan's hand-overs): the pipeline diagram, a table of every alias with its shared bytes
and the edge that orders it (an unordered one in the error colour), and the ordering
findings as lint reports them.

The diagram is a live figure updated in place like the maps; the tab is drawn only
while open (the explorer marks it stale on every change and redraws it when shown).
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from .._names import shown
from ..figures._alias_marks import ALIAS_COLORS, alias_marks
from ..figures._ordering import ordering_findings, ordering_spec
from ._sync import LiveFigure

if TYPE_CHECKING:
    from ..analysis._analysed import Analysed

__all__ = ["OrderingView", "alias_table_html", "ordering_findings_html"]

_STATE_WORD = {"ordered": "ordered", "unordered": "unordered", "needed": "needed", "undeclared": "kinds not declared"}
_SEVERITY_COLOR = {"error": "#c62828", "warning": "#ef6c00", "info": "#546e7a"}


def alias_table_html(an: Analysed) -> str:
    """One row per alias of ``an``'s plan: the two regions, their accesses, the shared bytes
    (or columns, where they are on this plan's map) and the edge; an alias no edge orders
    in the error colour. A declared plan's rows give the edge each hand-over needs."""
    what = "bytes" if an.plan.memory == "smem" else "columns"
    marks = {(m.earlier, m.later): m for m in alias_marks(an)}
    rows: list[tuple[str, str, str, str, str, str, str]] = []  # earlier, later, accesses, shared, state, edge
    items: list[tuple[str, str, str, str, str, str]] = []
    if an.ordering is not None:
        items += [
            (a.earlier, a.later, a.earlier_access, a.later_access, "ordered" if a.ordered else "unordered", a.edge)
            for a in an.ordering.aliases
        ]
    if an.needs is not None:
        items += [
            (n.earlier, n.later, n.earlier_kind, n.later_kind, "needed", f"needs {n.edge}") for n in an.needs.needs
        ]
        items += [(a, b, "", "", "undeclared", "declare the access kinds of both") for a, b in an.needs.unknown]
    for earlier, later, e_acc, l_acc, state, edge in items:
        m = marks.get((earlier, later))
        shared = f"{m.lo:,}..{m.hi:,}" if m is not None else _elsewhere(an, earlier)
        if state == "unordered":
            edge = "no edge orders them" + (f"; fix: {m.fix}" if m is not None and m.fix else "")
        rows.append((earlier, later, e_acc, l_acc, shared, state, edge))
    if not rows:
        return "<div class='smemviz-alias-table'>no alias: no two regions hand bytes over</div>"
    heads = "".join(
        f"<th>{h}</th>"
        for h in ("earlier", "later", "earlier access", "later write", f"shared {what}", "state", "edge")
    )
    body = "".join(
        f"<tr class='smemviz-alias-row smemviz-{state}'>"
        + "".join(f"<td>{escape(shown(c))}</td>" for c in (earlier, later, e_acc, l_acc))
        + f"<td class='n'>{escape(shared)}</td>"
        f"<td style='color:{ALIAS_COLORS[state]};font-weight:bold'>{_STATE_WORD[state]}</td>"
        f"<td style='white-space:normal;min-width:160px'>{escape(shown(edge))}</td></tr>"
        for earlier, later, e_acc, l_acc, shared, state, edge in rows
    )
    return (
        "<div class='smemviz-tscroll smemviz-alias-table'><table class='smemviz-utable' style='width:100%'>"
        f"<thead><tr>{heads}</tr></thead><tbody>{body}</tbody></table></div>"
    )


def _elsewhere(an: Analysed, region: str) -> str:
    """Where an alias not on this plan's map is drawn: the other memory's map, by the model."""
    model = an.plan.ordering
    memory = next((r.memory for r in model.regions if r.name == region), None) if model is not None else None
    return f"on the {memory.upper()} map" if memory is not None and memory != an.plan.memory else "not on the map"


def ordering_findings_html(an: Analysed) -> str:
    """The ordering findings, as lint reports them, worst first, each with its fix."""
    found = ordering_findings(an)
    if not found:
        return "<div class='smemviz-ordering-findings'>no ordering findings</div>"
    items = "".join(
        f"<li class='smemviz-finding smemviz-{f.severity}'>"
        f"<b style='color:{_SEVERITY_COLOR.get(f.severity, '#546e7a')}'>{f.severity}</b> "
        f"<code>{escape(f.rule)}</code>: {escape(shown(f.message))}; fix: {escape(shown(f.fix))}</li>"
        for f in found
    )
    return f"<ul class='smemviz-ordering-findings' style='font-size:12px;margin:4px 0'>{items}</ul>"


class OrderingView(widgets.VBox):
    """The Ordering tab: the diagram of one plan's ordering (a choice of memory where both
    plans carry a different one), its alias table and its ordering findings."""

    def __init__(self) -> None:
        self.figure: LiveFigure | None = None  # made when first shown
        self.memory = widgets.ToggleButtons(options=[], layout=widgets.Layout(display="none"))
        self.aliases = widgets.HTML()
        self.findings = widgets.HTML()
        self._width: int | None = None
        self._shown: tuple[Analysed, ...] = ()
        self._memories: list[str] = []
        self._drawing = False
        self._box = widgets.Box(layout=widgets.Layout(width="100%"))
        super().__init__(
            [
                self.memory,
                self._box,
                widgets.HTML("<b>Aliases and their edges</b>"),
                self.aliases,
                widgets.HTML("<b>Ordering findings</b>"),
                self.findings,
            ],
            layout=widgets.Layout(width="100%"),
        )
        self.add_class("smemviz-ordering-tab")
        self.memory.observe(self._on_memory, names="value")

    @property
    def analysed(self) -> Analysed | None:
        """The analysis shown now."""
        if not self._shown:
            return None
        pick = self.memory.value
        return next((a for a in self._shown if a.plan.memory == pick), self._shown[0])

    def show(self, ordered: tuple[Analysed, ...]) -> None:
        """Draw the ordering of ``ordered`` (the analyses with one, SMEM first)."""
        self._shown = ordered
        memories: list[str] = [a.plan.memory for a in ordered]
        if memories != self._memories:
            keep = self.memory.value
            self._memories = memories
            self._drawing = True  # the options' own change draws nothing: drawn once, below
            try:
                self.memory.options = [(m.upper(), m) for m in memories]
                self.memory.value = keep if keep in memories else memories[0]
            finally:
                self._drawing = False
        self.memory.layout.display = None if len(memories) > 1 else "none"
        self._draw()

    def _on_memory(self, change: dict[str, Any]) -> None:
        if not self._drawing:
            self._draw()

    def set_width(self, width: int) -> None:
        self._width = width
        if self.figure is not None:
            self.figure.set_width(width)

    def _draw(self) -> None:
        an = self.analysed
        if an is None:
            return
        spec = ordering_spec(an)
        if self.figure is None:
            self.figure = LiveFigure(spec, legend=False)
            if self._width is not None:
                self.figure.set_width(self._width)
            self._box.children = (self.figure.widget,)
        else:
            self.figure.show(spec)
        self.aliases.value = alias_table_html(an)
        self.findings.value = ordering_findings_html(an)
