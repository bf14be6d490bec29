"""Allocation declarations: what a kernel resource asks of SMEM and TMEM.

Allocations are mutable on purpose (``offset`` is filled in by
``compute_layout()``, as in CUTLASS), compare by identity and are validated
when made and again when a layout is computed.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from .._dtypes import dtype_bytes, dtype_name
from .._errors import DeclarationError, DeclarationTypeError
from .._names import check_name
from ._access import SmemAccess, accesses_of

__all__ = ["SmemAllocation", "TmemAllocation", "ResourceContext"]


# The largest size, count, alignment or column count taken: 64-bit signed, the
# limit layout files hold integers to, so the Python API refuses what a file
# could not say (2**70 B is no shared memory, and its arithmetic would be slow).
INT_MAX = 2**63 - 1


def _too_big(kind: str, name: Any, field: str, value: int) -> DeclarationError:
    return DeclarationError(
        f"{kind} allocation {name!r}: {field} {value:,} ({value.bit_length()} bits) does not fit in 64 bits "
        f"(at most {INT_MAX:,})",
        allocation=name,
        field=field,
    )


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _plain_int(value: Any) -> Any:
    """NumPy and other integral scalars become ``int``; anything else is left for
    the checks to refuse."""
    if not isinstance(value, (int, bool)) and isinstance(value, numbers.Integral):
        return int(value)
    return value


def check_smem_fields(alloc: SmemAllocation) -> None:
    """Raise ``TypeError``/``ValueError`` naming the allocation if a field is bad."""
    # fast path for the common untyped case: this runs for every allocation on
    # every add() and compute_layout()
    size, align, name = alloc.size_bytes, alloc.alignment, alloc.name
    if (
        alloc.dtype is None
        and type(size) is int
        and type(align) is int
        and type(name) is str
        and 0 < size <= INT_MAX
        and 0 < align <= INT_MAX
        and not align & (align - 1)
        and name
        and name.isprintable()
        and type(alloc.count) is int
        and 0 < alloc.count <= INT_MAX
    ):
        return
    _check_smem_fields_slowly(alloc)


def _check_smem_fields_slowly(alloc: SmemAllocation) -> None:
    check_name(alloc.name, "SMEM allocation")
    name = alloc.name
    if not _is_int(alloc.size_bytes):
        raise DeclarationTypeError(
            f"SMEM allocation {name!r}: size_bytes must be an int, got {alloc.size_bytes!r}",
            allocation=name,
            field="size_bytes",
        )
    if alloc.size_bytes < 0:
        raise DeclarationError(
            f"SMEM allocation {name!r}: size_bytes must be >= 0, got {alloc.size_bytes}",
            allocation=name,
            field="size_bytes",
        )
    if not _is_int(alloc.alignment):
        raise DeclarationTypeError(
            f"SMEM allocation {name!r}: alignment must be an int, got {alloc.alignment!r}",
            allocation=name,
            field="alignment",
        )
    if alloc.alignment <= 0 or alloc.alignment & (alloc.alignment - 1):
        raise DeclarationError(
            f"SMEM allocation {name!r}: alignment must be a positive power of two, got {alloc.alignment}",
            allocation=name,
            field="alignment",
        )
    if not _is_int(alloc.count):
        raise DeclarationTypeError(
            f"SMEM allocation {name!r}: count must be an int, got {alloc.count!r}", allocation=name, field="count"
        )
    if alloc.count <= 0:
        raise DeclarationError(
            f"SMEM allocation {name!r}: count must be >= 1, got {alloc.count}", allocation=name, field="count"
        )
    for what in ("count", "size_bytes", "alignment"):
        value = getattr(alloc, what)
        if value > INT_MAX:
            raise _too_big("SMEM", name, what, value)
    if alloc.dtype is None:
        if alloc.size_bytes == 0:
            raise DeclarationError(
                f"SMEM allocation {name!r}: size_bytes is 0 and no dtype is given", allocation=name, field="size_bytes"
            )
        return
    try:
        needed = dtype_bytes(alloc.dtype, alloc.count)
    except (TypeError, ValueError) as exc:
        raise _dtype_error(exc, name) from None
    if alloc.size_bytes == 0:
        raise DeclarationError(
            f"SMEM allocation {name!r}: size is 0 ({alloc.count} x {dtype_name(alloc.dtype)})", allocation=name
        )
    if alloc.size_bytes < needed:
        raise DeclarationError(
            f"SMEM allocation {name!r}: size_bytes {alloc.size_bytes} is smaller than "
            f"{alloc.count} x {dtype_name(alloc.dtype)} = {needed:,} B",
            allocation=name,
            field="size_bytes",
        )


def _dtype_error(exc: Exception, name: Any) -> Exception:
    """A dtype the sizing refused, restated for the allocation."""
    message = f"SMEM allocation {name!r}: {exc}"
    if isinstance(exc, TypeError):
        return DeclarationTypeError(message, allocation=name, field="dtype")
    return DeclarationError(message, allocation=name, field="dtype")


@dataclass(eq=False)
class SmemAllocation:
    """A named shared-memory region: bytes with an alignment, optionally typed.

    With ``dtype`` and no ``size_bytes`` the size is ``ceil(count * width / 8)``
    (exact for sub-byte types such as fp4). ``offset`` is set by
    ``SmemAllocator.compute_layout()``.

    ``swizzle`` ("32B", "64B", "128B"), ``stages`` (pipeline stages the buffer
    holds) and ``tma`` (a TMA destination) change nothing in the layout; they
    travel into the plan so :meth:`LayoutPlan.lint` can check the hardware's rules.
    ``shape`` (with a dtype), e.g. ``(stages, 128, 64)``, gives the count as its
    product and the stages as its first extent; the maps then draw the stage
    boundaries inside the buffer.

    ``access`` says how the kernel's warps touch the buffer (one :class:`SmemAccess`,
    a table of its fields, an instruction spelling, or a list of them): the plan
    carries it, so lint, reports and the explorer show its bank conflicts.
    """

    name: str
    size_bytes: int = 0
    alignment: int = 128
    dtype: Any = None
    count: int = 1
    swizzle: str | None = None
    stages: int | None = None
    tma: bool | None = None
    shape: tuple[int, ...] | None = None
    access: Any = None  # kept as a tuple of SmemAccess
    offset: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        if self.shape is not None:
            self._take_shape()
        if not (type(self.size_bytes) is type(self.alignment) is type(self.count) is int):
            self.size_bytes = _plain_int(self.size_bytes)
            self.alignment = _plain_int(self.alignment)
            self.count = _plain_int(self.count)
        if self.dtype is not None and self.size_bytes == 0 and _is_int(self.count) and self.count > 0:
            try:
                self.size_bytes = dtype_bytes(self.dtype, self.count)
            except (TypeError, ValueError) as exc:
                raise _dtype_error(exc, self.name) from None
        check_smem_fields(self)
        if self.swizzle is not None or self.stages is not None or self.tma is not None:
            check_lint_fields(self)
        if self.access is not None:
            self.access = declared_accesses(self)

    def _take_shape(self) -> None:
        """Count and stages from ``shape``; a count or stages given too must agree."""
        shape = self.shape
        if isinstance(shape, (str, bytes)) or not isinstance(shape, (tuple, list)) or not shape:
            raise DeclarationTypeError(
                f"allocation {self.name!r}: shape must be a non-empty tuple of ints, got {shape!r}",
                allocation=self.name,
                field="shape",
            )
        shape = tuple(_plain_int(n) for n in shape)  # NumPy extents, as counts take them
        if not all(_is_int(n) and n > 0 for n in shape):
            raise DeclarationError(
                f"allocation {self.name!r}: every extent of shape must be an int > 0, got {shape!r}",
                allocation=self.name,
                field="shape",
            )
        if self.dtype is None:
            raise DeclarationError(
                f"allocation {self.name!r}: shape={tuple(shape)!r} needs a dtype to size it",
                allocation=self.name,
                field="shape",
            )
        elements = 1
        for n in shape:
            elements *= n
        if self.count not in (1, elements):
            raise DeclarationError(
                f"allocation {self.name!r}: count={self.count!r} disagrees with shape={tuple(shape)!r} "
                f"({elements} elements); give one of them",
                allocation=self.name,
                field="count",
            )
        if self.stages is not None and self.stages != shape[0]:
            raise DeclarationError(
                f"allocation {self.name!r}: stages={self.stages!r} disagrees with shape={tuple(shape)!r}, "
                f"whose first extent is the stage count",
                allocation=self.name,
                field="stages",
            )
        self.shape = tuple(shape)
        self.count = elements
        self.stages = shape[0]

    @property
    def end(self) -> int:
        return self.offset + self.size_bytes

    @property
    def dtype_name(self) -> str | None:
        return dtype_name(self.dtype)

    def __repr__(self) -> str:
        typed = f", dtype={self.dtype_name}, count={self.count}" if self.dtype is not None else ""
        for key in ("shape", "swizzle", "stages", "tma", "access"):
            if getattr(self, key) is not None:
                typed += f", {key}={getattr(self, key)!r}"
        return (
            f"SmemAllocation({self.name!r}, size_bytes={self.size_bytes}, "
            f"alignment={self.alignment}{typed}, offset={self.offset})"
        )


def check_lint_fields(alloc: Any) -> None:
    """Refuse a bad ``swizzle``/``stages``/``tma`` naming the allocation."""
    from ..hardware import SWIZZLE_ATOM_BYTES

    name = alloc.name
    swizzle = getattr(alloc, "swizzle", None)
    if swizzle is not None and swizzle not in SWIZZLE_ATOM_BYTES:
        known = ", ".join(repr(k) for k in SWIZZLE_ATOM_BYTES)
        raise DeclarationError(
            f"SMEM allocation {name!r}: swizzle must be None, {known}; got {swizzle!r}",
            allocation=name,
            field="swizzle",
        )
    stages = getattr(alloc, "stages", None)
    if stages is not None and (not _is_int(stages) or stages <= 0):
        raise DeclarationError(
            f"SMEM allocation {name!r}: stages must be a positive int, got {stages!r}", allocation=name, field="stages"
        )
    tma = getattr(alloc, "tma", None)
    if tma is not None and not isinstance(tma, bool):
        raise DeclarationTypeError(
            f"SMEM allocation {name!r}: tma must be True, False or None, got {tma!r}", allocation=name, field="tma"
        )


def declared_accesses(alloc: Any) -> tuple[SmemAccess, ...]:
    """An allocation's ``access``, checked against it: each needs a dtype and a tile layout,
    from the access or (a dtype) from the allocation, and a stage the buffer holds."""
    accesses = accesses_of(getattr(alloc, "access", None), alloc.name, stages=getattr(alloc, "stages", None))
    for acc in accesses:
        if acc.dtype is None and getattr(alloc, "dtype", None) is None:
            raise DeclarationError(
                f"access of {alloc.name!r}: neither the access nor the allocation gives a "
                f"dtype; the bank analysis needs the element size",
                allocation=alloc.name,
                field="access.dtype",
            )
        if acc.layout is None:
            raise DeclarationError(
                f"access of {alloc.name!r}: give the tile's 'layout' (CuTe shape:stride in "
                f"elements, e.g. '(128,64):(64,1)')",
                allocation=alloc.name,
                field="access.layout",
            )
    return accesses


def check_tmem_fields(alloc: TmemAllocation) -> None:
    name = alloc.name
    if (
        type(alloc.num_columns) is int
        and 0 < alloc.num_columns <= INT_MAX
        and type(name) is str
        and name
        and name.isprintable()
    ):
        return
    check_name(name, "TMEM allocation")
    if not _is_int(alloc.num_columns):
        raise DeclarationTypeError(
            f"TMEM allocation {name!r}: num_columns must be an int, got {alloc.num_columns!r}",
            allocation=name,
            field="num_columns",
        )
    if alloc.num_columns <= 0:
        raise DeclarationError(
            f"TMEM allocation {name!r}: num_columns must be >= 1, got {alloc.num_columns}",
            allocation=name,
            field="num_columns",
        )
    if alloc.num_columns > INT_MAX:
        raise _too_big("TMEM", name, "num_columns", alloc.num_columns)


@dataclass(eq=False, init=False)
class TmemAllocation:
    """A named span of tensor-memory columns (all 128 lanes). ``offset`` is a column.

    ``columns=`` is accepted as another name for ``num_columns=`` (layout files call it ``columns``).
    """

    name: str
    num_columns: int
    offset: int = field(default=0)

    def __init__(self, name: str, num_columns: int | None = None, *, columns: int | None = None) -> None:
        if num_columns is None and columns is None:
            raise TypeError(f"TMEM allocation {name!r}: give its width as num_columns= (or columns=)")
        if num_columns is not None and columns is not None and num_columns != columns:
            raise TypeError(
                f"TMEM allocation {name!r}: num_columns={num_columns!r} and columns={columns!r} disagree; give one"
            )
        self.name = name
        self.num_columns = _plain_int(num_columns if num_columns is not None else columns)
        self.offset = 0
        check_tmem_fields(self)

    @property
    def columns(self) -> int:
        """The same as ``num_columns``."""
        return self.num_columns

    @property
    def end(self) -> int:
        return self.offset + self.num_columns

    def __repr__(self) -> str:
        return f"TmemAllocation({self.name!r}, num_columns={self.num_columns}, offset={self.offset})"


@dataclass(frozen=True)
class ResourceContext:
    """What kernel resources receive at trace time: the unified SMEM array and
    the SMEM slot (``Int32[1]``) that ``tcgen05.alloc`` writes the TMEM base into."""

    smem_base: Any = None
    tmem_ptr_i32: Any = None
