"""How a kernel's warps touch a region, as plain data that travels with the plan.

An :class:`SmemAccess` names the instruction, the tile's CuTe layout and dtype, the
swizzle and how a CTA's warps tile the region; declared on an allocation
(``SmemAllocation(..., access=...)``) it is kept on the plan (``LayoutPlan.accesses``),
written to the plan's JSON and read from layout files, so every consumer (lint, the
reports, the explorer) sees the same accesses. The bank analysis
(:mod:`smemviz.analysis.banks`) turns a record into wavefronts; this module only
checks that a record is one it could analyse, so a bad one is refused where it is
declared, naming the allocation.

    {"instruction": "stmatrix.x4", "layout": "(128,32):(32,1)", "dtype": "bf16",
     "swizzle": "64B", "warps": [8, 1]}

``threads`` ([rows, lanes per row]) applies to per-thread ld/st and cp.async only;
``stage`` picks a stage; ``layout``, ``dtype`` and ``swizzle`` default to the region's own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .. import hardware
from .._dtypes import dtype_name, dtype_width
from .._errors import DeclarationError, DeclarationTypeError

__all__ = [
    "SmemAccess",
    "ACCESS_KEYS",
    "SWIZZLE_CHOICES",
    "access_from_dict",
    "accesses_of",
    "instruction_spellings",
    "canonical_instruction",
]

ACCESS_KEYS = ("region", "instruction", "layout", "dtype", "swizzle", "warps", "threads", "stage")
# "region": the region's own mode; "none": no swizzle, whatever the region says
SWIZZLE_CHOICES = ("region", "none", *hardware.SWIZZLE_ATOM_BYTES)
WARP_LANES = 32


def _spellings() -> dict[str, str]:
    """Every PTX spelling of a shared-memory access the bank model is calibrated for -> its short form.

    The same set as the model's instruction table (a test holds them equal); kept here so the
    model room can refuse an unknown instruction at declaration without importing the analysis.
    """
    table: dict[str, str] = {}
    for kind in ("ld", "st"):
        for suffixes in (
            ("b8", "u8", "s8"),
            ("b16", "u16", "s16", "f16"),
            ("b32", "u32", "s32", "f32"),
            ("b64", "u64", "s64", "f64"),
            ("v2.b32", "v2.u32", "v2.s32", "v2.f32"),
            ("v4.b32", "v4.u32", "v4.s32", "v4.f32"),
        ):
            for s in suffixes:
                table[f"{kind}.shared.{s}"] = f"{kind}.shared.{suffixes[0]}"
    for kind in ("ldmatrix", "stmatrix"):
        for n in (1, 2, 4):
            for trans in ("", ".trans"):
                short = f"{kind}.x{n}{trans}"
                table[short] = short
                table[f"{kind}.sync.aligned.m8n8.x{n}{trans}.shared.b16"] = short
    for size in (4, 16):
        table[f"cp.async.ca.{size}"] = f"cp.async.ca.{size}"
        table[f"cp.async.ca.shared.global.{size}"] = f"cp.async.ca.{size}"
    return table


_SPELLINGS = _spellings()


def instruction_spellings() -> frozenset[str]:
    """The instruction spellings an access may name (long PTX forms and short ones)."""
    return frozenset(_SPELLINGS)


def canonical_instruction(instruction: str) -> str | None:
    """The short spelling of ``instruction``, ``None`` when it is not one the model knows."""
    return _SPELLINGS.get(instruction.strip().lower())


def _is_matrix(instruction: str) -> bool:
    return instruction.startswith(("ldmatrix", "stmatrix"))


_COMPOSED = re.compile(r"^\s*S<\d+,\d+,\d+>\s*o\s*(?:\d+\s*o\s*)?(.*)$", re.DOTALL)
_TOKEN = re.compile(r"\s*(\d+|[(),])")
_MAX_NESTING = 16  # deeper than any tile layout; bounds the walk over hostile text


def _int_tuple_ok(text: str) -> bool:
    """``text`` is an integer or a nested, parenthesised tuple of integers (CuTe's IntTuple)."""
    tokens: list[str] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            return False
        tokens.append(m.group(1))
        pos = m.end()

    def item(i: int, depth: int) -> int:  # the index after one item starting at i, -1 when none
        if i >= len(tokens) or depth > _MAX_NESTING:
            return -1
        if tokens[i].isdigit():
            return i + 1
        if tokens[i] != "(":
            return -1
        i = item(i + 1, depth + 1)
        while 0 <= i < len(tokens) and tokens[i] == ",":
            i = item(i + 1, depth + 1)
        return i + 1 if 0 <= i < len(tokens) and tokens[i] == ")" else -1

    return item(0, 0) == len(tokens)


def layout_text_problem(text: str) -> str | None:
    """Why ``text`` is not CuTe's ``shape:stride`` (with an optional ``S<B,M,S> o`` swizzle), or None."""
    m = _COMPOSED.match(text)
    body = m.group(1) if m else text
    if body.count(":") != 1:
        return "expected CuTe's 'shape:stride' form, e.g. '(128,64):(64,1)'"
    shape, stride = body.split(":")
    for part, what in ((shape, "shape"), (stride, "stride")):
        if not _int_tuple_ok(part):
            return f"its {what} {part.strip()!r} is not an integer or a parenthesised tuple of integers"
    return None


@dataclass(frozen=True)
class SmemAccess:
    """One access of a region by a CTA's warps: the instruction, the tile it covers, and how
    the warps share it. ``region`` is filled in from the allocation it is declared on."""

    instruction: str
    layout: str | None = None  # CuTe shape:stride in elements; None: the region's own
    dtype: str | None = None  # None: the region's own
    swizzle: str = "region"  # "region", "none" (None is taken for it), "32B", "64B", "128B"
    warps: tuple[int, int] = (1, 1)  # (rows, columns) of warps over the grid of atom tiles
    threads: tuple[int, int] | None = None  # per-thread ld/st and cp.async: (rows, lanes per row)
    stage: int = 0
    region: str | None = None

    def __post_init__(self) -> None:
        # plain data: lists (JSON, TOML) become tuples, a CuTe DSL type its short name ("bf16")
        for key in ("warps", "threads"):
            if isinstance(getattr(self, key), list):
                object.__setattr__(self, key, tuple(getattr(self, key)))
        if self.dtype is not None and not isinstance(self.dtype, str) and hasattr(self.dtype, "width"):
            object.__setattr__(self, "dtype", dtype_name(self.dtype))
        if self.swizzle is None:
            object.__setattr__(self, "swizzle", "none")
        _check(self, self.region)

    @property
    def short_instruction(self) -> str:
        """The instruction's short spelling ("stmatrix.x4")."""
        return _SPELLINGS[self.instruction.strip().lower()]

    @property
    def label(self) -> str:
        """How views name the access: the instruction, then what sets it apart."""
        extra = []
        if self.swizzle != "region":
            extra.append(f"swizzle {self.swizzle}")
        if self.stage:
            extra.append(f"stage {self.stage}")
        if self.warps != (1, 1):
            extra.append(f"{self.warps[0]}x{self.warps[1]} warps")
        return self.short_instruction + (f" ({', '.join(extra)})" if extra else "")

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON: keys at their defaults are left out."""
        d: dict[str, Any] = {"region": self.region, "instruction": self.instruction}
        for key in ("layout", "dtype"):
            if getattr(self, key) is not None:
                d[key] = getattr(self, key)
        if self.swizzle != "region":
            d["swizzle"] = self.swizzle
        if self.warps != (1, 1):
            d["warps"] = list(self.warps)
        if self.threads is not None:
            d["threads"] = list(self.threads)
        if self.stage:
            d["stage"] = self.stage
        return d


def _fail(where: str, key: str, message: str, *, kind: type = DeclarationError, allocation: Any = None) -> Exception:
    return kind(f"{where}: {message}", allocation=allocation, field=f"access.{key}")


def _check(acc: SmemAccess, region: Any) -> None:
    """Refuse a record the analysis could not take, naming the allocation and the key."""
    where = f"access of {region!r}" if region is not None else "access"
    if region is not None and (not isinstance(region, str) or not region):
        raise _fail("access", "region", f"'region' must name a region, got {region!r}", kind=DeclarationTypeError)
    instruction = acc.instruction
    if not isinstance(instruction, str):
        raise _fail(
            where,
            "instruction",
            f"'instruction' must be a PTX spelling such as 'stmatrix.x4', "
            f"not {type(instruction).__name__} {instruction!r}",
            kind=DeclarationTypeError,
            allocation=region,
        )
    if canonical_instruction(instruction) is None:
        known = ", ".join(sorted({v for v in _SPELLINGS.values()}))
        raise _fail(
            where,
            "instruction",
            f"unknown instruction {instruction!r}; the bank model knows {known}",
            allocation=region,
        )
    _check_tile(acc, where, region)
    if acc.swizzle not in SWIZZLE_CHOICES:
        raise _fail(
            where,
            "swizzle",
            f"'swizzle' must be one of {', '.join(map(repr, SWIZZLE_CHOICES))}, got {acc.swizzle!r}",
            allocation=region,
        )
    _check_pair(acc.warps, "warps", where, region)
    if acc.threads is not None:
        _check_threads(acc, where, region)
    stage = acc.stage
    if not isinstance(stage, int) or isinstance(stage, bool) or stage < 0:
        raise _fail(where, "stage", f"'stage' must be a non-negative integer, got {stage!r}", allocation=region)


def _check_tile(acc: SmemAccess, where: str, region: Any) -> None:
    """The tile's layout text and element type, when given."""
    for key in ("layout", "dtype"):
        value = getattr(acc, key)
        if value is not None and not isinstance(value, str):
            raise _fail(
                where,
                key,
                f"'{key}' must be text, got {type(value).__name__} {value!r}",
                kind=DeclarationTypeError,
                allocation=region,
            )
        if isinstance(value, str) and (not value.strip() or not value.isprintable()):
            raise _fail(where, key, f"'{key}' must be printable, non-empty text, got {value!r}", allocation=region)
    if acc.layout is not None:
        problem = layout_text_problem(acc.layout)
        if problem:
            raise _fail(where, "layout", f"layout {acc.layout!r}: {problem}", allocation=region)
    if acc.dtype is not None:
        try:
            bits = dtype_width(acc.dtype)
        except (TypeError, ValueError) as exc:
            raise _fail(where, "dtype", str(exc), allocation=region) from None
        if bits % 8:
            raise _fail(
                where,
                "dtype",
                f"{acc.dtype!r} is {bits}-bit: the bank analysis takes whole-byte elements",
                allocation=region,
            )


def _check_threads(acc: SmemAccess, where: str, region: Any) -> None:
    """``threads`` arranges a per-thread access's 32 lanes; matrix instructions place theirs."""
    assert acc.threads is not None
    _check_pair(acc.threads, "threads", where, region)
    if _is_matrix(acc.short_instruction):
        raise _fail(
            where,
            "threads",
            f"'threads' arranges the lanes of per-thread ld/st and cp.async; {acc.instruction} places its lanes itself",
            allocation=region,
        )
    if acc.threads[0] * acc.threads[1] != WARP_LANES:
        raise _fail(
            where,
            "threads",
            f"'threads' {list(acc.threads)} arranges {acc.threads[0] * acc.threads[1]} lanes; a warp has {WARP_LANES}",
            allocation=region,
        )


def _check_pair(value: Any, key: str, where: str, region: Any) -> None:
    if (
        not isinstance(value, tuple)
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value)
    ):
        raise _fail(
            where, key, f"'{key}' must be two positive integers [rows, columns], got {value!r}", allocation=region
        )


def access_from_dict(data: Mapping[str, Any], region: str | None = None) -> SmemAccess:
    """An :class:`SmemAccess` from its plain-data form (a layout file's ``access`` table, a plan's
    JSON), refusing unknown keys and bad values; ``region`` names it when the table does not."""
    if not isinstance(data, Mapping):
        raise DeclarationTypeError(
            f"access of {region!r}: an access is a table of {', '.join(ACCESS_KEYS)}, not {type(data).__name__}",
            allocation=region,
            field="access",
        )
    name = data.get("region", region)
    where = f"access of {name!r}" if name else "access"
    if region is not None and "region" in data and data["region"] != region:
        raise _fail(where, "region", f"declared on {region!r} but names region {data['region']!r}", allocation=region)
    unknown = sorted(str(k) for k in data if k not in ACCESS_KEYS)
    if unknown:
        raise _fail(
            where,
            unknown[0],
            f"unknown key(s) {', '.join(map(repr, unknown))}; known: {', '.join(ACCESS_KEYS)}",
            allocation=name,
        )
    if "instruction" not in data:
        raise _fail(where, "instruction", "missing 'instruction' (e.g. 'stmatrix.x4')", allocation=name)
    swizzle = data.get("swizzle", "region")
    return SmemAccess(
        instruction=data["instruction"],
        layout=data.get("layout"),
        dtype=data.get("dtype"),
        swizzle=swizzle,
        warps=data.get("warps", (1, 1)),
        threads=data.get("threads"),
        stage=data.get("stage", 0),
        region=name,
    )


def accesses_of(value: Any, allocation: str, *, stages: int | None = None) -> tuple[SmemAccess, ...]:
    """An allocation's ``access=``: one access (an :class:`SmemAccess`, a table, or an instruction
    spelling) or a list of them; each takes the allocation's name as its region."""
    if value is None:
        return ()
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    out = []
    for item in items:
        if isinstance(item, SmemAccess):
            if item.region is not None and item.region != allocation:
                raise DeclarationError(
                    f"access of {allocation!r}: declared on {allocation!r} but names region {item.region!r}",
                    allocation=allocation,
                    field="access.region",
                )
            acc = item if item.region == allocation else _with_region(item, allocation)
        elif isinstance(item, str):
            acc = SmemAccess(item, region=allocation)
        elif isinstance(item, Mapping):
            acc = access_from_dict(item, allocation)
        else:
            raise DeclarationTypeError(
                f"SMEM allocation {allocation!r}: access must be an SmemAccess, a table or an instruction "
                f"spelling (or a list of them), got {type(item).__name__} {item!r}",
                allocation=allocation,
                field="access",
            )
        if stages is not None and acc.stage >= stages:
            raise DeclarationError(
                f"access of {allocation!r}: stage {acc.stage} does not exist; the allocation holds {stages} stage(s)",
                allocation=allocation,
                field="access.stage",
            )
        out.append(acc)
    return tuple(out)


def _with_region(acc: SmemAccess, region: str) -> SmemAccess:
    from dataclasses import replace

    return replace(acc, region=region)
