"""The few numpy constructors the search core calls, over Python lists.

The core runs as plain Python where numba (``smemviz[fast]``) is not
installed, and then needs no numpy either: a 1-D int64 array becomes a list of
ints, a 2-D one a list of rows. Every operation the core applies to its arrays
(indexing, ``len``, ``sort``, slices read and written back) means the same on
both, so the two forms walk the same search.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["int64", "empty", "zeros", "full", "array"]

int64 = int  # the dtype argument is accepted and means "ints"


def full(shape: int | tuple[int, int], value: int, dtype: Any = int) -> list[Any]:
    """``shape`` ints (or rows of ints) all equal to ``value``."""
    if isinstance(shape, tuple):
        rows, cols = shape
        return [[value] * cols for _ in range(rows)]
    return [value] * shape


def zeros(shape: int | tuple[int, int], dtype: Any = int) -> list[Any]:
    return full(shape, 0)


def empty(shape: int | tuple[int, int], dtype: Any = int) -> list[Any]:
    return full(shape, 0)  # lists have no uninitialised form; the core never reads before writing


def array(values: Iterable[int], dtype: Any = int) -> list[int]:
    return [int(v) for v in values]
