"""Lifetimes in the allocators: steps=, live=, solved layouts and their plans,
alias groups read as lifetimes, and refused input that changes nothing."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings

import smemviz
from smemviz import CapacityError, SmemAllocation, SmemAllocator, TmemAllocation, TmemAllocator
from smemviz.analysis import text_report
from smemviz.layout import plan_from_dict

from ..strategies import replay, smem_programs, smemviz_alloc

KIB = 1024


@dataclass
class Config:
    num_stages: int
    barrier_ptr: object = None


@dataclass
class Stage:
    name: str
    allocs: list = field(default_factory=list)
    pipeline_config: object = None
    pipeline_group: object = None

    def get_smem_requirements(self):
        return list(self.allocs)


def gemm_with_epilogue(solver=None):
    """Operand stages live while loading and multiplying; the epilogue tile after."""
    s = SmemAllocator(arch="sm_90a", steps=("load", "mma", "epilogue"))
    a = SmemAllocation("smem_a", 4 * 32 * KIB, alignment=1024)
    b = SmemAllocation("smem_b", 4 * 16 * KIB, alignment=1024)
    s.add_resource(Stage("operands", [a, b], Config(4)), live=range(0, 2))
    epi = s.add(SmemAllocation("epi_tile", 64 * KIB, alignment=1024), live="epilogue")
    bias = s.add(SmemAllocation("bias", 512, alignment=16), live={"mma", "epilogue"})
    s.compute_layout(solver=solver)
    return s, a, b, epi, bias


def test_epilogue_finds_its_place_over_the_operand_stages():
    s, a, b, epi, bias = gemm_with_epilogue()
    plan = s.plan
    assert epi.offset < a.offset + a.size_bytes  # shares bytes with an operand buffer
    assert s.total == 4 * 48 * KIB + 512 == plan.data_total
    assert plan.lower_bound == s.total and plan.optimal and plan.gap == 0
    assert plan.steps == ("load", "mma", "epilogue")
    assert plan.region("epi_tile").live == (2,) and plan.region("smem_a").live == (0, 1)
    assert plan.region("bias").live == (1, 2)
    assert sorted(r.name for r in plan.live_at("epilogue") if r.kind == "data") == ["bias", "epi_tile"]
    assert plan.live_at(2) == plan.live_at("epilogue")
    with pytest.raises(KeyError, match="no step named 'store'"):
        plan.live_at("store")
    with pytest.raises(KeyError, match=r"no step 3; the plan has 3 steps \(0..2\)"):
        plan.at_step(3)
    for wrong in (None, 1.0, True, ["epilogue"]):
        with pytest.raises(TypeError, match="a step is a name or an index"):
            plan.live_at(wrong)
    assert plan.live_profile == (4 * 48 * KIB, 4 * 48 * KIB + 512, 64 * KIB + 512)
    assert plan.peak_live == 4 * 48 * KIB + 512
    # barriers still follow the data and are live throughout
    (bar,) = plan.barrier_regions
    assert bar.offset == -(-s.total // 8) * 8 and bar.size == 4 * 16 and bar.live is None
    assert bar in plan.live_at("epilogue")
    assert "Lifetimes over 3 steps" in text_report(plan) and "optimal (proven)" in text_report(plan)


def test_without_lifetimes_the_plan_is_unchanged():
    s = SmemAllocator()
    s.add(SmemAllocation("x", 100, alignment=16))
    s.add(SmemAllocation("y", 300, alignment=128))
    s.compute_layout()
    assert s.plan.steps == () and s.plan.lower_bound is None and s.plan.optimal is None and s.plan.gap is None
    assert json.loads(s.plan.to_json())["version"] == 1
    assert all(r.live is None for r in s.plan.regions)


def test_a_solver_without_live_packs_everything_with_least_padding():
    s = SmemAllocator()
    x = s.add(SmemAllocation("x", 100, alignment=1024))
    y = s.add(SmemAllocation("y", 900, alignment=16))
    z = s.add(SmemAllocation("z", 100, alignment=1024))
    s.compute_layout(solver="exact")
    assert s.total == 1124 and s.plan.optimal  # x, y in x's padding, z at 1024
    assert len({x.offset, y.offset, z.offset}) == 3


def test_plan_with_lifetimes_round_trips_through_json():
    s, *_ = gemm_with_epilogue()
    data = json.loads(s.plan.to_json())
    assert data["version"] == 2 and data["steps"] == ["load", "mma", "epilogue"]
    assert data["optimal"] is True and data["gap"] == 0
    back = plan_from_dict(data)
    assert back == s.plan
    assert back.live_at("mma") == s.plan.live_at("mma")


def test_steps_by_count_and_by_int_without_names():
    s = SmemAllocator(steps=3)
    s.add(SmemAllocation("a", 64), live=0)
    s.add(SmemAllocation("b", 64), live=[1, 2])
    s.compute_layout()
    assert s.plan.steps == ("0", "1", "2") and s.total == 64
    t = SmemAllocator()
    t.add(SmemAllocation("a", 64, alignment=8), live=0)
    t.add(SmemAllocation("b", 64, alignment=8), live=range(1, 4))
    t.add(SmemAllocation("c", 8, alignment=8))
    t.compute_layout()
    assert t.plan.steps == ("0", "1", "2", "3") and t.total == 72


def test_tmem_columns_with_lifetimes():
    t = TmemAllocator(arch="sm_100a", steps=("mainloop", "epilogue"))
    acc = t.add(TmemAllocation("acc", 256), live="mainloop")
    acc2 = t.add(TmemAllocation("acc_next", 256), live="mainloop")
    epi = t.add(TmemAllocation("epi_scratch", 384), live="epilogue")
    t.compute_layout()
    assert t.total == 512 and t.plan.optimal and t.tcgen05_alloc_columns == 512
    assert acc.offset != acc2.offset and epi.offset == 0
    assert [r.name for r in t.plan.live_at("epilogue")] == ["epi_scratch"]


def test_alias_groups_become_lifetimes_and_never_lose():
    s = SmemAllocator()
    s.add(SmemAllocation("keep", 100, alignment=16))
    x, y, z = SmemAllocation("x", 1000, alignment=128), SmemAllocation("y", 3000), SmemAllocation("w", 2000)
    s.add_alias_group([[x], [y, z]])
    relived = smemviz.experimental.groups_to_lifetimes(s)
    assert relived.steps == ("phase 1", "phase 2") and not relived.layout_computed
    s.compute_layout()
    hand = s.total
    relived.compute_layout()
    assert relived.total <= hand and relived.plan.optimal
    assert relived.plan.region("x").live == (0,) and relived.plan.region("y").live == (1,)
    assert relived.plan.region("keep").live is None


def test_two_groups_keep_their_phases_apart_but_meet_each_other():
    s = SmemAllocator()
    g1 = [[SmemAllocation("a1", 64, alignment=64)], [SmemAllocation("a2", 64, alignment=64)]]
    g2 = [
        [SmemAllocation("b1", 64, alignment=64)],
        [SmemAllocation("b2", 64, alignment=64)],
        [SmemAllocation("b3", 64, alignment=64)],
    ]
    s.add_alias_group(g1)
    s.add_alias_group(g2)
    s.compute_layout(solver="auto")  # groups read as lifetimes directly
    plan = s.plan
    assert len(plan.steps) == 6 and s.total == 128 and plan.optimal
    a1, b1 = plan.region("a1"), plan.region("b1")
    assert set(a1.live) & set(b1.live) and not set(a1.live) & set(plan.region("a2").live)


@settings(max_examples=40, deadline=None)
@given(smem_programs(max_ops=8))
def test_solved_groups_are_never_worse_than_hand_written(ops):
    hand = SmemAllocator()
    replay(ops, hand, smemviz_alloc)
    solved = smemviz.experimental.groups_to_lifetimes(hand)
    hand.compute_layout()
    total = hand.total
    solved.compute_layout(node_budget=2000)
    assert solved.total <= total
    assert solved.plan.unified_bytes <= hand.plan.unified_bytes
    # and the solved layout is valid under the lifetimes the groups stand for
    regions = [r for r in solved.plan.regions if r.kind != "barrier"]
    for i, r in enumerate(regions):
        assert r.offset % r.alignment == 0
        for q in regions[i + 1 :]:
            live_together = r.live is None or q.live is None or set(r.live) & set(q.live)
            if live_together and r.size and q.size:
                assert r.end <= q.offset or q.end <= r.offset, (r, q)


# -- refused input -----------------------------------------------------------------


def snapshot(s):
    return (s.allocations, dict(s._live), s.alias_groups, s.layout_computed)


@pytest.mark.parametrize(
    ("live", "error", "match"),
    [
        ("prologue", ValueError, r"allocation 'x': live= unknown step 'prologue'; steps: 'load', 'mma'"),
        (set(), ValueError, r"allocation 'x': live=set\(\) is empty"),
        (range(1, 1), ValueError, r"allocation 'x': live=range\(1, 1\) is empty"),
        (5, ValueError, r"allocation 'x': live= step 5 is out of range \(0..1\)"),
        (-1, ValueError, r"allocation 'x': live= step -1 is out of range"),
        (True, TypeError, r"allocation 'x': live= must be a step name"),
        (2.0, TypeError, r"allocation 'x': live= must be a step name"),
        ([0, None], TypeError, r"allocation 'x': live= steps must be names or ints"),
        (range(0, 2, 2), ValueError, r"must be a range with step 1"),
        (range(0, 10**12), ValueError, r"live=range\(0, 1000000000000\) reaches outside the steps \(0..1\)"),
        (range(-1, 1), ValueError, r"reaches outside the steps"),
    ],
)
def test_bad_live_is_refused_and_changes_nothing(live, error, match):
    s = SmemAllocator(steps=("load", "mma"))
    s.add(SmemAllocation("y", 8), live="load")
    before = snapshot(s)
    with pytest.raises(error, match=match):
        s.add(SmemAllocation("x", 8), live=live)
    assert snapshot(s) == before
    with pytest.raises(error):
        s.add_resource(Stage("res", [SmemAllocation("x", 8)], Config(2)), live=live)
    assert snapshot(s) == before and s.barrier_smem_bytes == 0


def test_named_steps_need_steps():
    s = SmemAllocator()
    with pytest.raises(ValueError, match="unknown step 'load'; steps: none"):
        s.add(SmemAllocation("x", 8), live="load")


def test_live_is_checked_on_a_resource_that_declares_nothing():
    s = SmemAllocator(steps=("load", "mma"))
    before = snapshot(s)
    with pytest.raises(ValueError, match="resource 'empty': live= unknown step 'prologue'"):
        s.add_resource(Stage("empty", [], Config(2)), live="prologue")
    assert snapshot(s) == before and s.barrier_smem_bytes == 0
    s.add_resource(Stage("empty", [], Config(2)), live="load")  # a known step: accepted, nothing to place
    assert s.barrier_smem_bytes == 2 * 16


def test_unnamed_steps_are_time_values_up_to_the_time_limit():
    # without named steps, ints are time values (clock values, ...) up to 2**62: beyond it they are refused
    s = SmemAllocator()
    for live in (2**62, range(4000, 2**62 + 1), [5, 2**63]):
        with pytest.raises(ValueError, match=r"allocation 'x': live=.*\(0..4611686018427387903\)"):
            s.add(SmemAllocation("x", 8), live=live)
    s.add(SmemAllocation("last", 8), live=4095)
    s.compute_layout()
    assert len(s.plan.steps) == 4096  # below 4096 they are steps, as always
    t = SmemAllocator()
    for k, live in enumerate((4096, 10**7, range(4000, 5000))):  # beyond, stretches between start and end points
        t.add(SmemAllocation(f"x{k}", 8, 8), live=live)
    t.compute_layout()
    assert t.plan.steps == ("4000", "4096", "4097", "5000", "10000000")
    assert t.plan.data_total == 16  # x0 meets x2; x1 meets nobody


@pytest.mark.parametrize(
    ("steps", "error", "match"),
    [
        (0, ValueError, "count from 1 to 4096"),
        (10**9, ValueError, "count from 1 to 4096"),
        (tuple(f"s{i}" for i in range(4097)), ValueError, "more than 4096 steps"),
        ((f"s{i}" for i in itertools.count()), ValueError, "more than 4096 steps"),
        ((), ValueError, "at least one step"),
        (("a", "a"), ValueError, "repeated: 'a'"),
        (("a", ""), TypeError, "non-empty strings"),
        (("load", "mma\x1b[31m"), ValueError, r"step name 'mma\\x1b\[31m' holds the unprintable character"),
        ("abc", TypeError, "sequence of step names"),
    ],
)
def test_bad_steps(steps, error, match):
    with pytest.raises(error, match=match):
        SmemAllocator(steps=steps)


def test_live_and_alias_groups_are_refused_together_naming_both():
    s = SmemAllocator(steps=2)
    s.add(SmemAllocation("staged", 8), live=0)
    before = snapshot(s)
    with pytest.raises(ValueError, match="allocation 'staged' has live= steps"):
        s.add_alias_group([[SmemAllocation("p", 8)], [SmemAllocation("q", 8)]])
    assert snapshot(s) == before
    t = SmemAllocator(steps=2)
    t.add_alias_group([[SmemAllocation("p", 8)], [SmemAllocation("q", 8)]])
    before = snapshot(t)
    with pytest.raises(
        ValueError, match=r"'late' has live= steps, but this allocator also has alias group 1 \[p \| q\]"
    ):
        t.add(SmemAllocation("late", 8), live=1)
    assert snapshot(t) == before


def test_adding_again_with_other_steps_is_refused():
    s = SmemAllocator(steps=3)
    x = s.add(SmemAllocation("x", 8), live=0)
    s.add(x, live=0)  # the same steps: a no-op
    with pytest.raises(
        ValueError, match=r"'x' was already added with live steps \[0\]; cannot add it again live in \[1\]"
    ):
        s.add(x, live=1)
    with pytest.raises(ValueError, match="'x' was added with live= steps"):
        s.add(x)
    assert s.allocations == (x,) and s._live[id(x)] == frozenset({0})


def test_bad_solver_arguments_change_nothing():
    s = SmemAllocator(steps=2)
    x = s.add(SmemAllocation("x", 8), live=0)
    with pytest.raises(ValueError, match="solver must be one of 'auto', 'exact', 'greedy', got 'best'"):
        s.compute_layout(solver="best")
    with pytest.raises(ValueError, match="node_budget must be an int >= 0"):
        s.compute_layout(node_budget=-5)
    for wrong in (1.5, True, "10", None):
        with pytest.raises(TypeError, match="node_budget must be an int >= 0"):
            s.compute_layout(node_budget=wrong)
    assert not s.layout_computed and x.offset == 0
    s.compute_layout(solver="greedy")
    assert s.plan.solver.startswith("greedy")


def test_over_capacity_with_lifetimes_is_refused_and_changes_nothing():
    s = SmemAllocator(arch="sm_90a", steps=("a", "b"))
    big = [s.add(SmemAllocation(f"t{k}", 120 * KIB, alignment=1024), live="a") for k in range(2)]
    for a in big:
        a.offset = 7
    with pytest.raises(
        CapacityError, match=r"needs 245,760 B .* exceeds the sm_90 per-block limit of 232,448 B by 13,312 B"
    ):
        s.compute_layout()
    assert not s.layout_computed and [a.offset for a in big] == [7, 7]


def _lifetime_plan_dict():
    s, *_ = gemm_with_epilogue()
    return json.loads(s.plan.to_json())


@pytest.mark.parametrize(
    ("tamper", "match"),
    [
        (lambda d: d["regions"][0].update(live=[5]), r"live: step 5 but the plan has 3 steps|\.live"),
        (lambda d: d["regions"][0].update(live=[1, 0]), r"ascending"),
        (lambda d: d.update(steps=["a", "a", "b"]), r"unique step names"),
        (lambda d: d.update(steps=[f"s{i}" for i in range(5000)]), r"steps: 5000 steps, at most 4096"),
        (lambda d: d["regions"][0].update(live=[-1, 0]), r"live\[0\]: must be >= 0"),
        (lambda d: d.update(optimal="yes"), r"optimal: expected true or false"),
        (lambda d: d.update(lower_bound=d["data_total"] + 1), r"lower_bound"),
        (lambda d: d.update(version=1), r"need version 2"),
    ],
)
def test_tampered_lifetime_plans_are_refused(tamper, match):
    data = _lifetime_plan_dict()
    tamper(data)
    with pytest.raises(ValueError, match=match):
        plan_from_dict(data)


def test_overlapping_regions_live_together_are_refused_on_read():
    data = _lifetime_plan_dict()
    epi = next(r for r in data["regions"] if r["name"] == "epi_tile")
    epi["live"] = [1, 2]  # now live with the operands it overlaps
    with pytest.raises(ValueError, match="overlap but are both live at step 'mma'"):
        plan_from_dict(data)


# -- layout files ---------------------------------------------------------------------

LAYOUT = """
name = "epilogue over stages"
arch = "sm_90a"
steps = ["load", "mma", "epilogue"]

[[smem]]
name = "smem_a"
size = 131072
align = 1024
live = ["load", "mma"]

[[smem]]
name = "epi"
size = 65536
align = 1024
live = "epilogue"

[[smem]]
name = "flags"
size = 64
align = 16

[[tmem]]
name = "acc"
columns = 256
live = [0, 1]

[[tmem]]
name = "epi_acc"
columns = 256
live = 2
"""


def test_layout_file_steps_and_live():
    from smemviz.sources.layout_file import parse_layout_text

    smem, tmem = parse_layout_text(LAYOUT).plans()
    assert smem.steps == ("load", "mma", "epilogue") and smem.optimal
    assert smem.region("epi").offset == smem.region("smem_a").offset == 0
    assert smem.data_total == 131072 + 64 and smem.region("flags").live is None
    assert tmem.data_total == 256 and tmem.region("epi_acc").live == (2,)


@pytest.mark.parametrize(
    ("old", "new", "where", "match"),
    [
        (
            'live = "epilogue"',
            'live = "store"',
            "smem[1].live",
            "unknown step 'store'; steps: 'load', 'mma', 'epilogue'",
        ),
        ('live = "epilogue"', "live = []", "smem[1].live", "is empty"),
        ('live = "epilogue"', "live = 7", "smem[1].live", r"step 7 is out of range \(0..2\)"),
        ('live = "epilogue"', "live = 1.5", "smem[1].live", "expected a step name or number"),
        ('live = ["load", "mma"]', 'live = ["load", true]', "smem[0].live[1]", "expected a step name or number"),
        ('steps = ["load", "mma", "epilogue"]', 'steps = ["load", "load", "epilogue"]', "steps", "repeated: 'load'"),
        ('steps = ["load", "mma", "epilogue"]', 'steps = "load"', "steps", "expected a list of step names"),
    ],
)
def test_layout_file_lifetime_errors(old, new, where, match):
    from smemviz.sources.layout_file import LayoutFileError, parse_layout_text

    assert old in LAYOUT
    with pytest.raises(LayoutFileError, match=match) as info:
        parse_layout_text(LAYOUT.replace(old, new, 1))
    assert where in str(info.value)


def test_layout_file_live_with_alias_groups_is_refused():
    from smemviz.sources.layout_file import LayoutFileError, parse_layout_text

    text = LAYOUT + '\n[[smem_alias]]\nphases = [["flags"], ["epi"]]\n'
    with pytest.raises(LayoutFileError, match=r"smem_alias\[0\].phases.*has live= steps"):
        parse_layout_text(text)


def test_cli_renders_the_lifetime_map(tmp_path, capsys):
    from smemviz.cli import main

    pytest.importorskip("plotly")
    layout = tmp_path / "staged.toml"
    layout.write_text(LAYOUT)
    out = tmp_path / "lifetimes.html"
    assert main(["render", str(layout), "-o", str(out), "--lifetimes"]) == 0
    page = out.read_text()
    assert "live bytes" in page and "epilogue" in page
    plain = tmp_path / "plain.toml"
    plain.write_text('[[smem]]\nname = "x"\nsize = 64\n')
    assert main(["render", str(plain), "-o", str(tmp_path / "p.html"), "--lifetimes"]) == 2
    assert "--lifetimes needs a layout with steps and live keys" in capsys.readouterr().err
