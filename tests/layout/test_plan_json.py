"""Plans read back from JSON: tampered documents are refused with the field
that is wrong, never drawn or checked."""

from __future__ import annotations

import copy
import json
import re

import pytest

from smemviz import SmemAllocation, SmemAllocator, TmemAllocation, TmemAllocator
from smemviz._export import read_plans
from smemviz.cli import main
from smemviz.layout import plan_from_dict, plan_from_json


@pytest.fixture(scope="module")
def smem_doc() -> dict:
    alloc = SmemAllocator("sm_90a")
    alloc.add(SmemAllocation("a", 1024, 128))
    alloc.add(SmemAllocation("b", 100, 16))
    x, y, z = SmemAllocation("x", 512, 256), SmemAllocation("y", 64, 64), SmemAllocation("z", 700, 128)
    alloc.add_alias_group([[x, y], [z]])

    class Pipe:
        name = "load"

        class pipeline_config:  # noqa: N801
            num_stages = 3
            barrier_ptr = None

        pipeline_group = None

    alloc.add_resource(Pipe())
    alloc.compute_layout()
    return alloc.plan.to_dict()


@pytest.fixture(scope="module")
def tmem_doc() -> dict:
    alloc = TmemAllocator()
    alloc.add(TmemAllocation("acc", 128))
    alloc.compute_layout()
    return alloc.plan.to_dict()


def _region(doc: dict, name: str) -> dict:
    return next(r for r in doc["regions"] if r["name"] == name)


def test_untampered_plans_read_back_equal(smem_doc, tmem_doc):
    for doc in (smem_doc, tmem_doc):
        plan = plan_from_dict(copy.deepcopy(doc))
        assert plan.to_dict() == doc


TAMPERS = {
    "overlapping standalone regions": (
        lambda d: _region(d, "b").update(offset=_region(d, "a")["offset"] + 512, end=_region(d, "a")["offset"] + 612),
        "overlap but are live together",
    ),
    "overlap inside one phase": (
        lambda d: _region(d, "y").update(offset=_region(d, "x")["offset"], end=_region(d, "x")["offset"] + 64),
        "overlap",
    ),
    "negative offset": (lambda d: _region(d, "a").update(offset=-128), "must be >= 0"),
    "unaligned offset": (lambda d: _region(d, "a").update(offset=_region(d, "a")["offset"] + 8), "not a multiple"),
    "end that is not offset + size": (lambda d: _region(d, "a").update(end=5), "is not offset + size"),
    "wrong version": (lambda d: d.update(version=3), "unsupported layout-plan version 3"),
    "version 2 without steps": (lambda d: d.update(version=2), "steps: expected an array"),
    "boolean version": (lambda d: d.update(version=True), "unsupported layout-plan version True"),
    "data total too small": (lambda d: d.update(data_total=d["data_total"] - 1), "data_total"),
    "barrier bytes off": (lambda d: d.update(barrier_bytes=8), "barrier_bytes"),
    "summary that does not add up": (lambda d: d["summary"].update(unified=1), "summary.unified"),
    "summary padding off": (lambda d: d["summary"].update(padding=d["summary"]["padding"] + 1), "summary.padding"),
    "string size": (lambda d: _region(d, "a").update(size="1024"), "expected an integer"),
    "float offset": (lambda d: _region(d, "a").update(offset=0.0), "expected an integer"),
    "boolean size": (lambda d: _region(d, "a").update(size=True), "expected an integer"),
    "unknown kind": (lambda d: _region(d, "a").update(kind="stack"), "expected one of"),
    "empty name": (lambda d: _region(d, "a").update(name=""), "non-empty string"),
    "name not a string": (lambda d: _region(d, "a").update(name=[1]), "non-empty string"),
    "region outside its group": (
        lambda d: _region(d, "y").update(offset=d["groups"][0]["offset"] + 4096, end=d["groups"][0]["offset"] + 4160),
        "outside its alias group",
    ),
    "group index out of range": (lambda d: _region(d, "z").update(group=5), "alias groups"),
    "phase out of range": (lambda d: _region(d, "z").update(phase=7), "phases"),
    "group size not its largest phase": (lambda d: d["groups"][0].update(size=1), "largest phase"),
    "phase size off": (lambda d: d["groups"][0]["phase_sizes"].__setitem__(0, 1), "phase_sizes[0]"),
    "regions not a list": (lambda d: d.update(regions={"a": 1}), "expected an array"),
    "unknown region key": (lambda d: _region(d, "a").update(colour="red"), "unknown key 'colour'"),
    "unknown architecture": (lambda d: d.update(arch="sm_7"), "arch"),
    "aliased mbarriers": (lambda d: _region(d, "load.barriers").update(group=0, phase=0), "never aliased"),
    "huge size": (lambda d: _region(d, "a").update(size=2**80, end=_region(d, "a")["offset"] + 2**80), "overlap"),
}


@pytest.mark.parametrize("what", sorted(TAMPERS))
def test_tampered_plans_are_refused(smem_doc, what):
    tamper, message = TAMPERS[what]
    doc = copy.deepcopy(smem_doc)
    tamper(doc)
    with pytest.raises(ValueError, match=re.escape(message)):
        plan_from_dict(doc)
    with pytest.raises(ValueError):
        plan_from_json(json.dumps(doc))


def test_tmem_plan_with_barriers_is_refused(tmem_doc):
    doc = copy.deepcopy(tmem_doc)
    doc["regions"].append({"name": "b", "kind": "barrier", "offset": 128, "size": 16, "alignment": 8})
    with pytest.raises(ValueError, match="TMEM plan holds no mbarriers"):
        plan_from_dict(doc)


def test_pair_with_swapped_plans_is_refused(smem_doc, tmem_doc):
    doc = {"schema": "smemviz.layout-plans", "version": 1, "smem": tmem_doc, "tmem": smem_doc}
    with pytest.raises(ValueError, match="its 'smem' item is a TMEM plan"):
        read_plans(json.dumps(doc))
    with pytest.raises(ValueError, match="neither"):
        read_plans(json.dumps({"schema": "smemviz.layout-plans", "version": 1}))


@pytest.mark.parametrize("what", ["overlapping standalone regions", "summary that does not add up", "negative offset"])
def test_cli_refuses_a_tampered_plan_with_exit_2(tmp_path, capsys, smem_doc, what):
    doc = copy.deepcopy(smem_doc)
    TAMPERS[what][0](doc)
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(doc))
    for argv in (["check", str(path)], ["report", str(path)], ["render", str(path), "-o", str(tmp_path / "o.md")]):
        assert main(argv) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.startswith(f"smemviz: error: {path}: malformed layout plan") and err.count("\n") == 1
    assert not (tmp_path / "o.md").exists()


def test_an_allocation_changed_after_compute_layout_does_not_change_the_plan():
    """Found by the API fuzz test: the plan was built on first use from the
    allocations as they were then, so a size changed after compute_layout()
    gave a plan with overlapping regions."""
    alloc = SmemAllocator()
    a, b = SmemAllocation("a", 64, 64), SmemAllocation("b", 64, 64)
    alloc.add(a)
    alloc.add_alias_group([[b], [SmemAllocation("c", 32, 32)]])
    alloc.compute_layout()
    a.size_bytes, a.alignment, a.offset, b.size_bytes = 2**62, 1, 5, 4096  # (beyond 64 bits is refused)
    plan = alloc.plan
    assert (plan.region("a").offset, plan.region("a").size, plan.region("a").alignment) == (0, 64, 64)
    assert plan.region("b").size == 64 and plan.groups[0].size == 64
    assert plan_from_dict(plan.to_dict()) == plan


def test_a_name_broken_after_compute_layout_is_refused_when_the_plan_is_read():
    alloc = TmemAllocator()
    t = alloc.add(TmemAllocation("t", 32))
    alloc.compute_layout()
    t.name = ""
    with pytest.raises(ValueError, match="name must not be empty"):
        alloc.plan
    t.name = "t2"
    assert alloc.plan.region("t2").size == 32


def test_plans_with_sizes_beyond_64_bits_read_back():
    """Found by the long fuzz run: the allocators take any positive size up to
    64 bits (a layout that cannot fit still gets a plan, to show by how much),
    and barriers can take the total beyond that, so a plan read back takes it too."""

    class Group:
        name = "g"
        num_barriers_per_stage = 2**62

        class pipeline_config:  # noqa: N801
            num_stages = 4
            barrier_ptr = None

    alloc = SmemAllocator()
    alloc.add(SmemAllocation("a", 2**62))
    alloc.add_pipeline_group(Group())
    alloc.compute_layout()
    assert plan_from_json(alloc.plan.to_json()) == alloc.plan


def test_a_dtype_read_back_is_shown_escaped(smem_doc):
    from smemviz.analysis._report import html_report, markdown_report

    doc = copy.deepcopy(smem_doc)
    _region(doc, "a").update(dtype="\x1f<b>", count=4)
    plan = plan_from_dict(doc)
    assert "\\x1f&lt;b&gt; × 4" in html_report(plan) and "\x1f" not in markdown_report(plan)


def test_a_captured_tmem_plan_reads_back_and_a_tmem_struct_is_refused(tmem_doc):
    # a capture records the kernel's TMEM allocations as a TMEM plan of its own (source cute.capture)
    captured = copy.deepcopy(tmem_doc) | {"source": "cute.capture"}
    assert plan_from_dict(copy.deepcopy(captured)).to_dict() == captured
    with pytest.raises(ValueError, match="a @cute.struct lays out shared memory"):
        plan_from_dict(copy.deepcopy(tmem_doc) | {"source": "cute.struct"})
