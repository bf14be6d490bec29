"""How long a page is held evaluating plotly.js: the full bundle plotly ships against the basic
bundle the explorer's maps carry (smemviz/explorer/vendor), in headless Chromium, unthrottled and
with the CPU throttled 4x (a busy machine), the same way the map view loads it (an ES module from
a blob URL). anywidget gives a widget's module 2 s to start; a main-thread task longer than that
makes any widget created meanwhile miss it.

    python -m benchmarks.bench_plotly_bundle            # prints a table; results/plotly_bundle.md
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from tools.browser import CHROMIUM_ARGS, find_chromium

ROOT = Path(__file__).resolve().parents[1]

EVALUATE = """async (source) => {
    const text = `const module = { exports: {} };\\n${source}\\nexport default module.exports;`;
    const url = URL.createObjectURL(new Blob([text], { type: "text/javascript" }));
    let longest = 0, last = performance.now();
    const tick = setInterval(() => { const now = performance.now(); longest = Math.max(longest, now - last); last = now; }, 10);
    const t0 = performance.now();
    const mod = await import(url);
    const took = performance.now() - t0;
    await new Promise((r) => setTimeout(r, 50));
    clearInterval(tick);
    if (typeof mod.default.newPlot !== "function") throw new Error("not plotly.js");
    return [took, longest];
}"""


def bundles() -> dict[str, str]:
    from plotly.offline import get_plotlyjs

    basic = ROOT / "smemviz" / "explorer" / "vendor" / "plotly-basic.min.js"
    return {"full (plotly's)": get_plotlyjs(), "basic (the maps')": basic.read_text(encoding="utf-8")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    sources = bundles()
    rows = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=find_chromium(), headless=True, args=CHROMIUM_ARGS)
        for rate in (1, 4):
            got: dict[str, list[float]] = {name: [] for name in sources}
            for _ in range(args.rounds):  # interleaved: each round evaluates both on fresh pages
                for name, source in sources.items():
                    page = browser.new_page()
                    if rate > 1:
                        page.context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": rate})
                    got[name].append(page.evaluate(EVALUATE, source)[1])
                    page.close()
            full, basic = (statistics.median(v) for v in got.values())
            for (name, source), ms in zip(sources.items(), (full, basic)):
                rows.append((rate, name, len(source), ms))
            rows.append((rate, "basic / full", None, basic / full))
        browser.close()
    print("| CPU throttle | bundle | bytes | longest main-thread task (median ms) |")
    print("| ---: | --- | ---: | ---: |")
    for rate, name, size, ms in rows:
        value = f"{ms:.2f}x" if size is None else f"{ms:,.0f}"
        print(f"| {rate}x | {name} | {'' if size is None else f'{size:,}'} | {value} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
