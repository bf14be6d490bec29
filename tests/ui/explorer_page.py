"""Drive the explorer inside JupyterLab: open a notebook, run it, move a slider."""

from __future__ import annotations

import time

GEMM_CELL = '''
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
'''


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


def wait_for_title_change(page, old: str, timeout_s: float = 30.0) -> tuple[str, float]:
    """The SMEM map's new title and how long it took to appear. The page keeps
    the frame time it was first seen in ``window.__smemvizSeen`` (``performance.now()``)."""
    t0 = time.perf_counter()
    handle = page.wait_for_function(
        "(old) => { const t = document.querySelector('.js-plotly-plot .gtitle');"
        " if (!t || t.textContent === old) return null;"
        " window.__smemvizSeen = performance.now(); return t.textContent; }",
        arg=old, timeout=timeout_s * 1000, polling="raf",
    )
    return handle.json_value(), time.perf_counter() - t0
