"""docs/reading-the-maps.md names the explorer's layout on screen (``ex.plan``) and how to open
a tab from code (``ex.show_tab("Banks")``), and every ``ex.<name>`` it mentions is the explorer's."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("plotly")

from smemviz.explorer import Explorer  # noqa: E402

from ..helpers import ROOT  # noqa: E402

DOC = ROOT / "docs" / "reading-the-maps.md"


def test_the_doc_names_the_layout_on_screen_and_the_tabs():
    text = DOC.read_text(encoding="utf-8")
    assert "`ex.plan` is the layout on screen" in text
    assert 'ex.show_tab("Banks")' in text


def test_every_explorer_name_the_doc_mentions_exists():
    names = set(re.findall(r"\bex\.([a-z_]+)", DOC.read_text(encoding="utf-8")))
    assert {"plan", "show_tab"} <= names
    missing = sorted(n for n in names if not hasattr(Explorer, n))
    assert not missing, missing


def test_the_docs_narrow_title_writes_kib_as_the_maps_do():
    """The narrow explorer's title, quoted in the doc, in kib_label's form (132.227 KiB, never 132.2)."""
    quoted = re.findall(r"`SMEM ([\d.]+) KiB of", DOC.read_text(encoding="utf-8"))
    assert quoted and all("." not in q or len(q.split(".")[1]) == 3 for q in quoted), quoted
