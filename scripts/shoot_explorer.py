"""Screenshot of notebook 02's explorer in JupyterLab (headless Chromium),
the picture in the README.

    python -m scripts.shoot_explorer [docs/explorer.png]      (from the repository root)
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from tools.browser import CHROMIUM_ARGS, find_chromium
from tools.lab import open_and_run, start_lab, stop_lab

ROOT = Path(__file__).resolve().parents[1]

NOTEBOOK = ROOT / "notebooks" / "02_tuning_gemm_layout.ipynb"


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "explorer.png"
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shutil.copy(NOTEBOOK, root / NOTEBOOK.name)
        proc, url = start_lab(root, root / "jupyter")
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=find_chromium(), headless=True, args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1400, "height": 1400})
                open_and_run(page, url, NOTEBOOK.name)
                explorer = page.locator(".smemviz-explorer").first
                explorer.wait_for(timeout=120_000)
                page.wait_for_function(
                    "() => { const gds = document.querySelectorAll('.smemviz-explorer .js-plotly-plot');"
                    " return gds.length >= 2 && gds[0]._fullLayout && gds[0]._fullLayout.width > 700; }",
                    timeout=60_000,
                )
                page.wait_for_timeout(1500)  # let the last redraw settle
                explorer.scroll_into_view_if_needed()
                explorer.screenshot(path=str(out))
                browser.close()
        finally:
            stop_lab(proc)
    print(f"wrote {out} ({out.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
