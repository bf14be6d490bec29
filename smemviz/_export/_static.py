"""Static images (SVG, PNG, PDF) through kaleido and a Chrome/Chromium browser.

One headless browser is started on first use and kept warm for the rest of
the process, so repeated exports take a fraction of a second instead of a
browser start each. It runs on its own thread with its own event loop (so it
works inside Jupyter's running loop too), every wait has a timeout, and the
browser is shut down at interpreter exit.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import shutil
import threading
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from .._compat.kaleido import fast_tab_reuse, find_chromium
from .._optional import require

__all__ = [
    "BrowserNotFoundError",
    "ExportTimeoutError",
    "find_browser",
    "render_image",
    "start_renderer",
    "stop_renderer",
    "renderer_running",
    "warm_renderer",
    "in_jupyter_kernel",
]

STARTUP_TIMEOUT_S = 60.0
RENDER_TIMEOUT_S = 60.0

_INSTALL_HINT = (
    "install one, then try again: `apt-get install chromium` (Debian/Ubuntu), "
    "`plotly_get_chrome` (downloads Chrome for plotly/kaleido), "
    "or set BROWSER_PATH to a Chrome/Chromium executable"
)


class BrowserNotFoundError(RuntimeError):
    """Static export needs Chrome or Chromium and none was found."""


class ExportTimeoutError(TimeoutError):
    """The browser did not start or render within the time allowed."""


def _executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def find_browser() -> str:
    """The Chrome/Chromium executable to render with: ``BROWSER_PATH`` when set,
    else the one kaleido would find. Raises :class:`BrowserNotFoundError`."""
    override = os.environ.get("BROWSER_PATH")
    if override:
        resolved = override if os.sep in override else (shutil.which(override) or override)
        if not _executable(resolved):
            raise BrowserNotFoundError(
                f"BROWSER_PATH={override!r} is not an executable file; static export (SVG/PNG/PDF) "
                f"needs Chrome or Chromium: {_INSTALL_HINT}"
            )
        return resolved
    found = find_chromium()
    if not found:
        for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"):
            found = shutil.which(name)
            if found:
                break
    if not found or not _executable(found):
        raise BrowserNotFoundError(
            f"static export (SVG/PNG/PDF) needs Chrome or Chromium and none was found; {_INSTALL_HINT}. "
            "HTML, JSON and Markdown exports need no browser."
        )
    return found


def _import_kaleido() -> Any:
    return require("kaleido", "static export (SVG/PNG/PDF) needs kaleido")


class _Renderer:
    """A kaleido browser on a private event-loop thread."""

    def __init__(self, browser: str, timeout: float) -> None:
        kaleido = _import_kaleido()
        self.browser = browser
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run, name="smemviz-kaleido", daemon=True)
        self.thread.start()
        try:
            # MathJax would come from a CDN; smemviz figures use no LaTeX.
            self.kaleido = self._call(self._make(kaleido, browser, timeout), STARTUP_TIMEOUT_S, "start")
        except BaseException:
            self._stop_loop()
            raise

    @staticmethod
    async def _make(kaleido: Any, browser: str, timeout: float) -> Any:
        k = fast_tab_reuse(kaleido.Kaleido)(n=1, timeout=timeout, mathjax=False, path=browser)
        await k.open()
        return k

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def _call(self, coro: Any, timeout: float, what: str) -> Any:
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except FutureTimeout:
            future.cancel()
            raise ExportTimeoutError(f"the browser ({self.browser}) did not {what} within {timeout:g} s") from None

    def render(self, fig: dict[str, Any], fmt: str, width: int, height: int, scale: float, timeout: float) -> bytes:
        opts = {"format": fmt, "width": width, "height": height, "scale": scale}
        return self._call(self.kaleido.calc_fig(fig, opts=opts), timeout, f"render a {fmt.upper()}")

    def close(self) -> None:
        try:
            self._call(self.kaleido.close(), 15.0, "close")
        except Exception:  # noqa: BLE001 - closing is best effort; the loop stops anyway
            pass
        self._stop_loop()

    def _stop_loop(self) -> None:
        try:  # let pending work (a timed-out render, a tab reload) finish cancelling
            asyncio.run_coroutine_threadsafe(_cancel_pending(), self.loop).result(5.0)
        except Exception:  # noqa: BLE001 - the loop is stopped below regardless
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5.0)
        if not self.thread.is_alive():
            self.loop.close()


async def _cancel_pending() -> None:
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


_lock = threading.Lock()
_renderer: _Renderer | None = None


def renderer_running() -> bool:
    return _renderer is not None


def start_renderer(timeout: float = RENDER_TIMEOUT_S) -> None:
    """Start the warm browser now (it otherwise starts on the first static export)."""
    global _renderer
    with _lock:
        if _renderer is None:
            _renderer = _Renderer(find_browser(), timeout)
            # registered after the browser's temporary folders, so that (exit
            # hooks run last-in first-out) it closes the browser before Python
            # sweeps those folders away
            atexit.unregister(stop_renderer)
            atexit.register(stop_renderer)


_warming: threading.Thread | None = None


def in_jupyter_kernel() -> bool:
    """Whether this process is a Jupyter kernel (or ``SMEMVIZ_WARMUP=1`` says
    to act as one): the one place a static export is likely soon and a browser
    started ahead costs no one a wait (a command-line run would wait for it
    to close at exit)."""
    import sys

    if os.environ.get("SMEMVIZ_WARMUP") == "1":
        return True
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    return shell is not None and getattr(shell, "kernel", None) is not None


def warm_renderer() -> threading.Thread | None:
    """Start the browser (and import plotly and kaleido) on a background thread,
    once per process, so the session's first static export does not wait for
    it (about 3 s here, against 0.1-0.3 s warm). Any failure is left for the
    export itself to report: nothing is raised here. ``SMEMVIZ_NO_WARMUP=1``
    turns it off. Returns the thread, or ``None`` when nothing was started."""
    global _warming
    if os.environ.get("SMEMVIZ_NO_WARMUP") or _renderer is not None:
        return None
    with _lock:
        if _warming is not None:
            return None

        def warm() -> None:
            try:
                import plotly.graph_objects  # noqa: F401 - the figure an export builds first

                _import_kaleido()
                start_renderer()
            except Exception:  # noqa: BLE001 - the first export reports what is missing
                pass

        _warming = threading.Thread(target=warm, name="smemviz-renderer-warmup", daemon=True)
    _warming.start()
    return _warming


def stop_renderer() -> None:
    """Shut the warm browser down (also done at interpreter exit)."""
    global _renderer
    with _lock:
        renderer, _renderer = _renderer, None
    if renderer is not None:
        renderer.close()


def image_size(fig: dict[str, Any], width: int | None, height: int | None, scale: float) -> tuple[int, int]:
    """Pixels of the image of ``fig``: ``width``/``height`` when given, else the figure's own
    size, else 1200 x 500."""
    layout = fig.get("layout", {})
    w = int(width or layout.get("width") or 1200)
    h = int(height or layout.get("height") or 500)
    if w <= 0 or h <= 0 or scale <= 0:
        raise ValueError(f"width, height and scale must be positive, got {w}, {h}, {scale}")
    return w, h


def render_image(
    figure: Any,
    fmt: str,
    *,
    width: int | None = None,
    height: int | None = None,
    scale: float = 1.0,
    timeout: float = RENDER_TIMEOUT_S,
) -> bytes:
    """``figure`` as ``fmt`` ("svg", "png" or "pdf") bytes.

    ``width``/``height`` default to the figure's own size (else 1200 x 500).
    A render that fails or times out discards the browser. A failure that is not a
    timeout is tried once more in a fresh browser: a reused tab can fail in the page
    itself (its script not loaded yet after a reload), which a fresh browser does not
    repeat; a second failure is raised.
    """
    fig = figure.to_plotly_json() if hasattr(figure, "to_plotly_json") else dict(figure)
    w, h = image_size(fig, width, height, scale)
    for attempt in (1, 2):
        start_renderer(timeout)
        renderer = _renderer
        assert renderer is not None
        try:
            return renderer.render(fig, fmt, w, h, scale, timeout)
        except ExportTimeoutError:
            stop_renderer()
            raise
        except Exception:
            stop_renderer()
            if attempt == 2:
                raise
        except BaseException:
            stop_renderer()
            raise
    raise AssertionError("unreachable: the second attempt returns or raises")
