"""The lifetime solver: valid layouts, never worse than greedy placement,
exact against brute force on small instances, deterministic."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from smemviz.solver import Problem, solve
from smemviz.solver._greedy import ORDERS, first_fit, ordered

from ..strategies import lifetime_instances


def overlaps(offsets, sizes, lives):
    """Pairs of buffers live at a common step whose bytes overlap (checked from scratch)."""
    bad = []
    for i, j in itertools.combinations(range(len(sizes)), 2):
        if lives[i] & lives[j] and offsets[i] < offsets[j] + sizes[j] and offsets[j] < offsets[i] + sizes[i]:
            bad.append((i, j))
    return bad


def brute_force_peak(sizes, aligns, lives):
    """The optimum: every order, each buffer stacked on the earlier ones it is live with."""
    best = None
    for order in itertools.permutations(range(len(sizes))):
        offsets = [0] * len(sizes)
        for k, i in enumerate(order):
            top = max((offsets[j] + sizes[j] for j in order[:k] if lives[i] & lives[j]), default=0)
            offsets[i] = -(-top // aligns[i]) * aligns[i]
        peak = max(o + s for o, s in zip(offsets, sizes))
        best = peak if best is None else min(best, peak)
    return best


@given(lifetime_instances())
def test_layout_is_valid_and_bounded(inst):
    sizes, aligns, lives = inst
    sol = solve(sizes, aligns, lives)
    assert overlaps(sol.offsets, sizes, lives) == []
    assert all(o % a == 0 and o >= 0 for o, a in zip(sol.offsets, aligns))
    assert sol.peak == max(o + s for o, s in zip(sol.offsets, sizes))
    most_live = max(sum(s for s, live in zip(sizes, lives) if t in live) for t in set().union(*lives))
    assert most_live <= sol.lower_bound <= sol.peak
    assert sol.gap == (0 if sol.optimal else sol.peak - sol.lower_bound)


@given(lifetime_instances(), st.sampled_from([0, 10, 50_000]))
def test_never_worse_than_any_greedy_order(inst, budget):
    sizes, aligns, lives = inst
    p = Problem.build(sizes, aligns, lives)
    greedy = min(p.peak(first_fit(p, ordered(p, range(len(sizes)), name))) for name in ORDERS)
    sol = solve(sizes, aligns, lives, node_budget=budget)
    assert sol.peak <= greedy == sol.greedy_peak
    assert overlaps(sol.offsets, sizes, lives) == []
    # greedy alone gives a valid layout as well
    g = solve(sizes, aligns, lives, solver="greedy")
    assert g.peak == greedy and g.nodes == 0 and overlaps(g.offsets, sizes, lives) == []


@settings(max_examples=150)
@given(lifetime_instances(max_buffers=6, max_steps=5, max_size=60))
def test_exact_matches_brute_force_on_small_instances(inst):
    sizes, aligns, lives = inst
    sol = solve(sizes, aligns, lives, solver="exact")
    assert sol.optimal
    assert sol.peak == brute_force_peak(sizes, aligns, lives)


@given(lifetime_instances(max_buffers=12))
def test_same_declarations_give_the_same_layout(inst):
    sizes, aligns, lives = inst
    for budget in (50, 50_000):
        first = solve(sizes, aligns, lives, node_budget=budget)
        again = solve(list(sizes), list(aligns), [set(x) for x in lives], node_budget=budget)
        assert first == again


@given(lifetime_instances())
def test_a_given_layout_is_never_beaten_by_the_result(inst):
    sizes, aligns, lives = inst
    stacked = []  # everything side by side: valid for any lifetimes
    cursor = 0
    for s, a in zip(sizes, aligns):
        cursor = -(-cursor // a) * a
        stacked.append(cursor)
        cursor += s
    sol = solve(sizes, aligns, lives, node_budget=0, incumbents=[stacked])
    assert sol.peak <= cursor


def test_buffers_that_meet_pairwise_at_different_steps_bound_the_peak_together():
    # three buffers, each pair live together at one step: no step holds more than
    # two (20), yet all three must be disjoint, so the bound is 30 from the start
    sizes, aligns = [10, 10, 10], [1, 1, 1]
    lives = [{0, 2}, {0, 1}, {1, 2}]
    p = Problem.build(sizes, aligns, lives)
    assert p.lower_bound == 30 and (0, 1, 2) in p.sections
    sol = solve(sizes, aligns, lives)
    assert sol.peak == 30 and sol.optimal and sol.lower_bound == 30 and sol.gap == 0


def test_the_search_raises_the_bound_when_it_proves_it_too_low():
    # five buffers in a ring, each meeting the next (b4 meets b0): at most two meet
    # pairwise (bound 20), yet an odd ring of 10 B buffers cannot end below 30
    sizes, aligns = [10] * 5, [1] * 5
    lives = [{k, (k + 1) % 5} for k in range(5)]
    assert Problem.build(sizes, aligns, lives).lower_bound == 20
    sol = solve(sizes, aligns, lives)
    assert sol.peak == 30 and sol.optimal and sol.lower_bound == 30 and sol.gap == 0


def test_buffers_that_never_meet_share_bytes():
    sizes, aligns = [10, 10, 10], [1, 1, 1]
    lives = [{0}, {0, 1}, {1}]
    sol = solve(sizes, aligns, lives)
    assert sol.peak == 20 and sol.optimal and sol.offsets[0] == sol.offsets[2]


def test_alignment_tightens_the_bound():
    # two 1024-aligned buffers of 100 B live together cannot end below 1124
    sol = solve([100, 100], [1024, 1024], [{0}, {0}])
    assert sol.lower_bound == 1124 == sol.peak and sol.optimal


def test_out_of_budget_is_reported_not_claimed():
    sizes = [4096 + 16 * k for k in range(12)]
    aligns = [1024, 16, 128] * 4
    lives = [set(range(k % 5, k % 5 + 3)) for k in range(12)]
    sol = solve(sizes, aligns, lives, node_budget=0)
    assert sol.nodes == 0
    assert sol.optimal == (sol.peak == sol.lower_bound)


def test_bad_arguments():
    with pytest.raises(ValueError, match="solver must be one of"):
        solve([1], [1], [{0}], solver="fast")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="node_budget must be >= 0"):
        solve([1], [1], [{0}], node_budget=-1)


def test_sets_that_stack_beyond_the_steps_are_looked_for_within_caps():
    # every pair meets at a step of its own except partners 2k, 2k+1: 2**12 sets of
    # buffers meet pairwise (one of each pair), far more than are kept
    from smemviz.solver import _problem

    n = 24
    lives: list[set[int]] = [set() for _ in range(n)]
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n) if i // 2 != j // 2]
    for step, (i, j) in enumerate(pairs):
        lives[i].add(step)
        lives[j].add(step)
    sizes, aligns = [16 * (k + 1) for k in range(n)], [16] * n
    p = Problem.build(sizes, aligns, lives)
    assert len(p.sections) <= len(pairs) + _problem._KEPT_CLIQUES
    # the heaviest set that stacks: the larger partner of every pair
    assert p.lower_bound == sum(16 * (2 * k + 2) for k in range(n // 2))
    sol = solve(sizes, aligns, lives, node_budget=20_000)
    assert sol.optimal and sol.peak == p.lower_bound
    assert not p.violations(sol.offsets)


def test_a_long_search_says_so_once_and_finds_the_same_layout(monkeypatch, capsys):
    import smemviz.solver._solve as aliasing

    sizes, aligns = [10] * 5, [1] * 5
    lives = [{k, (k + 1) % 5} for k in range(5)]  # the ring above: the search has work to do
    quiet = solve(sizes, aligns, lives)
    assert quiet.nodes > 0 and "still searching" not in capsys.readouterr().err
    monkeypatch.setattr(aliasing, "NOTICE_AFTER_S", -1.0)
    told = solve(sizes, aligns, lives)
    err = capsys.readouterr().err
    assert err.count("smemviz: still searching for the smallest layout of 5 buffers") == 1
    assert "solver='greedy'" in err
    assert told == quiet
