"""Where the in-browser redraw time after a slider move goes, at 200 regions.

Same set-up as bench_explorer_browser.py (JupyterLab, headless Chromium, the
GEMM builder with extra regions), with timestamps on one clock (wall time,
milliseconds, both processes on this machine):

- press: Playwright presses ArrowRight/ArrowLeft on the slider handle;
- ws out: the page's websocket sends the comm message with the new value;
- kernel in / builder / spec+send / callback done: in the kernel, when the
  widget message arrives, the SMEM map's update message is sent and the
  observer returns;
- ws in: the page receives the map's ``_py2js_update`` state;
- plotly done: the graph div fires ``plotly_afterplot`` (redraw finished);
- title: the new title is in the DOM (what bench_explorer_browser.py times);
- main-thread long tasks (> 50 ms) between press and title, summed.

    python -m benchmarks.bench_explorer_breakdown [--moves 12] [--profile out.cpuprofile]

``--profile`` records a Chrome CPU profile of the page over the timed moves
(open it in Chrome DevTools' Performance panel) and prints its top functions.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from tools.browser import CHROMIUM_ARGS, find_chromium
from tools.lab import GEMM_CELL, open_and_run, smem_title, start_lab, stop_lab, wait_for_title_change

# Runs in the kernel: wall-clock stamps of the explorer's steps, kept in _T.
KERNEL_HOOKS = """
import time, ipywidgets
_T = []
_slider_comm = ex.controls["stages"].comm
_orig_callback = _slider_comm._msg_callback
def _timed_callback(msg):
    _T.append(("kernel in", time.time()))
    return _orig_callback(msg)
_slider_comm.on_msg(_timed_callback)
_orig_build = ex._builder
def _timed_build(**kw):
    _T.append(("builder start", time.time()))
    out = _orig_build(**kw)
    _T.append(("builder end", time.time()))
    return out
ex._builder = _timed_build
for _name, _fig in (("smem", ex.smem_widget), ("tmem", ex.tmem_widget)):
    def _wrap(orig, name):
        def send(*a, **k):
            _T.append((name + " send", time.time()))
            r = orig(*a, **k)
            _T.append((name + " sent", time.time()))
            return r
        return send
    _fig.send = _wrap(_fig.send, _name)  # the map update message
_orig_refresh = ex.refresh
def _timed_refresh():
    _orig_refresh()
    _T.append(("callback done", time.time()))
ex.refresh = _timed_refresh
"""

# Runs in the page before anything else: websocket and plotly stamps in window.__T.
PAGE_HOOKS = r"""
window.__T = [];
const stamp = (what, extra) => window.__T.push([what, performance.timeOrigin + performance.now(), extra || 0]);
const text = (data) => {
  if (typeof data === 'string') return data;
  try { return new TextDecoder('utf-8', {fatal: false}).decode(data instanceof ArrayBuffer ? new Uint8Array(data) : data); }
  catch (e) { return ''; }
};
const size = (data) => typeof data === 'string' ? data.length : (data.byteLength || data.size || 0);
const Orig = window.WebSocket;
window.WebSocket = function (...args) {
  const ws = new Orig(...args);
  const send = ws.send.bind(ws);
  ws.send = (data) => {
    const t = text(data);
    if (t.includes('"comm_msg"') && t.includes('"value"')) stamp('ws out', size(data));
    return send(data);
  };
  ws.addEventListener('message', (ev) => {
    const t = text(ev.data);
    if (t.includes('smemviz_update') || (t.includes('_py2js_update') && !t.includes('"_py2js_update":null'))) stamp('ws in update', size(ev.data));
    else if (t.includes('"comm_msg"')) stamp('ws in other comm', size(ev.data));
  });
  return ws;
};
window.WebSocket.prototype = Orig.prototype;
Object.assign(window.WebSocket, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) window.__T.push(['longtask', performance.timeOrigin + e.startTime, e.duration]);
}).observe({type: 'longtask', buffered: true});
"""

HOOK_PLOTLY = """() => {
  const gds = document.querySelectorAll('.js-plotly-plot');
  gds.forEach((gd, i) => {
    if (gd.__timed) return;
    gd.__timed = true;
    gd.on('plotly_afterplot', () => window.__T.push(['afterplot ' + i, performance.timeOrigin + performance.now(), 0]));
  });
  return gds.length;
}"""


def summarize(moves: list[dict[str, float]]) -> None:
    def med(key: str) -> str:
        vals = [m[key] for m in moves if key in m]
        return f"{statistics.median(vals):7.0f} ms" if vals else "      n/a"

    rows = [
        ("press -> ws out (slider comm message leaves the page)", "ws_out"),
        ("press -> kernel receives the value", "kernel_in"),
        ("  builder (user code)", "builder"),
        ("  builder end -> SMEM update message sent", "to_send"),
        ("  SMEM message -> callback done (TMEM map; panels follow later)", "rest"),
        ("press -> kernel callback done", "callback_done"),
        ("press -> page receives the SMEM update", "ws_in"),
        ("page receives -> SMEM plotly_afterplot", "plotly"),
        ("press -> SMEM afterplot", "afterplot"),
        ("press -> title seen by Playwright (end to end)", "title"),
        ("long tasks on the main thread (sum, press -> title)", "longtasks"),
    ]
    print(f"breakdown, median of {len(moves)} moves:")
    for label, key in rows:
        print(f"  {label:<62} {med(key)}")


def one_move(page: Any, handle: Any, key: str, debug: bool = False) -> tuple[dict[str, float], list, float]:
    page.evaluate("() => { window.__T = []; }")
    page.evaluate(HOOK_PLOTLY)
    before = smem_title(page)
    t_press = time.time() * 1000
    handle.press(key)
    wait_for_title_change(page, before)
    t_title = time.time() * 1000
    page.wait_for_timeout(400)  # let the rest (TMEM map, deltas back to the kernel) settle
    page_t = page.evaluate("() => window.__T")
    if debug:
        print(
            "page stamps:",
            sorted({w for w, _, _ in page_t}),
            page.evaluate(
                "() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(g => [g.__timed, typeof g.on, g._ev ? Object.keys(g._ev._events || {}).length : -1])"
            ),
        )
    out: dict[str, float] = {"title": t_title - t_press}
    firsts: dict[str, float] = {}
    long_sum = 0.0
    for what, t, extra in page_t:
        if what == "longtask":
            if t_press <= t <= t_title:
                long_sum += extra
            continue
        firsts.setdefault(what, t)
    out["longtasks"] = long_sum
    if "ws out" in firsts:
        out["ws_out"] = firsts["ws out"] - t_press
    if "ws in update" in firsts:
        out["ws_in"] = firsts["ws in update"] - t_press
    if "afterplot 0" in firsts:
        out["afterplot"] = firsts["afterplot 0"] - t_press
        if "ws in update" in firsts:
            out["plotly"] = firsts["afterplot 0"] - firsts["ws in update"]
    return out, page_t, t_press


def kernel_stamps(page) -> list[tuple[str, float]]:
    code = "import json as _j; print('@@' + _j.dumps(_T)); _T.clear()"
    result = page.evaluate(
        """async (code) => {
          const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
          let out = '';
          const f = k.requestExecute({code, silent: false, store_history: false});
          f.onIOPub = (m) => { if (m.header.msg_type === 'stream') out += m.content.text; };
          await f.done;
          return out;
        }""",
        code,
    )
    line = next(ln for ln in result.splitlines() if ln.startswith("@@"))
    return [(w, t * 1000) for w, t in json.loads(line[2:])]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--moves", type=int, default=12)
    ap.add_argument("--regions", type=int, default=200)
    ap.add_argument("--profile", type=Path, help="write a Chrome CPU profile of the timed moves here")
    ap.add_argument("--trace", type=Path, help="write a Chrome trace of the timed moves here and summarize it")
    ap.add_argument(
        "--kernel-code", default="", help="extra code run in the kernel after the explorer is made (experiments)"
    )
    ap.add_argument("--screenshot", type=Path, help="write a screenshot of the page after the moves here")
    args = ap.parse_args()
    import nbformat
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        nb = nbformat.v4.new_notebook()
        nb.cells = [
            nbformat.v4.new_code_cell(GEMM_CELL),
            nbformat.v4.new_code_cell(
                "import ipywidgets\n"
                f"ex = smemviz.explore(build_gemm_layout, stages=(1, 3), tile_n=[64, 128], "
                f"extra=ipywidgets.fixed({args.regions - 8}))\nex"
            ),
            nbformat.v4.new_code_cell(KERNEL_HOOKS + args.kernel_code),
        ]
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nbformat.write(nb, str(root / "bench.ipynb"))
        proc, url = start_lab(root, root / "jupyter")
        moves: list[dict[str, float]] = []
        windows: list[tuple[float, float]] = []
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=find_chromium(), headless=True, args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1400, "height": 1200})
                page.add_init_script(PAGE_HOOKS)
                open_and_run(page, url, "bench.ipynb")
                page.wait_for_function(
                    "() => { const t = document.querySelector('.js-plotly-plot .gtitle');"
                    " return t && t.textContent.includes('SMEM layout'); }",
                    timeout=120_000,
                )
                page.wait_for_function(
                    "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status === 'idle'",
                    timeout=60_000,
                )
                page.wait_for_timeout(1000)
                kernel_stamps(page)
                handle = page.locator(".widget-slider .noUi-handle").first
                handle.focus()
                cdp = None
                for k in range(args.moves + 2):
                    if k == 2 and args.trace:
                        browser.start_tracing(
                            page=page,
                            path=str(args.trace),
                            categories=[
                                "devtools.timeline",
                                "disabled-by-default-devtools.timeline",
                                "v8.execute",
                                "blink",
                            ],
                        )
                    if k == 2 and args.profile:
                        cdp = page.context.new_cdp_session(page)
                        cdp.send("Profiler.enable")
                        cdp.send("Profiler.setSamplingInterval", {"interval": 200})
                        cdp.send("Profiler.start")
                    out, _, t_press = one_move(
                        page, handle, "ArrowRight" if k % 2 == 0 else "ArrowLeft", k == args.moves + 1
                    )
                    handle.focus()
                    stamps = kernel_stamps(page)
                    if k == args.moves + 1:
                        print(
                            "kernel stamps of the last move (ms after the press):",
                            ", ".join(f"{w} {t - t_press:.0f}" for w, t in stamps),
                        )
                    first = {}
                    for what, t in stamps:
                        first.setdefault(what, t)
                    if "kernel in" in first:
                        out["kernel_in"] = first["kernel in"] - t_press
                    if "builder end" in first:
                        out["builder"] = first["builder end"] - first["builder start"]
                        if "smem send" in first:
                            out["to_send"] = first["smem send"] - first["builder end"]
                    if "callback done" in first:
                        out["callback_done"] = first["callback done"] - t_press
                        if "smem sent" in first:
                            out["rest"] = first["callback done"] - first["smem sent"]
                    if k >= 2:
                        moves.append(out)
                        windows.append((t_press, t_press + out["title"]))
                if args.trace:
                    browser.stop_tracing()
                    print_trace(args.trace, windows)
                if cdp is not None:
                    profile = cdp.send("Profiler.stop")["profile"]
                    args.profile.write_text(json.dumps(profile))
                    print_top(profile)
                if args.screenshot:
                    page.locator(".js-plotly-plot").first.scroll_into_view_if_needed()
                    page.screenshot(path=str(args.screenshot), full_page=True)
                browser.close()
        finally:
            stop_lab(proc)
    summarize(moves)


def print_trace(path: Path, windows: list[tuple[float, float]], top: int = 20) -> None:
    """Renderer main-thread time per trace event name inside the timed windows
    (press -> title), self time (children subtracted), per move."""
    events = json.loads(path.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    names = {
        (e["pid"], e["tid"]): e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"
    }
    main = {k for k, v in names.items() if v == "CrRendererMain"}
    # trace clock -> wall clock: align the first window start with the first
    # "EventDispatch"/"keydown" seen
    spans = [e for e in events if e.get("ph") == "X" and (e["pid"], e["tid"]) in main and "dur" in e]
    keys = sorted(
        e["ts"]
        for e in events
        if e.get("name") == "EventDispatch" and e.get("args", {}).get("data", {}).get("type") == "keydown"
    )
    if not keys:
        print("trace: no keydown events found")
        return
    offset = keys[0] / 1000 - windows[0][0]
    spans.sort(key=lambda e: (e["ts"], -e["dur"]))
    self_ms: Counter[str] = Counter()
    stack: list[tuple[float, str]] = []
    for e in spans:
        start, end = e["ts"] / 1000 - offset, (e["ts"] + e["dur"]) / 1000 - offset
        if not any(a - 5 <= start <= b for a, b in windows):
            continue
        while stack and stack[-1][0] <= start:
            stack.pop()
        if stack:
            self_ms[stack[-1][1]] -= e["dur"] / 1000
        self_ms[e["name"]] += e["dur"] / 1000
        stack.append((end, e["name"]))
    n = len(windows)
    # the last move's main-thread tasks, in order, with their biggest children
    a, b = windows[-1]
    tasks = [e for e in spans if e["name"] == "RunTask" and a - 5 <= e["ts"] / 1000 - offset <= b + 50]
    print(f"trace: last move's main-thread tasks over 2 ms (ms after the press; title at {b - a:.0f} ms):")
    for t in tasks:
        if t["dur"] < 2000:
            continue
        t0, t1 = t["ts"], t["ts"] + t["dur"]
        kids: Counter[str] = Counter()
        for e in spans:
            if t0 <= e["ts"] < t1 and e is not t and e["name"] != "RunTask":
                label = e["name"]
                data = e.get("args", {}).get("data", {})
                if label in ("FunctionCall", "EventDispatch", "TimerFire", "FireAnimationFrame"):
                    label += f"({data.get('functionName') or data.get('type') or ''})"
                kids[label] = max(kids[label], e["dur"] / 1000)
        biggest = ", ".join(f"{k} {v:.0f}" for k, v in kids.most_common(5))
        print(f"  {t0 / 1000 - offset - a:7.0f} +{t['dur'] / 1000:5.0f} ms  {biggest}")
    print(f"trace: renderer main thread, self time per move (of {n}) between press and title:")
    for name, ms in self_ms.most_common(top):
        print(f"  {ms / n:8.1f} ms  {name}")


def print_top(profile: dict, top: int = 25) -> None:
    """Self time per function, from the sampled CPU profile."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    deltas = profile.get("timeDeltas", [])
    self_ms: Counter[str] = Counter()
    for sample, dt in zip(profile.get("samples", []), deltas):
        cf = nodes[sample]["callFrame"]
        url = cf.get("url", "").rsplit("/", 1)[-1][:40]
        self_ms[f"{cf.get('functionName') or '(anon)'} {url}:{cf.get('lineNumber')}"] += dt / 1000
    total = sum(self_ms.values())
    print(f"CPU profile: {total:.0f} ms sampled; top self time:")
    for name, ms in self_ms.most_common(top):
        print(f"  {ms:8.1f} ms  {name}")


if __name__ == "__main__":
    main()
