"""The compiled search kernel against the same source run as plain Python
(the reference), and the bounds it proves against brute force."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import smemviz.solver._exact as exact
from smemviz.solver import Problem, solve, solve_problem

from ..strategies import lifetime_instances
from .test_solve import brute_force_peak, overlaps


@pytest.fixture(scope="module")
def compiled_core():
    if exact.core_kind() != "compiled":
        pytest.skip("numba cannot compile the kernel here")
    return exact.load_core(True)


def _solve_with(kind: str, inst, budget: int):
    with pytest.MonkeyPatch.context() as m:
        m.setattr(exact, "core_kind", lambda: kind)
        return solve(*inst, node_budget=budget)


@settings(max_examples=60, deadline=None)
@given(lifetime_instances(max_buffers=9), st.sampled_from([1, 40, 400, 3000]))
def test_compiled_and_plain_python_walk_the_same_search(compiled_core, inst, budget):
    # node for node: same layout, same count, same proof
    assert _solve_with("compiled", inst, budget) == _solve_with("python", inst, budget)


@settings(max_examples=120, deadline=None)
@given(lifetime_instances(max_buffers=6, max_steps=5, max_size=60), st.sampled_from([0, 3, 30, 300, 10**6]))
def test_the_proven_bound_never_passes_the_optimum(inst, budget):
    # however early the search stops, what it claims as a lower bound holds
    sizes, aligns, lives = inst
    sol = solve(sizes, aligns, lives, node_budget=budget)
    best = brute_force_peak(sizes, aligns, lives)
    assert sol.lower_bound <= best <= sol.peak
    assert sol.optimal == (sol.peak == best) or not sol.optimal
    if sol.optimal:
        assert sol.peak == best
    assert overlaps(sol.offsets, sizes, lives) == []


def test_a_longer_search_resumes_where_the_last_one_stopped(compiled_core):
    # the table of searched states is kept between searches of one component:
    # the same proof with a doubling node limit costs far less than the sum of its restarts
    import random

    rng = random.Random(7)
    sizes = [rng.randint(64, 4096) * 16 for _ in range(12)]
    aligns = [rng.choice([16, 128, 1024]) for _ in range(12)]
    lives = []
    for _ in range(12):
        first = rng.randrange(8)
        lives.append(set(range(first, rng.randint(first + 1, 8))))
    p = Problem.build(sizes, aligns, lives)
    comp = p.components()[0]
    c = exact._Component(p, comp, compiled_core)
    rank = list(range(len(comp)))
    cap = p.lower_bound - 1  # below the bound: the search must exhaust
    limit, used = 8, 0
    while True:
        status, nodes, _, _ = c.run(0, rank, cap, limit)
        used += nodes
        if status != compiled_core.OUT_OF_NODES:
            break
        limit *= 2
    fresh = exact._Component(p, comp, compiled_core)
    status_once, alone, _, _ = fresh.run(0, rank, cap, 10**9)
    assert status == status_once == compiled_core.EXHAUSTED
    assert used <= 4 * alone  # restarts without the table would cost about log2(alone) times as much


def test_kernel_sized_layouts_are_proven_within_the_default_budget():
    # a 14-buffer layout whose optimum lies above every per-step bound
    sizes = [4096 + 16 * k for k in range(12)] + [40960, 8192]
    aligns = [1024, 16, 128] * 4 + [1024, 128]
    lives = [set(range(k % 5, k % 5 + 3)) for k in range(12)] + [{0, 6}, {2, 3, 4}]
    sol = solve_problem(Problem.build(sizes, aligns, lives))
    assert sol.optimal and sol.gap == 0


def test_both_forms_agree_where_the_search_does_real_work(compiled_core):
    # seeded kernel-sized layouts that greedy placement does not settle
    import random

    rng = random.Random(3)
    searched = 0
    for _ in range(40):
        n = rng.randint(8, 11)
        sizes = [rng.randint(64, 4096) * 16 for _ in range(n)]
        aligns = [rng.choice([16, 128, 1024]) for _ in range(n)]
        lives = []
        for _ in range(n):
            first = rng.randrange(6)
            lives.append(set(range(first, rng.randint(first + 1, 6))))
        fast = _solve_with("compiled", (sizes, aligns, lives), 2000)
        if fast.nodes == 0:
            continue
        searched += 1
        assert fast == _solve_with("python", (sizes, aligns, lives), 2000)
    assert searched >= 10


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 5000), st.sampled_from([1, 16, 128, 1024])), min_size=0, max_size=18))
def test_the_step_packing_agrees_with_its_plain_python_reference(buffers):
    # the kernel's packing search against the reference, also where either gives up at the node cap
    from smemviz.solver._problem import packed_bound, packed_bound_reference

    sizes = [s for s, _ in buffers]
    aligns = [a for _, a in buffers]
    assert packed_bound(sizes, aligns) == packed_bound_reference(sizes, aligns)


def test_the_step_packing_beats_the_simple_bound_where_alignment_wastes_bytes():
    from smemviz.solver._problem import packed_bound, step_bound

    # two 1024-aligned buffers of 608 B and a 512 B one: the 416 B gap after the first
    # holds nothing, so the least end is 1024 + 608 + 512 = 2144, not the 1728 B they add up to
    sizes, aligns = [608, 608, 512], [1024, 1024, 16]
    assert step_bound(sizes, aligns) == 1728
    assert packed_bound(sizes, aligns) == 2144


def test_the_first_compile_on_a_machine_says_so(compiled_core, capsys):
    from smemviz.solver import _loader

    assert _loader._cached(compiled_core)  # compiled above: numba keeps it beside the source
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_loader, "_cached", lambda kernel: False)
        _loader.core_kind.cache_clear()
        try:
            assert _loader.core_kind() == "compiled"
        finally:
            _loader.core_kind.cache_clear()
    assert "compiling the lifetime solver's search kernel" in capsys.readouterr().err
    assert _loader.core_kind() == "compiled"
    assert capsys.readouterr().err == ""  # cached: nothing said


def test_without_numba_the_same_layouts_come_from_plain_python():
    # numba made unimportable in a fresh interpreter: a warning, then the same offsets
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(
        """
        import sys, importlib.abc, warnings
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("numba", "llvmlite"):
                    raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
        sys.meta_path.insert(0, Block())
        import smemviz
        s = smemviz.SmemAllocator(arch="sm_90a", steps=("load", "mma", "epilogue"))
        for i in range(3):
            s.add(smemviz.SmemAllocation(f"a{i}", 24576 + 512 * i, 1024), live=range(0, 2))
        s.add(smemviz.SmemAllocation("epi", 40960, 1024), live="epilogue")
        s.add(smemviz.SmemAllocation("bias", 1040, 16), live={"mma", "epilogue"})
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            s.compute_layout()
        print("WARN", any("plain Python" in str(w.message) for w in caught))
        print("OFFSETS", [r.offset for r in s.plan.regions], s.plan.optimal, s.plan.solver)
        """
    )
    blocked = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert blocked.returncode == 0, blocked.stderr
    assert "WARN True" in blocked.stdout
    unblocked = subprocess.run(
        [sys.executable, "-c", code.replace('("numba", "llvmlite")', "()")], capture_output=True, text=True, timeout=120
    )
    assert unblocked.returncode == 0, unblocked.stderr
    assert "WARN False" in unblocked.stdout
    offsets = [line for line in blocked.stdout.splitlines() if line.startswith("OFFSETS")]
    assert offsets and offsets == [line for line in unblocked.stdout.splitlines() if line.startswith("OFFSETS")]
    assert offsets[0].endswith("True exact")  # the search (not greedy placement alone) made this layout


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 3000), st.sampled_from([1, 16, 128, 1024])), min_size=1, max_size=7))
def test_a_steps_packing_is_the_least_end_over_every_order(buffers):
    import itertools

    from smemviz._units import align_up
    from smemviz.solver._problem import packed_bound

    def bump(order):
        end = 0
        for size, align in order:
            end = align_up(end, align) + size
        return end

    assert packed_bound(*zip(*buffers)) == min(bump(order) for order in itertools.permutations(buffers))


def test_fourteen_buffers_live_at_one_step_are_proven_at_once():
    # all fourteen meet at step 5: the layout is one step's packing, which is exact
    # over every order (16384 subsets); a capped search of orders gave up here and left
    # the search 1.9 million nodes of proof
    sizes = [47648, 40416, 35552, 63568, 7136, 43792, 25280, 35968, 63488, 7520, 15200, 38272, 18480, 38224]
    aligns = [128, 1024, 1024, 128, 128, 1024, 16, 16, 16, 16, 1024, 1024, 1024, 1024]
    lives = [
        range(5, 8),
        range(4, 7),
        range(8),
        range(1, 8),
        range(1, 7),
        range(8),
        range(1, 7),
        range(1, 8),
        range(3, 8),
        [5],
        [5],
        range(5, 8),
        range(6),
        range(8),
    ]
    p = Problem.build(sizes, aligns, lives)
    assert len(p.sections) == 1
    sol = solve_problem(p)
    assert sol.optimal and sol.peak == p.lower_bound == 481616
    assert sol.nodes < 100_000
