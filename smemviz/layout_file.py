"""Layout files: SMEM and TMEM layouts declared in TOML or JSON, next to kernels.

A layout file holds the same declarations a kernel makes in Python, so the
layout can be reviewed, rendered and checked in CI without running the
kernel. TOML and JSON files share one schema; sizes are bytes, TMEM spans
are columns::

    version = 1              # optional: the schema version (1)
    name = "gemm_sm100"      # optional: a title for reports and diagrams
    arch = "sm_100a"         # optional: default architecture for checks
    tmem_ptr = "tmem_slot"   # optional: the [[smem]] entry tcgen05.alloc writes to

    [[smem]]                 # one SMEM allocation per entry
    name = "smem_a"          # required, unique among [[smem]] entries
    dtype = "bf16"           # optional element type ("bf16", "f8e4m3", "f4e2m1", ...)
    count = 32768            # optional element count (default 1)
    size = 65536             # bytes; optional when dtype is given
    align = 1024             # power of two (default 128, what TMA needs)

    [[pipeline]]             # a pipeline that owns its mbarriers
    name = "load"
    stages = 4               # 16 B of mbarriers (full + empty) per stage

    [[pipeline_group]]       # pipelines that share one set of barriers
    name = "mma"
    stages = 2
    members = 2              # N members: (N + 1) x stages barrier pairs
                             # (or barriers_per_stage = N + 1)

    [[smem_alias]]           # phases that reuse one region in turn
    phases = [["smem_a", "smem_b"], ["epi_c"]]

    [[tmem]]
    name = "acc"
    columns = 256

    [[tmem_alias]]
    phases = [["acc0"], ["acc1"]]

In TOML the top-level keys (``arch``, ``tmem_ptr`` ...) come before the first
``[[table]]``. Unknown keys, wrong types, duplicate names and values the core
allocators refuse are reported as :class:`LayoutFileError` with the file, the
line and column where they can be found, and the key path (``smem[2].align``).
"""

from __future__ import annotations

import difflib
import json
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from . import hardware
from ._allocation import SmemAllocation, TmemAllocation
from ._allocator import SmemAllocator, TmemAllocator
from ._inputs import LayoutPair
from ._plan import LayoutPlan

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = [
    "LayoutFileError",
    "LayoutSpec",
    "SmemEntry",
    "TmemEntry",
    "PipelineEntry",
    "PipelineGroupEntry",
    "load_layout",
    "parse_layout",
    "SCHEMA_VERSION",
]

SCHEMA_VERSION = 1

FileFormat = Literal["toml", "json"]
KeyPath = tuple["str | int", ...]


class LayoutFileError(ValueError):
    """A layout file that cannot be read: syntax, unknown key, bad value.

    ``str()`` gives ``FILE:LINE:COL: KEY: message`` with the parts that are known.
    """

    def __init__(
        self,
        message: str,
        *,
        source: str,
        line: int | None = None,
        column: int | None = None,
        key: str | None = None,
    ) -> None:
        self.message = message
        self.source = source
        self.line = line
        self.column = column
        self.key = key
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.source
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        key = f"{self.key}: " if self.key else ""
        return f"{where}: {key}{self.message}"


# -- the declarations ------------------------------------------------------------


@dataclass(frozen=True)
class SmemEntry:
    """One ``[[smem]]`` entry."""

    name: str
    size: int = 0
    align: int = hardware.TMA_ALIGNMENT
    dtype: str | None = None
    count: int = 1

    def allocation(self) -> SmemAllocation:
        return SmemAllocation(self.name, self.size, self.align, self.dtype, self.count)


@dataclass(frozen=True)
class TmemEntry:
    """One ``[[tmem]]`` entry."""

    name: str
    columns: int

    def allocation(self) -> TmemAllocation:
        return TmemAllocation(self.name, self.columns)


@dataclass(frozen=True)
class PipelineEntry:
    """One ``[[pipeline]]``: ``stages`` x 16 B of mbarriers."""

    name: str
    stages: int


@dataclass(frozen=True)
class PipelineGroupEntry:
    """One ``[[pipeline_group]]``: ``barriers_per_stage`` x ``stages`` x 16 B."""

    name: str
    stages: int
    barriers_per_stage: int


# The allocators take kernel resources, which expose a pipeline configuration;
# these stand in for them.
@dataclass
class _PipelineConfig:
    num_stages: int
    barrier_ptr: Any = None


@dataclass
class _PipelineResource:
    name: str
    pipeline_config: _PipelineConfig
    pipeline_group: Any = None


@dataclass
class _PipelineGroup:
    name: str
    pipeline_config: _PipelineConfig
    num_barriers_per_stage: int


@dataclass(frozen=True)
class LayoutSpec:
    """A layout file's declarations; builds fresh allocators and plans on demand."""

    source: str
    name: str | None = None
    arch: str | None = None
    smem: tuple[SmemEntry, ...] = ()
    pipelines: tuple[PipelineEntry, ...] = ()
    pipeline_groups: tuple[PipelineGroupEntry, ...] = ()
    smem_aliases: tuple[tuple[tuple[str, ...], ...], ...] = ()
    tmem_ptr: str | None = None
    tmem: tuple[TmemEntry, ...] = ()
    tmem_aliases: tuple[tuple[tuple[str, ...], ...], ...] = ()

    @property
    def has_smem(self) -> bool:
        return bool(self.smem or self.pipelines or self.pipeline_groups)

    @property
    def has_tmem(self) -> bool:
        return bool(self.tmem)

    def smem_allocator(self, arch: str | int | hardware.Arch | None = None) -> SmemAllocator:
        """A computed :class:`SmemAllocator`; with ``arch`` it refuses a layout
        that does not fit (``CapacityError``), like ``SmemAllocator(arch)``."""
        allocator = self._declare_smem(SmemAllocator(arch))
        allocator.compute_layout()
        return allocator

    def tmem_allocator(self, arch: str | int | hardware.Arch | None = None) -> TmemAllocator:
        """A computed :class:`TmemAllocator` (``CapacityError`` beyond 512 columns)."""
        allocator = self._declare_tmem(TmemAllocator(arch))
        allocator.compute_layout()
        return allocator

    def plans(
        self, arch: str | int | hardware.Arch | None = None
    ) -> tuple[LayoutPlan | None, LayoutPlan | None]:
        """``(smem_plan, tmem_plan)``, ``None`` for a memory the file leaves empty.

        Plans carry ``arch`` (default: the file's), so reports and checks use it;
        an SMEM layout over capacity still gets a plan, to show by how much.
        """
        name = hardware.get_arch(arch).name if arch is not None else self.arch
        smem = replace(self.smem_allocator().plan, arch=name) if self.has_smem else None
        tmem = replace(self.tmem_allocator().plan, arch=name) if self.has_tmem else None
        return smem, tmem

    def __smemviz_layout__(self, arch: str | None = None) -> LayoutPair:
        """The file's layouts, titled with its name (smemviz's input rule)."""
        smem, tmem = self.plans(arch)
        return LayoutPair(smem, tmem, self.name, arch or self.arch)

    def _declare_smem(self, allocator: SmemAllocator) -> SmemAllocator:
        allocs = {e.name: e.allocation() for e in self.smem}
        for a in allocs.values():
            allocator.add(a)
        if self.tmem_ptr is not None:
            allocator.add_tmem_ptr(allocs[self.tmem_ptr])
        for p in self.pipelines:
            allocator.add_resource(_PipelineResource(p.name, _PipelineConfig(p.stages)))
        for g in self.pipeline_groups:
            allocator.add_pipeline_group(_PipelineGroup(g.name, _PipelineConfig(g.stages), g.barriers_per_stage))
        for phases in self.smem_aliases:
            allocator.add_alias_group([[allocs[n] for n in phase] for phase in phases])
        return allocator

    def _declare_tmem(self, allocator: TmemAllocator) -> TmemAllocator:
        allocs = {e.name: e.allocation() for e in self.tmem}
        for a in allocs.values():
            allocator.add(a)
        for phases in self.tmem_aliases:
            allocator.add_alias_group([[allocs[n] for n in phase] for phase in phases])
        return allocator


# -- reading -----------------------------------------------------------------------


def load_layout(path: str | Path) -> LayoutSpec:
    """Read a ``.toml`` or ``.json`` layout file (:class:`LayoutFileError` if bad)."""
    p = Path(path)
    fmt = _format_of(p)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise LayoutFileError(f"cannot read the file: {exc.strerror or exc}", source=str(p)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start].decode("utf-8", "replace")
        line, col = _line_col(before, len(before))
        raise LayoutFileError(f"not UTF-8 text ({exc.reason})", source=str(p), line=line, column=col) from None
    return parse_layout(text, format=fmt, source=str(p))


def parse_layout(text: str, *, format: FileFormat = "toml", source: str = "<string>") -> LayoutSpec:
    """Parse layout-file text; ``source`` names it in error messages."""
    if format == "toml":
        data = _parse_toml(text, source)
        locate: _TomlLocator | _JsonLocator = _TomlLocator(text)
    elif format == "json":
        data = _parse_json(text, source)
        locate = _JsonLocator(text)
    else:
        raise ValueError(f"layout file format must be 'toml' or 'json', got {format!r}")
    return _Reader(data, source, locate).spec()


def _format_of(path: Path) -> FileFormat:
    suffix = path.suffix.lower()
    if suffix == ".toml":
        return "toml"
    if suffix == ".json":
        return "json"
    raise LayoutFileError(
        f"unsupported layout file extension {suffix or '(none)'!r}; use .toml or .json", source=str(path)
    )


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


_TOML_POS = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")
_TOML_END = re.compile(r"\s*\(at end of document\)$")


def _parse_toml(text: str, source: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        line = col = None
        if m := _TOML_POS.search(msg):
            line, col = int(m.group(1)), int(m.group(2))
            msg = msg[: m.start()]
        elif m := _TOML_END.search(msg):
            line, col = _line_col(text, len(text))
            msg = msg[: m.start()] + " at end of file"
        raise LayoutFileError(f"TOML syntax error: {msg}", source=source, line=line, column=col) from None


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _parse_json(text: str, source: str) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise LayoutFileError(
            f"JSON syntax error: {exc.msg}", source=source, line=exc.lineno, column=exc.colno
        ) from None
    except _DuplicateKey as exc:
        # JSON would keep the last value silently; TOML refuses, and so do we
        hits = list(re.finditer(re.escape(json.dumps(exc.key)) + r"\s*:", text))
        line, col = _line_col(text, hits[1].start()) if len(hits) > 1 else (None, None)
        raise LayoutFileError(f"duplicate key {exc.key!r} in one object", source=source, line=line, column=col) from None
    except ValueError as exc:
        raise LayoutFileError(f"JSON syntax error: {exc}", source=source) from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


class _TomlLocator:
    """Best-effort line/column of a key path in TOML text (tables and arrays of tables)."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()

    def _headers(self) -> list[tuple[int, str]]:
        out = []
        for i, line in enumerate(self.lines):
            m = re.match(r"\s*\[\[?\s*([A-Za-z0-9_\-\"' .]+?)\s*\]\]?", line)
            if m:
                out.append((i, m.group(1).strip("\"' ")))
        return out

    def _find_key(self, key: str, start: int, stop: int) -> tuple[int, int] | None:
        pattern = re.compile(r"\s*[\"']?" + re.escape(key) + r"[\"']?\s*=")
        for i in range(start, min(stop, len(self.lines))):
            if pattern.match(self.lines[i]):
                return i + 1, self.lines[i].index(key) + 1
        return None

    def __call__(self, path: KeyPath) -> tuple[int, int] | None:
        if not path:
            return None
        headers = self._headers()
        first_header = headers[0][0] if headers else len(self.lines)
        if len(path) == 1 or not isinstance(path[1], int):
            return self._find_key(str(path[0]), 0, first_header)
        section, index = str(path[0]), path[1]
        own = [i for i, name in headers if name == section]
        if index >= len(own):
            return self._find_key(section, 0, first_header)  # inline array
        start = own[index]
        stop = next((i for i, _ in headers if i > start), len(self.lines))
        if len(path) > 2:
            found = self._find_key(str(path[2]), start + 1, stop)
            if found:
                return found
        return start + 1, self.lines[start].index("[") + 1


class _JsonLocator:
    """Line/column of every key and array element of (valid) JSON text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._positions: dict[KeyPath, int] | None = None

    def __call__(self, path: KeyPath) -> tuple[int, int] | None:
        if self._positions is None:
            self._positions = _json_positions(self.text)
        while path:
            if path in self._positions:
                return _line_col(self.text, self._positions[path])
            path = path[:-1]
        return None


def _json_positions(text: str) -> dict[KeyPath, int]:
    positions: dict[KeyPath, int] = {}
    stack: list[list[Any]] = []  # [kind, path, key or index, expecting_key]
    i, n = 0, len(text)
    string_re = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)

    def value_starts(at: int) -> tuple[Any, ...] | None:
        if not stack:
            return ()
        frame = stack[-1]
        if frame[0] == "array":
            frame[2] += 1
            path = (*frame[1], frame[2])
            positions[path] = at
            return path
        return (*frame[1], frame[2])

    while i < n:
        c = text[i]
        if c in " \t\r\n,:":
            i += 1
            continue
        if c == '"':
            m = string_re.match(text, i)
            end = m.end() if m else n
            if stack and stack[-1][0] == "object" and stack[-1][3]:
                key = json.loads(text[i:end])
                stack[-1][2] = key
                stack[-1][3] = False
                positions[tuple(stack[-1][1]) + (key,)] = i
            else:
                value_starts(i)
                if stack and stack[-1][0] == "object":
                    stack[-1][3] = True
            i = end
            continue
        if c in "{[":
            path = value_starts(i)
            stack.append(["object" if c == "{" else "array", path or (), -1, c == "{"])
            i += 1
            continue
        if c in "}]":
            stack.pop()
            if stack and stack[-1][0] == "object":
                stack[-1][3] = True
            i += 1
            continue
        j = i
        while j < n and text[j] not in " \t\r\n,:]}":
            j += 1
        value_starts(i)
        if stack and stack[-1][0] == "object":
            stack[-1][3] = True
        i = j
    return positions


_TOP_KEYS = ("version", "name", "arch", "tmem_ptr", "smem", "pipeline", "pipeline_group", "smem_alias", "tmem", "tmem_alias")
_SMEM_KEYS = ("name", "size", "dtype", "count", "align")
_TMEM_KEYS = ("name", "columns")
_PIPELINE_KEYS = ("name", "stages")
_GROUP_KEYS = ("name", "stages", "members", "barriers_per_stage")
_ALIAS_KEYS = ("phases",)
# what the core calls a field -> the layout-file key
_CORE_FIELDS = {"size_bytes": "size", "alignment": "align", "count": "count", "dtype": "dtype", "num_columns": "columns", "num_stages": "stages"}


def _key_text(path: KeyPath) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


class _Reader:
    """Checks the parsed data against the schema and the core's own rules."""

    def __init__(self, data: Any, source: str, locate: Any) -> None:
        self.data = data
        self.source = source
        self.locate = locate

    def fail(self, path: KeyPath, message: str) -> LayoutFileError:
        pos = self.locate(path) if path else None
        line, col = pos if pos else (None, None)
        return LayoutFileError(message, source=self.source, line=line, column=col, key=_key_text(path) or None)

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
        return value

    def integer(self, value: Any, path: KeyPath) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(path, f"expected an integer, got {_describe(value)}")
        return value

    def optional(self, table: dict[str, Any], path: KeyPath, key: str, check: Any, default: Any) -> Any:
        return check(table[key], (*path, key)) if key in table else default

    def unique(self, names: Iterable[tuple[KeyPath, str]], what: str) -> None:
        seen: dict[str, KeyPath] = {}
        for path, name in names:
            if name in seen:
                raise self.fail((*path, "name"), f"duplicate {what} name {name!r} (first at {_key_text(seen[name])})")
            seen[name] = path

    def core(self, path: KeyPath, build: Any) -> Any:
        """Run a core constructor; its error is reported at the key it names."""
        try:
            return build()
        except (TypeError, ValueError) as exc:
            message = str(exc)
            key = next((k for field, k in _CORE_FIELDS.items() if re.search(rf"\b{field}\b", message)), None)
            raise self.fail((*path, key) if key else path, message) from None

    # -- the schema -------------------------------------------------------------------

    def spec(self) -> LayoutSpec:
        top = self.table(self.data, (), _TOP_KEYS)
        version = self.optional(top, (), "version", self.integer, SCHEMA_VERSION)
        if version != SCHEMA_VERSION:
            raise self.fail(("version",), f"unsupported layout file version {version}; this smemviz reads {SCHEMA_VERSION}")
        name = self.optional(top, (), "name", self.string, None)
        arch = self.optional(top, (), "arch", self.string, None)
        if arch is not None:
            arch = self.core(("arch",), lambda: hardware.get_arch(arch).name)

        smem = self.smem_entries()
        pipelines, groups = self.pipelines()
        tmem = self.tmem_entries()
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
        )
        self.declare(spec)
        return spec

    def smem_entries(self) -> tuple[SmemEntry, ...]:
        entries = []
        for path, t in self.array_of_tables("smem", _SMEM_KEYS):
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
            )
            allocation = self.core(path, entry.allocation)
            entries.append((path, replace(entry, size=allocation.size_bytes, dtype=allocation.dtype_name)))
        self.unique(((p, e.name) for p, e in entries), "[[smem]]")
        return tuple(e for _, e in entries)

    def tmem_entries(self) -> tuple[TmemEntry, ...]:
        entries = []
        for path, t in self.array_of_tables("tmem", _TMEM_KEYS):
            name = self.string(self.required(t, path, "name"), (*path, "name"))
            columns = self.integer(self.required(t, path, "columns"), (*path, "columns"))
            entry = TmemEntry(name, columns)
            self.core(path, entry.allocation)
            entries.append((path, entry))
        self.unique(((p, e.name) for p, e in entries), "[[tmem]]")
        return tuple(e for _, e in entries)

    def pipelines(self) -> tuple[tuple[PipelineEntry, ...], tuple[PipelineGroupEntry, ...]]:
        named: list[tuple[KeyPath, str]] = []
        pipelines = []
        for path, t in self.array_of_tables("pipeline", _PIPELINE_KEYS):
            name = self.string(self.required(t, path, "name"), (*path, "name"))
            stages = self.positive(self.required(t, path, "stages"), (*path, "stages"))
            pipelines.append(PipelineEntry(name, stages))
            named.append((path, name))
        groups = []
        for path, t in self.array_of_tables("pipeline_group", _GROUP_KEYS):
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
        for path, t in self.array_of_tables(key, _ALIAS_KEYS):
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
        smem = SmemAllocator()
        allocs = {e.name: e.allocation() for e in spec.smem}
        for a in allocs.values():
            smem.add(a)
        if spec.tmem_ptr is not None:
            self.core(("tmem_ptr",), lambda: smem.add_tmem_ptr(allocs[spec.tmem_ptr]))
        for i, phases in enumerate(spec.smem_aliases):
            self.core(("smem_alias", i, "phases"), lambda phases=phases: smem.add_alias_group([[allocs[n] for n in p] for p in phases]))
        tmem = TmemAllocator()
        tallocs = {e.name: e.allocation() for e in spec.tmem}
        for t in tallocs.values():
            tmem.add(t)
        for i, phases in enumerate(spec.tmem_aliases):
            self.core(("tmem_alias", i, "phases"), lambda phases=phases: tmem.add_alias_group([[tallocs[n] for n in p] for p in phases]))


def _describe(value: Any) -> str:
    kinds = {bool: "boolean", int: "integer", float: "float", str: "string", list: "array", dict: "table"}
    kind = kinds.get(type(value), type(value).__name__)
    text = repr(value)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{kind} {text}"


def _names(names: Iterable[str]) -> str:
    listed = sorted(names)
    return ", ".join(repr(n) for n in listed[:12]) + (" ..." if len(listed) > 12 else "") if listed else "(none)"
