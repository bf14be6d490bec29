"""How far a long solve has got: a progress bar in Jupyter, a line on stderr elsewhere.

The search is bounded by nodes, never by time, so the answer does not depend
on the machine; the clock here only decides when a search has taken long
enough to be worth showing, and how often to redraw. Nothing shown feeds back
into the search.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

__all__ = ["Progress", "in_jupyter"]

# seconds of search after which progress is shown, and between two redraws
SHOW_AFTER_S = 1.0
REDRAW_S = 0.25
# between two lines when stderr is not a terminal (a log file wants few)
LINE_EVERY_S = 5.0


def in_jupyter() -> bool:
    """Whether this runs in a Jupyter kernel with ipywidgets importable (a bar can be drawn)."""
    ipython = sys.modules.get("IPython")
    if ipython is None or "ipykernel" not in sys.modules:
        return False
    shell = ipython.get_ipython()
    if shell is None or getattr(shell, "kernel", None) is None:
        return False
    import importlib.util

    return importlib.util.find_spec("ipywidgets") is not None


class Progress:
    """Told after each search of the kernel how many of the layout's nodes are used and
    what is known (best peak, proven bound); draws once the solve has run a while."""

    def __init__(
        self,
        buffers: int,
        budget: int,
        unit: str = "B",
        *,
        notice_after_s: float = SHOW_AFTER_S,
        stop: Callable[[], bool] | None = None,
    ) -> None:
        self._clock = time.monotonic
        self._start = self._clock()
        self._buffers, self._budget, self._unit = buffers, max(1, budget), unit
        self._notice_after_s = notice_after_s
        self._stop = stop
        self._view: _Bar | _Line | None = None
        self._drawn_at = -1e9
        self.done_before = 0  # nodes used by the groups of buffers already solved

    def should_stop(self) -> bool:
        """The caller's ``stop`` (a benchmark's time limit), else False."""
        return self._stop is not None and self._stop()

    def update(self, used: int, best: int | None = None, bound: int | None = None) -> None:
        """``used`` nodes of the group being searched, the best peak and the proven bound so far."""
        now = self._clock()
        if now - self._start > self._notice_after_s:
            if self._view is None:
                self._view = _Bar(self._buffers, self._budget) if in_jupyter() else _Line(self._buffers, self._budget)
            if now - self._drawn_at >= self._view.every:
                self._drawn_at = now
                self._view.draw(self.done_before + used, best, bound, self._unit)

    def finish(self, nodes: int, peak: int, bound: int, proven: bool) -> None:
        """The final state, drawn only when progress was shown."""
        if self._view is not None:
            self._view.finish(nodes, peak, bound, proven, self._unit, self._clock() - self._start)


def _state(best: int | None, bound: int | None, unit: str) -> str:
    if best is None:
        return ""
    gap = f", gap {best - bound:,} {unit}" if bound is not None and best > bound else ""
    return f"; best {best:,} {unit}" + (f", lower bound {bound:,} {unit}" if bound is not None else "") + gap


class _Line:
    """Progress on stderr: one line redrawn in place on a terminal, a line every few seconds in a log."""

    def __init__(self, buffers: int, budget: int) -> None:
        self._tty = bool(getattr(sys.stderr, "isatty", lambda: False)())
        self.every = REDRAW_S if self._tty else LINE_EVERY_S
        self._budget = budget
        print(
            f"smemviz: still searching for the smallest layout of {buffers} buffers "
            f"(node budget {budget:,}; the same declarations always give the same layout). "
            "compute_layout(solver='greedy') or a smaller node_budget answers sooner.",
            file=sys.stderr,
            flush=True,
        )

    def draw(self, nodes: int, best: int | None, bound: int | None, unit: str) -> None:
        text = f"smemviz: searched {nodes:,} of {self._budget:,} nodes ({100 * nodes // self._budget}%)" + _state(
            best, bound, unit
        )
        print(
            ("\r" + text + "\x1b[K") if self._tty else text, end="" if self._tty else "\n", file=sys.stderr, flush=True
        )

    def finish(self, nodes: int, peak: int, bound: int, proven: bool, unit: str, seconds: float) -> None:
        verdict = "proven optimal" if proven else f"gap {peak - bound:,} {unit} to the lower bound {bound:,} {unit}"
        text = f"smemviz: searched {nodes:,} nodes in {seconds:.1f} s: {peak:,} {unit}, {verdict}"
        print(
            ("\r" + text + "\x1b[K\n") if self._tty else text,
            end="" if self._tty else "\n",
            file=sys.stderr,
            flush=True,
        )


class _Bar:
    """Progress as an ipywidgets bar under the running cell."""

    every = REDRAW_S

    def __init__(self, buffers: int, budget: int) -> None:
        import ipywidgets as widgets
        from IPython.display import display

        self._bar: Any = widgets.IntProgress(value=0, min=0, max=budget, description="solving")
        self._label: Any = widgets.Label(f"{buffers} buffers, node budget {budget:,}")
        display(widgets.HBox([self._bar, self._label]))

    def draw(self, nodes: int, best: int | None, bound: int | None, unit: str) -> None:
        self._bar.value = min(nodes, self._bar.max)
        self._label.value = f"{nodes:,} of {self._bar.max:,} nodes" + _state(best, bound, unit)

    def finish(self, nodes: int, peak: int, bound: int, proven: bool, unit: str, seconds: float) -> None:
        self._bar.value = min(nodes, self._bar.max)
        self._bar.bar_style = "success" if proven else "info"
        self._bar.description = "solved"
        verdict = "proven optimal" if proven else f"gap {peak - bound:,} {unit}"
        self._label.value = f"{nodes:,} nodes in {seconds:.1f} s: {peak:,} {unit}, {verdict}"
