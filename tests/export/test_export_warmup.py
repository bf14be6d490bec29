"""The static-export browser starts ahead of the first export in a notebook
(issue 23, point 7): warmed on a background thread when an explorer is made
or export is imported inside a Jupyter kernel, never elsewhere."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from ..helpers import ROOT

pytest.importorskip("plotly")
pytest.importorskip("ipywidgets")

from smemviz._export import _static  # noqa: E402


@pytest.fixture
def recorded(monkeypatch):
    calls = []
    monkeypatch.setattr(_static, "_warming", None)
    monkeypatch.setattr(_static, "start_renderer", lambda *a, **k: calls.append("start"))
    monkeypatch.delenv("SMEMVIZ_NO_WARMUP", raising=False)
    return calls


def test_an_explorer_in_a_kernel_warms_the_renderer_once(recorded, monkeypatch):
    import smemviz

    monkeypatch.setenv("SMEMVIZ_WARMUP", "1")  # as inside a Jupyter kernel
    s = smemviz.SmemAllocator()
    s.add(smemviz.SmemAllocation("a", 1024))
    s.compute_layout()
    smemviz.explore(s)
    thread = _static._warming
    assert thread is not None and thread.name == "smemviz-renderer-warmup"
    thread.join(30)
    smemviz.explore(s)  # a second explorer starts nothing more
    assert recorded == ["start"] and _static._warming is thread


def test_outside_a_kernel_nothing_is_started(recorded, monkeypatch):
    import smemviz

    monkeypatch.delenv("SMEMVIZ_WARMUP", raising=False)
    assert not _static.in_jupyter_kernel()
    s = smemviz.SmemAllocator()
    s.add(smemviz.SmemAllocation("a", 1024))
    s.compute_layout()
    smemviz.explore(s)
    assert _static._warming is None and recorded == []


def test_the_switch_turns_it_off(recorded, monkeypatch):
    monkeypatch.setenv("SMEMVIZ_NO_WARMUP", "1")
    assert _static.warm_renderer() is None and recorded == []


@pytest.mark.browser
@pytest.mark.slow
def test_the_first_export_of_a_notebook_session_uses_the_browser_started_ahead(tmp_path):
    """A fresh process that looks like a kernel: the explorer is made and, once its
    warm-up is done, the first SVG export renders in the browser the warm-up started
    (no second start). How long that export takes is benchmarks/bench_first_export.py's."""
    if not os.path.exists("/usr/bin/chromium"):
        pytest.skip("no Chromium")
    script = textwrap.dedent(f"""
        import smemviz
        from smemviz._export import _static
        s = smemviz.SmemAllocator()
        for i in range(6):
            s.add(smemviz.SmemAllocation(f"buf{{i}}", 4096 * (i + 1)))
        s.compute_layout()
        smemviz.explore(s)
        _static._warming.join()  # the exact condition: the warm-up has finished
        warmed = _static._renderer
        assert warmed is not None, "the warm-up started no browser"
        starts = []
        _static._Renderer.__init__ = lambda *a, **k: starts.append(a)  # any start from now on is counted
        smemviz.export(s, {str(tmp_path / "first.svg")!r})
        print(_static._renderer is warmed, len(starts))
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SMEMVIZ_WARMUP": "1"}  # as in a kernel
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "True 0"  # the warmed browser, and no other started
    assert (tmp_path / "first.svg").read_bytes().lstrip().startswith(b"<svg")
