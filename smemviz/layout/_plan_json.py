"""Reading a plan back from its JSON form: every field typed, every invariant
of a computed layout held.

A plan file may have been edited by hand or by a tool. It is drawn and checked
as if smemviz had computed it, so one that no allocator could have produced
(regions that coexist yet overlap, negative or unaligned offsets, totals that
do not add up, a summary that disagrees with the regions) is refused here
with the path of the offending field, never drawn.
"""

from __future__ import annotations

import json
from dataclasses import fields, replace
from typing import Any

from .. import hardware
from .._limits import MAX_MESSAGE, SHOWN_CHARS, clip
from .._units import align_up
from ..solver import MAX_STEPS
from ._access import ACCESS_KEYS, SmemAccess, access_from_dict
from ._build import covered_bytes
from ._plan import (
    _KINDS,
    LIFETIME_SCHEMA_VERSION,
    READABLE_VERSIONS,
    SCHEMA,
    SCHEMA_VERSION,
    SELF_SIZED_SOURCES,
    STRUCT_SOURCE,
    AliasGroup,
    LayoutPlan,
    Region,
)
from ._tma_atom import TmaAtom
from .ordering import OrderingModel
from .ordering import from_dict as ordering_from_dict

__all__ = ["plan_from_dict"]

_REGION_FIELDS = {f.name for f in fields(Region)}
_GROUP_KEYS = {"index", "offset", "size", "alignment", "phase_sizes", "end"}


class _Malformed(ValueError):
    pass


def _fail(where: str, message: str) -> _Malformed:
    message = clip(message, MAX_MESSAGE)  # however large the values it quotes
    where = clip(where, SHOWN_CHARS)
    return _Malformed(f"malformed layout plan: {where}: {message}" if where else f"malformed layout plan: {message}")


def _brief(value: Any) -> str:
    """A value for a message: short scalars as written, anything else by type."""
    if value is None or isinstance(value, (bool, float)) or (isinstance(value, int) and value.bit_length() < 128):
        return repr(value)
    if isinstance(value, str):
        return repr(value[:40]) + ("..." if len(value) > 40 else "")
    return f"a {type(value).__name__}"


def _int(value: Any, where: str, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(where, f"expected an integer, got {_brief(value)}")
    if value < minimum:
        raise _fail(where, f"must be >= {minimum}, got {_brief(value)}")
    return value


def _opt_int(value: Any, where: str, minimum: int = 0) -> int | None:
    return None if value is None else _int(value, where, minimum)


def _str(value: Any, where: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value:
        raise _fail(where, f"expected a non-empty string, got {_brief(value)}")
    return value


def _dict(value: Any, where: str, allowed: set[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(where, f"expected an object, got {_brief(value)}")
    unknown = sorted(str(k) for k in value if k not in allowed)
    if unknown:
        raise _fail(where, f"unknown key {_brief(unknown[0])}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise _fail(where, f"expected an array, got {_brief(value)}")
    return value


def _region(data: Any, where: str) -> Region:
    d = _dict(data, where, _REGION_FIELDS | {"end"})
    for key in ("name", "kind", "offset", "size"):
        if key not in d:
            raise _fail(where, f"missing key {key!r}")
    name = _str(d["name"], f"{where}.name")
    assert name is not None
    kind = d["kind"]
    if kind not in _KINDS:
        raise _fail(f"{where}.kind", f"expected one of {', '.join(_KINDS)}, got {_brief(kind)}")
    offset = _int(d["offset"], f"{where}.offset")
    size = _int(d["size"], f"{where}.size")
    alignment = _int(d.get("alignment", 1), f"{where}.alignment", 1)
    if offset % alignment:
        raise _fail(f"{where}.offset", f"{offset} is not a multiple of the region's alignment {alignment}")
    if "end" in d and d["end"] != offset + size:
        raise _fail(f"{where}.end", f"{_brief(d['end'])} is not offset + size = {offset + size}")
    group = _opt_int(d.get("group"), f"{where}.group")
    phase = _opt_int(d.get("phase"), f"{where}.phase")
    if (group is None) != (phase is None):
        raise _fail(where, "group and phase must be both set or both null")
    dtype = _str(d.get("dtype"), f"{where}.dtype", optional=True)
    count = _opt_int(d.get("count"), f"{where}.count", 0)
    if count == 0 and size:  # zero elements only for an empty marker field (a struct's MemRange[T, 0])
        raise _fail(f"{where}.count", f"0 elements in a region of {size} units")
    if (dtype is None) != (count is None):
        raise _fail(where, "dtype and count must be both set or both null")
    others = {
        k: v
        for k, v in d.items()
        if k
        not in (
            "name",
            "kind",
            "offset",
            "size",
            "alignment",
            "group",
            "phase",
            "padding_before",
            "dtype",
            "count",
            "index",
            "end",
            "live",
        )
    }
    _check_lint_fields(others, where)
    live = d.get("live")
    if live is not None:
        steps = [_int(t, f"{where}.live[{i}]") for i, t in enumerate(_list(live, f"{where}.live"))]
        if not steps or steps != sorted(set(steps)):
            raise _fail(f"{where}.live", "expected the steps a region is live in, ascending, at least one")
        others["live"] = tuple(steps)
    return Region(
        name=name,
        kind=kind,
        offset=offset,
        size=size,
        alignment=alignment,
        padding_before=_int(d.get("padding_before", 0), f"{where}.padding_before"),
        group=group,
        phase=phase,
        dtype=dtype,
        count=count,
        index=_int(d.get("index", 0), f"{where}.index"),
        **others,
    )


def _check_lint_fields(d: dict[str, Any], where: str) -> None:
    swizzle = d.get("swizzle")
    if swizzle is not None and swizzle not in hardware.SWIZZLE_ATOM_BYTES:
        raise _fail(
            f"{where}.swizzle",
            f"expected null or one of {', '.join(hardware.SWIZZLE_ATOM_BYTES)}, got {_brief(swizzle)}",
        )
    _opt_int(d.get("stages"), f"{where}.stages", 1)
    for key in ("layout", "source"):
        text = _str(d.get(key), f"{where}.{key}", optional=True)
        if text is not None and not text.isprintable():
            raise _fail(f"{where}.{key}", f"expected printable text, got {_brief(text)}")
    tma = d.get("tma")
    if tma is not None and not isinstance(tma, bool):
        raise _fail(f"{where}.tma", f"expected true, false or null, got {_brief(tma)}")
    shape = d.get("shape")
    if shape is not None:
        extents = tuple(_int(n, f"{where}.shape[{i}]", 1) for i, n in enumerate(_list(shape, f"{where}.shape")))
        if not extents:
            raise _fail(f"{where}.shape", "expected at least one extent")
        if d.get("stages") is not None and d["stages"] != extents[0]:
            raise _fail(f"{where}.stages", f"is {d['stages']}, but shape's first extent is {extents[0]}")
        d["shape"] = extents


def _group(data: Any, where: str, position: int) -> AliasGroup:
    d = _dict(data, where, _GROUP_KEYS)
    for key in ("index", "offset", "size", "alignment", "phase_sizes"):
        if key not in d:
            raise _fail(where, f"missing key {key!r}")
    index = _int(d["index"], f"{where}.index")
    if index != position:
        raise _fail(f"{where}.index", f"is {index}, but the group is number {position} in the list")
    phase_sizes = tuple(
        _int(s, f"{where}.phase_sizes[{i}]") for i, s in enumerate(_list(d["phase_sizes"], f"{where}.phase_sizes"))
    )
    if not phase_sizes:
        raise _fail(f"{where}.phase_sizes", "an alias group has at least one phase")
    size = _int(d["size"], f"{where}.size")
    if size != max(phase_sizes):
        raise _fail(f"{where}.size", f"{size} is not the largest phase size {max(phase_sizes)}")
    offset = _int(d["offset"], f"{where}.offset")
    if "end" in d and d["end"] != offset + size:
        raise _fail(f"{where}.end", f"{_brief(d['end'])} is not offset + size = {offset + size}")
    return AliasGroup(index, offset, size, _int(d["alignment"], f"{where}.alignment", 1), phase_sizes)


def _check_groups(regions: tuple[Region, ...], groups: tuple[AliasGroup, ...], struct: bool = False) -> None:
    """Every aliased region belongs to a listed group and phase, lies inside the
    group, and each phase is as large as its regions reach. A ``@cute.struct``'s
    unions may hold anything, and a phase may end in a nested struct's padding."""
    reach: dict[tuple[int, int], int] = {}
    starts: dict[int, int] = {}
    for i, r in enumerate(regions):
        if r.group is None or r.phase is None:
            continue
        where = f"regions[{i}]"
        if r.kind == "barrier" and not struct:
            raise _fail(where, "mbarrier storage is never aliased")
        if r.group >= len(groups):
            raise _fail(f"{where}.group", f"{r.group} but the plan has {len(groups)} alias groups")
        g = groups[r.group]
        if r.phase >= len(g.phase_sizes):
            raise _fail(f"{where}.phase", f"{r.phase} but alias group {r.group} has {len(g.phase_sizes)} phases")
        if r.offset < g.offset or r.end > g.end:
            raise _fail(where, f"[{r.offset}, {r.end}) lies outside its alias group [{g.offset}, {g.end})")
        key = (r.group, r.phase)
        reach[key] = max(reach.get(key, 0), r.end - g.offset)
        starts[r.group] = min(starts.get(r.group, r.offset), r.offset)
    for g in groups:
        if starts.get(g.index, g.offset) != g.offset and not struct:  # (a struct's nested union may come first)
            raise _fail(f"groups[{g.index}].offset", f"{g.offset}, but its first region starts at {starts[g.index]}")
        for p, size in enumerate(g.phase_sizes):
            if struct:
                if reach.get((g.index, p), 0) > size:
                    raise _fail(
                        f"groups[{g.index}].phase_sizes[{p}]",
                        f"{size}, but the phase's regions reach {reach[(g.index, p)]}",
                    )
                continue
            if (g.index, p) not in reach:
                raise _fail(f"groups[{g.index}].phase_sizes[{p}]", "the phase has no regions")
            if reach[(g.index, p)] != size:
                raise _fail(
                    f"groups[{g.index}].phase_sizes[{p}]",
                    f"{size}, but the phase's regions reach {reach[(g.index, p)]}",
                )


def _check_no_overlap(regions: tuple[Region, ...], groups: tuple[AliasGroup, ...], struct: bool = False) -> None:
    """Regions that are live together never share a unit: standalone regions and
    whole alias groups side by side, and the regions of each phase. (A union
    inside a union of a ``@cute.struct`` lies inside the outer group.)"""
    blocks = [(r.offset, r.end, repr(r.name)) for r in regions if r.group is None and r.size]
    # a struct's outer union comes before the unions inside it
    outer = [
        g
        for g in groups
        if not (struct and any(h.index < g.index and h.offset <= g.offset and g.end <= h.end for h in groups))
    ]
    blocks += [(g.offset, g.end, f"alias group {g.index}") for g in outer if g.size]
    phases: dict[tuple[int, int], list[tuple[int, int, str]]] = {}
    for r in regions:
        if r.group is not None and r.phase is not None and r.size:
            phases.setdefault((r.group, r.phase), []).append((r.offset, r.end, repr(r.name)))
    for spans in (blocks, *phases.values()):
        spans.sort()
        for (s0, e0, n0), (s1, e1, n1) in zip(spans, spans[1:]):
            if s1 < e0:
                raise _fail(
                    "regions", f"{_cut(n0)} [{s0}, {e0}) and {_cut(n1)} [{s1}, {e1}) overlap but are live together"
                )


def _lifetime_fields(d: dict[str, Any], version: Any, regions: tuple[Region, ...]) -> dict[str, Any]:
    """steps, lower_bound, optimal and solver of a plan solved from lifetimes (version 2)."""
    if version == SCHEMA_VERSION:
        if any(r.live is not None for r in regions) or "steps" in d:
            raise _fail("version", f"lifetimes (steps, live) need version {LIFETIME_SCHEMA_VERSION}")
        return {}
    listed = _list(d.get("steps"), "steps")
    if len(listed) > MAX_STEPS:
        raise _fail("steps", f"{len(listed)} steps, at most {MAX_STEPS}")
    steps = tuple(_str(s, f"steps[{i}]") for i, s in enumerate(listed))
    if not steps or len(set(steps)) != len(steps):
        raise _fail("steps", "expected unique step names, at least one")
    for i, r in enumerate(regions):
        if r.live is not None and r.live[-1] >= len(steps):
            raise _fail(f"regions[{i}].live", f"step {r.live[-1]} but the plan has {len(steps)} steps")
    optimal = d.get("optimal")
    if not isinstance(optimal, bool):
        raise _fail("optimal", f"expected true or false, got {_brief(optimal)}")
    lower = _int(d.get("lower_bound"), "lower_bound")
    if lower > _int(d.get("data_total"), "data_total") or (optimal and lower != d.get("data_total")):
        raise _fail("lower_bound", f"{lower} does not fit the data total {d.get('data_total')} (optimal: {optimal})")
    return {
        "steps": steps,
        "lower_bound": lower,
        "optimal": optimal,
        "solver": _str(d.get("solver"), "solver", optional=True),
    }


def _tma_atoms(value: Any) -> tuple[TmaAtom, ...]:
    if value is None:
        return ()
    out = []
    for i, item in enumerate(_list(value, "tma_atoms")):
        if not isinstance(item, dict):
            raise _fail(f"tma_atoms[{i}]", f"expected an object, got {_brief(item)}")
        try:
            out.append(TmaAtom.from_dict(item))
        except (KeyError, TypeError, ValueError) as exc:
            raise _fail(f"tma_atoms[{i}]", f"not a TMA atom: {type(exc).__name__}: {exc}") from None
    return tuple(out)


def _ordering(value: Any) -> OrderingModel | None:
    """The optional ``ordering`` model (a captured kernel's sync objects and programs)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _fail("ordering", f"expected an object, got {_brief(value)}")
    try:
        return ordering_from_dict(value)
    except (TypeError, ValueError, KeyError, AttributeError, RecursionError) as exc:
        raise _fail("ordering", f"not an ordering model: {type(exc).__name__}: {exc}") from None


def _accesses(value: Any, memory: str, regions: tuple[Region, ...]) -> tuple[SmemAccess, ...]:
    """The optional ``accesses`` list: every record well-formed and naming a data region."""
    if value is None:
        return ()
    items = _list(value, "accesses")
    if items and memory != "smem":
        raise _fail("accesses", "a TMEM plan has no bank accesses")
    kinds = {r.name: r.kind for r in regions}
    out = []
    for i, item in enumerate(items):
        where = f"accesses[{i}]"
        d = _dict(item, where, set(ACCESS_KEYS))
        name = _str(d.get("region"), f"{where}.region")
        if name not in kinds:
            raise _fail(f"{where}.region", f"{_brief(name)} is not a region of the plan")
        if kinds[name] != "data":
            raise _fail(f"{where}.region", f"{_brief(name)} is a {kinds[name]} region, which holds no tile")
        try:
            out.append(access_from_dict(d))
        except (TypeError, ValueError) as exc:
            key = (getattr(exc, "field", None) or "access").removeprefix("access").lstrip(".")
            raise _fail(f"{where}.{key}" if key else where, str(exc).split(": ", 1)[-1]) from None
    return tuple(out)


def _check_no_overlap_by_step(plan: LayoutPlan) -> None:
    """With lifetimes: regions live at a common step never share a unit."""
    for k, step in enumerate(plan.steps):
        spans = sorted((r.offset, r.end, repr(r.name)) for r in plan.regions if r.size and r.live_in(k))
        for (s0, e0, n0), (s1, e1, n1) in zip(spans, spans[1:]):
            if s1 < e0:
                raise _fail(
                    "regions",
                    f"{_cut(n0)} [{s0}, {e0}) and {_cut(n1)} [{s1}, {e1}) overlap but are both live at step {step!r}",
                )


def _cut(label: str) -> str:
    return label if len(label) <= 60 else label[:57] + "..."


def _check_struct_totals(plan: LayoutPlan) -> None:
    """A ``@cute.struct``: its size holds every field (barriers too) and is a
    multiple of its alignment; nothing follows it."""
    end = max([r.end for r in plan.regions] + [g.end for g in plan.groups] + [0])
    if plan.data_total < end:
        raise _fail("data_total", f"{plan.data_total}, but the struct's fields end at {end}")
    # a struct's size is rounded to its alignment; a captured kernel's total is the compiler's, unrounded
    if plan.source == STRUCT_SOURCE and plan.data_total % plan.base_alignment:
        raise _fail(
            "data_total", f"{plan.data_total} is not a multiple of the struct's alignment {plan.base_alignment}"
        )
    barriers = covered_bytes(plan.barrier_regions)
    if plan.barrier_bytes != barriers:
        raise _fail("barrier_bytes", f"{plan.barrier_bytes}, but the struct's mbarrier fields take {barriers}")
    # a capture also records the kernel's TMEM allocations, as a TMEM plan in columns
    if plan.source == STRUCT_SOURCE and plan.memory != "smem":
        raise _fail("memory", "a @cute.struct lays out shared memory")
    if sum(r.kind == "tmem_ptr" for r in plan.regions) > 1:
        raise _fail("regions", "more than one TMEM-pointer slot")
    widest = max([r.alignment for r in plan.regions] + [1])
    if plan.base_alignment < widest:
        raise _fail("base_alignment", f"{plan.base_alignment} is less than a region's alignment {widest}")


def _check_totals(plan: LayoutPlan) -> None:
    if plan.source in SELF_SIZED_SOURCES:
        _check_struct_totals(plan)
        return
    data_end = max(
        [r.end for r in plan.regions if r.group is None and r.kind != "barrier"] + [g.end for g in plan.groups] + [0]
    )
    if plan.data_total != data_end:
        raise _fail("data_total", f"{plan.data_total}, but the data regions end at {data_end}")
    barriers = plan.barrier_regions
    if plan.memory == "tmem":
        if barriers or plan.barrier_bytes or any(r.kind == "tmem_ptr" for r in plan.regions):
            raise _fail("regions", "a TMEM plan holds no mbarriers and no TMEM-pointer slot")
        return
    start = align_up(plan.data_total, hardware.MBARRIER_ALIGNMENT)
    for r in barriers:
        if r.offset < start:
            raise _fail("regions", f"mbarriers {r.name!r} at {r.offset} start inside the data (before {start})")
    expected = max(r.end for r in barriers) - start if barriers else 0
    if plan.barrier_bytes != expected:
        raise _fail("barrier_bytes", f"{plan.barrier_bytes}, but the mbarrier regions take {expected}")
    if sum(r.kind == "tmem_ptr" for r in plan.regions) > 1:
        raise _fail("regions", "more than one TMEM-pointer slot")
    widest = max([r.alignment for r in plan.regions if r.kind != "barrier"] + [1])
    if plan.base_alignment < widest:
        raise _fail("base_alignment", f"{plan.base_alignment} is less than a region's alignment {widest}")


def _check_summary(plan: LayoutPlan, summary: Any) -> None:
    if summary is None:
        return
    computed = plan.to_dict()["summary"]
    d = _dict(summary, "summary", set(computed))
    for key, value in d.items():
        if value != computed[key] or isinstance(value, bool):
            raise _fail(f"summary.{key}", f"{_brief(value)}, but the regions add up to {computed[key]}")


def plan_from_dict(data: Any) -> LayoutPlan:
    """A :class:`LayoutPlan` from its ``to_dict()`` form; ``ValueError`` naming
    the offending field if the document is not one a layout could produce."""
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise ValueError(f"not a smemviz layout plan (expected schema {SCHEMA!r})")
    version = data.get("version")
    if version not in READABLE_VERSIONS or isinstance(version, bool):
        raise ValueError(
            f"unsupported layout-plan version {_brief(version)}; this smemviz reads "
            f"{SCHEMA_VERSION} and {LIFETIME_SCHEMA_VERSION}"
        )
    d = data  # keys beyond the ones read here are ignored, as in older readers
    for key in ("memory", "regions", "data_total"):
        if key not in d:
            raise _fail("", f"missing key {key!r}")
    memory = d["memory"]
    if memory not in ("smem", "tmem"):
        raise _fail("memory", f"expected 'smem' or 'tmem', got {_brief(memory)}")
    if "unit" in d and d["unit"] != ("B" if memory == "smem" else "cols"):
        raise _fail("unit", f"{_brief(d['unit'])} does not match memory {memory!r}")
    arch = _str(d.get("arch"), "arch", optional=True)
    if arch is not None:
        try:
            hardware.get_arch(arch)
        except (TypeError, ValueError) as exc:
            raise _fail("arch", str(exc)) from None
    regions = tuple(_region(r, f"regions[{i}]") for i, r in enumerate(_list(d["regions"], "regions")))
    groups = tuple(_group(g, f"groups[{i}]", i) for i, g in enumerate(_list(d.get("groups", []), "groups")))
    plan = LayoutPlan(
        memory=memory,
        regions=regions,
        groups=groups,
        data_total=_int(d["data_total"], "data_total"),
        barrier_bytes=_int(d.get("barrier_bytes", 0), "barrier_bytes"),
        base_alignment=_int(d.get("base_alignment", 1), "base_alignment", 1),
        arch=arch,
        source=_str(d.get("source", "smemviz"), "source") or "smemviz",
        accesses=_accesses(d.get("accesses"), memory, regions),
        ordering=_ordering(d.get("ordering")),
        tma_atoms=_tma_atoms(d.get("tma_atoms")),
        **_lifetime_fields(d, version, regions),
    )
    struct = plan.source in SELF_SIZED_SOURCES
    if struct and not plan.barrier_bytes and plan.barrier_regions:
        # written before struct and captured plans counted their mbarrier fields in barrier_bytes
        plan = replace(plan, barrier_bytes=covered_bytes(plan.barrier_regions))
    if plan.steps:
        _check_no_overlap_by_step(plan)
    else:
        _check_no_overlap(regions, groups, struct)
    _check_groups(regions, groups, struct)
    _check_totals(plan)
    _check_summary(plan, d.get("summary"))
    return plan


def plan_from_json(text: str) -> LayoutPlan:
    """A :class:`LayoutPlan` from the JSON text ``plan.to_json()`` wrote (see :func:`plan_from_dict`)."""
    if not isinstance(text, (str, bytes, bytearray)):
        raise TypeError(f"plan_from_json takes the JSON text, got {type(text).__name__}")
    try:
        data = json.loads(text)
    except RecursionError:
        raise ValueError("malformed layout plan: nested too deeply") from None
    return plan_from_dict(data)
