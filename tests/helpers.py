"""What several test modules share: paths and the notebook list (Chromium and the
JupyterLab driver are in ``tools/``, shared with the benchmarks and scripts)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(p.name for p in NOTEBOOK_DIR.glob("*.ipynb"))
EXAMPLES = ROOT / "examples"

SKIP_BROWSER_FLAG = "--skip-browser"  # pytest option: skip, on purpose, what needs Chromium
