"""An HTML page: heading, usage tables and the interactive figure; for a
layout solved from lifetimes, its lifetime map under it (the tables say when
each region is live, the map shows it); for a plan carrying its kernel's
ordering model (or declaring its hand-overs), the pipeline diagram (the tables
list every alias with its edge, the diagram shows who hands it over).

plotly.js is inlined by default, so the page opens offline (about 4.8 MB);
``plotlyjs="cdn"`` references plotly's CDN copy instead, for a page of a few
hundred KB that needs the network to draw. Every piece of user text is
escaped, and a Content-Security-Policy allows only the page's own scripts
(pinned by hash) and, with the CDN, that one script URL; no other network
access: even markup that slipped through could neither run nor load anything.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Sequence
from html import escape
from typing import Any

from .._names import shown
from ..analysis._report import html_report
from ..sources._inputs import LayoutPair
from ._analysed import AnalysedPair, analyse_pair

__all__ = ["to_html"]

_SCRIPT = re.compile(r"<script\b[^>]*>(.*?)</script>", re.S | re.I)
_SCRIPT_SRC = re.compile(r"<script\b[^>]*\bsrc=\"(https://[^\"]+)\"", re.I)
PLOTLYJS = ("inline", "cdn")

_STYLE = """
body { font-family: Inter, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px; color: #263238; }
h1 { font-size: 20px; margin: 0 0 4px 0; }
h2.smemviz-extra { font-size: 14px; margin: 16px 0 0 0; }
.smemviz-meta { color: #607d8b; font-size: 12px; margin: 0 0 16px 0; }
.smemviz-report { margin: 0 0 16px 0; }
.smemviz-alias.smemviz-error { color: #c62828; }
.smemviz-report td, .smemviz-report th { padding: 1px 8px; text-align: right; border-bottom: 1px solid #eceff1; }
"""


def _csp(fragment: str) -> str:
    hashes = list(dict.fromkeys(_SCRIPT_SRC.findall(fragment)))  # the CDN's plotly.js, when referenced
    for body in _SCRIPT.findall(fragment):
        if not body.strip():
            continue
        digest = base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode("ascii")
        hashes.append(f"'sha256-{digest}'")
    scripts = " ".join(hashes) or "'none'"
    return (
        f"default-src 'none'; script-src {scripts}; style-src 'unsafe-inline'; "
        "img-src data: blob:; font-src data:; base-uri 'none'; form-action 'none'"
    )


def _lifetime_maps(analysed: AnalysedPair, figure: Any) -> list[tuple[str, Any]]:
    """(heading, lifetime map) for each plan solved from lifetimes, none where
    ``figure`` already is a lifetime map (the explorer's Lifetimes tab exports its own)."""
    from ..figures._lifetime import LIFETIME_TRACES, lifetime_spec

    names = tuple(getattr(t, "name", None) for t in getattr(figure, "data", ()))
    if names == LIFETIME_TRACES:
        return []
    return [
        (
            f"{a.plan.memory.upper()} lifetimes: when each region is live",
            lifetime_spec(a.plan, a.capacity.arch).to_figure(),
        )
        for a in analysed.analysed
        if a.plan.steps
    ]


def _ordering_diagrams(analysed: AnalysedPair, figure: Any) -> list[tuple[str, Any]]:
    """(heading, pipeline diagram) for each plan with an ordering to show (one diagram
    when both plans carry the same model), none where ``figure`` already is one."""
    from ..figures._ordering import ORDERING_TRACES, ordering_spec

    if tuple(getattr(t, "meta", None) for t in getattr(figure, "data", ())) == ORDERING_TRACES:
        return []
    out: list[tuple[str, Any]] = []
    shown_models: list[Any] = []
    for a in analysed.analysed:
        if not a.has_ordering or (a.plan.ordering is not None and a.plan.ordering in shown_models):
            continue
        shown_models.append(a.plan.ordering)
        what = "ordering: the pipeline diagram" if a.ordering is not None else "ordering the declared plan needs"
        out.append((f"{a.plan.memory.upper()} {what}", ordering_spec(a).to_figure()))
    return out


def to_html(
    pair: LayoutPair | AnalysedPair,
    figure: Any,
    *,
    title: str | None = None,
    version: str = "",
    plotlyjs: str = "inline",
    extra: Sequence[tuple[str, Any]] = (),
) -> str:
    """The page as text. ``figure`` is a plotly figure (built by the caller);
    ``plotlyjs`` is ``"inline"`` (offline) or ``"cdn"`` (small, needs the network);
    ``extra`` are (heading, figure) drawn under it (the bank pictures of a plan's accesses).
    A plan solved from lifetimes gets its lifetime map under the figure, unless
    ``figure`` is that map already, and a plan with an ordering its pipeline diagram."""
    import plotly.io as pio

    analysed = analyse_pair(pair)
    pair = analysed.pair
    if plotlyjs not in PLOTLYJS:
        raise ValueError(f"plotlyjs must be one of {PLOTLYJS}, got {plotlyjs!r}")

    heading = shown(title or pair.title or "Memory layout")
    fragment = pio.to_html(
        figure,
        full_html=False,
        include_plotlyjs=True if plotlyjs == "inline" else "cdn",
        include_mathjax=False,
        div_id="smemviz-figure",
        config={"displaylogo": False, "responsive": True},
    )
    under = [*_lifetime_maps(analysed, figure), *_ordering_diagrams(analysed, figure), *extra]
    for i, (heading_text, extra_figure) in enumerate(under):
        fragment += f'\n<h2 class="smemviz-extra">{escape(shown(heading_text))}</h2>\n' + pio.to_html(
            extra_figure,
            full_html=False,
            include_plotlyjs=False,
            include_mathjax=False,
            div_id=f"smemviz-figure-{i + 1}",
            config={"displaylogo": False, "responsive": True},
        )
    meta = [f"smemviz {version}".strip()]
    if pair.arch:
        meta.append(pair.arch)
    tables = "\n".join(html_report(a) for a in analysed.analysed)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_csp(fragment)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(heading)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
        f"<h1>{escape(heading)}</h1>\n"
        f'<p class="smemviz-meta">{escape(" · ".join(meta))}</p>\n'
        f"{tables}\n{fragment}\n</body>\n</html>\n"
    )
