"""Text exports: the plan as versioned JSON, the usage table as Markdown."""

from __future__ import annotations

import json
from typing import Any

from .._inputs import LayoutPair
from .._plan import SCHEMA, LayoutPlan
from .._report import markdown_report

__all__ = ["to_json", "read_plans", "to_markdown", "PAIR_SCHEMA", "PAIR_SCHEMA_VERSION"]

# Both memories in one document. A single plan is written in the plan's own
# schema, so LayoutPlan.from_json reads it back.
PAIR_SCHEMA = "smemviz.layout-plans"
PAIR_SCHEMA_VERSION = 1


def to_json(pair: LayoutPair) -> str:
    plans = pair.plans
    if len(plans) == 1:
        return plans[0].to_json(indent=2) + "\n"
    doc: dict[str, Any] = {
        "schema": PAIR_SCHEMA,
        "version": PAIR_SCHEMA_VERSION,
        "title": pair.title,
        "arch": pair.arch,
        "smem": pair.smem.to_dict() if pair.smem else None,
        "tmem": pair.tmem.to_dict() if pair.tmem else None,
    }
    return json.dumps(doc, indent=2) + "\n"


def read_plans(text: str) -> tuple[LayoutPlan | None, LayoutPlan | None]:
    """``(smem, tmem)`` from a JSON export (one plan or both)."""
    data = json.loads(text)
    if isinstance(data, dict) and data.get("schema") == SCHEMA:
        plan = LayoutPlan.from_dict(data)
        return (plan, None) if plan.memory == "smem" else (None, plan)
    if not isinstance(data, dict) or data.get("schema") != PAIR_SCHEMA:
        raise ValueError(f"not a smemviz export (expected schema {SCHEMA!r} or {PAIR_SCHEMA!r})")
    if data.get("version") != PAIR_SCHEMA_VERSION:
        raise ValueError(
            f"unsupported {PAIR_SCHEMA} version {data.get('version')!r}; this smemviz reads {PAIR_SCHEMA_VERSION}"
        )
    smem = LayoutPlan.from_dict(data["smem"]) if data.get("smem") else None
    tmem = LayoutPlan.from_dict(data["tmem"]) if data.get("tmem") else None
    return smem, tmem


def to_markdown(pair: LayoutPair) -> str:
    parts = [f"## {_md_text(pair.title)}", ""] if pair.title else []
    parts += [markdown_report(p) for p in pair.plans]
    return "\n".join(parts).rstrip("\n") + "\n"


def _md_text(text: str) -> str:
    """Heading text shown literally: no emphasis, links or inline HTML."""
    out = text.replace("\n", " ")
    for ch in "\\`*[]<>#|":
        out = out.replace(ch, "\\" + ch)
    return out
