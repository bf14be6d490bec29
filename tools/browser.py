"""The one way to find and start the headless Chromium that browser tests, benchmarks and
screenshots drive."""

from __future__ import annotations

import os
import shutil

__all__ = ["CHROMIUM_ARGS", "find_chromium"]

# flags for a headless Chromium on a machine with no display, no GPU and no network
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def find_chromium() -> str | None:
    """``SMEMVIZ_CHROMIUM`` or ``BROWSER_PATH`` when set, else Debian's ``/usr/bin/chromium``
    or one on ``PATH``."""
    for var in ("SMEMVIZ_CHROMIUM", "BROWSER_PATH"):
        if os.environ.get(var):
            path = os.environ[var]
            return path if os.path.isfile(path) else shutil.which(path)
    for candidate in ("/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and os.path.isfile(candidate):
            return candidate
    return None
