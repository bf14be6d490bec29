"""Progress on a long solve: shown, never fed back into the search."""

from __future__ import annotations

import re

import pytest

import smemviz.solver._progress as progress
import smemviz.solver._solve as driver
from smemviz.solver import solve

RING = ([10] * 5, [1] * 5, [{k, (k + 1) % 5} for k in range(5)])  # the search has work to do


def test_stderr_shows_the_nodes_searched_and_the_answer(monkeypatch, capsys):
    quiet = solve(*RING)
    assert capsys.readouterr().err == ""  # a short solve shows nothing
    monkeypatch.setattr(driver, "NOTICE_AFTER_S", -1.0)
    monkeypatch.setattr(progress, "LINE_EVERY_S", 0.0)
    told = solve(*RING)
    lines = capsys.readouterr().err.splitlines()
    assert told == quiet
    assert sum("still searching for the smallest layout of 5 buffers" in line for line in lines) == 1
    counts = [line for line in lines if line.startswith("smemviz: searched ") and " of " in line]
    shape = re.compile(r"smemviz: searched [\d,]+ of [\d,]+ nodes \(\d+%\); best [\d,]+ B, lower bound [\d,]+ B")
    assert counts and all(shape.match(line) for line in counts)
    assert lines[-1].startswith(f"smemviz: searched {told.nodes:,} nodes in ")
    assert lines[-1].endswith(": 30 B, proven optimal")


def test_in_jupyter_the_bar_follows_the_search(monkeypatch):
    pytest.importorskip("ipywidgets")
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda *objs: shown.extend(objs))
    monkeypatch.setattr(progress, "in_jupyter", lambda: True)
    monkeypatch.setattr(driver, "NOTICE_AFTER_S", -1.0)
    sol = solve(*RING)
    (box,) = shown
    bar, label = box.children
    assert bar.value == sol.nodes and bar.bar_style == "success" and bar.description == "solved"
    assert label.value.startswith(f"{sol.nodes:,} nodes in ") and label.value.endswith("30 B, proven optimal")


def test_outside_a_kernel_there_is_no_bar():
    assert progress.in_jupyter() is False
