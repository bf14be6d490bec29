"""The code on docs/ordering.md runs and prints what the page says."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[3] / "docs" / "ordering.md"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)


def _run(block: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, str(PAGE), "exec"), {})
    return out.getvalue()


def test_each_example_prints_its_comments():
    for block in _blocks():
        printed = _run(block)
        for expected in re.findall(r"^# ((?:info|error|alias|UMMA).*)$", block, re.M):
            assert expected.rstrip(". ") in printed, expected


def test_the_dropped_release_prints_the_witness_shown():
    block = (
        _blocks()[0]
        .replace('        PipelineOp(op="consumer_release", pipeline="ab", site=at(32)),\n', "")
        .replace("print(check_ordering(model).text())", "print(check_ordering(model).findings.text())")
    )
    printed = _run(block)
    shown = re.search(r"^(error\[mbarrier-parity\].*?); fix: \.\.\.$", PAGE.read_text(encoding="utf-8"), re.M).group(1)
    assert shown in printed


def test_every_rule_is_on_the_page():
    from smemviz.analysis.ordering._result import FACTS

    text = PAGE.read_text(encoding="utf-8")
    for rule in FACTS:
        assert f"| `{rule}` |" in text
