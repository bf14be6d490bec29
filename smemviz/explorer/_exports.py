"""Export buttons: write the layout on screen through ``smemviz.export``."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

__all__ = ["export_row", "FORMATS"]

FORMATS = ("html", "svg", "png", "json")
HTML_OFFLINE = "write <path>.html with plotly.js inside: opens offline, about 4.8 MB"
HTML_SMALL = "write <path>.html that loads plotly.js from its CDN: a small file, needs the network to draw"


def export_row(
    target: Callable[[], Any],
    say: Callable[[str, str], None],
    figure: Callable[[], Any] | None = None,
    stem: str = "smemviz-layout",
) -> tuple[Any, dict[str, Any], Any, Any]:
    """``(path text box, {format: button}, offline checkbox, row)``; a click
    writes ``<path>.<format>``; the checkbox picks plotly.js inside the HTML
    (offline) or referenced from its CDN (small), and the HTML button's
    tooltip says which. ``figure`` (when given) draws the diagrams instead of
    the default byte and column maps; JSON is always the plan."""
    path = widgets.Text(value=stem, description="export to", layout=widgets.Layout(width="320px", max_width="100%"))
    buttons = {
        fmt: widgets.Button(description=fmt.upper(), tooltip=f"write <path>.{fmt}", layout=widgets.Layout(width="70px"))
        for fmt in FORMATS
    }
    offline = widgets.Checkbox(
        value=True, description="HTML works offline", indent=False, layout=widgets.Layout(width="auto")
    )

    def html_tooltip(_: Any = None) -> None:
        buttons["html"].tooltip = HTML_OFFLINE if offline.value else HTML_SMALL

    offline.observe(html_tooltip, names="value")
    html_tooltip()

    def click(fmt: str) -> Callable[[Any], None]:
        def on_click(_: Any) -> None:
            write(fmt, path.value, target, say, plotlyjs="inline" if offline.value else "cdn", figure=figure)

        return on_click

    for fmt, button in buttons.items():
        button.on_click(click(fmt))
    return (
        path,
        buttons,
        offline,
        widgets.HBox(
            [path, *buttons.values(), offline], layout=widgets.Layout(flex_flow="row wrap", align_items="center")
        ),
    )


def write(
    fmt: str,
    stem: str,
    target: Callable[[], Any],
    say: Callable[[str, str], None],
    plotlyjs: str = "inline",
    figure: Callable[[], Any] | None = None,
) -> str | None:
    """Write the current layout as ``fmt``; report success or the error in the widget."""
    stem = (stem or "smemviz-layout").strip()
    out = stem if stem.lower().endswith(f".{fmt}") else f"{stem}.{fmt}"
    try:
        from .._export import export
    except ImportError as exc:
        say(f"Export needs smemviz.export, which could not be imported: {exc}", "error")
        return None
    try:
        drawn = figure() if figure is not None and fmt != "json" else None
        export(target(), out, plotlyjs=plotlyjs, figure=drawn)  # plotlyjs: used by HTML only
    except Exception as exc:  # shown to the user, who can fix the path or install an extra
        say(f"Could not write {out}: {type(exc).__name__}: {exc}", "error")
        return None
    say(f"Wrote {os.path.abspath(out)} ({os.path.getsize(out):,} bytes)", "info")
    return out
