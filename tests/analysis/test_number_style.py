"""One way of writing numbers in every message: thousands separators, as the
maps and reports write sizes (issue 23, point 9)."""

from __future__ import annotations

import re

import pytest

from smemviz import CapacityError, SmemAllocation, SmemAllocator
from smemviz.analysis import diff, lint, occupancy
from smemviz.analysis._report import summary_parts

BARE = re.compile(r"(?<![\d,.x])\d{4,}(?= ?(B|bytes|columns|cols)\b)")  # 1234 B without a separator


def gemm(stages: int) -> SmemAllocator:
    s = SmemAllocator(steps=("load", "mma", "epilogue"))
    s.add(SmemAllocation("a_stages", stages * 16384, alignment=1024, stages=stages), live=range(0, 2))
    s.add(SmemAllocation("b_stages", stages * 16384, alignment=1024, stages=stages), live=range(0, 2))
    s.add(SmemAllocation("epi_c", 65536, alignment=1024), live="epilogue")
    s.compute_layout()
    return s


def test_capacity_refusal_writes_every_number_one_way():
    with pytest.raises(CapacityError) as info:
        gemm(8).plan.check("sm_90a")
    msg = str(info.value)
    assert not BARE.findall(msg), msg
    assert "232,448 B" in msg


def test_occupancy_and_lifetime_lines_use_separators():
    plan = gemm(3).plan
    text = occupancy(plan, "sm_90a").message()
    assert not BARE.findall(text), text
    lifetime = summary_parts(plan)[-1]
    assert "lower bound" in lifetime and not BARE.findall(lifetime), lifetime
    assert f"lower bound {plan.lower_bound:,} B" in lifetime


def test_diff_says_one_region_in_the_singular():
    before = SmemAllocator()
    before.add(SmemAllocation("a", 2048))
    before.add(SmemAllocation("b", 4096))
    before.compute_layout()
    after = SmemAllocator()
    after.add(SmemAllocation("a", 2048))
    after.add(SmemAllocation("b", 8192))
    after.compute_layout()
    report = diff(before.plan, after.plan).report()
    assert "1 region unchanged" in report and "1 regions" not in report, report


def test_lint_messages_use_separators():
    s = SmemAllocator()
    s.add(SmemAllocation("pad", 128, alignment=128))
    s.add(SmemAllocation("sA", 3 * 1536, alignment=128, swizzle="128B", stages=3))
    s.compute_layout()
    found = lint(s.plan, "sm_90a")
    assert found
    for f in found:
        assert not BARE.findall(f.message) and not BARE.findall(f.fix), f
