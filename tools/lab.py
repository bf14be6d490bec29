"""Drive the explorer inside JupyterLab: start a private JupyterLab, open a
notebook, run it, move a slider. Shared by the browser tests, the browser
benchmarks and the screenshot script."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

# the Jupyter folders a private JupyterLab keeps under its home
_JUPYTER_DIRS = (
    "JUPYTER_CONFIG_DIR",
    "JUPYTER_DATA_DIR",
    "JUPYTER_RUNTIME_DIR",
    "JUPYTERLAB_SETTINGS_DIR",
    "JUPYTERLAB_WORKSPACES_DIR",
    "IPYTHONDIR",
)


def start_lab(
    notebook_dir: Path, home: Path, log: IO[bytes] | None = None, timeout_s: float = 60.0
) -> tuple[subprocess.Popen, str]:
    """A JupyterLab on a free local port serving ``notebook_dir``, its Jupyter folders
    under ``home`` (no news, no update checks, no token); ``(process, base_url)``."""
    env = dict(os.environ)
    for var in _JUPYTER_DIRS:
        (home / var).mkdir(parents=True, exist_ok=True)
        env[var] = str(home / var)
    # the "Jupyter news" toast would cover outputs
    settings = home / "JUPYTERLAB_SETTINGS_DIR" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
    # a free port now; if another process (a parallel test worker's JupyterLab) takes it
    # first, this one exits (no retries on a neighbouring port, which would leave the
    # status check below talking to the other one) and a new port is tried
    for _attempt in range(3):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        try:
            return _start_lab_on(port, notebook_dir, env, log, timeout_s)
        except _PortTaken:
            continue
    raise RuntimeError("JupyterLab did not start: no free port")


class _PortTaken(Exception):
    pass


def _start_lab_on(
    port: int, notebook_dir: Path, env: dict[str, str], log: IO[bytes] | None, timeout_s: float
) -> tuple[subprocess.Popen, str]:
    out = log if log is not None else subprocess.DEVNULL
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            f"--port={port}",
            "--ServerApp.port_retries=0",
            "--ServerApp.ip=127.0.0.1",
            "--IdentityProvider.token=",
            "--ServerApp.password=",
            "--allow-root",
            f"--ServerApp.root_dir={notebook_dir}",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.extension_manager=readonly",
            "--LabApp.expose_app_in_browser=True",
        ],
        env=env,
        stdout=out,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            urllib.request.urlopen(f"{url}/api/status", timeout=2)
            return proc, url
        except OSError:
            if proc.poll() is not None and _port_in_use(port):
                raise _PortTaken from None
            if proc.poll() is not None or time.monotonic() > deadline:
                stop_lab(proc)
                raise RuntimeError("JupyterLab did not start") from None
            time.sleep(0.3)


def _port_in_use(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def stop_lab(proc: subprocess.Popen) -> None:
    """Stop a JupyterLab from :func:`start_lab` (its kernels stop with it)."""
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()


def write_notebook(path: Path, cells: list[str]) -> Path:
    """A notebook of code cells with the Python 3 kernel."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(path))
    return path


GEMM_CELL = """
import smemviz
from smemviz import SmemAllocator, SmemAllocation, TmemAllocator, TmemAllocation

def build_gemm_layout(stages=2, tile_n=128, dtype="bf16", extra=0):
    width = 2 if dtype == "bf16" else 1
    s = SmemAllocator()
    for i in range(stages):
        s.add(SmemAllocation(f"smem_a{i}", 128 * 64 * width, 1024))
        s.add(SmemAllocation(f"smem_b{i}", tile_n * 64 * width, 1024))
    for i in range(extra):
        s.add(SmemAllocation(f"aux{i}", 64 + 16 * (i % 5), 16))
    s.add_alias_group([[SmemAllocation("epi", 128 * tile_n * 2, 128)],
                       [SmemAllocation("reduce", 4096, 16), SmemAllocation("<b>scratch</b>", 2048, 16)]])
    s.add_tmem_ptr(SmemAllocation("tmem_ptr", 4, 4))
    t = TmemAllocator()
    t.add(TmemAllocation("acc", tile_n))
    t.add_alias_group([[TmemAllocation("acc2", 64)], [TmemAllocation("sfa", 16), TmemAllocation("sfb", 16)]])
    return s, t
"""


def open_and_run(page, base_url: str, name: str, timeout_ms: int = 120_000) -> None:
    page.goto(f"{base_url}/lab/tree/{name}?reset", wait_until="domcontentloaded")
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=timeout_ms)
    page.wait_for_function(
        "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
        " const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;"
        " return k && k.status === 'idle'; }",
        timeout=timeout_ms,
    )
    page.locator("#jp-MainMenu .lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-content .lm-Menu-itemLabel", has_text="Run All Cells").first.click()


def smem_title(page) -> str:
    return page.locator(".js-plotly-plot .gtitle").first.text_content() or ""


SMEM_TITLE_JS = "document.querySelector('.js-plotly-plot .gtitle')"


def wait_for_title_change(page, old: str, timeout_s: float = 30.0, title_js: str = SMEM_TITLE_JS) -> tuple[str, float]:
    """The new text of the title ``title_js`` finds (by default the SMEM map's) and how long
    it took to appear. The page keeps the frame time it was first seen in
    ``window.__smemvizSeen`` (``performance.now()``)."""
    t0 = time.perf_counter()
    handle = page.wait_for_function(
        f"(old) => {{ const t = {title_js};"
        " if (!t || t.textContent === old) return null;"
        " window.__smemvizSeen = performance.now(); return t.textContent; }",
        arg=old,
        timeout=timeout_s * 1000,
        polling="raf",
    )
    return handle.json_value(), time.perf_counter() - t0


def painted(page) -> None:
    """Return once the page has painted a frame after now (two animation frames)."""
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))")


def wait_until(page, condition_js: str, arg: Any = None, timeout_ms: float = 30_000) -> bool:
    """Wait for ``condition_js`` (a JS function of ``arg``) to hold; ``False`` on a timeout,
    for checks that then read the page and say in their own words what is wrong."""
    try:
        page.wait_for_function(condition_js, arg=arg, timeout=timeout_ms)
    except Exception as exc:  # noqa: BLE001 - Playwright's TimeoutError, without importing Playwright here
        if type(exc).__name__ != "TimeoutError":
            raise
        return False
    return True


@contextlib.contextmanager
def watched_page(
    browser: Any, artifacts: Path, name: str, viewport: dict[str, int], levels: tuple[str, ...] = ("error", "warning")
) -> Iterator[tuple[Any, list[str]]]:
    """A new page and the list its page errors (and console messages of ``levels``)
    go to; on a failure, a screenshot ``NAME-failure.png`` and the console's last
    lines, for the CI log. The page is closed either way."""
    page = browser.new_page(viewport=viewport)
    console: list[str] = []
    if levels:
        page.on("console", lambda m: console.append(f"{m.type}: {m.text}") if m.type in levels else None)
    page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
    try:
        yield page, console
    except Exception:
        page.screenshot(path=str(artifacts / f"{name}-failure.png"), full_page=True)
        print("browser console:", *console[-30:], sep="\n  ")
        raise
    finally:
        page.close()
