"""The explorer's run action: compile and launch the kernel for the current
controls, keep every run in a history table and a TFLOP/s plot.

A runner is any callable taking the explorer's control values as keywords and
returning a measurement with ``row()`` (a flat dict with at least ``label``,
``stages``, ``smem_requested``, ``tflops``, ``ran`` and ``reason``) and
``summary()`` -- :func:`smemviz.kernel.gemm_runner` makes one for smemviz's GEMM.
Without a GPU that runner still compiles and reports the requested SMEM and
registers, and the panel shows why it did not run.

A runner with a ``profile`` method (taking the same keywords, returning what
:func:`smemviz.read_ncu` returns) can also put the launch under Nsight Compute: where
``ncu`` is on PATH the panel offers "profile with Nsight Compute", and a run with it
ticked hands the counts to ``on_measured`` (the explorer draws them on the byte map).
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Mapping
from html import escape
from typing import Any

import ipywidgets as widgets

from ._map_widget import map_widget_class
from ._run_button import make_run_button

__all__ = ["RunPanel", "HISTORY_COLUMNS"]

_VARIES = ("run", "compile_s", "compile_seconds", "timings")  # differ between two compiles of the same controls
HISTORY_COLUMNS = ("run", "label", "stages", "smem_requested", "registers", "tflops", "rel_err", "ncu", "reason")
# the history plot's x axis: label -> (row key, axis title)
PLOT_AXES = {
    "SMEM bytes": ("smem_requested", "dynamic SMEM (B)"),
    "stages": ("stages", "operand stages"),
    "tile": ("tile", "CTA tile"),
}


def _cell(key: str, value: Any) -> str:
    if value is None:
        return ""
    if key == "tflops":
        return f"{value:.0f}"
    if key == "rel_err":
        return f"{value:.1e}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"  # 229,488 B, as every other table writes bytes
    return str(value)


class RunPanel(widgets.VBox):
    """A "Run on GPU" button, the last run's summary, the history table and plot.

    ``values`` gives the runner's keywords; ``controls`` (name -> widget) are the
    controls they come from: a click first sets them to the values the page
    shows (see ``_run_button``), so a run never measures a configuration other
    than the one on screen."""

    def __init__(
        self,
        runner: Callable[..., Any],
        values: Callable[[], dict[str, Any]],
        controls: Mapping[str, Any] | None = None,
        on_measured: Callable[[Any], None] | None = None,
    ) -> None:
        self._runner = runner
        self._on_measured = on_measured
        self._profiler: Callable[..., Any] | None = getattr(runner, "profile", None)
        # offered where the runner can profile and Nsight Compute is installed
        self.profile = widgets.Checkbox(
            value=False,
            description="profile with Nsight Compute",
            indent=False,
            layout=widgets.Layout(width="230px", display=None if self._can_profile() else "none"),
        )
        self._values = values
        self.history: list[dict[str, Any]] = []
        self.button = make_run_button(
            controls or {}, description="Run on GPU", icon="play", tooltip="compile, launch, check, time"
        )
        self.status = widgets.HTML("<i>no run yet: press Run on GPU to compile and measure the current controls</i>")
        self.table = widgets.HTML()
        self.x_axis = widgets.ToggleButtons(options=list(PLOT_AXES), value="SMEM bytes", description="plot by")
        # the maps' lean view (plotly.js shared by the page, not inside each widget's module), so the
        # plot starts within anywidget's start limit on a busy machine as the maps do
        self.plot = map_widget_class()(
            layout={
                "height": 300,
                "template": "plotly_white",
                "margin": {"l": 50, "r": 10, "t": 30, "b": 40},
                "yaxis_title": "TFLOP/s",
            }
        )
        self.plot.add_scatter(
            x=[],
            y=[],
            mode="markers+text",
            text=[],
            textposition="top center",
            name="runs",
            hovertemplate="%{hovertext}<extra></extra>",
            hovertext=[],
        )
        self.button.on_click(lambda _b: self.run())
        self.x_axis.observe(lambda _change: self._draw(), names="value")
        super().__init__([widgets.HBox([self.button, self.profile, self.status]), self.table, self.x_axis, self.plot])
        self._draw()
        self.add_class("smemviz-run-panel")

    def run(self) -> dict[str, Any] | None:
        """Run once with the current controls; the row added to the history, or ``None`` on error."""
        values = self._values()
        self.button.disabled = True
        self.status.value = "<i>compiling and running…</i>"
        try:
            result = self._runner(**values)
            row = {"run": len(self.history) + 1, **result.row()}
            summary = result.summary()
        except Exception as exc:  # the runner is user code: report, never raise into the widget
            frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
            where = f" ({frame.filename.rsplit('/', 1)[-1]}:{frame.lineno})" if frame else ""
            self.status.value = f"<span style='color:#b00'>run failed: {escape(type(exc).__name__)}: {escape(str(exc))}{escape(where)}</span>"
            return None
        finally:
            self.button.disabled = False
        if self.profile.value and self._can_profile():
            row["ncu"], note = self._profiled(values)
            summary += f"; {note}"
        ran = row.get("ran")
        same = None if ran or row.get("ncu") else self._same_compile(row)
        if same is not None:  # compiling the same controls again tells nothing new: no second row
            self.status.value = (
                f"<span style='color:#555'>{escape(summary)} (the same as run #{same['run']}: "
                "nothing new to add)</span>"
            )
            return same
        self.history.append(row)
        colour = "#070" if ran and row.get("passed", True) else "#b00" if ran else "#555"
        self.status.value = f"<span style='color:{colour}'>{escape(summary)}</span>"
        self._draw()
        return row

    def _can_profile(self) -> bool:
        if self._profiler is None:
            return False
        from ..analysis.ncu._profile import find_ncu

        return find_ncu() is not None

    def _profiled(self, values: dict[str, Any]) -> tuple[str, str]:
        """Profile the controls' launch under Nsight Compute and hand the counts to the map:
        the history cell and the status note (the reason, when it could not)."""
        assert self._profiler is not None
        self.status.value = "<i>profiling one launch under Nsight Compute…</i>"
        from ..analysis.ncu._overlay import measured_segments

        try:
            res = self._profiler(**values)
            look = sum(seg.look_here for seg in measured_segments(res)) + len(res.unattributed)
            if self._on_measured is not None:
                self._on_measured(res)
        except Exception as exc:  # the profiler runs user code and ncu: report, never raise
            return "failed", f"profiling failed: {type(exc).__name__}: {exc}"
        cell = "as predicted" if not look else f"{look} to look at"
        return cell, (
            f"Nsight Compute: {len(res.rows)} shared-memory rows, {len(res.unattributed)} not attributed, "
            f"{len(res.disagreements)} disagreements; {cell} on the byte map"
        )

    def _same_compile(self, row: dict[str, Any]) -> dict[str, Any] | None:
        """An earlier row that did not run either and says the same (controls,
        SMEM, registers, reason): its number is reused rather than a row added."""
        key = {k: v for k, v in row.items() if k not in _VARIES}
        for old in self.history:
            if not old.get("ran") and {k: v for k, v in old.items() if k not in _VARIES} == key:
                return old
        return None

    def _draw(self) -> None:
        head = "".join(f"<th>{escape(c)}</th>" for c in HISTORY_COLUMNS)
        body = "".join(
            "<tr>" + "".join(f"<td>{escape(_cell(c, r.get(c)))}</td>" for c in HISTORY_COLUMNS) + "</tr>"
            for r in reversed(self.history)
        )
        self.table.value = f"<table class='smemviz-run-history smemviz-utable'><tr>{head}</tr>{body}</table>"
        timed = [r for r in self.history if r.get("tflops") is not None]
        key, title = PLOT_AXES[self.x_axis.value]
        with self.plot.batch_update():
            self.plot.layout.title = f"runs: TFLOP/s by {self.x_axis.value}"
            self.plot.layout.xaxis.title = title
            self.plot.layout.xaxis.type = "category" if key == "tile" else "linear"
            trace = self.plot.data[0]
            trace.x = [f"{r.get('tile_m')}x{r.get('tile_n')}" if key == "tile" else r.get(key) for r in timed]
            trace.y = [r["tflops"] for r in timed]
            trace.text = [f"#{r['run']}" for r in timed]
            trace.hovertext = [f"#{r['run']} {r['label']}: {r['tflops']:.0f} TFLOP/s" for r in timed]
            # with nothing timed, say why on the chart rather than leave an empty grid
            empty = not timed
            reasons = [r.get("reason") for r in self.history if r.get("reason")]
            why = (f"no timed runs: {reasons[-1]}" if reasons else "no runs yet: press Run on GPU") if empty else ""
            self.plot.layout.annotations = (
                [
                    {
                        "text": escape(why),
                        "xref": "paper",
                        "yref": "paper",
                        "x": 0.5,
                        "y": 0.5,
                        "showarrow": False,
                        "font": {"size": 13, "color": "#546e7a"},
                    }
                ]
                if empty
                else []
            )
            self.plot.layout.xaxis.visible = not empty
            self.plot.layout.yaxis.visible = not empty
