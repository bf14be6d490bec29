"""The Banks tab's picture as HTML: 32 banks across, one row per wavefront, each cell coloured by
the lane it serves and numbered with it, the wavefronts a conflict adds marked.

The same picture as ``bank_conflict_figure`` (plotly), drawn as a table: a swizzle toggle then
replaces a few hundred cells, which the browser lays out in a few milliseconds, where plotly.js
spent 70-90 ms redrawing a heatmap inside JupyterLab (measured; see results/bank_explorer.md).
The explorer draws as many rows as the access takes (``rows`` pads the grid to a height
for a caller that wants one fixed). Every piece of text is escaped.
"""

from __future__ import annotations

from functools import lru_cache
from html import escape

from .. import hardware
from .._names import shown
from ..analysis.banks._model import BankConflicts
from ..analysis.banks._patterns import AccessReport

__all__ = ["bank_grid_html", "GRID_CSS", "lane_colors"]

REPLAY = "#d62728"
IDLE = "#f1f3f4"

# put on the page once per explorer (a <style> in every update would restyle the page)
GRID_CSS = (
    "<style>.smemviz-bank-grid{overflow-x:auto;max-width:100%}.smemviz-bank-grid table{border-collapse:separate;border-spacing:1px;table-layout:fixed;"
    "font-family:monospace;font-size:10px;line-height:14px}"
    ".smemviz-bank-grid td{width:22px;height:14px;padding:0;text-align:center;overflow:hidden}"
    ".smemviz-bank-grid th{font-weight:normal;color:#546e7a;padding:0 4px;text-align:right;white-space:nowrap}"
    ".smemviz-bank-grid td.i{background:" + IDLE + "}"
    ".smemviz-bank-grid tr.r th{color:" + REPLAY + "}"
    ".smemviz-bank-title{font-size:13px;margin:2px 0 4px 0}"
    # the bank table under the grid: a gap between its columns (swizzle | warps, 0 | 1 (conflict-free))
    ".smemviz-banks-view .smemviz-banks th,.smemviz-banks-view .smemviz-banks td{padding:1px 8px}"
    ".smemviz-banks-view .smemviz-banks th{border-bottom:1px solid #cfd8dc}</style>"
)


@lru_cache(maxsize=1)
def lane_colors() -> tuple[tuple[str, str], ...]:
    """(background, text colour) for each of the 32 lanes, along the Turbo scale the plotly
    picture uses."""
    from plotly.colors import sample_colorscale, unlabel_rgb

    out = []
    for c in sample_colorscale("Turbo", [i / (hardware.SMEM_BANKS - 1) for i in range(hardware.SMEM_BANKS)]):
        r, g, b = unlabel_rgb(c)
        text = "#000" if 0.299 * r + 0.587 * g + 0.114 * b > 140 else "#fff"
        out.append((f"rgb({int(r)},{int(g)},{int(b)})", text))
    return tuple(out)


def _result(access: BankConflicts | AccessReport) -> BankConflicts:
    return access.worst if isinstance(access, AccessReport) else access


def grid_title(access: BankConflicts | AccessReport) -> str:
    """The picture's one line: what the worst instruction takes, and whose it is."""
    res = _result(access)
    state = "conflict-free" if res.conflict_free else f"{res.n_way}-way, {res.replays} replayed wavefront(s)"
    title = f"{res.instruction}: {res.wavefronts} wavefronts (ideal {res.ideal}), {res.conflicts} conflicts; {state}"
    if isinstance(access, AccessReport):
        title = f"{shown(access.region)}: {title} (worst of {access.instructions} instructions)"
    return title


def bank_grid_html(
    access: BankConflicts | AccessReport | None, *, rows: int | None = None, title: str | None = None
) -> str:
    """The grid as one HTML fragment (``None``: an empty grid under ``title``)."""
    banks = hardware.SMEM_BANKS
    if access is None:
        grid: list[list[tuple[int, ...]]] = []
        replay: list[bool] = []
        text = title or "no access to draw"
    else:
        res = _result(access)
        grid = res.grid()
        replay = []
        for count in res.phase_wavefronts:
            replay += [False] + [True] * (count - 1)
        text = title or grid_title(access)
    colors = lane_colors()
    head = (
        "<tr><th>wf \\ bank</th>" + "".join(f"<th style='text-align:center'>{b}</th>" for b in range(banks)) + "</tr>"
    )
    body = []
    for w, row in enumerate(grid):
        cells = []
        for b, lanes in enumerate(row):
            if not lanes:
                cells.append(f"<td class=i title='bank {b}, wavefront {w}: idle'></td>")
                continue
            bg, fg = colors[lanes[0] % banks]
            more = "+" if len(lanes) > 1 else ""
            cells.append(
                f"<td style='background:{bg};color:{fg}' title='bank {b}, wavefront {w}: "
                f"lane{'s' if len(lanes) > 1 else ''} {', '.join(map(str, lanes))}'>{lanes[0]}{more}</td>"
            )
        mark = "&#9654; " if replay[w] else ""
        body.append(f"<tr{' class=r' if replay[w] else ''}><th>{mark}{w}</th>{''.join(cells)}</tr>")
    pad = max(0, (rows or 0) - len(grid))
    body += ["<tr><th>&nbsp;</th>" + "<td></td>" * banks + "</tr>"] * pad
    legend = (
        "<div style='font-size:11px;color:#546e7a;margin-top:3px'>cell: the first lane the bank serves in "
        "that wavefront (+: more lanes; hover lists them), colour by lane; "
        f"<span style='color:{REPLAY}'>&#9654;</span> a wavefront the conflict adds</div>"
    )
    return (
        f"<div class='smemviz-bank-grid'><div class='smemviz-bank-title'>{escape(text)}</div>"
        f"<table><thead>{head}</thead><tbody>{''.join(body)}</tbody></table>{legend}</div>"
    )
