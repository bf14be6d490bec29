"""The DSL methods capture wraps while a capture is active, and what each wrapper notes.

``cutlass.memory.SmemAllocator``'s ``allocate`` / ``allocate_array`` /
``allocate_tensor`` say what the kernel asked for; ``_smem_alloca`` (which all
of them reach) gives the ``cute.memref.alloca`` the compiler will place and the
alignment and partition it was given; a struct field's ``get_tensor`` gives the
layout and swizzle it is viewed with; ``cutlass.memory.TmemAllocator`` and
``TmemBufferPool`` give the TMEM columns. ``cutlass.utils``' deprecated
allocators are subclasses and are covered by the same wrappers. The calls the
ordering record needs (pipelines, copies, fences, barriers) are wrapped too
(see ``_ordering_hooks``).

The methods are replaced on their classes while at least one capture is open
(a lock and a count), and restored when the last one closes, even on error.
A wrapper that finds no capture active in its context (``contextvars``) calls
straight through, so another thread or notebook cell compiling meanwhile is
not recorded and not changed. Every wrapper returns exactly what the original
returns: capturing emits nothing into the kernel.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from ._active import ACTIVE, _current_kernel
from ._where import CallSite, call_site

__all__ = ["Pending", "PendingTmem", "Recorder", "ACTIVE", "install", "uninstall"]


@dataclass
class Pending:
    """An SMEM allocation seen at trace time, before the compiler places it."""

    how: str
    site: CallSite | None
    given_name: str | None
    dtype: Any = None
    count: int | None = None
    layout: str | None = None
    struct: Any = None
    size: int | None = None
    alignment: int | None = None
    partition: int | None = None
    op: Any = None  # the cute.memref.alloca operation
    field_views: dict[str, str] = field(default_factory=dict)  # struct field path -> layout it is viewed with
    keep: list[Any] = field(default_factory=list)  # objects whose ids are mapped, kept alive


@dataclass
class PendingTmem:
    """TMEM columns seen at trace time."""

    how: str  # "block" (TmemAllocator.allocate) or "pool" (TmemBufferPool.allocate)
    site: CallSite | None
    given_name: str | None
    columns: int
    offset: int
    kernel: str | None
    dtype: Any = None
    layout: str | None = None
    block: int | None = None
    branch: tuple[tuple[Any, int], ...] = ()  # the (scf.if op, arm) pairs the call lies in, outermost first


class Recorder:
    """What an active capture offers its wrappers (implemented by the capture session)."""

    def add_smem(self, pending: Pending, result: Any) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def add_tmem(self, pending: PendingTmem) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def field_of(self, obj: Any) -> tuple[Pending, str] | None:  # pragma: no cover - interface
        raise NotImplementedError

    def fail(self, why: str) -> None:  # pragma: no cover - interface
        """Recording went wrong: the kernel is left alone, the capture refuses to show a plan."""
        raise NotImplementedError

    def pool_block(self, pool: Any) -> int | None:  # pragma: no cover - interface
        raise NotImplementedError

    def map_pool(self, pool: Any, kernel: str | None) -> None:  # pragma: no cover - interface
        raise NotImplementedError


# the outermost allocator call in progress: nested calls (allocate_tensor -> allocate -> _smem_alloca) add to it
_OUTER: ContextVar[Pending | None] = ContextVar("smemviz_capture_outer", default=None)
_OUTER_TMEM: ContextVar[bool] = ContextVar("smemviz_capture_outer_tmem", default=False)

_lock = threading.Lock()
_users = 0
_saved: list[tuple[Any, str, Any]] = []  # (class or module, name, original)


def layout_text(layout: Any, swizzle: Any = None) -> str | None:
    """CuTe's own text for a layout, a separate swizzle composed in front as CuTe prints it."""
    if layout is None:
        return None
    text = str(layout)
    if swizzle is not None:
        text = f"{swizzle} o 0 o {text}"
    return text


def _dtype_width(dtype: Any) -> int:
    width = getattr(dtype, "width", 8)
    return 8 if getattr(dtype, "__name__", "") == "Boolean" else int(width)


def _note(error: BaseException, pending: Pending) -> None:
    where = pending.site.source if pending.site else "an unknown line"
    what = pending.given_name or (pending.site.assigned if pending.site else None) or pending.how
    add_note = getattr(error, "add_note", None)  # Python 3.11+; the error itself is unchanged either way
    if add_note is not None:
        add_note(f"smemviz.capture: raised while allocating {what!r} ({pending.how}) at {where}")


def _alloc_wrapper(orig: Callable[..., Any], how: str) -> Callable[..., Any]:
    @functools.wraps(orig)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        rec = ACTIVE.get()
        given = kwargs.pop("name", None) if rec is not None else None
        if rec is None or _OUTER.get() is not None:
            return orig(self, *args, **kwargs)
        pending = Pending(how=how, site=None, given_name=given)
        try:
            pending.site = call_site(2)
            _describe(pending, how, args, kwargs)
        except Exception as e:  # never let recording break the kernel
            rec.fail(f"could not record a {how} allocation: {type(e).__name__}: {e}")
        token = _OUTER.set(pending)
        try:
            result = orig(self, *args, **kwargs)
        except BaseException as e:
            _note(e, pending)
            raise
        finally:
            _OUTER.reset(token)
        try:
            rec.add_smem(pending, result)
        except Exception as e:  # never let recording break the kernel
            rec.fail(f"could not record a {how} allocation: {type(e).__name__}: {e}")
        return result

    return wrapper


def _arg(args: tuple[Any, ...], kwargs: dict[str, Any], i: int, name: str, default: Any = None) -> Any:
    if len(args) > i:
        return args[i]
    return kwargs.get(name, default)


def _describe(p: Pending, how: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """What the kernel asked for, from the public call's own arguments."""
    from cutlass.cute import struct

    if how == "allocate":
        what = _arg(args, kwargs, 0, "size_or_type")
        if isinstance(what, struct):
            p.how, p.struct = "struct", what
        elif isinstance(what, int):
            p.how, p.count = "bytes", what
        else:
            p.how, p.dtype, p.count = "scalar", what, 1
    elif how == "array":
        p.dtype, p.count = _arg(args, kwargs, 0, "element_type"), _arg(args, kwargs, 1, "num_elems", 1)
    elif how == "tensor":
        p.dtype = _arg(args, kwargs, 0, "element_type")
        layout = _arg(args, kwargs, 1, "layout")
        p.layout = layout_text(layout, _arg(args, kwargs, 3, "swizzle"))


def _alloca_wrapper(orig: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(orig)
    def wrapper(self: Any, layout: Any, dtype: Any, byte_alignment: int, *args: Any, **kwargs: Any) -> Any:
        rec = ACTIVE.get()
        result = orig(self, layout, dtype, byte_alignment, *args, **kwargs)
        if rec is None:
            return result
        try:
            _note_alloca(rec, result, layout, dtype, byte_alignment, kwargs)
        except Exception as e:  # never let recording break the kernel
            rec.fail(f"could not read an SMEM alloca: {type(e).__name__}: {e}")
        return result

    return wrapper


def _note_alloca(
    rec: Recorder, result: Any, layout: Any, dtype: Any, byte_alignment: int, kwargs: dict[str, Any]
) -> None:
    import cutlass.cute as cute

    pending = _OUTER.get()
    if pending is None:  # reached without a public call: record it as raw bytes
        pending = Pending(how="bytes", site=call_site(3), given_name=None)
        rec.add_smem(pending, None)
    partition = kwargs.get("partition", None)
    pending.partition = int(getattr(partition, "value", 1 if partition is None else partition))
    pending.alignment = max(int(byte_alignment), _dtype_width(dtype) // 8)
    pending.size = int(cute.cosize(layout)) * _dtype_width(dtype) // 8
    pending.op = _alloca_of(result)


def _alloca_of(ptr: Any) -> Any:
    """The ``cute.memref.alloca`` behind the iterator ``_smem_alloca`` returns."""
    owner = _owner(ptr)
    for _ in range(4):
        if owner is None:
            return None
        op = getattr(owner, "operation", owner)
        if op.name == "cute.memref.alloca":
            return op
        if not len(op.operands):
            return None
        owner = _owner(op.operands[0])
    return None


def _owner(value: Any) -> Any:
    """The op defining ``value`` (an ``ir.Value`` or a DSL object wrapping one)."""
    for candidate in (value, getattr(value, "value", None)):
        try:
            owner = candidate.owner  # type: ignore[union-attr]
        except AttributeError:
            continue
        if owner is not None:
            return owner
    return None


def _get_tensor_wrapper(orig: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(orig)
    def wrapper(self: Any, layout: Any, swizzle: Any = None, *args: Any, **kwargs: Any) -> Any:
        result = orig(self, layout, swizzle, *args, **kwargs)
        rec = ACTIVE.get()
        if rec is not None:
            found = rec.field_of(self)
            if found is not None:
                pending, path = found
                try:
                    pending.field_views.setdefault(path, layout_text(layout, swizzle) or "")
                except Exception as e:  # never let recording break the kernel
                    rec.fail(f"could not read the layout of struct field {path!r}: {type(e).__name__}: {e}")
        return result

    return wrapper


def _current_branch() -> tuple[tuple[Any, int], ...]:
    """The ``if`` arms the op being traced lies in (see ``_compiled.branch_path``)."""
    from cutlass._mlir import ir

    from ._compiled import branch_path

    return branch_path(ir.InsertionPoint.current.block)  # type: ignore[attr-defined]  # set while tracing


def _tmem_allocate_wrapper(orig: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(orig)
    def wrapper(self: Any, num_columns: Any, *args: Any, **kwargs: Any) -> Any:
        rec = ACTIVE.get()
        given = kwargs.pop("name", None) if rec is not None else None
        if rec is None or _OUTER_TMEM.get():
            return orig(self, num_columns, *args, **kwargs)
        pending: PendingTmem | None = None
        try:
            offset = getattr(self, "_num_allocated_columns", 0)
            pending = PendingTmem("block", call_site(2), given, int(num_columns), int(offset), _current_kernel())
            pending.branch = _current_branch()
        except Exception as e:  # never let recording break the kernel
            rec.fail(f"could not record a TMEM allocation: {type(e).__name__}: {e}")
        token = _OUTER_TMEM.set(True)
        try:
            result = orig(self, num_columns, *args, **kwargs)
        finally:
            _OUTER_TMEM.reset(token)
        if pending is not None:
            rec.add_tmem(pending)
        return result

    return wrapper


def _tmem_reserve_wrapper(orig: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(orig)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        pool = orig(self, *args, **kwargs)
        rec = ACTIVE.get()
        if rec is not None:
            try:
                rec.map_pool(pool, _current_kernel())
            except Exception as e:  # never let recording break the kernel
                rec.fail(f"could not record a TMEM pool: {type(e).__name__}: {e}")
        return pool

    return wrapper


def _pool_allocate_wrapper(orig: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(orig)
    def wrapper(self: Any, size: Any, dtype: Any, *args: Any, **kwargs: Any) -> Any:
        rec = ACTIVE.get()
        given = kwargs.pop("name", None) if rec is not None else None
        if rec is None or _OUTER_TMEM.get():
            return orig(self, size, dtype, *args, **kwargs)
        before = int(self._current_offset)
        token = _OUTER_TMEM.set(True)
        try:
            result = orig(self, size, dtype, *args, **kwargs)
        finally:
            _OUTER_TMEM.reset(token)
        try:
            columns = int(self._current_offset) - before
            layout = None if isinstance(size, int) else layout_text(size)
            rec.add_tmem(
                PendingTmem(
                    "pool",
                    call_site(2),
                    given,
                    columns,
                    before,
                    _current_kernel(),
                    dtype=dtype,
                    layout=layout,
                    block=rec.pool_block(self),
                )
            )
        except Exception as e:  # never let recording break the kernel
            rec.fail(f"could not record a TMEM pool allocation: {type(e).__name__}: {e}")
        return result

    return wrapper


def _targets() -> list[tuple[Any, str, Callable[[Callable[..., Any]], Callable[..., Any]]]]:
    from cutlass.cute import struct
    from cutlass.memory import smem, tmem

    from ._ordering_hooks import ordering_targets  # the ordering model's package imports the analysis floor
    from ._tma_atoms import tma_targets

    alloc = smem.SmemAllocator
    return [
        (alloc, "allocate", lambda f: _alloc_wrapper(f, "allocate")),
        (alloc, "allocate_array", lambda f: _alloc_wrapper(f, "array")),
        (alloc, "allocate_tensor", lambda f: _alloc_wrapper(f, "tensor")),
        (alloc, "_smem_alloca", _alloca_wrapper),
        (struct._MemRangeData, "get_tensor", _get_tensor_wrapper),
        (tmem.TmemAllocator, "allocate", _tmem_allocate_wrapper),
        (tmem.TmemAllocator, "reserve", _tmem_reserve_wrapper),
        (tmem.TmemBufferPool, "allocate", _pool_allocate_wrapper),
        *ordering_targets(),
        *tma_targets(),  # the TMA atoms' descriptor parameters (_tma_atoms)
    ]


def install() -> None:
    """Wrap the DSL's allocator methods (once, however many captures are open)."""
    global _users
    with _lock:
        if _users == 0:
            targets = _targets()
            try:
                for cls, name, make in targets:
                    orig = cls.__dict__[name]
                    _saved.append((cls, name, orig))
                    setattr(cls, name, make(orig))
            except BaseException:
                _restore()
                raise
        _users += 1


def _restore() -> None:
    while _saved:
        cls, name, orig = _saved.pop()
        setattr(cls, name, orig)


def uninstall() -> None:
    """Undo :func:`install` when the last capture closes."""
    global _users
    with _lock:
        _users -= 1
        if _users == 0:
            _restore()
