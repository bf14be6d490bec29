"""Read a CuTe DSL ``@cute.struct`` shared-storage class into a :class:`LayoutPlan`.

Most CuTe DSL kernels declare their shared memory as a ``SharedStorage``
struct (``MemRange``, ``Align[...]``, nested structs, unions) rather than
through an allocator. The DSL computes the struct's offsets itself; this
module reads those offsets (``_offsets``, ``__sizeof__()``, ``__alignof__()``)
and never recomputes them, so the plan shows exactly what the kernel gets.

Each leaf field becomes one region named by its dotted path
(``"epi.sC"``). A ``@cute.union`` becomes an alias group whose phases are the
union's members. ``Int64`` fields named like barriers (``*_mbar_ptr``,
``*pipeline*``, ``*barrier*``) are mbarrier regions; an ``Int32`` field named
like the TMEM slot (``tmem_holding_buf``) is the TMEM-pointer slot.

cutlass is imported only inside functions: whoever passes a struct has
already imported it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import hardware
from .._dtypes import dtype_name
from ..layout._build import covered_bytes
from ..layout._plan import STRUCT_SOURCE, AliasGroup, LayoutPlan, Region, RegionKind

__all__ = ["plan_from_struct", "is_cute_struct"]

# field names that CuTe DSL kernels give their mbarrier arrays
_BARRIER_NAME = re.compile(r"mbar|barrier|pipeline|(^|_)bars?($|_)", re.IGNORECASE)
# field names of the SMEM slot that tcgen05.alloc writes the TMEM base address into
_TMEM_PTR_NAME = re.compile(r"tmem", re.IGNORECASE)
_BARRIER_DTYPES = ("i64", "u64")
_TMEM_PTR_DTYPES = ("i32", "u32")


def _is_decorator(obj: Any) -> bool:
    """A ``@cute.struct``/``@cute.union`` decorated class (the DSL's ``struct`` object)."""
    mod = type(obj).__module__ or ""
    return (
        mod.startswith("cutlass.")
        and hasattr(obj, "_offsets")
        and hasattr(obj, "_annotations")
        and hasattr(obj, "_cls")
        and callable(getattr(obj, "__alignof__", None))
    )


def _decorator_of_class(cls: type) -> Any:
    """The decorator object behind the plain class it wraps, or ``None``.

    The DSL keeps no back-reference on the class, but installs hooks that
    close over the decorator; the class's module binding is the fallback.
    """
    hook = cls.__dict__.get("__new_from_mlir_values__")
    for cell in getattr(hook, "__closure__", None) or ():
        try:
            candidate = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if _is_decorator(candidate) and candidate._cls is cls:
            return candidate
    module = sys.modules.get(cls.__module__ or "")
    target: Any = module
    for part in (cls.__qualname__ or "").split("."):
        target = getattr(target, part, None)
    if _is_decorator(target) and target._cls is cls:
        return target
    return None


def _resolve(obj: Any) -> Any:
    if _is_decorator(obj):
        return obj
    if isinstance(obj, type):
        found = _decorator_of_class(obj)
        if found is not None:
            return found
    elif hasattr(type(obj), "__new_from_mlir_values__"):  # an instance made inside a kernel
        found = _decorator_of_class(type(obj))
        if found is not None:
            return found
    return None


def is_cute_struct(obj: Any) -> bool:
    """Whether ``obj`` is a ``@cute.struct``/``@cute.union`` class, its plain class or an instance."""
    try:
        return _resolve(obj) is not None
    except Exception:  # a foreign object with odd attributes is simply not a struct
        return False


@dataclass
class _Walk:
    """What a walk over a struct collects."""

    barriers: frozenset[str]
    tmem_ptr: str | None
    swizzle: Mapping[str, str]
    stages: Mapping[str, int]
    tma: frozenset[str]
    regions: list[Region] = field(default_factory=list)
    groups: list[AliasGroup] = field(default_factory=list)
    used: set[str] = field(default_factory=set)

    def kind_of(self, path: str, dtype: str | None, count: int) -> RegionKind:
        leaf = path.rsplit(".", 1)[-1]
        if path in self.barriers:
            return "barrier"
        if self.tmem_ptr is not None:
            if path == self.tmem_ptr:
                return "tmem_ptr"
        elif dtype in _TMEM_PTR_DTYPES and count == 1 and _TMEM_PTR_NAME.search(leaf):
            return "tmem_ptr"
        if not self.barriers and dtype in _BARRIER_DTYPES and _BARRIER_NAME.search(leaf):
            return "barrier"
        return "data"


def _member_info(member: Any) -> tuple[int, Any]:
    """(declared alignment, the member's own type) with ``Align[...]`` peeled off."""
    from cutlass.cute import struct

    if isinstance(member, struct._AlignMeta):
        return int(member.align or 1), member.dtype
    return 1, member


def _walk(dec: Any, base: int, prefix: str, cursor: int, w: _Walk, group: int | None, phase: int | None) -> int:
    """Add the leaves of ``dec`` placed at ``base``; returns the end of the last one."""
    from cutlass.cute import struct, union

    is_union = isinstance(dec, union)
    my_group = group
    start = cursor
    phase_ends: list[int] = []
    if is_union:
        my_group = len(w.groups)
        w.groups.append(AliasGroup(my_group, base, 0, 1, ()))  # completed below
    for i, (name, member) in enumerate(dec._annotations.items()):
        offset = dec._offsets[name]
        if not isinstance(offset, int):
            raise TypeError(f"struct field {prefix + name!r}: offset {offset!r} is not a static int")
        offset += base
        declared, inner = _member_info(member)
        path = prefix + name
        my_phase = i if is_union else phase
        here = start if is_union else cursor
        if isinstance(inner, struct):
            end = _walk(inner, offset, path + ".", here, w, my_group, my_phase)
            size = inner.__sizeof__()
        else:
            if isinstance(inner, struct._MemRangeMeta):
                dtype, count = inner._dtype, int(inner.size or 0)
                size, natural = int(inner.size_in_bytes), max(1, inner.elem_width // 8)
            else:  # a scalar
                dtype, count = inner, 1
                size = natural = max(1, inner.width // 8)
            short = dtype_name(dtype)
            kind = w.kind_of(path, short, count)
            w.used.add(path)
            w.regions.append(
                Region(
                    name=path,
                    kind=kind,
                    offset=offset,
                    size=size,
                    alignment=max(declared, natural),
                    padding_before=max(0, offset - here),
                    group=my_group,
                    phase=my_phase,
                    dtype=short,
                    count=count,
                    index=len(w.regions),
                    swizzle=w.swizzle.get(path),
                    stages=w.stages.get(path),
                    tma=True if path in w.tma else None,
                )
            )
            end = offset + size
        if is_union:
            phase_ends.append(max(end, offset + size))
        else:
            cursor = max(here, end)
    if is_union:
        assert my_group is not None
        # the group spans its largest member; the union's own trailing padding
        # (its size rounded to its alignment) shows as padding after it
        phase_sizes = tuple(e - base for e in phase_ends)
        w.groups[my_group] = AliasGroup(my_group, base, max(phase_sizes), dec.__alignof__(), phase_sizes)
        return max([start, *phase_ends])
    return cursor


def _names(value: Collection[str] | None, what: str) -> frozenset[str]:
    if value is None:
        return frozenset()
    if isinstance(value, str):
        raise TypeError(f"{what} must be a collection of field names, got the string {value!r}")
    return frozenset(value)


def plan_from_struct(
    storage: Any,
    *,
    arch: str | int | hardware.Arch | None = None,
    swizzle: Mapping[str, str] | None = None,
    stages: Mapping[str, int] | None = None,
    tma: Collection[str] | None = None,
    barriers: Collection[str] | None = None,
    tmem_ptr: str | None = None,
) -> LayoutPlan:
    """The plan of a ``@cute.struct`` (or ``@cute.union``) shared-storage class.

    ``storage`` is the decorated class, the plain class it wraps or an instance.
    Offsets, sizes and the total are the DSL's own. Fields are named by dotted
    path; ``swizzle`` (``{"sA": "128B"}``), ``stages`` (``{"sA": 7}``) and ``tma``
    (names of TMA destinations) add what the struct cannot say, for
    :meth:`LayoutPlan.lint`. ``barriers`` names the mbarrier fields when the
    naming convention (``*_mbar_ptr``, ``*pipeline*``) does not find them;
    ``tmem_ptr`` names the TMEM-pointer slot likewise.
    """
    dec = _resolve(storage)
    if dec is None:
        raise TypeError(
            f"expected a @cute.struct class, its plain class or an instance, got {type(storage).__name__} {storage!r}"
        )
    swizzle = dict(swizzle or {})
    stages = dict(stages or {})
    for name, value in swizzle.items():
        if value is not None and value not in hardware.SWIZZLE_ATOM_BYTES:
            known = ", ".join(hardware.SWIZZLE_ATOM_BYTES)
            raise ValueError(f"struct field {name!r}: swizzle must be one of {known} or None, got {value!r}")
    for name, n in stages.items():
        if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
            raise ValueError(f"struct field {name!r}: stages must be a positive int, got {n!r}")
    w = _Walk(
        barriers=_names(barriers, "barriers"),
        tmem_ptr=tmem_ptr,
        swizzle=swizzle,
        stages=stages,
        tma=_names(tma, "tma"),
    )
    _walk(dec, 0, "", 0, w, None, None)
    asked = set(swizzle) | set(stages) | w.tma | w.barriers | ({tmem_ptr} if tmem_ptr else set())
    unknown = sorted(asked - w.used)
    if unknown:
        known = ", ".join(repr(r.name) for r in w.regions[:20])
        raise KeyError(f"{dec._cls.__name__} has no field {unknown[0]!r}; fields: {known}")
    size = int(dec.__sizeof__())
    # the struct's size is its total (barriers included); barrier_bytes says how much of it the mbarriers take
    return LayoutPlan(
        memory="smem",
        regions=tuple(sorted(w.regions, key=lambda r: (r.offset, r.index))),
        groups=tuple(w.groups),
        data_total=size,
        barrier_bytes=covered_bytes(r for r in w.regions if r.kind == "barrier"),
        base_alignment=int(dec.__alignof__()),
        arch=hardware.get_arch(arch).name if arch is not None else None,
        source=STRUCT_SOURCE,
    )
