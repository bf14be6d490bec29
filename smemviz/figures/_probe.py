"""Planned vs measured bytes of a probe result, as one plotly figure.

Each region is one row; the planned extent and the measured runs of its tag
are two bar traces drawn with ``base=`` offsets (one trace each, so thousands
of regions stay fast). Imported only when a figure is asked for.
"""

from __future__ import annotations

from typing import Any

__all__ = ["probe_figure"]


def probe_figure(result: Any) -> Any:
    import plotly.graph_objects as go

    checks = result.checks
    labels = [f"{c.name} (#{i})" for i, c in enumerate(checks)]
    extents = result.measured_extents()

    planned = go.Bar(
        name="planned",
        orientation="h",
        y=labels,
        base=[c.offset for c in checks],
        x=[c.size for c in checks],
        marker={"color": "rgba(120,120,120,0.35)", "line": {"width": 0}},
        offsetgroup="planned",
        hovertemplate="%{y}<br>planned [%{base}, %{base}+%{x}) B<extra></extra>",
    )
    m_y, m_base, m_x, m_colour = [], [], [], []
    for i, c in enumerate(checks):
        for start, length in extents.get(i, []):
            m_y.append(labels[i])
            m_base.append(start)
            m_x.append(length)
            m_colour.append("#1a7f37" if c.ok else "#cf222e")
    measured = go.Bar(
        name="measured (tag found)",
        orientation="h",
        y=m_y,
        base=m_base,
        x=m_x,
        marker={"color": m_colour, "line": {"width": 0}},
        offsetgroup="measured",
        hovertemplate="%{y}<br>tag found [%{base}, %{base}+%{x}) B<extra></extra>",
    )
    fig = go.Figure([planned, measured])
    status = "pass" if result.passed else "FAIL"
    fig.update_layout(
        title=f"SMEM probe on {result.gpu}: {status} ({result.plan.unified_bytes:,} B planned)",
        barmode="group",
        xaxis_title="byte offset in the unified SMEM array",
        yaxis={"autorange": "reversed"},
        height=max(260, 28 * len(checks) + 120),
        legend={"orientation": "h", "y": -0.15},
    )
    return fig
