"""Every Python snippet in the README runs, top to bottom, in one namespace."""

from __future__ import annotations

import re

import pytest

from .helpers import ROOT

# the first snippet imports cutlass for its dtypes and exports an SVG (Chromium)
pytestmark = [pytest.mark.cutlass, pytest.mark.browser]

SNIPPET = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def snippets() -> list[str]:
    return SNIPPET.findall((ROOT / "README.md").read_text(encoding="utf-8"))


def test_the_readme_has_snippets():
    assert len(snippets()) >= 2


def test_every_readme_snippet_runs(tmp_path, monkeypatch):
    pytest.importorskip("cutlass")
    pytest.importorskip("ipywidgets")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "readme"}
    for i, code in enumerate(snippets()):
        try:
            exec(compile(code, f"README.md snippet {i + 1}", "exec"), namespace)
        except Exception as exc:  # noqa: BLE001 - name the snippet that broke
            pytest.fail(f"README snippet {i + 1} raised {type(exc).__name__}: {exc}")
    assert (tmp_path / "layout.svg").read_bytes().lstrip().startswith(b"<svg")
    assert namespace["plan"].memory == "smem" and namespace["tmem"].tcgen05_alloc_columns == 256
