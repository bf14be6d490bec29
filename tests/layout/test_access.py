"""Accesses as part of the layout: declared on an allocation, checked there, kept on the plan,
written to its JSON and read back strictly."""

from __future__ import annotations

import json

import pytest

from smemviz import LayoutPlan, SmemAllocation, SmemAllocator
from smemviz._errors import DeclarationError, DeclarationTypeError
from smemviz.layout import plan_from_dict, plan_from_json
from smemviz.layout._access import SmemAccess, access_from_dict

EPI = {"instruction": "stmatrix.x4", "layout": "(128,32):(32,1)", "warps": [8, 1]}


def _plan(*allocs: SmemAllocation, **kw) -> LayoutPlan:
    s = SmemAllocator(**kw)
    for a in allocs:
        s.add(a)
    s.compute_layout()
    return s.plan


def test_an_access_declared_on_an_allocation_is_on_the_plan():
    a = SmemAllocation("epi_c", dtype="bf16", count=4096, access=EPI)
    assert a.access == (SmemAccess("stmatrix.x4", "(128,32):(32,1)", warps=(8, 1), region="epi_c"),)
    plan = _plan(a, SmemAllocation("plain", 256))
    assert plan.accesses == a.access
    assert plan.accesses_of("epi_c") == a.access and plan.accesses_of("plain") == ()


def test_every_form_of_access_gives_the_same_record():
    record = SmemAccess("ldmatrix.x4", "(64,64):(64,1)", region="sA")
    forms = [
        record,
        SmemAccess("ldmatrix.x4", "(64,64):(64,1)"),
        {"instruction": "ldmatrix.x4", "layout": "(64,64):(64,1)"},
        [record],
    ]
    for form in forms:
        assert SmemAllocation("sA", dtype="bf16", count=4096, access=form).access == (record,)


def test_a_cutlass_dtype_becomes_its_short_name():
    cutlass = pytest.importorskip("cutlass")
    acc = SmemAccess("ld.shared.b32", "(8,64):(64,1)", dtype=cutlass.BFloat16)
    assert acc.dtype == "bf16"


@pytest.mark.parametrize(
    "access,field,fragment",
    [
        (
            {"instruction": "stmatrix.x9", "layout": "(8,8):(8,1)"},
            "access.instruction",
            "unknown instruction 'stmatrix.x9'",
        ),
        ({"instruction": "cp.async.ca.8", "layout": "(8,8):(8,1)"}, "access.instruction", "unknown instruction"),
        ({"instruction": "stmatrix.x4"}, "access.layout", "give the tile's 'layout'"),
        ({"instruction": "stmatrix.x4", "layout": "(128,32:(32,1)"}, "access.layout", "is not an integer or a parenth"),
        ({"instruction": "stmatrix.x4", "layout": "(128,32)"}, "access.layout", "'shape:stride' form"),
        ({"instruction": "stmatrix.x4", "layout": "(8,8):(8,1)", "dtype": "bf17"}, "access.dtype", "unknown dtype"),
        ({"instruction": "stmatrix.x4", "layout": "(8,8):(8,1)", "dtype": "f4e2m1"}, "access.dtype", "whole-byte"),
        (
            {"instruction": "stmatrix.x4", "layout": "(8,8):(8,1)", "swizzle": "96B"},
            "access.swizzle",
            "'swizzle' must be",
        ),
        ({"instruction": "stmatrix.x4", "layout": "(8,8):(8,1)", "warps": [0, 1]}, "access.warps", "two positive"),
        ({"instruction": "stmatrix.x4", "layout": "(8,8):(8,1)", "warps": 8}, "access.warps", "two positive"),
        (
            {"instruction": "stmatrix.x4", "layout": "(8,8):(8,1)", "threads": [4, 8]},
            "access.threads",
            "places its lanes",
        ),
        (
            {"instruction": "ld.shared.b32", "layout": "(8,8):(8,1)", "threads": [4, 4]},
            "access.threads",
            "a warp has 32",
        ),
        ({"instruction": "stmatrix.x4", "layout": "(8,8):(8,1)", "stage": -1}, "access.stage", "non-negative"),
        ({"instruction": "stmatrix.x4", "layout": "(8,8):(8,1)", "stage": 4}, "access.stage", "holds 4 stage(s)"),
        ({"instruction": "stmatrix.x4", "layout": "(8,8):(8,1)", "colour": 1}, "access.colour", "unknown key"),
        (
            {"instruction": "stmatrix.x4", "layout": "(8,8):(8,1)", "region": "other"},
            "access.region",
            "names region 'other'",
        ),
    ],
)
def test_a_bad_access_is_refused_naming_the_allocation(access, field, fragment):
    with pytest.raises((DeclarationError, DeclarationTypeError)) as info:
        SmemAllocation("sA", dtype="bf16", shape=(4, 64, 64), access=access)
    assert "'sA'" in str(info.value) and fragment in str(info.value)
    assert info.value.allocation == "sA" and info.value.field == field


def test_an_access_needs_a_dtype_from_somewhere():
    with pytest.raises(DeclarationError, match="neither the access nor the allocation gives a dtype"):
        SmemAllocation("raw", 8192, access=EPI)
    assert SmemAllocation("raw", 8192, access={**EPI, "dtype": "bf16"}).access[0].dtype == "bf16"


def test_not_an_access_at_all():
    with pytest.raises(DeclarationTypeError, match="access must be an SmemAccess, a table or an instruction"):
        SmemAllocation("sA", dtype="bf16", count=64, access=5)


def test_hostile_layout_text_is_refused_quickly():
    with pytest.raises(DeclarationError, match="layout"):
        SmemAccess("ld.shared.b32", "(" * 5000 + "1" + ")" * 5000 + ":1")


def test_an_access_changed_after_declaration_is_checked_again():
    a = SmemAllocation("epi_c", dtype="bf16", count=4096, access=EPI)
    a.access = [{"instruction": "bogus", "layout": "(8,8):(8,1)"}]
    s = SmemAllocator()
    s.add(a)
    s.compute_layout()
    with pytest.raises(DeclarationError, match="unknown instruction 'bogus'"):
        _ = s.plan


def test_json_round_trip_and_no_key_without_accesses():
    plan = _plan(
        SmemAllocation("epi_c", dtype="bf16", count=4096, access=[EPI, {**EPI, "swizzle": "64B"}]),
        SmemAllocation(
            "sA",
            dtype="bf16",
            shape=(2, 64, 64),
            alignment=1024,
            swizzle="128B",
            access={"instruction": "ldmatrix.x4.trans", "layout": "(64,64):(1,64)", "stage": 1},
        ),
    )
    data = plan.to_dict()
    assert data["accesses"][0] == {
        "region": "epi_c",
        "instruction": "stmatrix.x4",
        "layout": "(128,32):(32,1)",
        "warps": [8, 1],
    }
    assert data["accesses"][1]["swizzle"] == "64B" and data["accesses"][2]["stage"] == 1
    back = plan_from_json(plan.to_json())
    assert back.accesses == plan.accesses and back == plan
    assert "accesses" not in _plan(SmemAllocation("plain", 256)).to_dict()


def _doc_with(accesses: object) -> dict:
    plan = _plan(SmemAllocation("epi_c", dtype="bf16", count=4096), SmemAllocation("tail", 64))
    doc = plan.to_dict()
    doc["accesses"] = accesses
    return json.loads(json.dumps(doc))


@pytest.mark.parametrize(
    "accesses,fragment",
    [
        ("stmatrix.x4", "accesses: expected an array"),
        ([{"region": "nowhere", **EPI}], "accesses[0].region: 'nowhere' is not a region of the plan"),
        ([{"region": "epi_c", **EPI, "warps": [8, 0]}], "accesses[0].warps:"),
        ([{"region": "epi_c", **EPI, "colour": "red"}], "accesses[0]: unknown key 'colour'"),
        ([{"region": "epi_c", "instruction": "ldmatrix.x3"}], "accesses[0].instruction:"),
        ([{"instruction": "ldmatrix.x4"}], "accesses[0].region: expected a non-empty string"),
    ],
)
def test_the_json_reader_refuses_bad_accesses_naming_the_field(accesses, fragment):
    with pytest.raises(ValueError) as info:
        plan_from_dict(_doc_with(accesses))
    assert fragment in str(info.value)


def test_access_to_a_barrier_region_is_refused():
    s = SmemAllocator()
    s.add(SmemAllocation("epi_c", dtype="bf16", count=4096))
    s.add_pipeline("load", 2)
    s.compute_layout()
    doc = s.plan.to_dict()
    bars = next(r["name"] for r in doc["regions"] if r["kind"] == "barrier")
    doc["accesses"] = [{"region": bars, "instruction": "ld.shared.b64", "layout": "(2,2):(2,1)", "dtype": "i64"}]
    with pytest.raises(ValueError, match="barrier region, which holds no tile"):
        plan_from_dict(doc)


def test_a_plan_at_one_step_keeps_the_accesses_of_what_is_live():
    s = SmemAllocator(steps=("load", "epilogue"))
    s.add(SmemAllocation("a", dtype="bf16", count=4096, access=EPI), live="load")
    s.add(SmemAllocation("b", dtype="bf16", count=4096, access=EPI), live="epilogue")
    s.compute_layout()
    assert [x.region for x in s.plan.accesses] == ["a", "b"]
    assert [x.region for x in s.plan.at_step("epilogue").accesses] == ["b"]


def test_a_plan_refuses_an_access_to_a_region_it_lacks():
    plan = _plan(SmemAllocation("a", 256))
    with pytest.raises(ValueError, match="names region 'zz', which the plan does not have"):
        LayoutPlan(
            plan.memory,
            plan.regions,
            data_total=plan.data_total,
            accesses=(SmemAccess("ld.shared.b32", "(8,8):(8,1)", region="zz"),),
        )


def test_access_from_dict_alone():
    acc = access_from_dict(
        {"region": "x", "instruction": "LD.SHARED.V4.B32", "layout": "(8,64):(64,1)", "threads": [4, 8]}
    )
    assert acc.short_instruction == "ld.shared.v4.b32" and acc.threads == (4, 8)
    assert acc.label == "ld.shared.v4.b32"
    assert SmemAccess("stmatrix.x4", swizzle=None).swizzle == "none"
