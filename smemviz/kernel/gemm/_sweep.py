"""Sweep a grid of GEMM configs: compile each once (cached), run and time each on
a Hopper GPU when there is one, and return a table and a figure of TFLOP/s
against stages, SMEM bytes or tile."""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields, replace
from html import escape
from pathlib import Path
from typing import Any

from ._config import GemmConfig, GemmProblem
from ._measure import (
    GemmMeasurement,
    compile_measurement,
    prepare_checked,
    random_operands,
    time_interleaved,
    timed,
    why_not_run,
)

__all__ = ["sweep", "SweepResult", "grid_configs"]

_CONFIG_FIELDS = {f.name for f in fields(GemmConfig)}
Progress = Callable[[int, int, str], None]


def grid_configs(base: GemmConfig | None = None, **grid: Sequence[Any]) -> list[GemmConfig]:
    """Every combination of the given field values over ``base`` (``stages=[None]`` is
    the most that fit). Unknown field names are refused by name."""
    unknown = sorted(set(grid) - _CONFIG_FIELDS)
    if unknown:
        raise TypeError(f"sweep: GemmConfig has no field {unknown[0]!r}; fields: {', '.join(sorted(_CONFIG_FIELDS))}")
    base = base or GemmConfig()
    keys = list(grid)
    values = [list(v) if isinstance(v, Iterable) and not isinstance(v, str) else [v] for v in grid.values()]
    out = []
    for combo in itertools.product(*values):
        params = {**{f: getattr(base, f) for f in _CONFIG_FIELDS}, **dict(zip(keys, combo))}
        out.append(GemmConfig(**params))
    return out


def _text_progress(done: int, total: int, label: str) -> None:
    width = 24
    filled = width * done // max(total, 1)
    end = "\n" if done == total else ""
    print(
        f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {label[:60]:<60}",
        end=end,
        file=sys.stdout,
        flush=True,
    )


@dataclass(frozen=True)
class SweepResult:
    """The rows of a sweep (one flat dict per config, see :meth:`GemmMeasurement.row`)."""

    rows: tuple[dict[str, Any], ...]
    problem: GemmProblem
    gpu: str | None = None

    @property
    def ran(self) -> bool:
        return any(r["ran"] for r in self.rows)

    def best(self) -> dict[str, Any] | None:
        timed = [r for r in self.rows if r["tflops"] is not None and r["passed"]]
        return max(timed, key=lambda r: r["tflops"]) if timed else None

    def table(
        self, columns: Sequence[str] = ("label", "stages", "smem_requested", "registers", "tflops", "rel_err", "reason")
    ) -> str:
        """A markdown table of the chosen columns."""
        lines = ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
        for r in self.rows:
            cells = []
            for c in columns:
                v = r.get(c)
                cells.append(
                    ""
                    if v is None
                    else f"{v:.3g}"
                    if isinstance(v, float) and c == "rel_err"
                    else f"{v:.0f}"
                    if isinstance(v, float)
                    else str(v).replace("|", "/")
                )
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        cols = ("label", "stages", "smem_requested", "registers", "tflops", "rel_err", "reason")
        head = "".join(f"<th>{escape(c)}</th>" for c in cols)
        body = "".join(
            "<tr>"
            + "".join(
                f"<td>{escape('' if r.get(c) is None else (f'{r[c]:.0f}' if c == 'tflops' else f'{r[c]:.1e}' if c == 'rel_err' else str(r[c])))}</td>"
                for c in cols
            )
            + "</tr>"
            for r in self.rows
        )
        where = f" on {escape(self.gpu)}" if self.gpu else ""
        p = self.problem
        return f"<div><b>GEMM sweep</b>, {p.m}x{p.n}x{p.k}{where}<table><tr>{head}</tr>{body}</table></div>"

    def figure(self, x: str = "stages") -> Any:
        """Plotly figure: TFLOP/s (or, when nothing ran, requested SMEM) against
        ``x`` ("stages", "smem" or "tile"), one trace per tile x aliasing x cluster."""
        import plotly.graph_objects as go

        xkey = {"stages": "stages", "smem": "smem_requested", "tile": "tile"}.get(x)
        if xkey is None:
            raise ValueError(f"figure(x={x!r}): choose 'stages', 'smem' or 'tile'")
        ykey, ytitle = ("tflops", "TFLOP/s") if self.ran else ("smem_requested", "requested dynamic SMEM (B)")
        fig = go.Figure()
        groups: dict[str, list[dict[str, Any]]] = {}
        for r in self.rows:
            if r.get(ykey) is None:
                continue
            name = (
                f"{r['dtype']} {r['tile_m']}x{r['tile_n']} cl{r['cluster_m']}x{r['cluster_n']} "
                f"{'aliased' if r['alias_epilogue'] else 'separate'} epilogue"
            )
            groups.setdefault(name, []).append(r)
        for name, rows in groups.items():
            rows = sorted(rows, key=lambda r: (r["stages"], r["smem_requested"]))
            xs = [f"{r['tile_m']}x{r['tile_n']}" if xkey == "tile" else r[xkey] for r in rows]
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=[r[ykey] for r in rows],
                    mode="lines+markers",
                    name=name,
                    text=[r["label"] for r in rows],
                    hovertemplate="%{text}<br>" + ytitle + " %{y:.0f}<extra></extra>",
                )
            )
        p = self.problem
        status = f"measured on {self.gpu}" if self.ran else "compiled only (no GPU run)"
        fig.update_layout(
            title=f"GEMM {p.m}x{p.n}x{p.k}: {ytitle} by {x} ({status})",
            xaxis_title={"stages": "operand stages", "smem": "dynamic SMEM (B)", "tile": "CTA tile"}[x],
            yaxis_title=ytitle,
            template="plotly_white",
            height=420,
            legend={"font": {"size": 10}},
        )
        return fig

    def to_json(self) -> str:
        return json.dumps({"problem": vars(self.problem), "gpu": self.gpu, "rows": list(self.rows)}, indent=1)

    @classmethod
    def from_json(cls, text: str) -> SweepResult:
        data = json.loads(text)
        return cls(rows=tuple(data["rows"]), problem=GemmProblem(**data["problem"]), gpu=data.get("gpu"))

    @classmethod
    def load(cls, path: str | Path) -> SweepResult:
        return cls.from_json(Path(path).read_text())


def sweep(
    configs: Iterable[GemmConfig] | None = None,
    problem: GemmProblem | None = None,
    *,
    run: bool = True,
    progress: bool | Progress = True,
    iters: int = 10,
    rounds: int = 7,
    warmup: int = 3,
    **grid: Sequence[Any],
) -> SweepResult:
    """Measure every config of ``configs`` or of the ``grid`` (field -> values), e.g.
    ``sweep(tile_n=[128, 256], stages=[2, 3, 4, None], alias_epilogue=[True, False])``.

    Each config is compiled once (the compile cache keeps it for the next sweep);
    configs that do not fit are kept as rows that say so. On a Hopper GPU each is
    launched and checked against torch, then all are timed together in interleaved
    rounds; elsewhere the rows hold the requested SMEM and registers and the
    reason it did not run.
    """
    if configs is not None and grid:
        raise TypeError("sweep: give configs or a grid of field values, not both")
    todo = list(configs) if configs is not None else grid_configs(None, **grid)
    problem = problem or GemmProblem(4096, 4096, 4096)
    report: Progress | None = _text_progress if progress is True else (progress or None)
    # each config says for itself why it cannot run here (a mixed Hopper/Blackwell sweep runs the half it can)
    why = [why_not_run(c) if run else "not asked to run" for c in todo]
    runnable = [i for i, w in enumerate(why) if w is None]
    steps = len(todo) + len(runnable)
    rows: list[GemmMeasurement] = []
    for i, config in enumerate(todo):
        if report:
            report(i, steps, f"compile {config.label()}")
        rows.append(compile_measurement(config, problem))
    gpu_name = None
    if runnable:
        measured = _run_interleaved(
            [rows[i] for i in runnable], problem, report, len(todo), steps, iters, rounds, warmup
        )
        for i, m in zip(runnable, measured):
            rows[i] = m
        from .._device import current_gpu

        gpu = current_gpu()
        gpu_name = gpu.name if gpu is not None else None
    rows = [replace(m, reason=w) if w is not None and m.fits else m for m, w in zip(rows, why)]
    if report:
        report(steps, steps, "done")
    return SweepResult(rows=tuple(m.row() for m in rows), problem=problem, gpu=gpu_name)


def _run_interleaved(
    rows: list[GemmMeasurement],
    problem: GemmProblem,
    report: Progress | None,
    done: int,
    steps: int,
    iters: int,
    rounds: int,
    warmup: int,
) -> list[GemmMeasurement]:
    """Check every config that fits on shared inputs, then time them all in
    interleaved rounds, so slow drifts of clock and power spread over all of them."""
    inputs: dict[str, tuple[Any, Any]] = {}
    prepared: dict[int, Any] = {}
    errors: dict[int, float] = {}
    for i, m in enumerate(rows):
        if report:
            report(done + i, steps, f"check {m.row()['label']}")
        if not m.fits:
            continue
        if m.config.dtype not in inputs:
            inputs[m.config.dtype] = random_operands(m.config.dtype, problem)
        prepared[i], errors[i] = prepare_checked(m.config, *inputs[m.config.dtype])
    times = time_interleaved({str(i): p for i, p in prepared.items()}, iters=iters, rounds=rounds, warmup=warmup)
    return [timed(m, times[str(i)], errors[i]) if i in prepared else m for i, m in enumerate(rows)]
