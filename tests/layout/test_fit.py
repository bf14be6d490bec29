"""compute_layout(fit=N): a capacity in units, no architecture named."""

from __future__ import annotations

import pytest

from smemviz import CapacityError, SmemAllocation, SmemAllocator, TmemAllocation, TmemAllocator


def _ring(fit_steps: int = 5) -> SmemAllocator:
    # a ring of buffers, each live with the next: greedy layouts need 3 x 1000 B, the optimum 2 x 1000 + a bit
    s = SmemAllocator()
    for k in range(fit_steps):
        s.add(SmemAllocation(f"r{k}", 1000 + 8 * k, 8), live={k, (k + 1) % fit_steps})
    return s


def test_the_solver_stops_at_the_first_layout_within_fit():
    best = _ring()
    best.compute_layout()
    asked = _ring()
    asked.compute_layout(fit=best.plan.data_total + 1000)  # room to spare: a yes/no question
    assert best.plan.data_total <= asked.plan.data_total <= best.plan.data_total + 1000
    assert asked.plan.lower_bound <= asked.plan.data_total


def test_a_layout_over_fit_is_refused_and_nothing_changes():
    s = _ring()
    with pytest.raises(CapacityError, match=r"SmemAllocator: the SMEM layout needs 3,0[0-9,]+ B, over fit=2,500 by"):
        s.compute_layout(fit=2500)
    assert not s.layout_computed and all(a.offset == 0 for a in s.allocations)
    s.compute_layout(fit=10**6)
    assert s.layout_computed


def test_without_lifetimes_fit_checks_the_packed_layout_with_its_barriers():
    s = SmemAllocator()
    s.add(SmemAllocation("a", 1000, 8))
    s.add_pipeline("load", stages=2)
    assert s.barrier_smem_bytes == 32
    with pytest.raises(CapacityError, match=r"needs 1,032 B \(data 1,000 B \+ barriers 32 B\), over fit=1,031 by 1 B"):
        s.compute_layout(fit=1031)
    s.compute_layout(fit=1032)
    assert s.plan.unified_bytes == 1032


def test_tmem_columns_fit_too():
    t = TmemAllocator(steps=2)
    t.add(TmemAllocation("acc", 256), live=0)
    t.add(TmemAllocation("out", 128), live=1)
    t.compute_layout(fit=256)
    assert t.plan.data_total == 256
    u = TmemAllocator(steps=2)
    u.add(TmemAllocation("acc", 256), live=0)
    u.add(TmemAllocation("out", 128), live=0)
    with pytest.raises(CapacityError, match="TMEM layout needs 384 columns, over fit=256 by 128 columns"):
        u.compute_layout(fit=256)


@pytest.mark.parametrize(
    ("fit", "error", "match"),
    [
        (0, ValueError, "fit must be from 1 to 2\\*\\*62 units, got 0"),
        (2**62 + 1, ValueError, "fit must be from 1 to 2\\*\\*62"),
        (1.5, TypeError, "fit must be an int"),
        (True, TypeError, "fit must be an int"),
        ("1024", TypeError, "fit must be an int"),
    ],
)
def test_bad_fit_is_refused_before_anything_changes(fit, error, match):
    s = _ring()
    with pytest.raises(error, match=match):
        s.compute_layout(fit=fit)
    assert not s.layout_computed


def test_fit_and_arch_together_take_the_smaller():
    s = SmemAllocator(arch="sm_90a", steps=2)
    s.add(SmemAllocation("a", 100_000, 128), live=0)
    s.add(SmemAllocation("b", 100_000, 128), live=1)
    s.compute_layout(fit=150_000)
    assert s.plan.data_total == 100_000


def test_fit_asks_the_solver_a_yes_no_question():
    # the machinery under fit=: with "enough" at the first layout found, the search stops there
    import random

    from smemviz.solver import solve

    rng = random.Random(2)
    for _ in range(200):  # seeded layouts; the first whose greedy layout the search improves
        n = rng.randint(8, 11)
        sizes = [rng.randint(64, 4096) * 16 for _ in range(n)]
        aligns = [rng.choice([16, 128, 1024]) for _ in range(n)]
        lives = []
        for _ in range(n):
            first = rng.randrange(6)
            lives.append(set(range(first, rng.randint(first + 1, 6))))
        minimised = solve(sizes, aligns, lives)
        if minimised.peak < minimised.greedy_peak:
            break
    assert minimised.optimal and minimised.nodes > 0 and minimised.peak < minimised.greedy_peak
    asked = solve(sizes, aligns, lives, target=minimised.greedy_peak, enough=minimised.greedy_peak)
    assert asked.nodes == 0 and asked.peak == minimised.greedy_peak  # the greedy layout already fits: yes
    within = solve(sizes, aligns, lives, target=minimised.greedy_peak - 1, enough=minimised.greedy_peak - 1)
    assert within.peak <= minimised.greedy_peak - 1 and within.nodes <= minimised.nodes
