"""The ordering model survives JSON: every kernel, hand-written or random, reads back equal
and checks the same."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

from smemviz.analysis.ordering import CallSite, OrderingModel, check_ordering, from_dict, to_dict

from .kernels import blackwell_gemm, hopper_gemm, tmem_in_place
from .test_against_brute_force import pipelines
from .test_turns import handle, refill, rotating, turns, unrelated, warpgroup


def round_trip(model: OrderingModel) -> OrderingModel:
    return from_dict(json.loads(json.dumps(to_dict(model))))


@pytest.mark.parametrize(
    "make", [hopper_gemm, blackwell_gemm, tmem_in_place, refill, handle, rotating, turns, warpgroup, unrelated]
)
def test_hand_written_kernels_round_trip(make):
    model = make()
    back = round_trip(model)
    assert back == model and hash(back) == hash(model)
    assert check_ordering(back).text() == check_ordering(model).text()


@settings(max_examples=40, deadline=None)
@given(pipelines())
def test_random_pipelines_round_trip(model):
    assert round_trip(model) == model


def test_the_json_names_each_object_by_type():
    data = to_dict(hopper_gemm())
    assert data["type"] == "OrderingModel"
    assert data["pipelines"][0]["type"] == "Pipeline" and data["pipelines"][0]["kind"] == "tma_async"
    loop = data["programs"][0]["body"][0]
    assert loop["type"] == "Loop" and loop["trips"] == 5 and loop["body"][1]["kind"] == "tma_load"


def test_unknown_types_are_refused():
    with pytest.raises(ValueError, match="unknown ordering object type 'Bogus'"):
        from_dict({"type": "Bogus"})
    with pytest.raises(ValueError, match="not an ordering model"):
        from_dict({"type": "CallSite", "file": "k.py", "line": 3})
    assert CallSite("k.py", 3) != CallSite("k.py", 4)


def test_the_report_as_json():
    from .kernels import drop

    data = json.loads(json.dumps(check_ordering(drop(hopper_gemm(), "mma", 61)).to_dict()))
    assert [f["rule"] for f in data["findings"]] == ["proxy-fence"]
    assert data["findings"][0]["regions"] == ["sC"] and data["trips"] == []
    assert {"earlier": "sA", "later": "sC"}.items() <= data["aliases"][0].items()
