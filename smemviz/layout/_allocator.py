"""SMEM and TMEM allocators: collect declarations, compute one flat layout.

The layout rule matches CUTLASS's ``task_scheduling.memory`` allocators, so the
same declarations give the same offsets and totals:

* every standalone allocation is one block; every alias group is one block as
  large as its largest phase (each phase packed from the group's base, every
  member aligned) and aligned to its largest member alignment;
* blocks are stably sorted by alignment, largest first, then packed from 0;
* SMEM pipeline mbarriers follow the data, starting at the data total rounded
  up to 8 bytes.

On top of that every call is validated before anything changes, so a refused
call leaves the allocator as it was, and the result is an immutable
:class:`~smemviz.LayoutPlan`.

With lifetimes (``steps=`` on the allocator, ``live=`` on ``add`` and
``add_resource``, or ``compute_layout(solver=...)``) the layout is solved
instead: allocations live in a common step never share a byte, and the data
total is the smallest the solver can find, proven optimal when it says so.
"""

from __future__ import annotations

from typing import Any, Literal

from .. import device, hardware
from .._errors import CapacityError, DeclarationError
from .._units import align_up
from ._allocation import SmemAllocation, TmemAllocation, check_smem_fields, check_tmem_fields
from ._base import _BaseAllocator, _label, capacity_checks_deferred
from ._compare import compare_layouts, groups_to_lifetimes
from ._pipelines import _PipelineMethods, barriers_per_stage
from ._plan import CapacityCheck
from ._trace import _TraceMethods

__all__ = [
    "SmemAllocator",
    "TmemAllocator",
    "groups_to_lifetimes",
    "compare_layouts",
    "capacity_checks_deferred",
    "barriers_per_stage",
]


class SmemAllocator(_TraceMethods, _PipelineMethods):
    """Shared-memory allocator: byte offsets with alignment, pipeline barriers,
    the TMEM-pointer slot, and (at trace time) one unified ``cutlass.Array``.

    ``arch`` (e.g. ``"sm_90a"``) makes ``compute_layout()`` refuse a layout that
    does not fit that architecture's per-block shared memory.
    """

    def __init__(self, arch: str | int | hardware.Arch | None = None, steps: Any = None) -> None:
        super().__init__(arch, steps)
        self._barrier_resources: list[Any] = []
        self._barrier_groups: list[Any] = []
        # barrier storage: resources' first, then groups', as CUTLASS places them
        self._resource_barriers: list[tuple[str, int]] = []
        self._group_barriers: list[tuple[str, int]] = []
        self._barrier_bytes = 0
        self._tmem_ptr_alloc: SmemAllocation | None = None
        self._smem_base: Any = None
        self._smem_trace: Any = None  # the trace that emitted _smem_base
        self._placed_barrier_ptrs: dict[int, Any] = {}  # id(owner) -> pointer this allocator set

    def _check_alloc(self, alloc: Any, where: str) -> None:
        if isinstance(alloc, SmemAllocation):
            check_smem_fields(alloc)
            return
        if isinstance(alloc, TmemAllocation) or hasattr(alloc, "num_columns"):
            raise TypeError(f"{where}: {_label(alloc)!r} is a TMEM allocation; give it to a TmemAllocator")
        if all(hasattr(alloc, f) for f in ("name", "size_bytes", "alignment", "offset")):
            check_smem_fields(alloc)  # a CUTLASS SmemAllocation or a look-alike
            return
        raise TypeError(f"{where}: expected an SmemAllocation, got {type(alloc).__name__} {alloc!r}")

    _own_type = SmemAllocation
    _check_fields = staticmethod(check_smem_fields)

    def _size(self, alloc: Any) -> int:
        return int(alloc.size_bytes)

    def _align(self, alloc: Any) -> int:
        return int(alloc.alignment)

    def _reset_copy(self) -> None:
        self._barrier_resources = list(self._barrier_resources)
        self._barrier_groups = list(self._barrier_groups)
        self._resource_barriers = list(self._resource_barriers)
        self._group_barriers = list(self._group_barriers)
        self._smem_base = None
        self._smem_trace = None
        self._placed_barrier_ptrs = {}

    def _data_capacity(self) -> int | None:
        if self._arch is None:
            return None
        room = self._arch.smem_per_block - self._barrier_bytes
        return room - room % hardware.MBARRIER_ALIGNMENT  # the data total is aligned up before the barriers

    def _check_capacity_before_commit(self, total: int) -> None:
        if self._arch is None:
            return
        unified = align_up(total, hardware.MBARRIER_ALIGNMENT) + self._barrier_bytes
        largest = sorted(self.allocations, key=lambda a: -a.size_bytes)[:3]
        verdict = CapacityCheck(
            self._arch.name,
            "smem",
            unified,
            self._arch.smem_per_block,
            "B",
            tuple((a.name, a.size_bytes, a.alignment) for a in largest),
            breakdown=f"data {total:,} B + barriers {self._barrier_bytes:,} B",
        )
        if not verdict.fits:
            raise CapacityError(verdict.message())

    # -- TMEM pointer slot -------------------------------------------------------

    def add_tmem_ptr(self, alloc: SmemAllocation) -> SmemAllocation:
        """Register the 4-byte SMEM slot that ``tcgen05.alloc`` writes the TMEM
        base address into; it is laid out like any other allocation."""
        self._ensure_open(f"add TMEM-pointer slot {_label(alloc)!r}")
        self._check_alloc(alloc, "add_tmem_ptr()")
        if self._tmem_ptr_alloc is not None and self._tmem_ptr_alloc is not alloc:
            raise ValueError(
                f"a TMEM-pointer slot is already registered ({self._tmem_ptr_alloc.name!r}); "
                f"cannot register {alloc.name!r} too"
            )
        if alloc.size_bytes < hardware.TMEM_PTR_BYTES:
            raise DeclarationError(
                f"TMEM-pointer slot {alloc.name!r} has {alloc.size_bytes:,} B; it must hold a 32-bit address "
                f"({hardware.TMEM_PTR_BYTES} B)",
                allocation=alloc.name,
                field="size_bytes",
            )
        if alloc.alignment < hardware.TMEM_PTR_BYTES:
            raise DeclarationError(
                f"TMEM-pointer slot {alloc.name!r} has alignment {alloc.alignment}; it needs at least "
                f"{hardware.TMEM_PTR_BYTES}",
                allocation=alloc.name,
                field="alignment",
            )
        self._add_many([alloc])
        self._tmem_ptr_alloc = alloc
        return alloc

    @property
    def tmem_ptr_alloc(self) -> SmemAllocation | None:
        """The registered TMEM-pointer slot, or ``None``."""
        return self._tmem_ptr_alloc

    def _tmem_ptr(self) -> Any:
        return self._tmem_ptr_alloc

    # -- totals ------------------------------------------------------------------

    @property
    def total_smem_bytes(self) -> int:
        """Data bytes (barriers excluded), after ``compute_layout()``."""
        return self.total

    @property
    def unified_smem_bytes(self) -> int:
        """Bytes of the one SMEM array: data rounded up to 8, then barriers."""
        return self.plan.unified_bytes

    def check_capacity(self, arch: str | int | hardware.Arch | None = None):
        """Raise :class:`CapacityError` if the layout does not fit ``arch``;
        otherwise return the :class:`CapacityCheck`."""
        return self.plan.check(arch)


class TmemAllocator(_BaseAllocator):
    """Tensor-memory allocator: column offsets (no alignment), at most 512 columns.

    The kernel passes :attr:`tcgen05_alloc_columns` to ``tcgen05.alloc``.
    """

    _memory: Literal["smem", "tmem"] = "tmem"
    _unit = "cols"
    _requirements_hook = "get_tmem_requirements"

    def __init__(self, arch: str | int | hardware.Arch | None = None, steps: Any = None) -> None:
        super().__init__(arch, steps)
        if self._arch is not None and not self._arch.has_tmem:
            raise ValueError(f"{self._arch.name} ({self._arch.family}) has no tensor memory")

    def _check_alloc(self, alloc: Any, where: str) -> None:
        if isinstance(alloc, TmemAllocation):
            check_tmem_fields(alloc)
            return
        if isinstance(alloc, SmemAllocation) or hasattr(alloc, "size_bytes"):
            raise TypeError(f"{where}: {_label(alloc)!r} is an SMEM allocation; give it to an SmemAllocator")
        if all(hasattr(alloc, f) for f in ("name", "num_columns", "offset")):
            check_tmem_fields(alloc)
            return
        raise TypeError(f"{where}: expected a TmemAllocation, got {type(alloc).__name__} {alloc!r}")

    _own_type = TmemAllocation
    _check_fields = staticmethod(check_tmem_fields)

    def _size(self, alloc: Any) -> int:
        return int(alloc.num_columns)

    def _data_capacity(self) -> int | None:
        arch = self._arch if self._arch is not None else device.default_arch("tmem")
        return arch.tmem_columns

    def _check_capacity_before_commit(self, total: int) -> None:
        arch = self._arch if self._arch is not None else device.default_arch("tmem")
        largest = sorted(self.allocations, key=lambda a: -a.num_columns)[:3]
        verdict = CapacityCheck(
            arch.name, "tmem", total, arch.tmem_columns, "cols", tuple((a.name, a.num_columns, 1) for a in largest)
        )
        if not verdict.fits:
            raise CapacityError(verdict.message())

    @property
    def total_tmem_columns(self) -> int:
        """Columns the layout uses (after ``compute_layout()``)."""
        return self.total

    @property
    def tcgen05_alloc_columns(self) -> int:
        """Columns to request from ``tcgen05.alloc``: a power of two from 32 to 512."""
        return hardware.tmem_alloc_columns(self.total, self.arch)
