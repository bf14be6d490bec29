"""MiniMalloc's CSV files (github.com/google/minimalloc): buffers with half-open
lifetimes in any integer time unit, read into an allocator the solver lays out.

The format, as MiniMalloc reads it: a header naming the columns, then one
buffer per line. ``id``, ``lower``, ``upper`` and ``size`` are required
(``buffer``/``buffer_id`` may name the id, ``begin``/``start`` the lower end,
and ``end`` an upper end that is inclusive); ``alignment`` is optional (1 when
absent) and ``hint`` is ignored. The buffer is live from ``lower`` up to, not
including, ``upper``. Lifetimes with ``gaps`` are refused: smemviz reads none.

    s = smemviz.read_minimalloc("benchmarks/challenging/A.1048576.csv")
    s.compute_layout(fit=1048576)       # the capacity, as the file name gives it
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

__all__ = ["MiniMallocBuffer", "MiniMallocFormatError", "parse_minimalloc", "read_minimalloc", "MAX_ROWS"]

# a file of more buffers than this is refused before anything is built (the
# solver's own limit, 4,096 stretches of time, is reached well before)
MAX_ROWS = 1 << 20
MAX_FILE_BYTES = 256 << 20
_INT = re.compile(r"[+-]?[0-9]{1,19}")
_ALIASES = {"buffer": "id", "buffer_id": "id", "begin": "lower", "start": "lower", "end": "upper"}
_REQUIRED = ("id", "lower", "upper", "size")
_KNOWN = {*_REQUIRED, "alignment", "hint"}


class MiniMallocFormatError(ValueError):
    """A MiniMalloc CSV that cannot be read: the message names the file, the line and the column."""


@dataclass(frozen=True)
class MiniMallocBuffer:
    """One line of a MiniMalloc CSV: live in ``[lower, upper)``."""

    id: str
    lower: int
    upper: int
    size: int
    alignment: int = 1


def parse_minimalloc(text: str, where: str = "<csv>") -> tuple[MiniMallocBuffer, ...]:
    """The buffers of a MiniMalloc CSV, checked; raises :class:`MiniMallocFormatError`."""
    lines = [(k + 1, line.rstrip("\r")) for k, line in enumerate(text.split("\n"))]
    lines = [(k, line) for k, line in lines if line.strip()]
    if not lines:
        raise MiniMallocFormatError(f"{where}: empty; expected a header such as 'id,lower,upper,size'")
    header_line, header = lines[0]
    columns = [_ALIASES.get(c.strip().lower(), c.strip().lower()) for c in header.split(",")]
    inclusive = "end" in (c.strip().lower() for c in header.split(","))
    _check_header(columns, where, header_line)
    if len(lines) - 1 > MAX_ROWS:
        raise MiniMallocFormatError(f"{where}: {len(lines) - 1:,} buffers, at most {MAX_ROWS:,}")
    at = {c: k for k, c in enumerate(columns)}
    out = []
    seen: dict[str, int] = {}
    for number, line in lines[1:]:
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != len(columns):
            raise MiniMallocFormatError(
                f"{where} line {number}: {len(fields)} fields, the header names {len(columns)}: {line[:80]!r}"
            )
        ident = fields[at["id"]]
        if not ident:
            raise MiniMallocFormatError(f"{where} line {number}: empty id")
        if ident in seen:
            raise MiniMallocFormatError(f"{where} line {number}: id {ident!r} again (first on line {seen[ident]})")
        seen[ident] = number

        def number_in(column: str, default: int | None = None, _fields: list[str] = fields, _line: int = number) -> int:
            if column not in at:
                assert default is not None
                return default
            return _int(_fields[at[column]], f"{where} line {_line}, column {column!r}")

        lower, upper, size = number_in("lower"), number_in("upper") + (1 if inclusive else 0), number_in("size")
        alignment = number_in("alignment", 1)
        _check_row(ident, lower, upper, size, alignment, f"{where} line {number}")
        out.append(MiniMallocBuffer(ident, lower, upper, size, alignment))
    return tuple(out)


def _check_header(columns: list[str], where: str, line: int) -> None:
    dup = sorted({c for c in columns if columns.count(c) > 1})
    if dup:
        raise MiniMallocFormatError(f"{where} line {line}: column {dup[0]!r} named twice")
    missing = [c for c in _REQUIRED if c not in columns]
    if missing:
        raise MiniMallocFormatError(
            f"{where} line {line}: the header lacks {', '.join(map(repr, missing))} "
            f"(it names {', '.join(map(repr, columns))}; required: id,lower,upper,size)"
        )
    if "gaps" in columns:
        raise MiniMallocFormatError(f"{where} line {line}: lifetimes with gaps are not read (column 'gaps')")
    unknown = [c for c in columns if c not in _KNOWN]
    if unknown:
        raise MiniMallocFormatError(
            f"{where} line {line}: unknown column {unknown[0]!r}; known: {', '.join(sorted(_KNOWN))}"
        )


def _int(text: str, where: str) -> int:
    if not _INT.fullmatch(text):
        raise MiniMallocFormatError(f"{where}: expected an integer (at most 19 digits), got {text[:40]!r}")
    return int(text)


def _check_row(ident: str, lower: int, upper: int, size: int, alignment: int, where: str) -> None:
    from ..solver._times import MAX_TIME

    if lower < 0 or upper > MAX_TIME:
        raise MiniMallocFormatError(f"{where} (id {ident!r}): lifetime [{lower}, {upper}) outside 0..2**62")
    if upper <= lower:
        raise MiniMallocFormatError(f"{where} (id {ident!r}): upper {upper} must be above lower {lower}")
    if size < 0:
        raise MiniMallocFormatError(f"{where} (id {ident!r}): size {size} is negative")
    if alignment <= 0 or alignment & (alignment - 1):
        raise MiniMallocFormatError(f"{where} (id {ident!r}): alignment {alignment} is not a positive power of two")


def _text_of(source: str | os.PathLike[str] | IO[str]) -> tuple[str, str]:
    if isinstance(source, io.TextIOBase) or hasattr(source, "read"):
        text = source.read(MAX_FILE_BYTES + 1)
        where = str(getattr(source, "name", "<csv>"))
    else:
        path = Path(source)
        where = str(path)
        if path.stat().st_size > MAX_FILE_BYTES:
            raise MiniMallocFormatError(f"{where}: {path.stat().st_size:,} bytes, at most {MAX_FILE_BYTES:,}")
        text = path.read_text(encoding="utf-8")
    if len(text) > MAX_FILE_BYTES:
        raise MiniMallocFormatError(f"{where}: more than {MAX_FILE_BYTES:,} characters")
    return text, where


def read_minimalloc(source: str | os.PathLike[str] | IO[str], arch: Any = None) -> Any:
    """An :class:`~smemviz.SmemAllocator` holding the buffers of a MiniMalloc CSV
    (a path or an open text file), each live in ``range(lower, upper)``, not yet computed.

    Its time values are taken as they are: the solver cuts time where lifetimes
    start and end. Call ``compute_layout(fit=capacity)`` to ask for a layout
    within the capacity (MiniMalloc's question), or ``compute_layout()`` for the
    smallest it finds within its node budget.
    """
    text, where = _text_of(source)
    return allocator_of(parse_minimalloc(text, where), arch)


def allocator_of(buffers: Iterable[MiniMallocBuffer], arch: Any = None) -> Any:
    """The allocator for buffers already read."""
    from ..layout import SmemAllocation, SmemAllocator

    s = SmemAllocator(arch=arch)
    for b in buffers:
        s.add(SmemAllocation(b.id, b.size, alignment=b.alignment), live=range(b.lower, b.upper))
    return s
