"""Each alias of a plan on its map: a strip over the shared bytes (or columns), with
the edge that orders it in its hover, read from the plan's analysis (the ordering
check of its kernel model, or a declared plan's needed edges; never checked here).

An alias no edge orders is drawn in the error colour the maps use for lint errors;
an ordered one in green; a declared plan's needed edge in blue, and a hand-over whose
access kinds are not declared in grey.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._style import KIND_COLORS, fmt_units, plain

if TYPE_CHECKING:
    from ..analysis._analysed import Analysed

__all__ = ["AliasMark", "alias_marks", "alias_trace", "ALIAS_COLORS", "edge_lines", "ordering_source"]

ERROR = "#c62828"  # the maps' lint-error colour (FINDING_COLORS["error"])
ALIAS_COLORS = {
    "ordered": KIND_COLORS["fits"],
    "unordered": ERROR,
    "needed": KIND_COLORS["alloc"],
    "undeclared": "#546e7a",
}
ALIAS_Y = 1.035  # band units: the strip sits just over the band, under the group labels
ALIAS_HEIGHT = 0.05
DEALLOC = "TMEM allocation"  # what the check calls the columns a dealloc frees


@dataclass(frozen=True)
class AliasMark:
    """One alias as a map draws it: its two regions, the shared span on this map
    (bytes or columns), the edge text and its state ("ordered", "unordered",
    "needed", "undeclared")."""

    earlier: str
    later: str
    lo: int
    hi: int
    edge: str
    state: str
    earlier_access: str = ""
    later_access: str = ""
    fix: str = ""  # for an unordered alias: the check's fix (the edge it needs)

    @property
    def label(self) -> str:
        return f"{self.earlier} -> {self.later}"


def edge_lines(edge: str) -> str:
    """An edge's chain of hand-overs, one per line (plotly text)."""
    return "<br>  -> ".join(plain(step) for step in edge.split(" -> "))


def _spans(an: Analysed, src: Analysed) -> tuple[dict[str, tuple[int, int]], dict[str, tuple[int, int]]]:
    """Where each region is on ``an``'s map: its plan's regions by name, and the spans of
    this memory in the model ``src``'s plan carries (a captured plan names one array; the
    model its parts)."""
    plan = an.plan
    own = {r.name: (r.offset, r.end) for r in plan.regions if r.kind == "data" and r.size > 0}
    model = src.plan.ordering
    spans = (
        {} if model is None else {s.name: (s.start, s.start + s.size) for s in model.regions if s.memory == plan.memory}
    )
    return own, spans


def ordering_source(an: Analysed, other: Analysed | None) -> Analysed | None:
    """Whose ordering ``an``'s map shows: its own, else that of ``other`` (the other memory's
    analysis of the same kernel: a capture puts the model on the SMEM plan, and its TMEM
    aliases belong on the TMEM map), else none."""
    if an.has_ordering or other is None or other.ordering is None:
        return None
    return other


def alias_marks(an: Analysed, source: Analysed | None = None) -> list[AliasMark]:
    """The aliases that lie on ``an``'s map, unordered ones last (drawn on top): of the
    ordering ``source`` holds (by default ``an``'s own; see :func:`ordering_source`)."""
    src = an if source is None else source
    own, spans = _spans(an, src)

    def where(name: str) -> tuple[int, int] | None:
        return own.get(name) or spans.get(name)

    out: list[AliasMark] = []
    if src.ordering is not None:
        # the race finding of each unordered pair says which edge would order it
        fixes = {
            (f.regions[0], f.regions[1]): f.fix
            for f in src.ordering.findings
            if f.rule == "unordered-alias" and len(f.regions) == 2
        }
        for a in src.ordering.aliases:
            e = where(a.earlier)
            if e is None:
                continue
            later = e if a.later == DEALLOC else where(a.later)  # a dealloc frees the earlier's columns
            if later is None:
                continue
            lo, hi = max(e[0], later[0]), min(e[1], later[1])
            if lo >= hi:
                lo, hi = e
            state = "ordered" if a.ordered else "unordered"
            fix = fixes.get((a.earlier, a.later), "") if not a.ordered else ""
            out.append(AliasMark(a.earlier, a.later, lo, hi, a.edge, state, a.earlier_access, a.later_access, fix))
    if an.needs is not None and source is None:
        pairs = [(n.earlier, n.later, f"needs {n.edge}", "needed") for n in an.needs.needs]
        pairs += [
            (x, y, "declare the access kinds of both to see the edge it needs", "undeclared")
            for x, y in an.needs.unknown
        ]
        for first, then, edge, state in pairs:
            e, later = where(first), where(then)
            if e is None or later is None:
                continue
            lo, hi = max(e[0], later[0]), min(e[1], later[1])
            if lo >= hi:
                lo, hi = e
            out.append(AliasMark(first, then, lo, hi, edge, state))
    out.sort(key=lambda m: m.state == "unordered")
    return out


def mark_hover(m: AliasMark, unit: str) -> str:
    head = f"<b>alias {plain(m.earlier)} -> {plain(m.later)}</b>"
    if m.earlier_access:
        head += f"<br>{plain(m.earlier)}: {plain(m.earlier_access)}<br>{plain(m.later)}: {plain(m.later_access)}"
    what = "bytes" if unit == "B" else "columns"
    where = f"<br>shared {what} {m.lo:,} to {m.hi:,} ({fmt_units(m.hi - m.lo, unit)})"
    if m.state == "unordered":
        fix = f"<br>fix: {_wrapped_plain(m.fix)}" if m.fix else ""
        return f"{head}{where}<br><b>unordered</b>: no edge orders the earlier access before the later write{fix}"
    word = {"ordered": "edge", "needed": "declared plan", "undeclared": "declared plan"}[m.state]
    return f"{head}{where}<br>{word}: {edge_lines(m.edge)}"


def _wrapped_plain(text: str, width: int = 80) -> str:
    """``text`` as plotly text, wrapped at words to about ``width`` characters a line."""
    lines: list[str] = []
    for word in plain(text).split(" "):
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "<br>".join(lines)


ALIAS_ROWS = 3  # overlapping strips stack this many rows deep (more share the top row)


def _rows(marks: list[AliasMark]) -> list[int]:
    """A row per mark, so marks over the same bytes sit one over another (each hoverable)."""
    ends: list[int] = []  # per row, where its last strip ends
    out = []
    for m in marks:
        row = next((k for k, end in enumerate(ends) if end <= m.lo), len(ends))
        row = min(row, ALIAS_ROWS - 1)
        if row == len(ends):
            ends.append(m.hi)
        else:
            ends[row] = max(ends[row], m.hi)
        out.append(row)
    return out


def alias_trace(marks: list[AliasMark], unit: str, scale: float) -> dict[str, Any]:
    """The maps' "ordering" trace: one thin bar over each alias's shared span, just over
    the band (marks over the same bytes stacked), coloured by its state; hovering it
    names the edge (or "unordered")."""
    rows = _rows(marks)
    return {
        "type": "bar",
        "orientation": "h",
        "name": "alias over shared bytes (hover: its edge)",
        "meta": "ordering",
        "base": [m.lo for m in marks],
        "x": [m.hi - m.lo for m in marks],
        "y": [(ALIAS_Y + row * ALIAS_HEIGHT) * scale for row in rows],
        "width": [0.8 * ALIAS_HEIGHT * scale for _ in marks],
        "text": [plain(m.label) for m in marks],
        "textposition": "none",
        "hovertext": [mark_hover(m, unit) for m in marks],
        "hovertemplate": "%{hovertext}<extra></extra>",
        "marker": {
            "color": [ALIAS_COLORS[m.state] for m in marks],
            "line": {"width": 0},
        },
        "showlegend": True,  # on static maps (the live ones have no legend), shown only with aliases
    }
