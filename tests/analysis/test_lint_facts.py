"""results/lint_facts.md gives the source of every lint rule's fact: each rule id has its row, and a
rule the table calls assumed says so in its findings' ``fact`` text."""

import re
from pathlib import Path

from smemviz.analysis import lint
from smemviz.analysis._lint import RULES
from smemviz.layout import Region

from .test_lint import hand_plan

TABLE = (Path(__file__).parents[2] / "results" / "lint_facts.md").read_text(encoding="utf-8")


def _rows() -> dict[str, str]:
    rules = TABLE.split("## Lint rules", 1)[1].split("\n## ", 1)[0]
    return {m.group(1): m.group(2) for m in re.finditer(r"^\| `([a-z0-9-]+)` \|(.*)\|$", rules, re.M)}


def test_every_lint_rule_has_a_row_and_every_row_is_a_rule():
    rows = _rows()
    assert set(rows) == set(RULES)
    kinds = ("measured", "driver", "document", "assumed")
    for rule, row in rows.items():
        kind = row.rsplit("|", 1)[1]
        assert any(k in kind for k in kinds), (rule, kind)


def test_a_rule_called_assumed_says_so_in_its_fact():
    assumed = [rule for rule, row in _rows().items() if "assumed" in row.rsplit("|", 1)[1]]
    assert "padding-share" in assumed
    plan = hand_plan(Region("flag", "data", 0, 100), Region("sA", "data", 4096, 4096, padding_before=3996), total=8192)
    (f,) = [f for f in lint(plan) if f.rule == "padding-share"]
    assert "assumed" in f.fact
