"""Any access the model room accepts is one the lint can judge: analysed (a bank-conflict
warning or nothing) or named as an access it cannot take (a bank-access error), never a crash;
and a plan's accesses survive its JSON."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from smemviz import SmemAllocation, SmemAllocator
from smemviz._errors import DeclarationError, DeclarationTypeError
from smemviz.analysis import lint, text_report
from smemviz.layout import plan_from_json
from smemviz.layout._access import SWIZZLE_CHOICES, instruction_spellings

INSTRUCTIONS = sorted(instruction_spellings())


@st.composite
def layouts(draw) -> str:
    rows = draw(st.sampled_from([8, 16, 32, 64, 128]))
    cols = draw(st.sampled_from([8, 16, 32, 64]))
    if draw(st.booleans()):
        return f"({rows},{cols}):({cols},1)"  # K-major
    return f"({rows},{cols}):(1,{rows})"  # MN-major


@st.composite
def accesses(draw) -> dict:
    acc: dict = {"instruction": draw(st.sampled_from(INSTRUCTIONS)), "layout": draw(layouts())}
    if draw(st.booleans()):
        acc["swizzle"] = draw(st.sampled_from(SWIZZLE_CHOICES))
    if draw(st.booleans()):
        acc["warps"] = (draw(st.integers(1, 8)), draw(st.integers(1, 4)))
    if draw(st.booleans()):
        acc["threads"] = draw(st.sampled_from([(8, 4), (4, 8), (32, 1), (1, 32), (16, 2)]))
    if draw(st.booleans()):
        acc["dtype"] = draw(st.sampled_from(["bf16", "f32", "u8", "f8e4m3", "f64"]))
    return acc


@settings(max_examples=60, deadline=None)
@given(
    acc=accesses(),
    align=st.sampled_from([16, 128, 512, 1024]),
    swizzle=st.sampled_from([None, "32B", "64B", "128B"]),
    pad=st.sampled_from([0, 16, 48, 272]),
)
def test_lint_judges_every_accepted_access(acc, align, swizzle, pad):
    s = SmemAllocator()
    if pad:
        s.add(SmemAllocation("pad", pad, 16))
    try:
        alloc = SmemAllocation("buf", dtype="bf16", count=128 * 64, alignment=align, swizzle=swizzle, access=acc)
    except (DeclarationError, DeclarationTypeError) as exc:
        assert "'buf'" in str(exc) and exc.allocation == "buf" and (exc.field or "").startswith("access")
        return
    s.add(alloc)
    s.compute_layout()
    plan = s.plan
    rules = [f.rule for f in lint(plan) if f.rule.startswith("bank")]
    assert len(rules) <= 1
    assert plan_from_json(plan.to_json()).accesses == plan.accesses
    report = text_report(plan)
    assert "Bank accesses" in report and "buf" in report
