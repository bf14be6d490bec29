"""A plan carries its kernel's ordering model: in its JSON, and through lint's seven
ordering rules (the model room holds the data, the analysis room the checker)."""

from __future__ import annotations

from dataclasses import replace

import smemviz
from smemviz import SmemAllocation, SmemAllocator
from smemviz.analysis import lint
from smemviz.analysis.ordering import check_ordering
from smemviz.layout import plan_from_json
from smemviz.layout.ordering import OrderingModel

from .kernels import drop, hopper_gemm


def _plan_with(model: OrderingModel):
    s = SmemAllocator(arch="sm_90a")
    s.add(SmemAllocation("sA", 3 * 16384, alignment=1024))
    s.add(SmemAllocation("sB", 3 * 16384, alignment=1024))
    s.compute_layout()
    return replace(s.plan, ordering=model)


def test_the_model_round_trips_in_the_plan_json():
    plan = _plan_with(hopper_gemm())
    again = plan_from_json(plan.to_json())
    assert again.ordering == plan.ordering and again == plan
    assert "ordering" not in _plan_with(None).to_dict()  # no key without a model: older readers see no change


def test_lint_runs_the_ordering_rules_once_on_the_model():
    clean = _plan_with(hopper_gemm())
    assert [f for f in lint(clean, "sm_90a") if f.severity == "error"] == []
    broken = _plan_with(drop(hopper_gemm(), "mma", 45))  # no consumer_release: the producer hangs
    expected = {f.rule for f in check_ordering(broken.ordering).findings if f.severity == "error"}
    assert expected and expected <= set(smemviz.analysis._lint.ORDERING_RULES)
    found = lint(broken, "sm_90a")
    assert {f.rule for f in found if f.severity == "error"} == expected
    some = sorted(expected)[0]
    assert some not in {f.rule for f in lint(broken, "sm_90a", ignore=(some,))}


def test_a_malformed_model_in_json_is_refused_at_its_key():
    import json

    import pytest

    doc = json.loads(_plan_with(hopper_gemm()).to_json())
    doc["ordering"] = {"type": "NotAModel"}
    with pytest.raises(ValueError, match="ordering"):
        smemviz.layout.plan_from_dict(doc)


def test_an_incomplete_model_fails_nothing_on_a_guess_and_says_why():
    """A model its tracer could not read whole: lint keeps every finding but reports errors
    as warnings saying they may follow from what was not read, and names what was not read
    once; the checker itself keeps them errors."""
    from smemviz.layout.ordering import UNREAD

    model = replace(drop(hopper_gemm(), "mma", 45), meta=((UNREAD, "a release through a handle"),))
    assert check_ordering(model).findings.errors  # the checker: as found
    found = lint(_plan_with(model), "sm_90a")
    assert not found.errors
    ordering = [f for f in found if f.rule in smemviz.analysis._lint.ORDERING_RULES]
    assert any(f.severity == "warning" and "the model is incomplete" in f.message for f in ordering)
    notes = [f for f in ordering if f.severity == "info" and "ordering not fully read" in f.message]
    assert len(notes) == 1 and "a release through a handle" in notes[0].message
