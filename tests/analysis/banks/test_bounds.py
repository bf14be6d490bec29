"""The bounds of the bank analysis (smemviz._limits): hostile arguments to ``analyze_access``,
``bank_conflicts``, the atoms and the access records are refused by name before any work, with
a short message, never a hang, a traceback of Python's own limits, or a wrong exception."""

from __future__ import annotations

import sys

import pytest

from smemviz import SmemAllocation, SmemAllocator
from smemviz._errors import DeclarationError, DeclarationTypeError
from smemviz._limits import MAX_INSTRUCTIONS, MAX_PLAN_INSTRUCTIONS, MAX_WARPS, shorten
from smemviz.analysis import lint
from smemviz.analysis.banks import (
    CuteLayout,
    Swizzle,
    analyze_access,
    bank_conflicts,
    parse_cute_layout,
    stmatrix_atom,
    vector_atom,
)
from smemviz.analysis.banks._access import analyse_plan
from smemviz.analysis.banks._model import max_smem_bytes
from smemviz.layout import SmemAccess, plan_from_dict

from ...hostile import no_hang

TILE = "(128,32):(32,1)"  # an epilogue tile: 128 rows of 32 bf16
EPI = {"instruction": "stmatrix.x4", "layout": TILE}


def _plan(accesses=None):
    s = SmemAllocator("sm_90a")
    s.add(SmemAllocation("c", 8192, alignment=1024, dtype="bf16", count=4096, access=accesses))
    s.compute_layout()
    return s.plan


@pytest.fixture(scope="module")
def plan():
    return _plan()


# -- 1: warps per CTA ------------------------------------------------------------------------


def test_analyze_access_refuses_more_warps_than_a_cta_holds(plan):
    with no_hang(20), pytest.raises(DeclarationError, match=r"warps .*at most 32 \(1024 threads") as info:
        analyze_access(plan, "c", stmatrix_atom(), layout=TILE, warps=(2**62, 1))
    assert info.value.field == "warps"
    assert analyze_access(plan, "c", stmatrix_atom(), layout=TILE, warps=(8, 4)).warps == MAX_WARPS


@pytest.mark.parametrize("warps", [(2**62, 1), (1, 33), (8, 8), (10**30, 1)])
def test_an_access_record_refuses_more_warps_than_a_cta_holds(warps):
    with no_hang(20), pytest.raises(DeclarationError, match="a CTA holds at most 32") as info:
        SmemAllocation("c", 8192, dtype="bf16", count=4096, access={**EPI, "warps": list(warps)})
    assert info.value.field == "access.warps"


def test_plan_json_refuses_warps_past_a_cta_and_past_64_bits():
    data = _plan([EPI]).to_dict()
    for warps in ([2**62, 1], [10**30, 1]):
        data["accesses"][0]["warps"] = warps
        with no_hang(20), pytest.raises(ValueError, match=r"accesses\[0\]\.warps: .*at most 32"):
            plan_from_dict(data)


# -- 2: atom tiles per access ----------------------------------------------------------------


@pytest.mark.parametrize("layout", ["(1000000000000,32):(0,1)", "((1000000,1000000),32):((0,0),1)"])
def test_a_zero_stride_layout_of_too_many_instructions_is_refused_before_the_walk(plan, layout):
    with no_hang(20), pytest.raises(DeclarationError, match=f"analysed up to {MAX_INSTRUCTIONS}") as info:
        analyze_access(plan, "c", vector_atom("ld.shared.b32", 2), layout=layout)
    assert info.value.field == "layout"
    with pytest.raises(DeclarationError, match="its tile holds .* elements; at most"):
        SmemAccess("ld.shared.b32", layout, region="c")


def test_the_instruction_bound_is_above_what_any_kernel_reaches():
    largest, _ = max_smem_bytes()
    assert largest // 32 < MAX_INSTRUCTIONS  # the narrowest warp instruction moves 32 B


def test_an_access_at_the_bound_is_analysed(plan):
    rep = analyze_access(plan, "c", "ld.shared.b16", layout=f"({MAX_INSTRUCTIONS},32):(0,1)")
    assert rep.instructions == MAX_INSTRUCTIONS and rep.conflict_free


def test_a_plan_stops_analysing_past_its_budget(monkeypatch):
    budget, per = 2048, 512  # a small budget, so the test walks little; each access takes 512 instructions
    monkeypatch.setattr("smemviz.analysis.banks._access.MAX_PLAN_INSTRUCTIONS", budget)
    plan = _plan([{"instruction": "ld.shared.b16", "layout": f"({per},32):(0,1)"}] * 8)
    items = analyse_plan(plan)
    done = [i for i in items if i.report is not None]
    assert all(i.report.instructions == per for i in done)
    assert len(done) == budget // per + 1 < len(items)
    assert all("as many as one plan is analysed for" in (i.error or "") for i in items[len(done) :])
    assert MAX_PLAN_INSTRUCTIONS >= MAX_INSTRUCTIONS


# -- 3: swizzle bits ---------------------------------------------------------------------------


def test_swizzle_parameters_past_cute_are_refused_in_layout_text(plan):
    text = "S<1,99999999999,1> o 0 o (128,32):(32,1)"
    with no_hang(20), pytest.raises(ValueError, match=r"B \+ M \+ S is 100000000001; .*at most 32"):
        analyze_access(plan, "c", stmatrix_atom(), layout=text, swizzle=None)
    with pytest.raises(DeclarationError, match=r"B \+ M \+ S") as info:
        SmemAccess("stmatrix.x4", text, region="c")
    assert info.value.field == "access.layout"
    with pytest.raises(ValueError, match="32-bit offsets"):
        Swizzle(1, 99999999999, 1)
    assert Swizzle(16, 0, 16).period_bytes == 2**32  # the largest CuTe takes


def test_an_element_swizzle_that_leaves_32_bits_in_bytes_is_refused():
    with pytest.raises(ValueError, match="reaches bit 33"):
        Swizzle(16, 0, 16, "element").in_bytes(2)


# -- 4, 5, 6: bank_conflicts' addresses -----------------------------------------------------


def test_bank_conflicts_refuses_a_mapping_as_a_type_error():
    with pytest.raises(TypeError, match="a mapping: give the addresses in lane order"):
        bank_conflicts("ld.shared.b32", {i + 100: 4 * i for i in range(32)})


def test_bank_conflicts_refuses_a_range_past_the_machine_word():
    with pytest.raises(ValueError, match="takes 32 addresses, one per lane; got far more"):
        bank_conflicts("ld.shared.b32", range(10**20))


def test_a_huge_address_names_the_lane_and_the_limit():
    addresses = [0] * 32
    addresses[5] = 10**5000
    with pytest.raises(ValueError) as info:
        bank_conflicts("ld.shared.b32", addresses)
    message = str(info.value)
    assert message.startswith("lane 5: address an integer of 16610 bits")
    assert f"({max_smem_bytes()[0]} B" in message and "digit" not in message


# -- 7: messages are short whatever the input --------------------------------------------------


def test_messages_quote_a_shortened_instruction_and_layout(plan):
    long_instruction = "x" * 100_000
    with pytest.raises(ValueError) as info:
        bank_conflicts(long_instruction, [0] * 32)
    assert "(100000 characters)" in str(info.value) and len(str(info.value)) < 1000
    with pytest.raises(DeclarationError) as info2:
        SmemAccess(long_instruction, TILE, region="c")
    assert len(str(info2.value)) < 1000
    long_layout = "(" + "1," * 50_000 + "1):(1)"
    for call in (
        lambda: analyze_access(plan, "c", stmatrix_atom(), layout=long_layout),
        lambda: SmemAccess("stmatrix.x4", long_layout, region="c"),
    ):
        with pytest.raises(ValueError) as info3:
            call()
        assert "characters" in str(info3.value) and len(str(info3.value)) < 400


def test_shorten_is_cheap_and_short_for_any_value():
    assert shorten("abc") == "'abc'"
    assert shorten(10**5000) == "an integer of 16610 bits"
    assert shorten(list(range(10**6))) == "a list of 1000000 items"
    assert shorten((1, 2)) == "(1, 2)"
    assert len(shorten("é" * 10**6)) < 100


# -- 8: a renamed allocation takes its accesses along -------------------------------------------


def test_an_access_follows_its_allocation_when_renamed():
    s = SmemAllocator("sm_90a")
    a = s.add(SmemAllocation("epi_c", 8192, alignment=1024, dtype="bf16", count=4096, access=EPI))
    a.name = "epi_d"
    s.compute_layout()
    assert [acc.region for acc in s.plan.accesses] == ["epi_d"]
    assert {f.regions for f in lint(s.plan) if f.rule.startswith("bank")} == {("epi_d",)}


def test_an_access_that_names_another_region_itself_is_still_refused():
    with pytest.raises(DeclarationError, match="declared on 'epi_d' but names region 'epi_c'"):
        SmemAllocation("epi_d", 8192, dtype="bf16", count=4096, access=SmemAccess("stmatrix.x4", TILE, region="epi_c"))


# -- 9, 10: integers and nesting of layout text ------------------------------------------------


def test_layout_extents_past_64_bits_are_refused_by_digits_not_by_pythons_limit(plan):
    layout = "(" + "1" * 4000 + ",32):(32,1)"
    with pytest.raises(ValueError, match="an integer of 4000 digits does not fit in 64 bits") as info:
        analyze_access(plan, "c", stmatrix_atom(), layout=layout)
    assert "set_int_max_str_digits" not in str(info.value)
    with pytest.raises(DeclarationError, match="4000 digits") as info2:
        SmemAllocation("c", 8192, dtype="bf16", count=4096, access={**EPI, "layout": layout})
    assert info2.value.field == "access.layout"


def test_deep_layouts_are_refused_at_16_levels_by_the_public_functions(plan):
    deep = "(" * 17 + "128" + ")" * 17 + ",32"
    with pytest.raises(ValueError, match="nests more than 16 levels"):
        analyze_access(plan, "c", stmatrix_atom(), layout=f"({deep}):(32,1)")
    with pytest.raises(ValueError, match="nests more than 16 levels"):
        parse_cute_layout(f"({deep}):(32,1)")
    shape: object = 128
    for _ in range(3000):
        shape = (shape,)
    with pytest.raises(ValueError, match="nests more than 16 levels"):
        CuteLayout(shape, shape)  # type: ignore[arg-type]
    three_thousand = "(" * 3000 + "1" + ")" * 3000
    with pytest.raises(ValueError, match="characters"):
        analyze_access(plan, "c", stmatrix_atom(), layout=f"{three_thousand}:{three_thousand}")
    assert sys.getrecursionlimit() < 3000 * 2  # the depth that used to overflow the stack


# -- 11, 12: atoms ---------------------------------------------------------------------------


def test_analyze_access_takes_the_atom_as_an_instruction_spelling(plan):
    by_text = analyze_access(plan, "c", "stmatrix.x4", layout=TILE, warps=(8, 1))
    by_atom = analyze_access(plan, "c", stmatrix_atom(), layout=TILE, warps=(8, 1))
    assert by_text == by_atom
    with pytest.raises(DeclarationTypeError, match="atom must be an AccessAtom .* not int 4"):
        analyze_access(plan, "c", 4, layout=TILE)  # type: ignore[arg-type]


@pytest.mark.parametrize("element_bytes", [0, -2])
def test_vector_atom_refuses_a_non_positive_element_size(element_bytes):
    with pytest.raises(DeclarationError, match="element_bytes must be positive"):
        vector_atom("ld.shared.v4.b32", element_bytes)


def test_vector_atom_refuses_negative_thread_arrangements():
    with pytest.raises(DeclarationError, match="threads must be two positive integers"):
        vector_atom("ld.shared.b32", 4, (-1, -32))


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"stage": 2**70}, "stage"), ({"stage": -1}, "stage"), ({"base": 2**64}, "base"), ({"warps": (1,)}, "warps")],
)
def test_analyze_access_names_the_parameter(plan, kwargs, field):
    with pytest.raises((DeclarationError, DeclarationTypeError)) as info:
        analyze_access(plan, "c", stmatrix_atom(), layout=TILE, **kwargs)
    assert info.value.field == field and str(info.value).startswith(field)


def test_a_layout_of_one_top_level_mode_is_refused_by_its_modes(plan):
    with pytest.raises(ValueError, match="has 1 top-level modes; the access analysis takes 2"):
        analyze_access(plan, "c", stmatrix_atom(), layout="((128)):((1))")


def test_the_docs_state_the_bounds_the_code_holds():
    from pathlib import Path

    from smemviz import _limits

    page = (Path(__file__).resolve().parents[3] / "docs" / "bank-conflicts.md").read_text(encoding="utf-8")
    limits = page.split("## Limits", 1)[1].split("\n## ", 1)[0]
    for value in (
        _limits.MAX_WARPS,
        _limits.MAX_INSTRUCTIONS,
        _limits.MAX_TILE_ELEMENTS,
        _limits.MAX_PLAN_INSTRUCTIONS,
        _limits.MAX_NESTING,
        _limits.MAX_MODES,
        _limits.MAX_LAYOUT_TEXT,
    ):
        assert f"| {value:,} " in limits or f"| {value:,} characters |" in limits, value
    assert f"B + M + S <= {_limits.MAX_SWIZZLE_BITS}" in limits
    largest = max_smem_bytes()[0]
    assert f"({largest // 1024} KiB)" in limits and f"takes {largest // 32:,}" in limits
