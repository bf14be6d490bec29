"""Exports that need no browser: JSON, Markdown, HTML text, dispatch, atomic writes."""

from __future__ import annotations

import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

import smemviz
from smemviz.layout import plan_from_dict
from smemviz.sources.layout_file import parse_layout_text

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HOSTILE = ["</script><script>window.__pwned=1</script>", '<img src=x onerror="window.__pwned=1">']


def _pair():
    spec = smemviz.load_layout(EXAMPLES / "gemm_sm100.toml")
    return spec, spec.plans()


def _hostile_spec():
    doc = {
        "name": "<b>evil</b> & co",
        "smem": [{"name": HOSTILE[0], "size": 4096}, {"name": HOSTILE[1], "size": 2048, "align": 1024}],
        "tmem": [{"name": HOSTILE[1], "columns": 64}],
    }
    return parse_layout_text(json.dumps(doc), format="json")


# -- dispatch and arguments ----------------------------------------------------------------


def test_unknown_extension_names_the_supported_ones(tmp_path):
    spec, _ = _pair()
    with pytest.raises(ValueError, match=r"'\.docx'.*\.html, \.svg, \.png, \.pdf, \.json, \.md"):
        smemviz.export(spec, tmp_path / "layout.docx")
    assert list(tmp_path.iterdir()) == []


def test_export_is_a_function_and_its_helpers_are_public_on_smemviz(tmp_path):
    import importlib
    import inspect

    import smemviz._export as package

    importlib.import_module("smemviz._export._static")  # importing a submodule must not shadow the function
    assert inspect.isfunction(smemviz.export)
    assert not callable(package)
    spec, _ = _pair()
    assert smemviz.export(spec, tmp_path / "a.md") == tmp_path / "a.md"
    for name in (
        "BrowserNotFoundError",
        "ExportTimeoutError",
        "find_browser",
        "start_renderer",
        "stop_renderer",
        "read_plans",
        "EXPORT_FORMATS",
    ):
        assert getattr(smemviz, name) is getattr(package, name)


def test_which_and_pair_checks(tmp_path):
    spec, (smem, tmem) = _pair()
    with pytest.raises(ValueError, match="which must be one of"):
        smemviz.export(spec, tmp_path / "x.json", which="banks")
    with pytest.raises(ValueError, match="no TMEM layout"):
        smemviz.export(smem, tmp_path / "x.json", which="tmem")
    smemviz.export((tmem, smem), tmp_path / "reversed.json")  # either order (smemviz's input rule)
    smemviz.export((smem, tmem), tmp_path / "ordered.json")
    assert (tmp_path / "reversed.json").read_text() == (tmp_path / "ordered.json").read_text()
    with pytest.raises(ValueError, match="nothing to show"):
        smemviz.export((None, None), tmp_path / "x.json")
    with pytest.raises(TypeError, match="LayoutPlan"):
        smemviz.export(42, tmp_path / "x.json")


def test_missing_folder_is_reported(tmp_path):
    spec, _ = _pair()
    with pytest.raises(FileNotFoundError, match="does not exist"):
        smemviz.export(spec, tmp_path / "no" / "x.json")


# -- JSON ----------------------------------------------------------------------------------------


def test_json_of_one_plan_round_trips(tmp_path):
    _, (smem, _) = _pair()
    out = smemviz.export(smem, tmp_path / "smem.json")
    data = json.loads(out.read_text())
    assert data["schema"] == "smemviz.layout-plan" and data["version"] == 1
    assert plan_from_dict(data) == smem


def test_json_of_both_plans_round_trips(tmp_path):
    from smemviz._export import read_plans

    spec, (smem, tmem) = _pair()
    out = smemviz.export(spec, tmp_path / "both.json")
    data = json.loads(out.read_text())
    assert data["schema"] == "smemviz.layout-plans" and data["version"] == 1
    assert data["title"] == spec.name
    assert read_plans(out.read_text()) == (smem, tmem)
    only_tmem = smemviz.export(spec, tmp_path / "t.json", which="tmem")
    assert read_plans(only_tmem.read_text()) == (None, tmem)


def test_json_arch_option_sets_the_capacity_shown(tmp_path):
    _, (smem, _) = _pair()
    data = json.loads(smemviz.export(smem, tmp_path / "s.json", arch="sm_120").read_text())
    assert data["arch"] == "sm_120"
    assert not plan_from_dict(data).fits()


def test_read_plans_refuses_other_documents():
    from smemviz._export import read_plans

    with pytest.raises(ValueError, match="not a smemviz export"):
        read_plans('{"smem": []}')
    with pytest.raises(ValueError, match="unsupported smemviz.layout-plans version 9"):
        read_plans('{"schema": "smemviz.layout-plans", "version": 9}')


def test_allocator_input(tmp_path):
    alloc = smemviz.SmemAllocator()
    alloc.add(smemviz.SmemAllocation("tile", 8192))
    alloc.compute_layout()
    data = json.loads(smemviz.export(alloc, tmp_path / "a.json").read_text())
    assert [r["name"] for r in data["regions"]] == ["tile"]


@pytest.mark.cutlass
def test_computed_cutlass_allocator_input(tmp_path):
    memory = pytest.importorskip("cutlass.experimental.task_scheduling.memory")
    alloc = memory.SmemAllocator()
    alloc.add(memory.SmemAllocation("tile_a", 16384, 1024))
    alloc.add(memory.SmemAllocation("tile_b", 256, 128))
    alloc.compute_layout()
    data = json.loads(smemviz.export(alloc, tmp_path / "c.json").read_text())
    assert data["source"] == "cutlass"
    assert {r["name"]: r["offset"] for r in data["regions"]} == {"tile_a": 0, "tile_b": 16384}


# -- Markdown ---------------------------------------------------------------------------------------


def test_markdown_has_one_row_per_region_and_a_title(tmp_path):
    spec, (smem, tmem) = _pair()
    text = smemviz.export(spec, tmp_path / "l.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| name")]
    assert len(rows) == len(smem.regions) + len(tmem.regions)
    assert text.startswith("## GEMM sm_100a")
    assert "### SMEM layout" in text and "### TMEM layout" in text


def test_markdown_title_is_literal():
    from smemviz import as_layouts
    from smemviz._export._text import to_markdown

    text = to_markdown(as_layouts(_hostile_spec()))
    assert text.splitlines()[0] == "## \\<b\\>evil\\</b\\> & co"


# -- HTML (text only; the browser tests open it) ----------------------------------------------------


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def test_html_is_self_contained_and_escapes_names(tmp_path):
    pytest.importorskip("plotly")
    out = smemviz.export(_hostile_spec(), tmp_path / "l.html")
    page = out.read_text()
    parser = _Collect()
    parser.feed(page)
    tags = parser.tags
    # no external resources at all
    assert not [a for t, a in tags if t == "script" and a.get("src")]
    assert not [a for t, a in tags if t in ("link", "img", "iframe")]
    # the hostile names are text, never markup
    assert not [a for t, a in tags if "onerror" in a]
    text = "".join(parser.text)
    assert "<b>evil</b> & co" in text  # the heading, shown literally
    assert HOSTILE[1] in text
    # every script is the page's own and pinned by the CSP
    csp = next(a["content"] for t, a in tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert "default-src 'none'" in csp
    scripts = re.findall(r"<script\b[^>]*>(.*?)</script>", page, re.S)
    assert len(scripts) >= 2 and len(re.findall(r"'sha256-", csp)) == len(scripts)
    assert not any("window.__pwned=1" in s and "\\u003c" not in s for s in scripts)
    assert len(page) > 3_000_000  # plotly.js is inlined


# -- atomic writes --------------------------------------------------------------------------------------


def test_a_failed_export_leaves_nothing_behind(tmp_path, monkeypatch):
    from smemviz._export import _text

    spec, _ = _pair()
    target = tmp_path / "l.md"
    target.write_text("previous")

    def broken(pair):
        raise RuntimeError("renderer crashed")

    monkeypatch.setattr(_text, "to_markdown", broken)
    with pytest.raises(RuntimeError, match="renderer crashed"):
        smemviz.export(spec, target)
    assert target.read_text() == "previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l.md"]


def test_an_interrupted_write_keeps_the_old_file(tmp_path, monkeypatch):
    from smemviz._export import _atomic

    target = tmp_path / "l.json"
    target.write_text("old")

    def fail_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_atomic.os, "replace", fail_replace)
    with pytest.raises(OSError):
        _atomic.write_atomic(target, "new")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l.json"]


def test_written_files_get_normal_permissions(tmp_path):
    spec, _ = _pair()
    out = smemviz.export(spec, tmp_path / "l.md")
    mask = os.umask(0)
    os.umask(mask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~mask


# -- static export without a browser ------------------------------------------------------------------


@pytest.fixture
def no_browser(monkeypatch):
    pytest.importorskip("kaleido")
    from choreographer.browsers.chromium import Chromium

    from smemviz._export import _static

    monkeypatch.delenv("BROWSER_PATH", raising=False)
    monkeypatch.setattr(Chromium, "find_browser", classmethod(lambda cls, **kw: None))
    monkeypatch.setattr(_static.shutil, "which", lambda name: None)


@pytest.mark.parametrize("ext", [".svg", ".png", ".pdf"])
def test_missing_browser_is_a_clear_error_not_a_hang(tmp_path, no_browser, ext):
    from smemviz._export import BrowserNotFoundError

    spec, _ = _pair()
    with pytest.raises(BrowserNotFoundError) as info:
        smemviz.export(spec, tmp_path / f"l{ext}")
    message = str(info.value)
    assert "apt-get install chromium" in message and "plotly_get_chrome" in message
    assert "BROWSER_PATH" in message
    assert list(tmp_path.iterdir()) == []


def test_bad_browser_path_is_named(tmp_path, monkeypatch):
    from smemviz._export import BrowserNotFoundError, find_browser

    monkeypatch.setenv("BROWSER_PATH", str(tmp_path / "chrome"))
    with pytest.raises(BrowserNotFoundError, match=r"BROWSER_PATH=.*chrome.* is not an executable"):
        find_browser()


def test_a_render_that_hangs_times_out(monkeypatch):
    """A stuck browser raises ExportTimeoutError within the timeout."""
    import asyncio
    import time

    from smemviz._export import _static

    renderer = object.__new__(_static._Renderer)
    renderer.browser = "fake-chromium"
    renderer.loop = asyncio.new_event_loop()
    import threading

    renderer.thread = threading.Thread(target=renderer._run, daemon=True)
    renderer.thread.start()
    try:
        start = time.perf_counter()
        with pytest.raises(_static.ExportTimeoutError, match="fake-chromium.*0.3 s"):
            renderer._call(asyncio.sleep(30), 0.3, "render an SVG")
        assert time.perf_counter() - start < 30  # raised at the timeout, not when the work ended
    finally:
        renderer._stop_loop()


def test_text_exports_and_cli_work_without_plotly_or_kaleido(tmp_path):
    """JSON, Markdown, layout files and the command line need only the core;
    HTML says which extra to install."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(
        f"""
        import sys, importlib.abc
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("plotly", "kaleido", "choreographer", "ipywidgets", "cutlass"):
                    raise ModuleNotFoundError(f"No module named {{name!r}} (blocked)")
        sys.meta_path.insert(0, Block())
        import smemviz
        spec = smemviz.load_layout({str(EXAMPLES / "gemm_sm100.toml")!r})
        smemviz.export(spec, {str(tmp_path / "l.json")!r})
        smemviz.export(spec, {str(tmp_path / "l.md")!r})
        from smemviz.cli import main
        assert main(["check", {str(EXAMPLES / "gemm_sm100.toml")!r}]) == 0
        try:
            smemviz.export(spec, {str(tmp_path / "l.html")!r})
        except ImportError as exc:
            print("HTML:", exc)
        assert main(["render", {str(EXAMPLES / "gemm_sm100.toml")!r}, "-o", {str(tmp_path / "l.svg")!r}]) == 3
        print("TEXT-OK")
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "TEXT-OK" in done.stdout
    assert "pip install 'smemviz[viz]'" in done.stdout
    assert "pip install 'smemviz[viz]'" in done.stderr
    assert (tmp_path / "l.json").exists() and not (tmp_path / "l.html").exists()
