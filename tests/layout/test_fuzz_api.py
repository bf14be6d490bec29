"""Fuzzing the Python API: random call sequences with hostile arguments.

Every call either does its job or raises ``ValueError``/``TypeError`` (the
smemviz subclasses included) and leaves the allocator exactly as it was; a
refused allocation names itself; every layout that does get computed reads
back through the plan checker and renders without raw control characters.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hypothesis import event, given
from hypothesis import strategies as st

from smemviz import (
    DeclarationError,
    SmemAllocation,
    SmemAllocator,
    TmemAllocation,
    TmemAllocator,
)
from smemviz.analysis._report import markdown_report, text_report
from smemviz.layout import plan_from_dict

from ..hostile import RAW_CONTROL, fuzz_settings, hostile_ints, hostile_text, no_hang, scalars, unprintable_names


def snapshot(alloc: Any) -> Any:
    """Everything an allocator holds, as comparable data (the allocations'
    fields included: a refused call must not have touched them either)."""
    state = repr(vars(alloc))
    members = [(type(a).__name__, repr(vars(a)) if hasattr(a, "__dict__") else repr(a)) for a in alloc.allocations]
    return state, members


# -- hostile arguments ------------------------------------------------------------------------

# ordinary values most of the time, so that sequences get far enough to compute layouts
_ordinary_names = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
names = st.one_of(
    _ordinary_names,
    _ordinary_names,
    _ordinary_names,
    hostile_text,
    unprintable_names,
    st.sampled_from(["a", "x" * 300]),
    scalars,
)
sizes = st.one_of(st.integers(1, 70000), st.integers(1, 70000), st.integers(1, 70000), hostile_ints, scalars)
aligns = st.one_of(*[st.sampled_from([1, 2, 4, 8, 16, 128, 1024])] * 3, hostile_ints, scalars)
dtypes = st.one_of(
    st.none(), st.sampled_from(["f16", "bf16", "f4e2m1", "i8", "u64", "tf32", "nope", "", "F32"]), scalars
)


@dataclass
class Cfg:
    num_stages: Any
    barrier_ptr: Any = None


@dataclass
class Resource:
    name: Any
    reqs: Any = None
    pipeline_config: Any = None
    pipeline_group: Any = None

    def get_smem_requirements(self) -> Any:
        return self.reqs

    def get_tmem_requirements(self) -> Any:
        return self.reqs


@dataclass
class Group:
    name: Any
    pipeline_config: Any
    num_barriers_per_stage: Any


@dataclass
class LookAlike:
    """A duck-typed allocation (as CUTLASS's are to smemviz), with any field values."""

    name: Any
    size_bytes: Any = 64
    alignment: Any = 16
    offset: Any = 0
    dtype: Any = None
    count: Any = 1


class Bare:
    """An object with nothing an allocator could use."""


def _new_allocation(draw: Any, memory: str) -> Any:
    name = draw(names)
    if memory == "smem":
        kwargs = {"size_bytes": draw(sizes), "alignment": draw(aligns)}
        if draw(st.booleans()):
            kwargs.update(dtype=draw(dtypes), count=draw(st.one_of(st.integers(1, 5000), hostile_ints, scalars)))
        return name, lambda: SmemAllocation(name, **kwargs)
    columns = draw(st.one_of(st.integers(1, 600), hostile_ints, scalars))
    return name, lambda: TmemAllocation(name, columns)


def _some_object(draw: Any, pool: list[Any]) -> Any:
    choices = [
        lambda: draw(scalars),
        lambda: Bare(),
        lambda: LookAlike(draw(names), draw(sizes), draw(aligns)),
        lambda: TmemAllocation("t", 32),
        lambda: SmemAllocation("s", 64),
        lambda: [1, 2],
    ]
    if pool:
        choices += [lambda: draw(st.sampled_from(pool))] * 4
    return draw(st.sampled_from(choices))()


def _phases(draw: Any, pool: list[Any]) -> Any:
    shape = draw(st.integers(0, 6))
    if shape == 0:
        return draw(st.one_of(scalars, st.just("ab")))
    if shape <= 3 and len(pool) >= 2:  # members of the pool only: often a valid group
        members = draw(st.lists(st.sampled_from(pool), min_size=2, max_size=6, unique_by=id))
        cut = draw(st.integers(1, len(members) - 1))
        return [members[:cut], members[cut:]]
    phases = []
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.integers(0, 8)) == 0:
            phases.append(draw(st.one_of(scalars, st.just("ab"))))
        else:
            phases.append([_some_object(draw, pool) for _ in range(draw(st.integers(0, 3)))])
    return phases


# lifetimes: steps= on the allocator, live= on add/add_resource, the solver's arguments
_step_names = ["load", "mma", "epilogue"]
steps_args = st.one_of(
    st.none(),
    st.none(),
    st.integers(-1, 6),
    *[st.just(tuple(_step_names))] * 3,
    st.lists(st.one_of(_ordinary_names, names), max_size=5),
    st.just("abc"),
    st.just(10**12),
    hostile_ints,
    scalars,
)
_one_step = st.one_of(st.integers(-2, 7), st.sampled_from([*_step_names, "prologue", ""]), scalars)
_ordinary_live = st.one_of(
    st.integers(0, 2),
    st.sampled_from(_step_names),
    st.sampled_from([range(0, 2), range(1, 3)]),
    st.sets(st.sampled_from(_step_names), min_size=1),
)
live_args = st.one_of(
    *[_ordinary_live] * 4,
    _one_step,
    st.lists(_one_step, max_size=4),
    st.sets(st.integers(-1, 7), max_size=4),
    st.builds(range, st.integers(-3, 8), st.integers(-3, 9)),
    st.builds(range, st.integers(0, 3), st.integers(0, 10**12), st.integers(1, 3)),
    st.just(frozenset()),
    hostile_ints,
)
solver_args = st.fixed_dictionaries(
    {},
    optional={
        "solver": st.one_of(st.sampled_from(["auto", "exact", "greedy", None, "best", ""]), scalars),
        "node_budget": st.one_of(st.integers(0, 5000), hostile_ints, scalars),
    },
)


def _live_kwargs(draw: Any) -> dict[str, Any]:
    """``live=`` on two calls in three (a hostile value now and then)."""
    return {"live": draw(live_args)} if draw(st.integers(0, 2)) else {}


OPS = [
    "new",
    "new",
    "add",
    "add",
    "live",
    "live",
    "resource",
    "group",
    "alias",
    "tmem_ptr",
    "mutate",
    "compute",
    "read",
]


@fuzz_settings(250)
@given(data=st.data(), memory=st.sampled_from(["smem", "tmem"]))
def test_random_call_sequences_do_the_job_or_refuse_cleanly(data, memory):
    draw = data.draw
    arch = draw(st.one_of(st.none(), st.sampled_from(["sm_90a", "sm_100a", "sm_120"])))
    steps = draw(steps_args)
    try:
        alloc: Any = SmemAllocator(arch, steps=steps) if memory == "smem" else TmemAllocator(arch, steps=steps)
    except (ValueError, TypeError) as exc:  # TMEM on an architecture without it, or steps= refused
        assert "step" in str(exc) or (memory == "tmem" and arch in ("sm_90a", "sm_120")), str(exc)
        return
    # a few ordinary allocations to start from, so alias groups and layouts happen often
    pool: list[Any] = [
        SmemAllocation(f"p{i}", draw(st.integers(1, 9000)), draw(st.sampled_from([1, 8, 128, 1024])))
        if memory == "smem"
        else TmemAllocation(f"p{i}", draw(st.integers(1, 160)))
        for i in range(draw(st.integers(0, 5)))
    ]
    with no_hang(60):
        # each sequence ends by computing the layout, so that declarations (lifetimes too) get solved often
        for op in [*(draw(st.sampled_from(OPS)) for _ in range(draw(st.integers(1, 14)))), "compute"]:
            subject = None
            if op == "new":
                subject, call = _new_allocation(draw, memory)
            elif op == "add":
                obj, kw = _some_object(draw, pool), _live_kwargs(draw)
                call = lambda obj=obj, kw=kw: alloc.add(obj, **kw)  # noqa: E731
            elif op == "live":  # an ordinary allocation with a live= argument (often a valid one)
                fresh = (
                    SmemAllocation(f"l{len(pool)}", draw(st.integers(1, 9000)), draw(st.sampled_from([16, 128, 1024])))
                    if memory == "smem"
                    else TmemAllocation(f"l{len(pool)}", draw(st.integers(1, 160)))
                )
                obj, kw = draw(st.sampled_from([*pool, fresh])), {"live": draw(live_args)}
                call = lambda obj=obj, kw=kw: alloc.add(obj, **kw)  # noqa: E731
            elif op == "resource":
                reqs = draw(st.sampled_from([None, "list", "scalar", "iter"]))
                items = [_some_object(draw, pool) for _ in range(draw(st.integers(0, 3)))]
                value = {None: None, "list": items, "scalar": draw(scalars), "iter": iter(items)}[reqs]
                cfg = draw(
                    st.one_of(
                        st.none(),
                        st.builds(
                            Cfg,
                            st.one_of(st.integers(1, 8), hostile_ints, scalars),
                            st.sampled_from([None, 0, object()]),
                        ),
                    )
                )
                res = Resource(draw(names), value, cfg, draw(st.sampled_from([None, None, object()])))
                kw = _live_kwargs(draw)
                call = lambda res=res, kw=kw: alloc.add_resource(res, **kw)  # noqa: E731
            elif op == "group":
                grp = Group(
                    draw(names),
                    draw(st.one_of(st.none(), st.builds(Cfg, st.one_of(st.integers(1, 8), scalars)))),
                    draw(st.one_of(st.integers(1, 6), hostile_ints, scalars)),
                )
                call = lambda grp=grp: alloc.add_pipeline_group(grp)  # noqa: E731
            elif op == "alias":
                phases = _phases(draw, pool)
                call = lambda phases=phases: alloc.add_alias_group(phases)  # noqa: E731
            elif op == "tmem_ptr":
                obj = _some_object(draw, pool)
                call = lambda obj=obj: alloc.add_tmem_ptr(obj)  # noqa: E731
            elif op == "mutate":
                if not pool:
                    continue
                victim = draw(st.sampled_from(pool))
                field = draw(st.sampled_from(["name", "size_bytes", "alignment", "count", "num_columns"]))
                setattr(victim, field, draw(st.one_of(names, sizes)))
                continue
            elif op == "compute":
                kw = draw(solver_args)
                call = lambda kw=kw: alloc.compute_layout(**kw)  # noqa: E731
            else:
                call = draw(st.sampled_from([lambda: alloc.total, lambda: alloc.plan, lambda: alloc.usage_report()]))
            if not hasattr(alloc, "add_tmem_ptr") and op in ("tmem_ptr", "group"):
                continue
            before = snapshot(alloc)
            try:
                result = call()
            except (ValueError, TypeError) as exc:
                event(f"{op} refused ({type(exc).__name__})")
                assert str(exc), "an error without a message"
                assert snapshot(alloc) == before, f"refused call {op} changed the allocator"
                if op == "new" and isinstance(subject, str) and subject and subject.isprintable():
                    assert repr(subject) in str(exc) or subject in str(exc), str(exc)
                if op == "new" and isinstance(exc, DeclarationError) and isinstance(subject, str):
                    assert exc.allocation == subject
                continue
            event(f"{op} done")
            if op == "new":
                pool.append(result)
        if alloc.layout_computed:
            event("layout computed")
            _check_computed(alloc)


def _check_computed(alloc: Any) -> None:
    before = snapshot(alloc)
    try:
        plan = alloc.plan
    except (ValueError, TypeError):  # an allocation broken after compute_layout()
        assert snapshot(alloc) == before
        return
    if plan.steps:
        event("layout computed from lifetimes")
        assert plan.lower_bound <= plan.data_total and (plan.gap == 0) == plan.optimal
    # what the allocator computed passes the checks a plan read back from a file must pass
    assert plan_from_dict(json.loads(plan.to_json())) == plan
    for text in (text_report(plan), markdown_report(plan), plan.capacity().message()):
        assert not RAW_CONTROL.search(text)


@fuzz_settings(200)
@given(name=names, size=sizes, align=aligns, dtype=dtypes, count=st.one_of(st.integers(1, 5000), hostile_ints, scalars))
def test_allocations_are_made_or_refused_naming_themselves(name, size, align, dtype, count):
    try:
        a = SmemAllocation(name, size, align, dtype, count)
    except (ValueError, TypeError) as exc:
        if isinstance(name, str) and name and name.isprintable():
            assert repr(name) in str(exc)
        return
    assert isinstance(a.name, str) and a.name.isprintable()
    assert type(a.size_bytes) is int and a.size_bytes > 0
    assert type(a.alignment) is int and a.alignment & (a.alignment - 1) == 0
