"""The capture open in this context, and the kernel being traced: read by both the
allocator hooks and the ordering hooks, so neither imports the other for them."""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._hooks import Recorder

__all__ = ["ACTIVE", "_current_kernel"]

ACTIVE: ContextVar[Recorder | None] = ContextVar("smemviz_capture", default=None)


def _current_kernel() -> str | None:
    """The symbol of the function being traced (where the next op would go)."""
    try:
        from cutlass._mlir import ir

        op = ir.InsertionPoint.current.block.owner  # type: ignore[attr-defined]  # set while tracing
    except Exception:
        return None
    while op is not None:
        op = getattr(op, "operation", op)
        if "sym_name" in op.attributes and op.name in ("cuda.kernel", "gpu.func", "func.func"):
            attr = op.attributes["sym_name"]
            return str(getattr(attr, "value", attr)).strip('"')
        op = op.parent
    return None
