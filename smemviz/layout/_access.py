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
from typing import Any, TypeAlias

from .. import _limits, hardware
from .._dtypes import dtype_name, dtype_width
from .._errors import DeclarationError, DeclarationTypeError
from .._smem_instructions import INSTRUCTIONS, canonical_instruction, instruction_names

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


def instruction_spellings() -> frozenset[str]:
    """The instruction spellings an access may name (long PTX forms and short ones)."""
    return frozenset(INSTRUCTIONS)


def _is_matrix(instruction: str) -> bool:
    return instruction.startswith(("ldmatrix", "stmatrix"))


IntTuple: TypeAlias = "int | tuple[IntTuple, ...]"

_COMPOSED = re.compile(r"^\s*S<\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*>\s*o\s*(?:(\d+)\s*o\s*)?(.*)$", re.DOTALL)
_TOKEN = re.compile(r"\s*(\(|\)|,|-?\d+)")


class LayoutBoundError(ValueError):
    """Layout text past one of the bounds of :mod:`smemviz._limits` (not a syntax error)."""


@dataclass(frozen=True)
class LayoutText:
    """CuTe layout text read: ``S<B,M,S> o OFFSET o shape:stride``, the swizzle optional."""

    swizzle: tuple[int, int, int] | None
    offset: int
    shape: IntTuple
    stride: IntTuple


def _int(token: str, what: str) -> int:
    problem = _limits.digits_problem(token)
    if problem:
        raise LayoutBoundError(f"{what}: {problem}")
    return int(token)


def read_int_tuple(text: str, what: str, *, signed: bool = True) -> IntTuple:
    """CuTe's IntTuple (``64`` or ``((8,8),(8,4))``), read without recursion and within the
    bounds: nesting, integers per tuple, 64-bit values. ``ValueError`` saying what is wrong."""
    shown_text = _limits.shorten(text.strip())
    tokens: list[str] = []
    pos, text = 0, text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or (not signed and m.group(1).startswith("-")):
            raise ValueError(f"cannot read {what} {shown_text} at character {pos}")
        tokens.append(m.group(1))
        pos = m.end()
    stack: list[list[IntTuple]] = []
    done: IntTuple | None = None
    expect_item, count = True, 0
    for tok in tokens:
        if done is not None:
            raise ValueError(f"{what} {shown_text}: text after the end")
        item: IntTuple
        if expect_item:
            if tok == "(":
                if len(stack) >= _limits.MAX_NESTING:
                    raise LayoutBoundError(f"{what} {shown_text} nests more than {_limits.MAX_NESTING} levels deep")
                stack.append([])
                continue
            if tok in (")", ","):
                raise ValueError(f"{what} {shown_text}: unexpected {tok!r}")
            count += 1
            if count > _limits.MAX_MODES:
                raise LayoutBoundError(f"{what} {shown_text} holds more than {_limits.MAX_MODES} integers")
            item = _int(tok, f"{what} {shown_text}")
        elif tok == "," and stack:
            expect_item = True
            continue
        elif tok == ")" and stack:
            item = tuple(stack.pop())
        else:
            raise ValueError(f"{what} {shown_text}: expected ',' or ')'")
        if stack:
            stack[-1].append(item)
            expect_item = False
        else:
            done = item
    if done is None:
        raise ValueError(f"{what} {shown_text} ends early")
    return done


def read_layout_text(text: str, *, signed: bool = True) -> LayoutText:
    """CuTe layout text, read within the bounds of :mod:`smemviz._limits` (its length, nesting,
    integers, swizzle bits); ``ValueError`` (:class:`LayoutBoundError` for a bound) otherwise."""
    if len(text) > _limits.MAX_LAYOUT_TEXT:
        raise LayoutBoundError(f"layout text of {len(text)} characters; at most {_limits.MAX_LAYOUT_TEXT}")
    swizzle = None
    offset = 0
    m = _COMPOSED.match(text)
    if m:
        b, mb, s = (_int(g, "swizzle S<B,M,S>") for g in m.group(1, 2, 3))
        problem = _limits.swizzle_problem(b, mb, s)
        if problem:
            raise LayoutBoundError(f"swizzle S<{b},{mb},{s}>: {problem}")
        swizzle = (b, mb, s)
        offset = _int(m.group(4) or "0", "layout offset")
        text = m.group(5)
    if text.count(":") != 1:
        raise ValueError(f"layout {_limits.shorten(text)} is not CuTe's 'shape:stride' form, e.g. '(128,64):(64,1)'")
    shape_text, stride_text = text.split(":")
    shape = read_int_tuple(shape_text, "layout shape", signed=signed)
    stride = read_int_tuple(stride_text, "layout stride", signed=signed)
    return LayoutText(swizzle, offset, shape, stride)


def _flat(t: IntTuple) -> list[int]:
    """The integers of ``t`` in order (without recursion: ``t`` may come from anywhere)."""
    out: list[int] = []
    stack: list[IntTuple] = [t]
    while stack:
        x = stack.pop()
        if isinstance(x, tuple):
            stack.extend(reversed(x))
        else:
            out.append(x)
    return out


def tile_elements(shape: IntTuple) -> int:
    """Elements of one stage's tile: the first two top-level modes (a third is the stages)."""
    modes = shape[:2] if isinstance(shape, tuple) else (shape,)
    n = 1
    for x in _flat(modes):
        n *= x
    return n


def layout_text_problem(text: str) -> str | None:
    """Why ``text`` is not CuTe's ``shape:stride`` (with an optional ``S<B,M,S> o`` swizzle) within
    the bounds of :mod:`smemviz._limits`, or None."""
    try:
        lt = read_layout_text(text, signed=False)
    except LayoutBoundError as exc:
        return str(exc)
    except ValueError:
        m = _COMPOSED.match(text)
        body = m.group(5) if m else text
        if body.count(":") != 1:
            return "expected CuTe's 'shape:stride' form, e.g. '(128,64):(64,1)'"
        shape, stride = body.split(":")
        part, what = (shape, "shape") if not _reads(shape) else (stride, "stride")
        return f"its {what} {_limits.shorten(part.strip())} is not an integer or a parenthesised tuple of integers"
    elements = tile_elements(lt.shape)
    if elements > _limits.MAX_TILE_ELEMENTS:
        return (
            f"its tile holds {_limits.int_size(elements)} elements; at most {_limits.MAX_TILE_ELEMENTS} "
            f"({_limits.MAX_INSTRUCTIONS} warp instructions of at least {_limits.MIN_ELEMENTS_PER_INSTRUCTION})"
        )
    return None


def _reads(part: str) -> bool:
    """``part`` reads as an IntTuple (of the two parts, a message names the one that does not)."""
    try:
        read_int_tuple(part, "part", signed=False)
    except ValueError:
        return False
    return True


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
        return INSTRUCTIONS[self.instruction.strip().lower()].name

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
    where = f"access of {_limits.shorten(region)}" if region is not None else "access"
    if region is not None and (not isinstance(region, str) or not region):
        raise _fail(
            "access", "region", f"'region' must name a region, got {_limits.shorten(region)}", kind=DeclarationTypeError
        )
    instruction = acc.instruction
    if not isinstance(instruction, str):
        raise _fail(
            where,
            "instruction",
            f"'instruction' must be a PTX spelling such as 'stmatrix.x4', "
            f"not {type(instruction).__name__} {_limits.shorten(instruction)}",
            kind=DeclarationTypeError,
            allocation=region,
        )
    if canonical_instruction(instruction) is None:
        known = ", ".join(sorted(instruction_names()))
        raise _fail(
            where,
            "instruction",
            f"unknown instruction {_limits.shorten(instruction)}; the bank model knows {known}",
            allocation=region,
        )
    _check_tile(acc, where, region)
    if acc.swizzle not in SWIZZLE_CHOICES:
        raise _fail(
            where,
            "swizzle",
            f"'swizzle' must be one of {', '.join(map(repr, SWIZZLE_CHOICES))}, got {_limits.shorten(acc.swizzle)}",
            allocation=region,
        )
    _check_pair(acc.warps, "warps", where, region)
    try:
        _limits.check_warps(acc.warps, "'warps'")
    except ValueError as exc:
        raise _fail(where, "warps", str(exc), allocation=region) from None
    if acc.threads is not None:
        _check_threads(acc, where, region)
    stage = acc.stage
    if not isinstance(stage, int) or isinstance(stage, bool) or not 0 <= stage <= _limits.INT64_MAX:
        raise _fail(
            where,
            "stage",
            f"'stage' must be a non-negative 64-bit integer, got {_limits.shorten(stage)}",
            allocation=region,
        )


def _check_tile(acc: SmemAccess, where: str, region: Any) -> None:
    """The tile's layout text and element type, when given."""
    for key in ("layout", "dtype"):
        value = getattr(acc, key)
        if value is not None and not isinstance(value, str):
            raise _fail(
                where,
                key,
                f"'{key}' must be text, got {type(value).__name__} {_limits.shorten(value)}",
                kind=DeclarationTypeError,
                allocation=region,
            )
        if isinstance(value, str) and (not value.strip() or not value.isprintable()):
            raise _fail(
                where,
                key,
                f"'{key}' must be printable, non-empty text, got {_limits.shorten(value)}",
                allocation=region,
            )
    if acc.layout is not None:
        problem = layout_text_problem(acc.layout)
        if problem:
            raise _fail(where, "layout", f"layout {_limits.shorten(acc.layout)}: {problem}", allocation=region)
    if acc.dtype is not None and len(acc.dtype) > _limits.MAX_DTYPE_TEXT:
        raise _fail(where, "dtype", f"{_limits.shorten(acc.dtype)} is no dtype name (too long)", allocation=region)
    if acc.dtype is not None:
        try:
            bits = dtype_width(acc.dtype)
        except (TypeError, ValueError) as exc:
            raise _fail(where, "dtype", str(exc), allocation=region) from None
        if bits % 8:
            raise _fail(
                where,
                "dtype",
                f"{_limits.shorten(acc.dtype)} is {bits}-bit: the bank analysis takes whole-byte elements",
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
            where,
            key,
            f"'{key}' must be two positive integers [rows, columns], got {_limits.shorten(value)}",
            allocation=region,
        )


def access_from_dict(data: Mapping[str, Any], region: str | None = None) -> SmemAccess:
    """An :class:`SmemAccess` from its plain-data form (a layout file's ``access`` table, a plan's
    JSON), refusing unknown keys and bad values; ``region`` names it when the table does not."""
    if not isinstance(data, Mapping):
        raise DeclarationTypeError(
            f"access of {_limits.shorten(region)}: an access is a table of {', '.join(ACCESS_KEYS)}, not {type(data).__name__}",
            allocation=region,
            field="access",
        )
    name = data.get("region", region)
    where = f"access of {_limits.shorten(name)}" if name else "access"
    if region is not None and "region" in data and data["region"] != region:
        raise _fail(
            where,
            "region",
            f"declared on {_limits.shorten(region)} but names region {_limits.shorten(data['region'])}",
            allocation=region,
        )
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
            if item.region is not None and item.region != allocation and not _follows(item):
                raise DeclarationError(
                    f"access of {_limits.shorten(allocation)}: declared on {_limits.shorten(allocation)} but "
                    f"names region {_limits.shorten(item.region)}",
                    allocation=allocation,
                    field="access.region",
                )
            acc = item if item.region == allocation else _with_region(item, allocation)
        elif isinstance(item, str):
            acc = _following(SmemAccess(item, region=allocation))
        elif isinstance(item, Mapping):
            acc = access_from_dict(item, allocation)
            if "region" not in item:
                _following(acc)
        else:
            raise DeclarationTypeError(
                f"SMEM allocation {_limits.shorten(allocation)}: access must be an SmemAccess, a table or an "
                f"instruction spelling (or a list of them), got {type(item).__name__} {_limits.shorten(item)}",
                allocation=allocation,
                field="access",
            )
        if stages is not None and acc.stage >= stages:
            raise DeclarationError(
                f"access of {_limits.shorten(allocation)}: stage {acc.stage} does not exist; the allocation holds {stages} stage(s)",
                allocation=allocation,
                field="access.stage",
            )
        out.append(acc)
    return tuple(out)


def _with_region(acc: SmemAccess, region: str) -> SmemAccess:
    from dataclasses import replace

    return _following(replace(acc, region=region))


# A record whose region was filled in from its allocation (not written by the user) follows the
# allocation when it is renamed: allocations are mutable, and the name the user wrote is the new one.
_FOLLOWS = "_smemviz_follows_allocation"


def _following(acc: SmemAccess) -> SmemAccess:
    object.__setattr__(acc, _FOLLOWS, True)
    return acc


def _follows(acc: SmemAccess) -> bool:
    return bool(getattr(acc, _FOLLOWS, False))
