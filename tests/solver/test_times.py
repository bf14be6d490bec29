"""Lifetimes in any integer time unit: cut where they start and end, solved as they are."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from smemviz import SmemAllocation, SmemAllocator
from smemviz.layout import plan_from_dict
from smemviz.solver import MAX_STRETCHES, Problem, Times, default_node_budget, solve, timeline
from smemviz.solver._solve import DEFAULT_NODE_BUDGET

from .test_solve import overlaps


@st.composite
def clock_intervals(draw, max_buffers: int = 9):
    """(sizes, alignments, [lower, upper) clock intervals far beyond any step count)."""
    n = draw(st.integers(1, max_buffers))
    base = draw(st.integers(4096, 2**40))  # beyond the steps: time values
    points = draw(st.lists(st.integers(0, 10**9), min_size=2, max_size=2 * n, unique=True))
    intervals = []
    for _ in range(n):
        lo, hi = sorted(draw(st.lists(st.sampled_from(points), min_size=2, max_size=2, unique=True)))
        intervals.append((base + lo, base + hi))
    sizes = draw(st.lists(st.integers(1, 5000), min_size=n, max_size=n))
    aligns = draw(st.lists(st.sampled_from([1, 16, 128, 1024]), min_size=n, max_size=n))
    return sizes, aligns, intervals


@settings(max_examples=80, deadline=None)
@given(clock_intervals())
def test_stretches_give_the_problem_that_intervals_give(inst):
    # cut into stretches, weighted by their length, the lifetimes make the same problem
    # as the sweep over the intervals themselves: same sections, bounds and spans
    sizes, aligns, intervals = inst
    _, stretches, lengths = timeline([Times(((lo, hi),)) for lo, hi in intervals])
    assert Problem.build(sizes, aligns, stretches, lengths) == Problem.from_intervals(sizes, aligns, intervals)


@settings(max_examples=40, deadline=None)
@given(clock_intervals(max_buffers=7))
def test_clock_values_through_the_allocator_give_a_valid_layout_of_the_same_peak(inst):
    sizes, aligns, intervals = inst
    s = SmemAllocator()
    for k, ((lo, hi), size, al) in enumerate(zip(intervals, sizes, aligns)):
        s.add(SmemAllocation(f"b{k}", size, al), live=range(lo, hi))
    s.compute_layout()
    offsets = [s.plan.region(f"b{k}").offset for k in range(len(sizes))]
    _, stretches, lengths = timeline([Times(((lo, hi),)) for lo, hi in intervals])
    assert overlaps(offsets, sizes, stretches) == []
    direct = solve(sizes, aligns, stretches, step_lengths=lengths, incumbents=[offsets])
    assert s.plan.data_total == direct.peak  # the same search: the same layout
    assert len(s.plan.steps) == len(lengths)


def test_timeline_cuts_at_every_start_and_end_and_nowhere_else():
    firsts, stretches, lengths = timeline([Times(((10**12, 10**12 + 500),)), frozenset({3, 4, 7}), None])
    assert firsts == (3, 5, 7, 8, 10**12)
    assert lengths == (2, 2, 1, 10**12 - 8, 500)
    assert stretches == [frozenset({4}), frozenset({0, 2}), frozenset(range(5))]


def test_more_stretches_than_the_limit_are_refused_with_the_count():
    lives = [Times(((2 * k, 2 * k + 1),)) for k in range(MAX_STRETCHES // 2 + 1)]
    with pytest.raises(ValueError, match="cut time into 4,097 stretches; at most 4,096"):
        timeline(lives)


def test_hostile_time_values_are_refused_naming_the_allocation():
    s = SmemAllocator()
    with pytest.raises(ValueError, match=r"'a': live=range\(0, 4611686018427387905\) reaches outside the time values"):
        s.add(SmemAllocation("a", 8), live=range(0, 2**62 + 1))
    with pytest.raises(ValueError, match="'a': live= names 1,048,577 steps, at most 1,048,576; give a range"):
        s.add(SmemAllocation("a", 8), live=list(range(2**20 + 1)))
    with pytest.raises(ValueError, match="'a': live= step -3 is out of range"):
        s.add(SmemAllocation("a", 8), live=[5000, -3])
    a = s.add(SmemAllocation("a", 8), live=range(10**9, 2 * 10**9))
    with pytest.raises(ValueError, match=r"live steps \[1000000000, 2000000000\); cannot add it again live in \[5\]"):
        s.add(a, live=range(5, 6))


def test_the_default_budget_shrinks_with_the_work_of_a_node_and_never_depends_on_the_clock():
    rng = random.Random(5)
    small = Problem.build([16] * 12, [16] * 12, [set(range(k % 5, k % 5 + 3)) for k in range(12)])
    assert default_node_budget(small) == DEFAULT_NODE_BUDGET
    n = 450
    intervals = []
    for _ in range(n):
        lo = rng.randrange(10**6)
        intervals.append((lo, lo + rng.randrange(1, 200_000)))
    big = Problem.from_intervals([rng.randrange(1, 10**4) for _ in range(n)], [1] * n, intervals)
    budget = default_node_budget(big)
    assert 1_000 <= budget < DEFAULT_NODE_BUDGET // 10
    assert budget == default_node_budget(Problem.from_intervals(big.sizes, big.alignments, intervals))


@pytest.mark.slow
def test_a_450_buffer_layout_of_time_values_is_solved_with_its_gap():
    # the search is bounded by its node budget, not by the clock; its speed is the
    # benchmarks' (benchmarks/bench_core_speed.py), never a timed test
    rng = random.Random(11)
    s = SmemAllocator()
    for k in range(450):
        lo = rng.randrange(10**7)
        s.add(SmemAllocation(f"b{k}", rng.randrange(1, 64) * 1024, 1), live=range(lo, lo + rng.randrange(1, 2 * 10**6)))
    s.compute_layout()
    plan = s.plan
    assert plan.lower_bound <= plan.data_total
    assert plan.optimal == (plan.data_total == plan.lower_bound)


def test_a_plan_of_stretches_reads_back_from_json():

    s = SmemAllocator()
    for k in range(150):
        s.add(SmemAllocation(f"b{k}", 16 * (k % 7 + 1), 16), live=range(10**9 + 10 * k, 10**9 + 10 * k + 25))
    s.compute_layout()
    assert len(s.plan.steps) == 299 and s.plan.steps[0] == "1000000000"  # 300 start and end points
    doc = s.plan.to_dict()
    assert plan_from_dict(doc).to_dict() == doc
