"""Exports of a layout for design docs, pull requests and CI.

``export(obj, path)`` picks the format from the extension:

* ``.html``: a self-contained page (plotly.js inlined, opens offline) with the
  usage tables and the interactive diagram;
* ``.svg``, ``.png``, ``.pdf``: the diagram as a static image, drawn by
  kaleido in a headless Chrome/Chromium (kept warm between exports);
* ``.json``: the plan in its versioned schema;
* ``.md``: the usage table(s) as Markdown.

The diagram comes from the same builders as the notebook views
(:mod:`smemviz.figures`), or is the figure the caller passes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .._optional import require
from ..sources._inputs import LayoutPair, as_layouts
from ._analysed import analyse_pair
from ._atomic import write_atomic
from ._static import (
    RENDER_TIMEOUT_S,
    BrowserNotFoundError,
    ExportTimeoutError,
    find_browser,
    in_jupyter_kernel,
    start_renderer,
    stop_renderer,
    warm_renderer,
)
from ._text import read_plans

__all__ = [
    "export",
    "EXPORT_FORMATS",
    "BrowserNotFoundError",
    "ExportTimeoutError",
    "find_browser",
    "start_renderer",
    "stop_renderer",
    "read_plans",
    "warm_renderer",
]

if in_jupyter_kernel():  # a notebook that imports export is likely to write an image soon
    warm_renderer()

# extension -> what it holds
EXPORT_FORMATS: dict[str, str] = {
    ".html": "interactive page, self-contained",
    ".svg": "static image (vector)",
    ".png": "static image (raster)",
    ".pdf": "static image (vector, printable)",
    ".json": "layout plan, versioned schema",
    ".md": "usage table, Markdown",
}
_STATIC = (".svg", ".png", ".pdf")


def export(  # noqa: PLR0913 - the public call's keyword options (arch, size, title, figure, ...)
    obj: Any,
    path: str | Path,
    *,
    arch: Any = None,
    which: str = "both",
    width: int | None = None,
    height: int | None = None,
    scale: float = 1.0,
    title: str | None = None,
    figure: Any = None,
    timeout: float = RENDER_TIMEOUT_S,
    plotlyjs: str = "inline",
    banks: bool | None = None,
    measured: Any = None,
) -> Path:
    """Write ``obj``'s layout to ``path`` in the format its extension names.

    ``obj`` is a :class:`~smemviz.LayoutPlan`, a computed smemviz or CUTLASS
    allocator, a layout file's ``LayoutSpec`` or an ``(smem, tmem)`` pair
    (either may be ``None``). ``arch`` sets the architecture that capacities
    are shown against; ``which`` ("both", "smem", "tmem") picks the memories.
    ``width``/``height`` (pixels) and ``scale`` size static images; ``figure``
    replaces the default diagram (e.g. the one tuned in the explorer).
    ``plotlyjs`` ("inline" or "cdn") is for HTML: plotly.js inside the page
    (opens offline, ~4.8 MB) or referenced from plotly's CDN (small).
    ``banks`` is for a plan that carries accesses (``SmemAllocation(..., access=...)``):
    an HTML page adds each access's bank picture under the map unless ``banks=False``;
    an image draws the bank pictures instead of the map with ``banks=True``.
    ``measured`` is what :func:`smemviz.read_ncu` made of a profiled launch of the kernel:
    the map draws it beside the prediction and the tables list it (every format).
    The file is written atomically; the written path is returned.
    """
    out = Path(path)
    ext = out.suffix.lower()
    if ext not in EXPORT_FORMATS:
        supported = ", ".join(EXPORT_FORMATS)
        raise ValueError(
            f"cannot export to {str(out)!r}: unknown extension {ext or '(none)'!r}; supported: {supported}"
        )
    if not out.parent.is_dir():
        raise FileNotFoundError(f"cannot export to {str(out)!r}: folder {str(out.parent)!r} does not exist")
    if _is_figure(obj):
        raise TypeError(
            f"export() takes the layout first and the figure as figure=: got a {type(obj).__name__} as the layout; "
            f"write export(layout, {str(out)!r}, figure=fig) (e.g. figure=compare_figure(a, b), with a as the layout)"
        )
    pair = as_layouts(obj, which=which, arch=arch)
    if title is not None:
        pair = LayoutPair(pair.smem, pair.tmem, title, pair.arch)

    if ext == ".json":
        from ._text import to_json

        return write_atomic(out, to_json(analyse_pair(pair, measured=measured)))
    if ext == ".md":
        from ._text import to_markdown

        return write_atomic(out, to_markdown(analyse_pair(pair, measured=measured)))

    # missing pieces are reported before any slow work
    _require_plotly()
    if ext in _STATIC:
        _static_ready()
    with_accesses = pair.smem is not None and bool(pair.smem.accesses)
    if banks and not with_accesses:
        raise ValueError(
            f"cannot draw the bank pictures into {str(out)!r}: the SMEM plan carries no accesses "
            f"(declare them with SmemAllocation(..., access=...))"
        )
    if ext in _STATIC:
        from ._image import static_image

        data = static_image(
            analyse_pair(pair, measured=measured) if measured is not None else pair,
            ext[1:],
            figure=figure,
            width=width,
            height=height,
            scale=scale,
            timeout=timeout,
            banks=bool(banks),
        )
        return write_atomic(out, data)
    analysed = analyse_pair(pair, measured=measured)  # once: the map, the tables and the bank pictures read it
    if figure is None:
        from ._figure import build_figure

        figure = build_figure(analysed)
    if ext == ".html":
        from .. import __version__
        from ._html import to_html

        extra = []
        if with_accesses and banks is not False:
            from ..figures._bank_plan import plan_bank_figures

            extra = plan_bank_figures(analysed.smem)
        return write_atomic(out, to_html(analysed, figure, version=__version__, plotlyjs=plotlyjs, extra=extra))
    raise AssertionError(f"no writer for {ext}")  # every format of EXPORT_FORMATS returned above


def _static_ready() -> None:
    """Report a missing kaleido or browser before any slow work (the command line's render
    service reports a missing kaleido itself)."""
    from . import _render_service, _static

    if not _render_service.in_use():
        _static._import_kaleido()
    find_browser()


def _is_figure(obj: Any) -> bool:
    """A plotly figure (or FigureWidget), told apart without importing plotly."""
    return callable(getattr(obj, "to_plotly_json", None)) and hasattr(obj, "layout") and hasattr(obj, "data")


def _require_plotly() -> None:
    require("plotly", "HTML and image exports draw with plotly")
