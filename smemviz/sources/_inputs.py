"""One rule for "give smemviz a layout", shared by every entry point.

Figures, the explorer, exports, the command line and the kernel bridge all
turn what they are handed into plans here, so they accept and refuse the same
things:

* a :class:`~smemviz.LayoutPlan`;
* a computed smemviz ``SmemAllocator``/``TmemAllocator``, or a computed
  CUTLASS ``task_scheduling`` allocator;
* a CuTe DSL ``@cute.struct`` shared-storage class (or its plain class, or an
  instance), read by :func:`~smemviz.plan_from_struct`;
* any object with a ``__smemviz_layout__(arch)`` method returning a
  :class:`LayoutPair` (a layout file's ``LayoutSpec``, an explorer, ...);
* a tuple or list of at most one SMEM and one TMEM layout of the kinds
  above, in either order; ``None`` items are skipped.

Refused: an allocator whose layout is not computed yet (computing it would
freeze the caller's allocator behind their back: call ``compute_layout()``
first), two layouts of the same memory, an empty pair, anything else.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from .. import hardware
from .._errors import LayoutStateError
from ..layout._plan import LayoutPlan
from ._cutlass import is_cutlass_allocator, plan_from_cutlass
from ._struct import is_cute_struct, plan_from_struct

__all__ = ["LayoutPair", "Which", "as_plan", "as_layouts", "built_plans", "LAYOUT_HOOK"]

Which = Literal["both", "smem", "tmem"]
_WHICH = ("both", "smem", "tmem")
LAYOUT_HOOK = "__smemviz_layout__"  # the method an object offers to be read as a layout


@dataclass(frozen=True)
class LayoutPair:
    """An SMEM plan and a TMEM plan (either may be missing), a title, an arch."""

    smem: LayoutPlan | None
    tmem: LayoutPlan | None
    title: str | None = None
    arch: str | None = None

    @property
    def plans(self) -> tuple[LayoutPlan, ...]:
        return tuple(p for p in (self.smem, self.tmem) if p is not None)


def _describe(obj: Any) -> str:
    name = getattr(obj, "name", None)
    return f"{type(obj).__name__} {name!r}" if isinstance(name, str) else type(obj).__name__


def _one_plan(obj: Any, arch: str | None) -> LayoutPlan:
    if isinstance(obj, LayoutPlan):
        return obj
    from ..layout._allocator import _BaseAllocator  # same layer: the allocator module builds plans

    if isinstance(obj, _BaseAllocator):
        if not obj.layout_computed:
            raise LayoutStateError(
                f"the {type(obj).__name__} has no layout yet: call compute_layout() on it first "
                "(smemviz does not compute a caller's allocator, since that freezes it)"
            )
        return obj.plan
    if is_cutlass_allocator(obj):
        if not getattr(obj, "_layout_computed", False):
            raise LayoutStateError(f"call compute_layout() on the CUTLASS {type(obj).__name__} first")
        return plan_from_cutlass(obj, arch=arch)
    if is_cute_struct(obj):
        return plan_from_struct(obj, arch=arch)
    raise TypeError(
        "expected a LayoutPlan, a computed smemviz or CUTLASS allocator, a @cute.struct class, a layout file's spec, "
        f"or an (SMEM, TMEM) pair of those; got {_describe(obj)}"
    )


def as_plan(obj: Any, arch: Any = None) -> LayoutPlan:
    """The one plan ``obj`` holds (see the module docstring for what is accepted)."""
    pair = as_layouts(obj, arch=arch)
    if pair.smem is not None and pair.tmem is not None:
        raise ValueError(f"expected one layout, got an SMEM and a TMEM layout from {_describe(obj)}")
    plan = pair.smem if pair.smem is not None else pair.tmem
    assert plan is not None  # as_layouts refuses an empty result
    return plan


def as_layouts(obj: Any, *, which: str = "both", arch: Any = None) -> LayoutPair:
    """The SMEM and TMEM plans ``obj`` holds, with ``arch`` (if given) set on both.

    ``which`` ("both", "smem", "tmem") keeps one memory and requires it.
    """
    if which not in _WHICH:
        raise ValueError(f"which must be one of {', '.join(repr(w) for w in _WHICH)}; got {which!r}")
    arch_name = hardware.get_arch(arch).name if arch is not None else None
    pair = _collect(obj, arch_name)
    smem, tmem = pair.smem, pair.tmem
    if which == "smem":
        if smem is None:
            raise ValueError("which='smem' but there is no SMEM layout")
        tmem = None
    elif which == "tmem":
        if tmem is None:
            raise ValueError("which='tmem' but there is no TMEM layout")
        smem = None
    if arch_name is not None:
        smem = replace(smem, arch=arch_name) if smem is not None else None
        tmem = replace(tmem, arch=arch_name) if tmem is not None else None
    first = smem if smem is not None else tmem
    return LayoutPair(smem, tmem, pair.title, arch_name or pair.arch or (first.arch if first else None))


def _collect(obj: Any, arch: str | None) -> LayoutPair:
    hook = getattr(type(obj), LAYOUT_HOOK, None)
    if hook is not None:
        got = hook(obj, arch)
        if not isinstance(got, LayoutPair):
            raise TypeError(f"{type(obj).__name__}.{LAYOUT_HOOK}() returned {type(got).__name__}, not a LayoutPair")
        if got.smem is None and got.tmem is None:
            raise ValueError(f"nothing to show: {_describe(obj)} holds no layout")
        return got
    items = list(obj) if isinstance(obj, (tuple, list)) else [obj]
    if len(items) > 2:
        raise TypeError(f"expected a layout or an (SMEM, TMEM) pair, got a {type(obj).__name__} of {len(items)} items")
    smem: LayoutPlan | None = None
    tmem: LayoutPlan | None = None
    for item in items:
        if item is None:
            continue
        plan = _one_plan(item, arch)
        if plan.memory == "smem":
            if smem is not None:
                raise ValueError("got two SMEM layouts; pass at most one SMEM and one TMEM layout")
            smem = plan
        else:
            if tmem is not None:
                raise ValueError("got two TMEM layouts; pass at most one SMEM and one TMEM layout")
            tmem = plan
    if smem is None and tmem is None:
        raise ValueError(f"nothing to show: {obj!r} holds no layout")
    return LayoutPair(smem, tmem)


def built_plans(result: Any) -> tuple[LayoutPlan | None, LayoutPlan | None]:
    """``(smem, tmem)`` plans of what a builder returned, computing the
    builder's own fresh allocators where it did not."""
    for item in result if isinstance(result, (tuple, list)) else [result]:
        if item is None or isinstance(item, LayoutPlan):
            continue
        done = getattr(item, "layout_computed", None)
        if done is None and is_cutlass_allocator(item):
            done = getattr(item, "_layout_computed", False)
        if done is False and callable(getattr(item, "compute_layout", None)):
            item.compute_layout()
    pair = as_layouts(result)
    return pair.smem, pair.tmem
