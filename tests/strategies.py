"""Hypothesis strategies for layouts, and a replayer that applies one layout
description to smemviz's allocators and to CUTLASS's own, so both can be compared."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from hypothesis import strategies as st

# dtype names whose width is a whole number of bytes (CUTLASS's sizing is exact there)
BYTE_DTYPES = {
    "f16": "Float16",
    "bf16": "BFloat16",
    "f32": "Float32",
    "tf32": "TFloat32",
    "f8e4m3": "Float8E4M3FN",
    "f8e5m2": "Float8E5M2",
    "i8": "Int8",
    "u8": "Uint8",
    "i32": "Int32",
    "i64": "Int64",
}


@dataclass(frozen=True)
class AllocSpec:
    name: str
    size: int  # 0 means: derived from dtype x count
    align: int
    dtype: str | None = None
    count: int = 1


@dataclass(frozen=True)
class Op:
    kind: str  # add | resource | alias | pgroup | tmem_ptr
    allocs: tuple[AllocSpec, ...] = ()
    phases: tuple[tuple[int, ...], ...] = ()  # alias: indices into the pool of declared specs
    stages: int | None = None
    grouped: bool = False  # resource belongs to a pipeline group
    preset: bool = False  # resource's barrier_ptr already set
    members: int = 0


@dataclass
class PipelineConfig:
    num_stages: int
    barrier_ptr: Any = None


@dataclass
class Resource:
    name: str
    allocs: list
    pipeline_config: Any = None
    pipeline_group: Any = None

    def get_smem_requirements(self):
        return list(self.allocs)


@dataclass
class PipelineGroup:
    name: str
    num_barriers_per_stage: int
    pipeline_config: Any = None


@dataclass
class TmemResource:
    name: str
    allocs: list = field(default_factory=list)

    def get_tmem_requirements(self):
        return list(self.allocs)


alignments = st.sampled_from([1, 2, 4, 8, 16, 64, 128, 256, 512, 1024])
sizes = st.integers(min_value=1, max_value=40_000)


@st.composite
def alloc_specs(draw, prefix: str = "a") -> AllocSpec:
    n = draw(st.integers(0, 10**9))
    align = draw(alignments)
    if draw(st.booleans()):
        dtype = draw(st.sampled_from(sorted(BYTE_DTYPES)))
        count = draw(st.integers(1, 8192))
        return AllocSpec(f"{prefix}{n}", 0, align, dtype, count)
    return AllocSpec(f"{prefix}{n}", draw(sizes), align)


@st.composite
def smem_programs(draw, max_ops: int = 12) -> list[Op]:
    """A sequence of allocator calls; alias groups refer to specs declared before
    or fresh ones, never reusing a member of another group."""
    ops: list[Op] = []
    declared = 0
    grouped: set[int] = set()
    used: set[str] = set()

    def unique(spec: AllocSpec) -> AllocSpec:
        """The allocators refuse two allocations of one name: a drawn name seen before gets a suffix."""
        if spec.name in used:
            spec = replace(spec, name=f"{spec.name}_{len(used)}")
        used.add(spec.name)
        return spec

    for _ in range(draw(st.integers(0, max_ops))):
        kind = draw(st.sampled_from(["add", "add", "resource", "alias", "pgroup", "tmem_ptr"]))
        if kind == "add":
            ops.append(Op("add", (unique(draw(alloc_specs())),)))
            declared += 1
        elif kind == "resource":
            allocs = tuple(unique(a) for a in draw(st.lists(alloc_specs("r"), max_size=3)))
            stages = draw(st.one_of(st.none(), st.integers(1, 8)))
            ops.append(Op("resource", allocs, stages=stages, grouped=draw(st.booleans()), preset=draw(st.booleans())))
            declared += len(allocs)
        elif kind == "pgroup":
            ops.append(Op("pgroup", stages=draw(st.integers(1, 8)), members=draw(st.integers(1, 4))))
        elif kind == "tmem_ptr" and not any(o.kind == "tmem_ptr" for o in ops):
            ops.append(Op("tmem_ptr", (AllocSpec("tmem_slot", 4, draw(st.sampled_from([4, 8, 16]))),)))
            declared += 1
        elif kind == "alias":
            n_phases = draw(st.integers(2, 4))
            fresh = []
            phases = []
            for _ in range(n_phases):
                phase = []
                for _ in range(draw(st.integers(1, 3))):
                    free = [
                        i
                        for i in range(declared)
                        if i not in grouped and i not in phase and all(i not in p for p in phases)
                    ]
                    if free and draw(st.booleans()):
                        idx = draw(st.sampled_from(free))
                    else:
                        fresh.append(unique(draw(alloc_specs("g"))))
                        idx = declared + len(fresh) - 1
                    phase.append(idx)
                phases.append(tuple(phase))
            for p in phases:
                grouped.update(p)
            ops.append(Op("alias", tuple(fresh), phases=tuple(phases)))
            declared += len(fresh)
    return ops


def replay(ops: list[Op], allocator, make_alloc) -> list:
    """Apply ``ops`` to ``allocator``; return the pool of allocation objects in
    declaration order. ``make_alloc(spec)`` builds one allocation object."""
    pool: list = []
    for k, op in enumerate(ops):
        if op.kind == "add":
            a = make_alloc(op.allocs[0])
            pool.append(a)
            allocator.add(a)
        elif op.kind == "resource":
            allocs = [make_alloc(s) for s in op.allocs]
            pool.extend(allocs)
            cfg = None
            if op.stages is not None:
                cfg = PipelineConfig(op.stages, barrier_ptr=object() if op.preset else None)
            res = Resource(f"res{k}", allocs, cfg, pipeline_group=object() if op.grouped else None)
            allocator.add_resource(res)
        elif op.kind == "pgroup":
            allocator.add_pipeline_group(PipelineGroup(f"pg{k}", op.members + 1, PipelineConfig(op.stages)))
        elif op.kind == "tmem_ptr":
            a = make_alloc(op.allocs[0])
            pool.append(a)
            allocator.add_tmem_ptr(a)
        elif op.kind == "alias":
            pool.extend(make_alloc(s) for s in op.allocs)
            allocator.add_alias_group([[pool[i] for i in phase] for phase in op.phases])
    return pool


def smemviz_alloc(spec: AllocSpec, use_names: bool = True):
    import smemviz

    if spec.dtype is None:
        return smemviz.SmemAllocation(spec.name, spec.size, spec.align)
    dtype: Any = spec.dtype
    if not use_names:
        import cutlass

        dtype = getattr(cutlass, BYTE_DTYPES[spec.dtype])
    return smemviz.SmemAllocation(spec.name, alignment=spec.align, dtype=dtype, count=spec.count)


def cutlass_alloc(spec: AllocSpec):
    import cutlass
    from cutlass.experimental.task_scheduling import memory

    if spec.dtype is None:
        return memory.SmemAllocation(spec.name, spec.size, spec.align)
    return memory.SmemAllocation(
        spec.name, alignment=spec.align, dtype=getattr(cutlass, BYTE_DTYPES[spec.dtype]), count=spec.count
    )


tmem_columns = st.integers(1, 96)


@st.composite
def tmem_programs(draw) -> tuple[list[int], list[list[list[int]]]]:
    """Standalone column counts and alias groups (phases of column counts), small
    enough to stay within 512 columns most of the time."""
    standalone = draw(st.lists(tmem_columns, max_size=5))
    groups = draw(
        st.lists(st.lists(st.lists(tmem_columns, min_size=1, max_size=3), min_size=2, max_size=3), max_size=2)
    )
    return standalone, groups


# -- lifetimes ------------------------------------------------------------------

lifetime_alignments = st.sampled_from([1, 2, 4, 8, 16, 128, 1024])


@st.composite
def lifetime_instances(draw, max_buffers: int = 10, max_steps: int = 8, max_size: int = 70_000):
    """(sizes, alignments, lives): buffers with live step sets, not always contiguous."""
    n = draw(st.integers(1, max_buffers))
    steps = draw(st.integers(1, max_steps))
    sizes = draw(st.lists(st.integers(1, max_size), min_size=n, max_size=n))
    aligns = draw(st.lists(lifetime_alignments, min_size=n, max_size=n))
    lives = []
    for _ in range(n):
        if draw(st.booleans()):
            first = draw(st.integers(0, steps - 1))
            lives.append(frozenset(range(first, draw(st.integers(first + 1, steps)))))
        else:
            lives.append(frozenset(draw(st.sets(st.integers(0, steps - 1), min_size=1))))
    return sizes, aligns, lives


# -- @cute.struct shared-storage descriptions -----------------------------------------

# CuTe DSL numeric type names a struct field may use (sub-byte ones only inside MemRange)
STRUCT_SCALARS = (
    "Int8",
    "Int16",
    "Int32",
    "Int64",
    "Uint8",
    "Uint32",
    "Float16",
    "BFloat16",
    "Float32",
    "Float64",
    "Float8E4M3FN",
    "Boolean",
)
STRUCT_RANGE_DTYPES = (*STRUCT_SCALARS, "Float4E2M1FN")


@dataclass(frozen=True)
class FieldSpec:
    kind: str  # scalar | range | struct
    dtype: str | None = None
    count: int = 1
    align: int | None = None  # wrapped in Align[...] when set
    struct: StructSpec | None = None


@dataclass(frozen=True)
class StructSpec:
    fields: tuple[FieldSpec, ...]
    union: bool = False


_ALIGNS = st.one_of(st.none(), st.sampled_from([1, 2, 4, 8, 16, 128, 256, 1024]))


def _leaf_fields() -> st.SearchStrategy[FieldSpec]:
    scalar = st.builds(FieldSpec, kind=st.just("scalar"), dtype=st.sampled_from(STRUCT_SCALARS), align=_ALIGNS)
    ranged = st.builds(
        FieldSpec,
        kind=st.just("range"),
        dtype=st.sampled_from(STRUCT_RANGE_DTYPES),
        count=st.integers(0, 5000),
        align=_ALIGNS,
    )
    return st.one_of(scalar, ranged)


def struct_specs(max_depth: int = 2) -> st.SearchStrategy[StructSpec]:
    """Random struct (or union) descriptions: scalars, MemRanges, Align[...], nesting."""

    def fields(depth: int) -> st.SearchStrategy[FieldSpec]:
        if depth == 0:
            return _leaf_fields()
        nested = st.builds(FieldSpec, kind=st.just("struct"), align=_ALIGNS, struct=specs(depth - 1))
        return st.one_of(_leaf_fields(), _leaf_fields(), nested)

    def specs(depth: int) -> st.SearchStrategy[StructSpec]:
        return st.builds(
            StructSpec,
            fields=st.lists(fields(depth), min_size=1, max_size=6).map(tuple),
            union=st.booleans().map(lambda b: b and depth < max_depth),
        )

    return specs(max_depth).map(lambda s: StructSpec(s.fields, union=False))
