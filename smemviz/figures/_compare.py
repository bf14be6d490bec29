"""Two SMEM layouts one above the other on one address axis, the regions
that changed outlined, for "what did this change do?" at notebook width."""

from __future__ import annotations

from typing import Any

from ..analysis._diff import diff_plans
from ..sources._inputs import as_plan
from ._combined import TITLE_LIFT_PX, _moved, lift_titles
from ._smem import smem_spec
from ._spec import require_plotly
from ._style import plain

__all__ = ["compare_figure"]

CHANGED_OUTLINE = {"color": "#263238", "width": 2.5}


def _outline_changed(traces: list[dict[str, Any]], changed: set[str]) -> None:
    """Thick dark outlines on the bars of ``changed`` regions, in place."""
    changed = {plain(n) for n in changed}  # bars carry their names as shown (escaped)
    for t in traces:
        if t.get("type") != "bar" or "text" not in t or not t.get("text"):
            continue
        line = t["marker"].get("line", {})
        t["marker"] = {
            **t["marker"],
            "line": {
                "color": [CHANGED_OUTLINE["color"] if n in changed else line.get("color", "white") for n in t["text"]],
                "width": [CHANGED_OUTLINE["width"] if n in changed else line.get("width", 0.5) for n in t["text"]],
            },
        }


def compare_figure(before: Any, after: Any, arch: Any = None, labels: tuple[str, str] = ("before", "after")) -> Any:
    """``before`` above ``after`` (plans or computed allocators, SMEM), both on
    the same address axis; regions added, moved or resized are outlined on
    the ``after`` map, removed ones on the ``before`` map. The title states the
    difference in total (see :meth:`LayoutPlan.diff` for the full list)."""
    old, new = as_plan(before, arch=arch), as_plan(after, arch=arch)
    if old.memory != "smem" or new.memory != "smem":
        raise ValueError("compare_figure compares two SMEM layouts")
    diff = diff_plans(old, new)
    specs = [smem_spec(old, arch), smem_spec(new, arch)]
    span = max(s.meta["span"] for s in specs)
    require_plotly()
    from plotly.subplots import make_subplots

    # short, and lifted over the row of the capacity label
    titles = [
        f"{plain(label)}: {plan.total:,} B ({spec.meta['capacity'].percent:.1f}%)"
        for label, plan, spec in zip(labels, (old, new), specs)
    ]
    fig = make_subplots(rows=2, cols=1, subplot_titles=titles, vertical_spacing=0.2, shared_xaxes=False)
    annotations: list = lift_titles(fig.layout.annotations)
    shapes: list = []
    marks = (
        {r.name for r in diff.removed},
        {r.name for r in diff.added} | {c.name for c in diff.moved} | {c.name for c in diff.resized},
    )
    for row, (spec, changed) in enumerate(zip(specs, marks), start=1):
        traces, xaxis, yaxis, sh, an = _moved(spec, row)
        _outline_changed(traces, changed)
        fig.add_traces(traces)
        suffix = "" if row == 1 else str(row)
        fig.layout[f"xaxis{suffix}"].update({**xaxis, "range": [0, span * 1.01]})
        fig.layout[f"yaxis{suffix}"].update(yaxis)
        shapes += sh
        annotations += an
    sign = "+" if diff.total_delta >= 0 else ""
    counts = (
        f"{len(diff.added)} added, {len(diff.removed)} removed, "
        f"{len(diff.resized)} resized, {len(diff.moved)} moved (outlined)"
    )
    base = specs[0].layout
    fig.update_layout(
        title={
            "text": f"{plain(labels[1])} vs {plain(labels[0])}: {sign}{diff.total_delta:,} B · {counts}",
            "x": 0.01,
            "xanchor": "left",
            "font": {"size": 14},
        },
        shapes=shapes,
        annotations=annotations,
        barmode="overlay",
        height=620,
        showlegend=False,
        margin={"l": 30, "r": 20, "t": 90 + TITLE_LIFT_PX, "b": 50},
        font=base["font"],
        plot_bgcolor="white",
        paper_bgcolor="white",
        hovermode="closest",
        hoverlabel=base["hoverlabel"],
        uniformtext=base["uniformtext"],
    )
    return fig
