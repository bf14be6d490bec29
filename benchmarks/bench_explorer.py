"""Explorer update time, Python side: from a control change to the SMEM
map's update message, for 10, 100, 1,000 and 5,000 regions.

Target: <= 30 ms at 1,000 regions. The builder returns layouts computed
beforehand, so the number is the explorer's own work (figure specs, diff,
message, totals, table); the time to compute a layout from allocations is
printed beside it. The baseline, measured in the same run, is the same
explorer on plotly's own FigureWidget, updated through ``plotly_update``.

    python -m benchmarks.bench_explorer [--repeat 20] [--browser]

``--browser`` also runs bench_explorer_browser.py (JupyterLab + Chromium).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import subprocess
import sys
import time
from pathlib import Path

import ipywidgets

import smemviz
from smemviz import SmemAllocation, SmemAllocator

SIZES = (10, 100, 1000, 5000)
SIZE_STEPS = (64, 80, 96, 112, 128)
SMALL_STEPS = (8, 12, 16, 20, 24)  # 5,000 regions must still fit in 227 KiB


def make_layout(n: int, size: int) -> SmemAllocator:
    """``n`` regions: mixed alignments, one alias group holding a fifth of them."""
    s = SmemAllocator()
    per_phase = max(1, n // 10)
    small = n > 1000
    for i in range(n - 2 * per_phase):
        align = (8 if i % 3 == 0 else 4) if small else (128 if i % 3 == 0 else 16)
        s.add(SmemAllocation(f"buf_{i}", size + (i % 7) * (4 if small else 16), align))
    s.add_alias_group(
        [
            [SmemAllocation(f"phase1_{i}", size, 16) for i in range(per_phase)],
            [SmemAllocation(f"phase2_{i}", 2 * size, 16) for i in range(per_phase)],
        ]
    )
    s.compute_layout()
    return s


def _explorer(plans: dict, n: int, steps: tuple[int, ...], baseline: bool) -> smemviz.explorer.Explorer:
    from smemviz.explorer import _map_widget

    original = _map_widget.map_widget_class
    if baseline:
        import plotly.graph_objects as go

        _map_widget.map_widget_class = lambda: go.FigureWidget
    try:
        return smemviz.explore(lambda n, size: plans[size], n=ipywidgets.fixed(n), size=list(steps))
    finally:
        _map_widget.map_widget_class = original


def bench(n: int, repeat: int, baseline: bool = False) -> dict[str, float]:
    steps = SMALL_STEPS if n > 1000 else SIZE_STEPS
    plans = {size: make_layout(n, size).plan for size in steps}
    t0 = time.perf_counter()
    for size in steps:
        _ = make_layout(n, size).plan
    core_ms = (time.perf_counter() - t0) / len(steps) * 1000

    ex = _explorer(plans, n, steps, baseline)
    fig = ex.smem_widget
    sent: list[float] = []
    hook = "_send_update_msg" if baseline else "send"  # where the update message leaves
    original = getattr(fig, hook)

    def record(*args, **kwargs):
        sent.append(time.perf_counter())
        return original(*args, **kwargs)

    setattr(fig, hook, record)
    to_message, whole = [], []
    for k in range(repeat):
        value = steps[(k + 1) % len(steps)]
        gc.collect()
        sent.clear()
        start = time.perf_counter()
        ex.controls["size"].value = value
        end = time.perf_counter()
        if not sent:
            raise RuntimeError(f"no update message for n={n}, size={value}")
        to_message.append(sent[0] - start)
        whole.append(end - start)
    return {
        "to_message_ms": statistics.median(to_message) * 1000,
        "callback_ms": statistics.median(whole) * 1000,
        "core_layout_ms": core_ms,
        "regions": len(plans[steps[0]].regions),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--browser", action="store_true", help="also measure the in-browser redraw")
    args = ap.parse_args()
    print(
        f"python {sys.version.split()[0]}, plotly {__import__('plotly').__version__}, "
        f"ipywidgets {ipywidgets.__version__}; median of {args.repeat}"
    )
    print(
        f"{'regions':>8}  {'to message':>11}  {'whole callback':>15}  {'compute_layout+plan':>20}"
        f"  {'baseline: to message / callback':>32}  {'ratio (callback)':>16}"
    )
    for n in SIZES:
        r = bench(n, args.repeat)
        b = bench(n, args.repeat, baseline=True)
        mark = "  (target <= 30 ms)" if n == 1000 else ""
        print(
            f"{r['regions']:>8}  {r['to_message_ms']:>8.1f} ms  {r['callback_ms']:>12.1f} ms"
            f"  {r['core_layout_ms']:>17.1f} ms  {b['to_message_ms']:>18.1f} / {b['callback_ms']:>6.1f} ms"
            f"  {r['callback_ms'] / b['callback_ms']:>16.2f}{mark}"
        )
    if args.browser:
        root = Path(__file__).resolve().parents[1]
        subprocess.run([sys.executable, "-m", "benchmarks.bench_explorer_browser"], check=True, cwd=root)


if __name__ == "__main__":
    main()
