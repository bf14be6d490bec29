"""Exception types raised by smemviz.

They subclass the builtin exceptions that CUTLASS's own allocators raise in the
same situations, so code written against either library catches both.
"""

from __future__ import annotations

__all__ = ["LayoutStateError", "CapacityError", "DslUnavailableError", "DeclarationError", "DeclarationTypeError"]


class LayoutStateError(RuntimeError, ValueError):
    """A call came in the wrong order (e.g. ``add`` after ``compute_layout``).

    A ``RuntimeError`` like CUTLASS's allocators raise, and also a
    ``ValueError`` because the request itself is invalid in that state.
    """


class CapacityError(ValueError):
    """A layout does not fit the memory of the chosen architecture."""


class DslUnavailableError(ImportError):
    """A trace-time call needs the CuTe DSL (``nvidia-cutlass-dsl``), which is not installed."""


class _FieldError:
    """What a refused declaration was about, as data: the allocation's name and
    the field (``size_bytes``, ``alignment``, ``name`` ...), ``None`` when not
    one field. Readers of layout files use it to point at the offending key."""

    allocation: str | None
    field: str | None

    def _set_subject(self, allocation: object, field: str | None) -> None:
        self.allocation = allocation if isinstance(allocation, str) else None
        self.field = field


class DeclarationError(_FieldError, ValueError):
    """An allocation or pipeline declared with a value the layout cannot take."""

    def __init__(self, message: str, *, allocation: object = None, field: str | None = None) -> None:
        super().__init__(message)
        self._set_subject(allocation, field)


class DeclarationTypeError(_FieldError, TypeError):
    """An allocation or pipeline declared with a field of the wrong type."""

    def __init__(self, message: str, *, allocation: object = None, field: str | None = None) -> None:
        super().__init__(message)
        self._set_subject(allocation, field)
