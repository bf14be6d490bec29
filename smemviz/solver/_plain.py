"""The few numpy constructors the search core calls, over Python lists.

The core runs as plain Python where numba (``smemviz[fast]``) is not
installed, and then needs no numpy either: a 1-D int64 array becomes a list of
ints, a 2-D one a :class:`Grid` (indexed ``a[row, column]``, as numpy is).
Every operation the core applies to its arrays (indexing, ``len``, ``sort``,
slices read and written back) means the same on both, so the two forms walk
the same search.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["int64", "empty", "zeros", "full", "array", "Grid"]

int64 = int  # the dtype argument is accepted and means "ints"


class Grid:
    """Rows x columns of ints in one flat list, read and written as ``grid[row, column]``
    (the 2-D indexing the compiled core gets from numpy without making row views)."""

    __slots__ = ("rows", "cols", "cells")

    def __init__(self, rows: int, cols: int, value: int) -> None:
        self.rows, self.cols = rows, cols
        self.cells = [value] * (rows * cols)

    def __len__(self) -> int:
        return self.rows

    def __getitem__(self, at: tuple[int, int]) -> int:
        return self.cells[at[0] * self.cols + at[1]]

    def __setitem__(self, at: tuple[int, int], value: int) -> None:
        self.cells[at[0] * self.cols + at[1]] = value


def full(shape: int | tuple[int, int], value: int, dtype: Any = int) -> Any:
    """``shape`` ints (or a grid of them) all equal to ``value``."""
    if isinstance(shape, tuple):
        return Grid(shape[0], shape[1], value)
    return [value] * shape


def zeros(shape: int | tuple[int, int], dtype: Any = int) -> Any:
    return full(shape, 0)


def empty(shape: int | tuple[int, int], dtype: Any = int) -> Any:
    return full(shape, 0)  # lists have no uninitialised form; the core never reads before writing


def array(values: Iterable[int], dtype: Any = int) -> list[int]:
    return [int(v) for v in values]
