"""A JupyterLab of its own (free port, temp Jupyter dirs) and a headless
Chromium, for the browser tests (the root conftest decides what happens
without Chromium)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.browser import CHROMIUM_ARGS, find_chromium
from tools.lab import start_lab, stop_lab

from ..helpers import ROOT

ARTIFACTS = ROOT / "artifacts"


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def jupyterlab(tmp_path_factory):
    """``(base_url, notebook_dir)`` of a running JupyterLab; stopped afterwards."""
    pytest.importorskip("jupyterlab")
    pytest.importorskip("ipykernel")
    root = tmp_path_factory.mktemp("lab")
    notebooks = root / "notebooks"
    notebooks.mkdir()
    with open(root / "lab.log", "wb") as log:
        try:
            proc, url = start_lab(notebooks, root / "jupyter", log)
        except RuntimeError:
            pytest.fail(f"JupyterLab did not start; log: {(root / 'lab.log').read_text()[-2000:]}")
        try:
            yield url, notebooks
        finally:
            stop_lab(proc)


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium for one test module: closed at the module's end, so
    Playwright's event loop does not outlive the browser tests (code that
    checks for a running loop, like the explorer's panels, sees none after)."""
    chromium = find_chromium()
    assert chromium is not None  # the root conftest fails or skips browser tests without one
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="module")
def static_renderer():
    """kaleido's warm browser for one module's static exports, stopped at its end."""
    pytest.importorskip("plotly")
    pytest.importorskip("kaleido")
    from smemviz._export import start_renderer, stop_renderer

    start_renderer()  # the root conftest fails or skips browser tests when there is no Chromium
    yield
    stop_renderer()
