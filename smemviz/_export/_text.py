"""Text exports: the plan as versioned JSON, the usage table as Markdown."""

from __future__ import annotations

import json
from typing import Any

from .._names import shown
from ..analysis._analysed import Analysed
from ..analysis._report import markdown_report
from ..layout._plan import SCHEMA, LayoutPlan
from ..layout._plan_json import plan_from_dict
from ..sources._inputs import LayoutPair
from ._analysed import AnalysedPair, analyse_pair

__all__ = ["to_json", "read_plans", "to_markdown", "PAIR_SCHEMA", "PAIR_SCHEMA_VERSION"]

# Both memories in one document. A single plan is written in the plan's own
# schema, so LayoutPlan.from_json reads it back.
PAIR_SCHEMA = "smemviz.layout-plans"
PAIR_SCHEMA_VERSION = 1


def _with_checks(an: Analysed) -> dict[str, Any]:
    """The plan's data plus what was found about it (lint, occupancy); readers of the
    plan schema ignore both keys."""
    d = an.plan.to_dict()
    d["lint"] = an.findings.to_list()
    if an.measured:  # Nsight Compute's counts beside the prediction, per captured region
        d["measured"] = [seg.to_dict() for seg in an.measured]
    occ = an.occupancy
    if occ is not None:
        d["occupancy"] = {
            "arch": occ.arch,
            "ctas_per_sm": occ.ctas,
            "limited_by": occ.limiter,
            "next_level_smem_per_cta": occ.next_smem_per_cta,
        }
    return d


def to_json(pair: LayoutPair | AnalysedPair) -> str:
    """The export's JSON: one plan in the plan's own schema, both in the pair schema."""
    analysed = analyse_pair(pair)
    pair = analysed.pair
    items = analysed.analysed
    if len(items) == 1:
        return json.dumps(_with_checks(items[0]), indent=2) + "\n"
    doc: dict[str, Any] = {
        "schema": PAIR_SCHEMA,
        "version": PAIR_SCHEMA_VERSION,
        "title": pair.title,
        "arch": pair.arch,
        "smem": _with_checks(analysed.smem) if analysed.smem else None,
        "tmem": _with_checks(analysed.tmem) if analysed.tmem else None,
    }
    return json.dumps(doc, indent=2) + "\n"


def read_plans(text: str) -> tuple[LayoutPlan | None, LayoutPlan | None]:
    """``(smem, tmem)`` from a JSON export (one plan or both)."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise ValueError("not a smemviz export: nested too deeply") from None
    if isinstance(data, dict) and data.get("schema") == SCHEMA:
        plan = plan_from_dict(data)
        return (plan, None) if plan.memory == "smem" else (None, plan)
    if not isinstance(data, dict) or data.get("schema") != PAIR_SCHEMA:
        raise ValueError(f"not a smemviz export (expected schema {SCHEMA!r} or {PAIR_SCHEMA!r})")
    version = data.get("version")
    if version != PAIR_SCHEMA_VERSION or isinstance(version, bool):
        shown_version = repr(version) if isinstance(version, (int, str, type(None))) else type(version).__name__
        raise ValueError(
            f"unsupported {PAIR_SCHEMA} version {shown_version[:40]}; this smemviz reads {PAIR_SCHEMA_VERSION}"
        )
    plans: list[LayoutPlan | None] = []
    for slot in ("smem", "tmem"):
        value = data.get(slot)
        item = plan_from_dict(value) if value is not None else None
        if item is not None and item.memory != slot:
            raise ValueError(f"malformed {PAIR_SCHEMA} document: its {slot!r} item is a {item.memory.upper()} plan")
        plans.append(item)
    if plans == [None, None]:
        raise ValueError(f"malformed {PAIR_SCHEMA} document: neither an 'smem' nor a 'tmem' plan")
    return plans[0], plans[1]


def to_markdown(pair: LayoutPair | AnalysedPair) -> str:
    analysed = analyse_pair(pair)
    parts = [f"## {_md_text(analysed.pair.title)}", ""] if analysed.pair.title else []
    parts += [markdown_report(a) for a in analysed.analysed]
    return "\n".join(parts).rstrip("\n") + "\n"


def _md_text(text: str) -> str:
    """Heading text shown literally: no emphasis, links or inline HTML."""
    out = shown(text.replace("\n", " "))
    for ch in "\\`*[]<>#|":
        out = out.replace(ch, "\\" + ch)
    return out
