"""What several test modules (and the benchmarks and scripts) share: paths,
the notebook list, and the one way to find Chromium."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(p.name for p in NOTEBOOK_DIR.glob("*.ipynb"))
EXAMPLES = ROOT / "examples"

# flags for a headless Chromium on a machine with no display, no GPU and no network
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SKIP_BROWSER_FLAG = "--skip-browser"  # pytest option: skip, on purpose, what needs Chromium


def find_chromium() -> str | None:
    """The Chromium the browser tests drive: ``SMEMVIZ_CHROMIUM`` or ``BROWSER_PATH``
    when set, else Debian's ``/usr/bin/chromium`` or one on ``PATH``."""
    for var in ("SMEMVIZ_CHROMIUM", "BROWSER_PATH"):
        if os.environ.get(var):
            path = os.environ[var]
            return path if os.path.isfile(path) else shutil.which(path)
    for candidate in ("/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and os.path.isfile(candidate):
            return candidate
    return None
