"""Exception types raised by smemviz.

They subclass the builtin exceptions that CUTLASS's own allocators raise in the
same situations, so code written against either library catches both.
"""

from __future__ import annotations

__all__ = ["LayoutStateError", "CapacityError", "DslUnavailableError"]


class LayoutStateError(RuntimeError, ValueError):
    """A call came in the wrong order (e.g. ``add`` after ``compute_layout``).

    A ``RuntimeError`` like CUTLASS's allocators raise, and also a
    ``ValueError`` because the request itself is invalid in that state.
    """


class CapacityError(ValueError):
    """A layout does not fit the memory of the chosen architecture."""


class DslUnavailableError(ImportError):
    """A trace-time call needs the CuTe DSL (``nvidia-cutlass-dsl``), which is not installed."""
