"""The SMEM allocator's trace-time methods: the one unified array and typed views of it.

Called inside ``@cute.kernel`` / ``@cute.jit`` while the CuTe DSL traces a
kernel; the DSL calls themselves are in :mod:`._emit`, imported only here.
"""

from __future__ import annotations

import warnings
from typing import Any

from .._errors import LayoutStateError
from ._allocation import SmemAllocation, _is_int
from ._base import _BaseAllocator, _label

__all__: list[str] = []


class _TraceMethods(_BaseAllocator):
    """``allocate()``, ``get()``, barrier pointers and the TMEM-pointer view."""

    _smem_base: Any
    _smem_trace: Any
    _placed_barrier_ptrs: dict[int, Any]
    _barrier_resources: list[Any]
    _barrier_groups: list[Any]
    _tmem_ptr_alloc: SmemAllocation | None

    @property
    def smem_base(self) -> Any:
        """The unified SMEM ``cutlass.Array`` (after ``allocate()``), else ``None``."""
        return self._smem_base

    def allocate(self) -> Any:
        """Emit the one unified ``cutlass.Array`` in SMEM (call inside
        ``@cute.kernel``/``@cute.jit``) and return it."""
        self._require_layout("allocate()")
        from . import _emit

        trace = _emit.current_trace()
        if self._smem_base is None or trace is not self._smem_trace:
            self._smem_base = _emit.unified_array(self.plan)
            self._smem_trace = trace
        return self._smem_base

    def _require_allocated(self, what: str) -> None:
        self._require_layout(what)
        if self._smem_base is None:
            raise LayoutStateError(f"call allocate() (inside a kernel) before {what}")
        from . import _emit

        if _emit.current_trace() is not self._smem_trace:
            raise LayoutStateError(
                f"call allocate() in this kernel before {what}: the unified array was emitted by an earlier trace"
            )

    def _check_member(self, alloc: Any, what: str) -> None:
        if id(alloc) not in self._added and id(alloc) not in self._aliased:
            raise ValueError(f"{what}: allocation {_label(alloc)!r} is not part of this layout")

    def _offset_of(self, alloc: Any) -> int:
        """Where this layout placed ``alloc``: the offset as computed, not the allocation's
        ``offset`` field, which a later layout of the same object (see
        :func:`groups_to_lifetimes`) may have moved."""
        return self._fixed[id(alloc)][0]

    def get(self, alloc: SmemAllocation) -> Any:
        """A typed ``cutlass.Array`` view of ``alloc`` from its dtype and count."""
        self._require_allocated("get()")
        self._check_member(alloc, "get()")
        if alloc.dtype is None:
            raise TypeError(f"allocation {alloc.name!r} has no dtype; use get_as_type(alloc, dtype, count)")
        from . import _emit

        return _emit.typed_view(self._smem_base, self._offset_of(alloc), alloc.dtype, alloc.count)

    def get_as_type(self, alloc: SmemAllocation, dtype: Any, count: int = 1) -> Any:
        """A ``cutlass.Array`` view of ``alloc`` reinterpreted as ``count`` x ``dtype``."""
        self._require_allocated("get_as_type()")
        self._check_member(alloc, "get_as_type()")
        from .._dtypes import dtype_bytes

        if not _is_int(count) or count <= 0:
            raise ValueError(f"get_as_type({alloc.name!r}): count must be a positive int, got {count!r}")
        if dtype_bytes(dtype, count) > alloc.size_bytes:
            raise ValueError(
                f"get_as_type({alloc.name!r}): {count} x {dtype} = {dtype_bytes(dtype, count):,} B "
                f"overruns the allocation's {alloc.size_bytes:,} B"
            )
        from . import _emit

        return _emit.typed_view(self._smem_base, self._offset_of(alloc), dtype, count)

    def get_typed_ptr(self, alloc: SmemAllocation, dtype: Any, count: int = 1) -> Any:
        """Deprecated alias of :meth:`get_as_type`."""
        warnings.warn(
            "SmemAllocator.get_typed_ptr() is deprecated; use get() or get_as_type()",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.get_as_type(alloc, dtype, count)

    def assign_barrier_ptrs(self) -> None:
        """Point each registered pipeline's ``pipeline_config.barrier_ptr`` into
        the barrier region of the unified array (after ``allocate()``)."""
        self._require_allocated("assign_barrier_ptrs()")
        from . import _emit

        regions = iter(self.plan.barrier_regions)
        for owner in [*self._barrier_resources, *self._barrier_groups]:
            region = next(regions)
            ptr = _emit.assign_barrier_ptr(
                self._smem_base, owner, region.offset, ours=self._placed_barrier_ptrs.get(id(owner))
            )
            if ptr is not None:
                self._placed_barrier_ptrs[id(owner)] = ptr

    def tmem_ptr_view(self) -> Any:
        """The ``Int32[1]`` view of the TMEM-pointer slot (after ``allocate()``)."""
        self._require_allocated("tmem_ptr_view()")
        if self._tmem_ptr_alloc is None:
            raise LayoutStateError("no TMEM-pointer slot registered; call add_tmem_ptr() first")
        from . import _emit

        return _emit.typed_view(self._smem_base, self._offset_of(self._tmem_ptr_alloc), "i32", 1)

    def resource_context(self) -> Any:
        """A :class:`ResourceContext` with the unified array and the TMEM-pointer view."""
        from ._allocation import ResourceContext

        self._require_allocated("resource_context()")
        tmem_ptr = self.tmem_ptr_view() if self._tmem_ptr_alloc is not None else None
        return ResourceContext(smem_base=self._smem_base, tmem_ptr_i32=tmem_ptr)
