"""Parsed layout-file data checked against the schema and against the core
allocators' own rules; every refusal names the key and, where it can be
found, the line and column."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from functools import partial
from types import SimpleNamespace
from typing import Any

from ... import hardware
from ..._limits import clip, shorten
from ..._names import first_unprintable
from ...layout._access import ACCESS_KEYS, SmemAccess, access_from_dict
from ...layout._allocation import declared_accesses
from ...layout._allocator import SmemAllocator, TmemAllocator
from ...solver import check_steps, read_live
from ._error import HugeInt, KeyPath, LayoutFileError, key_text
from ._schema import (
    ALIAS_KEYS,
    GROUP_KEYS,
    PIPELINE_KEYS,
    SCHEMA_VERSION,
    SMEM_KEYS,
    TMEM_KEYS,
    TOP_KEYS,
    LayoutSpec,
    PipelineEntry,
    PipelineGroupEntry,
    SmemEntry,
    TmemEntry,
)

__all__ = ["Reader"]

# what the core calls a field -> the layout-file key
_CORE_FIELDS = {
    "name": "name",
    "size_bytes": "size",
    "alignment": "align",
    "count": "count",
    "dtype": "dtype",
    "num_columns": "columns",
    "num_stages": "stages",
    "stages": "stages",
    "swizzle": "swizzle",
    "tma": "tma",
    "shape": "shape",
}
# integers are 64-bit signed, as TOML requires of every reader
_INT_MIN, _INT_MAX = -(2**63), 2**63 - 1


class Reader:
    """Checks the parsed data against the schema and the core's own rules."""

    def __init__(self, data: Any, source: str, locate: Callable[[KeyPath], tuple[int, int] | None]) -> None:
        self.data = data
        self.source = source
        self.locate = locate

    def fail(self, path: KeyPath, message: str) -> LayoutFileError:
        pos = self.locate(path) if path else None
        line, col = pos if pos else (None, None)
        return LayoutFileError(message, source=self.source, line=line, column=col, key=key_text(path) or None)

    # -- generic checks ------------------------------------------------------------

    def table(self, value: Any, path: KeyPath, allowed: Sequence[str]) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(path, f"expected a table (object), got {_describe(value)}")
        for key in value:
            if key not in allowed:
                hint = difflib.get_close_matches(key, allowed, n=1)
                suggestion = f"; did you mean {hint[0]!r}?" if hint else f"; allowed: {', '.join(allowed)}"
                raise self.fail((*path, key), f"unknown key {key!r}{suggestion}")
        return value

    def array_of_tables(self, key: str, allowed: Sequence[str]) -> list[tuple[KeyPath, dict[str, Any]]]:
        value = self.data.get(key, [])
        if not isinstance(value, list):
            raise self.fail((key,), f"expected an array of tables ([[{key}]]), got {_describe(value)}")
        return [((key, i), self.table(item, (key, i), allowed)) for i, item in enumerate(value)]

    def required(self, table: dict[str, Any], path: KeyPath, key: str) -> Any:
        if key not in table:
            raise self.fail(path, f"missing required key {key!r}")
        return table[key]

    def string(self, value: Any, path: KeyPath) -> str:
        if not isinstance(value, str):
            raise self.fail(path, f"expected a string, got {_describe(value)}")
        if not value:
            raise self.fail(path, "must not be empty")
        bad = first_unprintable(value)
        if bad is not None:
            raise self.fail(
                path,
                f"{value!r} holds the unprintable character {value[bad]!r} at index {bad}; "
                "names and other strings must be printable text",
            )
        return value

    def integer(self, value: Any, path: KeyPath) -> int:
        if isinstance(value, HugeInt):
            raise self.fail(path, f"integer of {len(value.digits.lstrip('-'))} digits does not fit in 64 bits")
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(path, f"expected an integer, got {_describe(value)}")
        if not _INT_MIN <= value <= _INT_MAX:
            raise self.fail(path, f"integer of {value.bit_length()} bits does not fit in 64 bits")
        return value

    def boolean(self, value: Any, path: KeyPath) -> bool:
        if not isinstance(value, bool):
            raise self.fail(path, f"expected true or false, got {_describe(value)}")
        return value

    def extents(self, value: Any, path: KeyPath) -> tuple[int, ...]:
        if not isinstance(value, list):
            raise self.fail(path, f"expected an array of integers, got {_describe(value)}")
        return tuple(self.integer(v, (*path, i)) for i, v in enumerate(value))

    def tma_box(self, value: Any, path: KeyPath) -> tuple[int, ...]:
        """A declared TMA box: 1 to 5 extents, elements, innermost first (lint judges their sizes)."""
        box = self.extents(value, path)
        if not 1 <= len(box) <= 5:
            raise self.fail(path, f"a TMA box has 1 to 5 dimensions, got {len(box)}")
        for i, extent in enumerate(box):
            if not 0 <= extent < 2**32:
                raise self.fail((*path, i), f"a box extent is a 32-bit unsigned count, got {extent}")
        return box

    def optional(self, table: dict[str, Any], path: KeyPath, key: str, check: Any, default: Any) -> Any:
        return check(table[key], (*path, key)) if key in table else default

    def unique(self, names: Iterable[tuple[KeyPath, str]], what: str) -> None:
        seen: dict[str, KeyPath] = {}
        for path, name in names:
            if name in seen:
                raise self.fail((*path, "name"), f"duplicate {what} name {name!r} (first at {key_text(seen[name])})")
            seen[name] = path

    def core(self, path: KeyPath, build: Callable[[], Any], *, at_field: bool = True) -> Any:
        """Run a core call; its error is reported at the key of the field it
        names (``DeclarationError.field``) under ``path``, else at ``path``."""
        try:
            return build()
        except (TypeError, ValueError) as exc:
            field = getattr(exc, "field", None) or ""
            key = ("access" if field.startswith("access") else _CORE_FIELDS.get(field)) if at_field else None
            raise self.fail((*path, key) if key else path, str(exc)) from None

    # -- the schema -------------------------------------------------------------------

    def spec(self) -> LayoutSpec:
        top = self.table(self.data, (), TOP_KEYS)
        version = self.optional(top, (), "version", self.integer, SCHEMA_VERSION)
        if version != SCHEMA_VERSION:
            raise self.fail(
                ("version",), f"unsupported layout file version {version}; this smemviz reads {SCHEMA_VERSION}"
            )
        name = self.optional(top, (), "name", self.string, None)
        arch = self.optional(top, (), "arch", self.string, None)
        if arch is not None:
            arch = self.core(("arch",), lambda: hardware.get_arch(arch).name)

        steps = self.steps(top)
        smem = self.smem_entries(steps)
        pipelines, groups = self.pipelines()
        tmem = self.tmem_entries(steps)
        smem_names = {e.name for e in smem}
        tmem_ptr = self.optional(top, (), "tmem_ptr", self.string, None)
        if tmem_ptr is not None and tmem_ptr not in smem_names:
            raise self.fail(("tmem_ptr",), f"{tmem_ptr!r} is not an [[smem]] entry; known: {_names(smem_names)}")
        spec = LayoutSpec(
            source=self.source,
            name=name,
            arch=arch,
            smem=smem,
            pipelines=pipelines,
            pipeline_groups=groups,
            smem_aliases=self.aliases("smem_alias", smem_names, "[[smem]]"),
            tmem_ptr=tmem_ptr,
            tmem=tmem,
            tmem_aliases=self.aliases("tmem_alias", {e.name for e in tmem}, "[[tmem]]"),
            steps=steps,
        )
        self.declare(spec)
        return spec

    def steps(self, top: dict[str, Any]) -> tuple[str, ...] | None:
        if "steps" not in top:
            return None
        value = top["steps"]
        if isinstance(value, list):
            for i, name in enumerate(value):
                self.string(name, ("steps", i))
        elif not isinstance(value, int) or isinstance(value, bool):
            raise self.fail(("steps",), f"expected a list of step names or a count, got {_describe(value)}")
        return self.core(("steps",), lambda: check_steps(value))

    def live(self, table: dict[str, Any], path: KeyPath, name: str, steps: tuple[str, ...] | None) -> Any:
        """An entry's ``live``: a step name, a step number or a list of them."""
        if "live" not in table:
            return None
        value = table["live"]
        items = value if isinstance(value, list) else [value]
        for i, item in enumerate(items):
            if isinstance(item, bool) or not isinstance(item, (str, int)):
                where = (*path, "live", i) if isinstance(value, list) else (*path, "live")
                raise self.fail(where, f"expected a step name or number, got {_describe(item)}")
        self.core((*path, "live"), lambda: read_live(items, steps, name), at_field=False)
        return tuple(items)

    def smem_entries(self, steps: tuple[str, ...] | None = None) -> tuple[SmemEntry, ...]:
        entries = []
        for path, t in self.array_of_tables("smem", SMEM_KEYS):
            name = self.string(self.required(t, path, "name"), (*path, "name"))
            dtype = self.optional(t, path, "dtype", self.string, None)
            size = self.optional(t, path, "size", self.integer, 0)
            if dtype is None and "size" not in t:
                raise self.fail(path, f"SMEM allocation {name!r} needs 'size' (bytes) or 'dtype' and 'count'")
            entry = SmemEntry(
                name=name,
                size=size,
                align=self.optional(t, path, "align", self.integer, hardware.TMA_ALIGNMENT),
                dtype=dtype,
                count=self.optional(t, path, "count", self.integer, 1),
                live=self.live(t, path, name, steps),
                swizzle=self.optional(t, path, "swizzle", self.string, None),
                stages=self.optional(t, path, "stages", self.integer, None),
                tma=self.optional(t, path, "tma", self.boolean, None),
                shape=self.optional(t, path, "shape", self.extents, None),
                tma_box=self.optional(t, path, "tma_box", self.tma_box, None),
            )
            allocation = self.core(path, entry.allocation)
            entry = replace(entry, access=self.accesses(t, path, allocation))
            entries.append((path, replace(entry, size=allocation.size_bytes, dtype=allocation.dtype_name)))
        self.unique(((p, e.name) for p, e in entries), "[[smem]]")
        return tuple(e for _, e in entries)

    def accesses(self, table: dict[str, Any], path: KeyPath, allocation: Any) -> tuple[SmemAccess, ...] | None:
        """An entry's ``access``: one table or an array of them, each checked by the model's record
        and against its allocation (a dtype, a layout, a stage it holds)."""
        name = allocation.name
        if "access" not in table:
            return None
        value = table["access"]
        items = (
            [((*path, "access", i), v) for i, v in enumerate(value)]
            if isinstance(value, list)
            else [((*path, "access"), value)]
        )
        out: list[SmemAccess] = []
        for where, item in items:
            t = self.table(item, where, ACCESS_KEYS)
            for key in ("region", "instruction", "layout", "dtype", "swizzle"):
                if key in t:
                    self.string(t[key], (*where, key))
            for key in ("warps", "threads"):
                if key in t:
                    self.extents(t[key], (*where, key))
            if "stage" in t:
                self.integer(t["stage"], (*where, "stage"))
            try:
                acc = access_from_dict(t, name)
                one = SimpleNamespace(name=name, access=[acc], stages=allocation.stages, dtype=allocation.dtype)
                out.extend(declared_accesses(one))
            except (TypeError, ValueError) as exc:
                key = (getattr(exc, "field", None) or "").removeprefix("access").lstrip(".")
                raise self.fail((*where, key) if key in t else where, str(exc)) from None
        return tuple(out)

    def tmem_entries(self, steps: tuple[str, ...] | None = None) -> tuple[TmemEntry, ...]:
        entries = []
        for path, t in self.array_of_tables("tmem", TMEM_KEYS):
            name = self.string(self.required(t, path, "name"), (*path, "name"))
            columns = self.integer(self.required(t, path, "columns"), (*path, "columns"))
            entry = TmemEntry(name, columns, self.live(t, path, name, steps))
            self.core(path, entry.allocation)
            entries.append((path, entry))
        self.unique(((p, e.name) for p, e in entries), "[[tmem]]")
        return tuple(e for _, e in entries)

    def pipelines(self) -> tuple[tuple[PipelineEntry, ...], tuple[PipelineGroupEntry, ...]]:
        named: list[tuple[KeyPath, str]] = []
        pipelines = []
        for path, t in self.array_of_tables("pipeline", PIPELINE_KEYS):
            name = self.string(self.required(t, path, "name"), (*path, "name"))
            stages = self.positive(self.required(t, path, "stages"), (*path, "stages"))
            pipelines.append(PipelineEntry(name, stages))
            named.append((path, name))
        groups = []
        for path, t in self.array_of_tables("pipeline_group", GROUP_KEYS):
            name = self.string(self.required(t, path, "name"), (*path, "name"))
            stages = self.positive(self.required(t, path, "stages"), (*path, "stages"))
            if ("members" in t) == ("barriers_per_stage" in t):
                raise self.fail(path, f"pipeline group {name!r} needs exactly one of 'members' or 'barriers_per_stage'")
            if "members" in t:
                per_stage = self.positive(t["members"], (*path, "members")) + 1
            else:
                per_stage = self.positive(t["barriers_per_stage"], (*path, "barriers_per_stage"))
            groups.append(PipelineGroupEntry(name, stages, per_stage))
            named.append((path, name))
        self.unique(named, "pipeline")
        return tuple(pipelines), tuple(groups)

    def positive(self, value: Any, path: KeyPath) -> int:
        n = self.integer(value, path)
        if n <= 0:
            raise self.fail(path, f"must be a positive integer, got {n}")
        return n

    def aliases(self, key: str, known: set[str], what: str) -> tuple[tuple[tuple[str, ...], ...], ...]:
        groups = []
        for path, t in self.array_of_tables(key, ALIAS_KEYS):
            phases_path = (*path, "phases")
            phases = self.required(t, path, "phases")
            if not isinstance(phases, list) or not all(isinstance(p, list) for p in phases):
                raise self.fail(phases_path, f"expected a list of phases (lists of names), got {_describe(phases)}")
            group = []
            for pi, phase in enumerate(phases):
                names = []
                for ni, name in enumerate(phase):
                    name_path = (*phases_path, pi, ni)
                    self.string(name, name_path)
                    if name not in known:
                        raise self.fail(name_path, f"{name!r} is not an {what} entry; known: {_names(known)}")
                    names.append(name)
                group.append(tuple(names))
            groups.append(tuple(group))
        return tuple(groups)

    def declare(self, spec: LayoutSpec) -> None:
        """Give every declaration to the core allocators once, so their checks
        (TMEM-pointer slot size, alias-group rules) report against the file."""
        smem = SmemAllocator(steps=spec.steps)
        allocs = {e.name: e.allocation() for e in spec.smem}
        for e in spec.smem:
            smem.add(allocs[e.name], live=None if e.live is None else list(e.live))
        if spec.tmem_ptr is not None:
            slot = allocs[spec.tmem_ptr]
            self.core(("tmem_ptr",), lambda: smem.add_tmem_ptr(slot), at_field=False)
        for i, phases in enumerate(spec.smem_aliases):
            members = [[allocs[n] for n in p] for p in phases]
            self.core(("smem_alias", i, "phases"), partial(smem.add_alias_group, members), at_field=False)
        tmem = TmemAllocator(steps=spec.steps)
        tallocs = {e.name: e.allocation() for e in spec.tmem}
        for te in spec.tmem:
            tmem.add(tallocs[te.name], live=None if te.live is None else list(te.live))
        for i, phases in enumerate(spec.tmem_aliases):
            tmembers = [[tallocs[n] for n in p] for p in phases]
            self.core(("tmem_alias", i, "phases"), partial(tmem.add_alias_group, tmembers), at_field=False)


def _describe(value: Any) -> str:
    """A short, one-line account of a parsed value, cheap however large it is."""
    kinds = {bool: "boolean", int: "integer", float: "float", str: "string", list: "array", dict: "table"}
    kind = kinds.get(type(value), type(value).__name__)
    if isinstance(value, HugeInt):
        return f"integer of {len(value.digits.lstrip('-'))} digits"
    if isinstance(value, (list, dict)):
        text = repr(value) if _is_flat_and_short(value) else f"of {len(value)} item{'' if len(value) == 1 else 's'}"
    elif isinstance(value, int) and value.bit_length() > 96:
        text = f"of {value.bit_length()} bits"
    elif isinstance(value, str):
        text = shorten(value, 40)
    else:
        text = clip(repr(value), 40)
    return f"{kind} {text}"


def _is_flat_and_short(value: list[Any] | dict[str, Any]) -> bool:
    items = value.values() if isinstance(value, dict) else value
    return len(value) <= 8 and all(
        isinstance(v, (bool, int, float)) or (isinstance(v, str) and len(v) < 40) for v in items
    )


def _names(names: Iterable[str]) -> str:
    listed = sorted(names)
    return ", ".join(repr(n) for n in listed[:12]) + (" ..." if len(listed) > 12 else "") if listed else "(none)"
