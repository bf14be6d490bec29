"""Trace-time emission of the unified SMEM array and typed views into it.

Part of the core because the allocators emit through it; the CuTe DSL itself
is imported only inside these functions, while a kernel is being traced.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .._errors import DslUnavailableError
from .._optional import require


def require_cutlass():
    """Import and return ``(cutlass, cute)``, or explain how to install the DSL."""
    what = "this needs the CuTe DSL"  # nvidia-cutlass-dsl 4.8.x
    return require("cutlass", what, DslUnavailableError), require("cutlass.cute", what, DslUnavailableError)


def current_trace() -> Any:
    """The MLIR context of the trace in progress (a new one per compile), or ``None``.

    Arrays emitted in one trace are dead in the next; comparing this token tells
    a fresh trace from a continuing one without touching the old IR.
    """
    require_cutlass()
    from cutlass._mlir import ir

    try:
        return ir.Context.current  # type: ignore[attr-defined]  # set by the DSL while tracing
    except ValueError:
        return None


def resolve_dtype(dtype: Any) -> Any:
    """A CuTe DSL numeric type for ``dtype`` (a DSL type or a short name like "bf16")."""
    if not isinstance(dtype, str):
        return dtype
    from .._dtypes import cutlass_type_name

    cutlass, _ = require_cutlass()
    name = cutlass_type_name(dtype)
    if name is None or not hasattr(cutlass, name):
        raise ValueError(f"dtype {dtype!r} has no CuTe DSL type")
    return getattr(cutlass, name)


def unified_array(plan) -> Any:
    """Emit one ``cutlass.Array`` of Uint8 in SMEM for the whole plan (None if empty)."""
    cutlass, _ = require_cutlass()
    if plan.unified_bytes == 0:
        return None
    return cutlass.Array(
        cutlass.Uint8,
        plan.unified_bytes,
        space=cutlass.AddressSpace.smem,
        alignment=plan.base_alignment,
    )


def typed_view(base: Any, offset: int, dtype: Any, count: int) -> Any:
    """A ``cutlass.Array`` of ``count`` x ``dtype`` at ``offset`` bytes into ``base``."""
    cutlass, _ = require_cutlass()
    return cutlass.Array(
        base.data_ptr() + offset,
        dtype=resolve_dtype(dtype),
        shape=(count,),
        addrspace=3,
    )


def assign_barrier_ptr(base: Any, owner: Any, offset: int, ours: Any = None) -> Any:
    """Set ``owner.pipeline_config.barrier_ptr`` to ``offset`` bytes into ``base``.

    A pointer the user placed is kept; one smemviz placed in an earlier trace
    (``ours``) is replaced, since it points into that trace's dead array.
    Returns the new pointer, or ``None`` when the user's pointer was kept.
    """
    cutlass, cute = require_cutlass()
    cfg = owner.pipeline_config
    current = getattr(cfg, "barrier_ptr", None)
    if current is not None and current is not ours:
        return None
    ptr = cute.make_ptr(cutlass.Int64, base.data_ptr() + offset, mem_space=cutlass.AddressSpace.smem)
    owner.pipeline_config = replace(cfg, barrier_ptr=ptr)
    return ptr
