"""The analysis reads the model's access records: the same instruction spellings, the same
reports as ``analyze_access`` given the fields by hand, and the lint rules built on them."""

from __future__ import annotations

from smemviz import SmemAllocation, SmemAllocator
from smemviz.analysis import lint
from smemviz.analysis.banks import INSTRUCTIONS, analyze_access, stmatrix_atom
from smemviz.analysis.banks._access import analyse_declared, analyse_plan
from smemviz.layout._access import canonical_instruction, instruction_spellings


def test_the_model_room_and_the_bank_model_read_one_instruction_table():
    """One home: the declaration's check and the model read the same table on the base floor."""
    from smemviz import _smem_instructions
    from smemviz.layout import _access

    assert INSTRUCTIONS is _smem_instructions.INSTRUCTIONS is _access.INSTRUCTIONS
    assert instruction_spellings() == frozenset(INSTRUCTIONS)
    for spelling, spec in INSTRUCTIONS.items():
        assert canonical_instruction(spelling) == spec.name
    assert canonical_instruction("ld.shared.b128") is None


def _plan():
    s = SmemAllocator()
    s.add(
        SmemAllocation(
            "epi_c",
            dtype="bf16",
            count=4096,
            access=[
                {"instruction": "stmatrix.x4", "layout": "(128,32):(32,1)", "warps": [8, 1]},
                {"instruction": "stmatrix.x4", "layout": "(128,32):(32,1)", "warps": [8, 1], "swizzle": "64B"},
            ],
        )
    )
    s.add(
        SmemAllocation(
            "tiny", dtype="bf16", count=64, access={"instruction": "ld.shared.v4.b32", "layout": "(128,32):(32,1)"}
        )
    )
    s.compute_layout()
    return s.plan


def test_a_record_reports_what_the_fields_given_by_hand_do():
    plan = _plan()
    by_hand = analyze_access(plan, "epi_c", stmatrix_atom(4), layout="(128,32):(32,1)", warps=(8, 1))
    assert analyse_declared(plan, plan.accesses[0]) == by_hand
    assert by_hand.n_way == 4 and by_hand.wavefronts == 256 and by_hand.ideal == 64
    swizzled = analyse_declared(plan, plan.accesses[1])
    assert swizzled.swizzle == "64B" and swizzled.wavefronts < by_hand.wavefronts
    assert analyse_declared(plan, plan.accesses[0], swizzle="64B") == swizzled


def test_analyse_plan_keeps_what_it_cannot_analyse_with_its_reason():
    plan = _plan()
    items = analyse_plan(plan)
    assert [i.access.region for i in items] == ["epi_c", "epi_c", "tiny"]
    assert items[0].advice is not None and items[0].advice.swizzle == "64B"
    assert items[2].report is None and "past its 128 B" in (items[2].error or "")
    found = lint(plan)
    assert [(f.rule, f.severity, f.regions) for f in found if f.rule.startswith("bank")] == [
        ("bank-access", "error", ("tiny",)),
        ("bank-conflict", "warning", ("epi_c",)),
    ]
    assert lint(plan, ignore=("bank-conflict", "bank-access")).rules().isdisjoint({"bank-conflict", "bank-access"})
