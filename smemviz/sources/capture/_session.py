"""The capture session: ``with smemviz.capture() as cap: cute.compile(...)``.

While the block runs, the DSL's allocators are wrapped (see ``_hooks``) and a
trace-finalize hook, scoped to this context, sees each traced module before it
is compiled. From the module the session takes each allocation's place (the
compiler's own layout pass, on a copy) and each kernel's total; from the
wrappers what was asked for and where. A kernel it cannot account for entirely
is refused with the reason, never shown in part.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ... import hardware
from ..._dtypes import dtype_name
from ...layout._plan import LayoutPlan
from .._inputs import LayoutPair
from . import _hooks
from ._branches import branch_groups, describe_arms
from ._build import smem_plan, swizzle_label, tmem_plan
from ._compiled import (
    branch_indices,
    experimental_buffers,
    if_ops,
    launch_requests,
    merging_kernels,
    raw_smem_ops,
    run_layout_pass,
    walk_allocas,
)
from ._experimental import experimental_dsl, experimental_refusal
from ._hooks import Pending, PendingTmem
from ._records import CapturedAllocation, CapturedTmem
from ._tma_atoms import take_tma_atoms, with_regions

if TYPE_CHECKING:
    from ...layout.ordering import OrderingModel
    from ._bank_accesses import CapturedCopy
    from ._ordering_hooks import GemmOperand, OrderingTrace, PipelineProbe

__all__ = ["Capture", "CaptureError", "KernelCapture", "capture"]


class CaptureError(RuntimeError):
    """A kernel whose shared memory capture cannot account for, or a capture with nothing (yet) to show."""


@dataclass(frozen=True)
class KernelCapture:
    """Everything captured for one kernel: its allocations, its compiled total, its plans."""

    kernel: str
    allocations: tuple[CapturedAllocation, ...]
    tmem: tuple[CapturedTmem, ...]
    total: int  # the dynamic SMEM bytes the compiler gives its launch
    plan: LayoutPlan
    tmem_plan: LayoutPlan | None
    total_from: str = ""  # where ``total`` comes from: the compiler's layout, or the launch's own smem=
    # one line per alias group made of an if's exclusive arms (SMEM groups first, then TMEM): why it is safe
    branches: tuple[str, ...] = ()
    # the kernel's pipelines, syncs and accesses per warp role, as traced (check it with smemviz.analysis.ordering.check_ordering)
    ordering: OrderingModel | None = None
    # every SMEM ld/st, ldmatrix/stmatrix and cp.async copy, with its lanes' addresses as compiled
    # (the plan's ``accesses`` hold the declared accesses that give the same addresses)
    banks: tuple[CapturedCopy, ...] = ()
    # what the ordering model leaves out (read_ncu reads it): each GEMM operand read with its role (A, B) and its
    # call's form (SS, RS, TS), and each pipeline's try_wait / try_acquire probe of its barriers
    gemm_operands: tuple[GemmOperand, ...] = ()
    probes: tuple[PipelineProbe, ...] = ()


class Capture(_hooks.Recorder):
    """Records the SMEM and TMEM allocations of every kernel traced while it is open."""

    def __init__(self, arch: str | int | hardware.Arch | None = None) -> None:
        self._arch = hardware.get_arch(arch).name if arch is not None else None
        self._pending: list[tuple[Pending, Any]] = []
        self._fields: dict[int, tuple[Pending, str]] = {}
        self._tmem: list[PendingTmem] = []
        self.ordering_trace = _new_trace()  # what the ordering wrappers record, read after each trace
        self._pools: dict[int, int] = {}
        self._kernels: dict[str, KernelCapture] = {}
        self._refused: dict[str, str] = {}
        self._failures: list[str] = []  # recording that went wrong (the kernels compiled regardless)
        self._error: BaseException | None = None
        self._stack: contextlib.ExitStack | None = None
        self._traced_arch: str | None = None  # what the DSL compiles the current trace for
        self._open = False
        # a capture open around this one: what the wrappers tell this one, they tell it too
        self._outer: _hooks.Recorder | None = None

    # -- the context ---------------------------------------------------------------

    def __enter__(self) -> Capture:
        if self._stack is not None:
            raise RuntimeError(
                "a capture records one with block and this one was already opened; open a new smemviz.capture() instead"
            )
        from cutlass.cutlass_dsl import CuTeDSL

        stack = contextlib.ExitStack()
        try:
            _hooks.install()
            stack.callback(_hooks.uninstall)
            self._outer = _hooks.ACTIVE.get()
            token = _hooks.ACTIVE.set(self)
            stack.callback(_hooks.ACTIVE.reset, token)
            stack.enter_context(CuTeDSL._get_dsl().trace_finalize_hooks(self._on_traced))
            experimental = experimental_dsl()
            if experimental is not None:  # its traces are refused by name, not left unseen
                stack.enter_context(experimental.trace_finalize_hooks(self._on_traced_experimental))
        except BaseException:
            stack.close()
            raise
        self._stack, self._open = stack, True
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._stack is not None
        self._open = False
        self._stack.close()
        if exc is not None:  # tracing (or anything else) raised: keep nothing, let it propagate
            self._error = exc
            self._kernels.clear()
        self._pending.clear()
        self._fields.clear()
        self._tmem.clear()
        self.ordering_trace.clear()

    # -- what the wrappers call --------------------------------------------------------

    def add_smem(self, pending: Pending, result: Any) -> None:
        self._pending.append((pending, result))
        if pending.how == "struct" and result is not None:
            self._map_fields(pending, result, pending.struct, "")
        if self._outer is not None:
            self._outer.add_smem(pending, result)

    def _map_fields(self, pending: Pending, instance: Any, dec: Any, prefix: str) -> None:
        from cutlass.cute import struct

        for name, member in dec._annotations.items():
            inner = member.dtype if isinstance(member, struct._AlignMeta) else member
            try:
                value = object.__getattribute__(instance, name)
            except AttributeError:
                continue
            if isinstance(inner, struct):
                self._map_fields(pending, value, inner, prefix + name + ".")
            elif isinstance(value, struct._MemRangeData):
                pending.keep.append(value)
                self._fields[id(value)] = (pending, prefix + name)

    def field_of(self, obj: Any) -> tuple[Pending, str] | None:
        found = self._fields.get(id(obj))
        if found is None and self._outer is not None:
            return self._outer.field_of(obj)
        return found

    def fail(self, why: str) -> None:
        kernel = _hooks._current_kernel()  # name the kernel being traced, when there is one
        if kernel and not why.startswith("kernel "):
            why = f"kernel {kernel!r}: {why}"
        self._failures.append(why)
        if self._outer is not None:
            self._outer.fail(why)

    def add_tmem(self, pending: PendingTmem) -> None:
        self._tmem.append(pending)
        if self._outer is not None:
            self._outer.add_tmem(pending)

    def map_pool(self, pool: Any, kernel: str | None) -> None:
        blocks = [i for i, t in enumerate(self._tmem) if t.how == "block" and t.kernel == kernel]
        if blocks:
            self._pools[id(pool)] = sum(1 for t in self._tmem[: blocks[-1]] if t.how == "block" and t.kernel == kernel)
        if self._outer is not None:
            self._outer.map_pool(pool, kernel)

    def pool_block(self, pool: Any) -> int | None:
        return self._pools.get(id(pool))

    # -- after tracing ---------------------------------------------------------------

    def _on_traced(self, dsl: Any, module: Any, function_name: str) -> None:
        """The DSL's trace-finalize hook: it must never fail the compile, so a problem is recorded instead."""
        try:
            self._collect(dsl, module)
        except Exception as e:
            self._failures.append(f"reading the traced module of {function_name!r} failed: {type(e).__name__}: {e}")

    def _on_traced_experimental(self, dsl: Any, module: Any, function_name: str) -> None:
        """A trace of the DSL's experimental front end: its kernels' buffers are refused, by kernel."""
        self._pending, self._tmem = [], []
        self._fields.clear()
        self.ordering_trace = _new_trace()
        take_tma_atoms(self)
        try:
            buffers = experimental_buffers(module)
            for site in walk_allocas(module):
                if site.smem:
                    counts = buffers.setdefault(site.kernel or "?", {})
                    counts["allocator"] = counts.get("allocator", 0) + 1
        except Exception as e:
            self._failures.append(f"reading the traced module of {function_name!r} failed: {type(e).__name__}: {e}")
            return
        for kernel, counts in buffers.items():
            self._refused[kernel] = experimental_refusal(counts)

    def _collect(self, dsl: Any, module: Any) -> None:
        self._traced_arch = _compile_arch(dsl)
        pending, self._pending = self._pending, []
        tmem, self._tmem = self._tmem, []
        self._fields.clear()
        trace, self.ordering_trace = self.ordering_trace, _new_trace()
        tma = take_tma_atoms(self)
        sites = walk_allocas(module)
        smem_sites = [s for s in sites if s.smem]
        kernels = sorted({s.kernel for s in smem_sites if s.kernel} | {t.kernel for t in tmem if t.kernel})
        refused: dict[str, str] = {}
        for kernel, op_name in raw_smem_ops(module):
            refused.setdefault(
                kernel or "?",
                f"it takes shared memory outside cutlass.memory.SmemAllocator "
                f"({op_name}), so its layout is not the allocator's",
            )
        by_site: dict[int, Pending] = {}
        for p, _ in pending:
            for s in smem_sites:
                if p.op is not None and s.op == p.op:
                    by_site[s.index] = p
                    break
        for s in smem_sites:
            if s.index not in by_site:
                refused.setdefault(
                    s.kernel or "?",
                    f"its SMEM allocation #{s.index} ({s.type_text}) was not made through cutlass.memory.SmemAllocator",
                )
        requests = launch_requests(module)
        shape = _Shape(module, merging_kernels(module))
        result = None
        if smem_sites:
            try:
                result = run_layout_pass(module, len(sites))
            except Exception as e:  # the pass on the copy failed: say so for every kernel
                for k in kernels:
                    refused.setdefault(k, f"the compiler's SMEM layout pass could not run on a copy: {e}")
        for kernel in kernels:
            if kernel in refused:
                self._refused[kernel] = refused[kernel]
                continue
            try:
                self._kernels[kernel] = self._kernel(
                    kernel, smem_sites, by_site, result, tmem, requests.get(kernel), shape
                )
            except CaptureError as e:
                self._refused[kernel] = str(e)
                continue
            self._kernels[kernel] = self._with_ordering(self._kernels[kernel], trace, module, smem_sites, result)
            self._kernels[kernel] = self._with_banks(self._kernels[kernel], trace, module, smem_sites, result)
            if tma:  # the TMA atoms the trace built (its host function's): on each of its kernels' plans
                self._kernels[kernel] = replace(
                    self._kernels[kernel],
                    plan=replace(
                        self._kernels[kernel].plan, tma_atoms=with_regions(tma, self._kernels[kernel].ordering)
                    ),
                )

    def _with_ordering(
        self, kc: KernelCapture, trace: OrderingTrace, module: Any, sites: list[Any], result: Any
    ) -> KernelCapture:
        """The kernel's capture with its ordering model; one that cannot be built is an empty
        model saying why (so the check gives an info finding), never a refused capture."""
        placed = [(s.op, result.offsets.get(s.index)) for s in sites if s.kernel == kc.kernel and result is not None]

        def alloca_offset(op: Any) -> int | None:
            return next((off for candidate, off in placed if candidate == op), None)

        def region_at(byte: int) -> str | None:
            return next((r.name for r in kc.plan.regions if r.offset <= byte < r.offset + max(r.size, 1)), None)

        from ._ordering import BesideModel, build_ordering, unread_model

        arch = self._arch or self._traced_arch
        try:
            model, beside = build_ordering(trace, module, kc.kernel, alloca_offset, region_at, arch)
        except Exception as e:  # the memory plan stands; the model says it could not be read
            model = unread_model(kc.kernel, arch, f"reading its ordering failed: {type(e).__name__}: {e}")
            beside = BesideModel()
        from ._tmem_views import tmem_view_plan

        tmem = tmem_view_plan(kc.tmem_plan, [r for r in model.regions if r.memory == "tmem"], arch)
        return replace(
            kc,
            ordering=model,
            plan=replace(kc.plan, ordering=model),
            tmem_plan=tmem,
            gemm_operands=beside.gemm_operands,
            probes=beside.probes,
        )

    def _with_banks(
        self, kc: KernelCapture, trace: OrderingTrace, module: Any, sites: list[Any], result: Any
    ) -> KernelCapture:
        """The kernel's capture with its SMEM copies' lane addresses, and the plan with the
        declared accesses that give the same addresses; one that cannot be read is left out
        with the reason (``banks``' ``unread``), never a refused capture."""
        placed = [(s.op, result.offsets.get(s.index)) for s in sites if s.kernel == kc.kernel and result is not None]

        def alloca_offset(op: Any) -> int | None:
            return next((off for candidate, off in placed if candidate == op), None)

        try:
            from ._bank_accesses import bank_records, plan_accesses

            records = bank_records(trace, module, kc.kernel, alloca_offset, kc.plan)
            found = tuple(a for a in plan_accesses(records) if a not in kc.plan.accesses)
            plan = replace(kc.plan, accesses=kc.plan.accesses + found) if found else kc.plan
        except Exception as e:  # the memory plan stands; the reading says it failed
            from ._bank_accesses import CapturedCopy

            why = f"reading the SMEM copies failed: {type(e).__name__}: {e}"
            return replace(kc, banks=(CapturedCopy(kc.kernel, "?", "?", "", None, None, unread=why),))
        return replace(kc, banks=records, plan=plan)

    def _kernel(  # noqa: PLR0913 - what one trace gives each of its kernels
        self,
        kernel: str,
        sites: list[Any],
        by_site: dict[int, Pending],
        result: Any,
        tmem: list[PendingTmem],
        requested: int | None,
        shape: _Shape,
    ) -> KernelCapture:
        mine = [s for s in sites if s.kernel == kernel]
        records: list[CapturedAllocation] = []
        views: dict[int, dict[str, str]] = {}
        names: dict[str, int] = {}
        for s in mine:
            p = by_site[s.index]
            if result is None or s.index not in result.offsets:
                raise CaptureError(
                    f"the compiler's layout pass gave no offset for allocation #{s.index} ({s.type_text})"
                )
            name = _name(p)
            seen = names.get(name, 0)
            names[name] = seen + 1
            if seen:
                name = f"{name}#{seen + 1}"
            layout = p.layout
            dtype = dtype_name(p.dtype) if p.dtype is not None else ("u8" if p.how == "bytes" else None)
            records.append(
                CapturedAllocation(
                    name=name,
                    how=p.how,  # type: ignore[arg-type]
                    size=int(p.size or 0),
                    alignment=int(p.alignment or 1),
                    partition=int(p.partition if p.partition is not None else 1),
                    source=p.site.source if p.site else None,
                    kernel=kernel,
                    offset=result.offsets[s.index],
                    dtype=dtype,
                    count=_count(p),
                    layout=layout,
                    swizzle=swizzle_label(layout),
                    struct=p.struct,
                    via=p.site.via if p.site else None,
                )
            )
            if p.field_views:
                views[len(records) - 1] = dict(p.field_views)
        total, total_from = _total(records, result.totals.get(kernel) if result is not None else None, requested)
        prefixes = _struct_prefixes(records)
        arch = self._arch or self._traced_arch
        launch = (requested, max([a.end for a in records] + [0])) if requested is not None else None
        smem_arms = branch_groups([s.branch for s in mine]) if kernel in shape.merging else []
        plan = smem_plan(records, views, total, arch, prefixes, launch, smem_arms)
        tm = [t for t in tmem if t.kernel == kernel]
        tmem_records = _tmem_records(tm, kernel)
        blocks = [(t, c) for t, c in zip(tm, tmem_records) if c.pool is None]  # as tmem_plan counts them
        tmem_arms = branch_groups([branch_indices(t.branch, shape.ifs) or () if t.branch else () for t, _ in blocks])
        return KernelCapture(
            kernel,
            tuple(records),
            tmem_records,
            total,
            plan,
            tmem_plan(list(tmem_records), arch, tmem_arms) if tm else None,
            total_from,
            describe_arms("SMEM", smem_arms, [a.name for a in records], [a.source for a in records])
            + describe_arms("TMEM", tmem_arms, [c.name for _, c in blocks], [c.source for _, c in blocks]),
        )

    # -- results -----------------------------------------------------------------

    def _ready(self) -> None:
        if self._open:
            raise CaptureError("the capture is still open: read cap.plan after the with block")
        if self._error is not None:
            raise CaptureError(
                f"nothing captured: the block raised {type(self._error).__name__}: {self._error}"
            ) from self._error
        if self._failures:
            raise CaptureError(
                "capture could not record this compile (the kernel itself is unchanged): " + "; ".join(self._failures)
            )
        if self._refused:
            reasons = "; ".join(f"kernel {k!r}: {why}" for k, why in self._refused.items())
            raise CaptureError(f"cannot capture {reasons}")
        if not self._kernels:
            raise CaptureError(
                "no kernel with SMEM or TMEM allocations was traced inside the capture "
                "(was the kernel compiled inside the with block? a cached compile traces too)"
            )

    @property
    def kernels(self) -> Mapping[str, KernelCapture]:
        """Each captured kernel, by its symbol."""
        self._ready()
        return dict(self._kernels)

    @property
    def refused(self) -> Mapping[str, str]:
        """Kernels that could not be captured, with the reason."""
        return dict(self._refused)

    @property
    def plans(self) -> Mapping[str, LayoutPlan]:
        """The SMEM plan of each kernel, by its symbol."""
        return {k: v.plan for k, v in self.kernels.items()}

    @property
    def tmem_plans(self) -> Mapping[str, LayoutPlan]:
        return {k: v.tmem_plan for k, v in self.kernels.items() if v.tmem_plan is not None}

    def _one(self) -> KernelCapture:
        kernels = self.kernels
        if len(kernels) != 1:
            raise CaptureError(f"{len(kernels)} kernels were captured ({', '.join(kernels)}); pick one from cap.plans")
        return next(iter(kernels.values()))

    @property
    def plan(self) -> LayoutPlan:
        """The SMEM plan of the one kernel captured."""
        return self._one().plan

    @property
    def tmem_plan(self) -> LayoutPlan | None:
        return self._one().tmem_plan

    @property
    def layouts(self) -> tuple[LayoutPlan, ...]:
        """The SMEM plan and, when the kernel allocates TMEM, its TMEM plan: what explore/export take."""
        one = self._one()
        return (one.plan,) if one.tmem_plan is None else (one.plan, one.tmem_plan)

    def __smemviz_layout__(self, arch: Any = None) -> LayoutPair:
        """What explore, export and the figures take: the one kernel's maps, titled by its symbol."""
        one = self._one()
        return LayoutPair(one.plan, one.tmem_plan, one.kernel, arch or one.plan.arch)

    def __repr__(self) -> str:
        if self._open:
            return "<smemviz capture (open)>"
        kinds = ", ".join(f"{k}: {v.total} B" for k, v in self._kernels.items()) or "nothing"
        return f"<smemviz capture of {kinds}>"


def _new_trace() -> OrderingTrace:
    from ._ordering_hooks import OrderingTrace  # imported late: the ordering package imports the analysis floor

    return OrderingTrace()


def _compile_arch(dsl: Any) -> str | None:
    """The architecture the DSL compiles this trace for (``--gpu-arch`` or ``$CUTE_DSL_ARCH``), if known."""
    try:
        arch = dsl.get_arch_enum()
        return hardware.get_arch(f"sm_{arch.major}{arch.minor}").name
    except Exception:  # no arch chosen, or one smemviz does not know: plans judge capacity only when asked
        return None


class _Shape:
    """What one traced module says about its kernels' control flow."""

    def __init__(self, module: Any, merging: set[str]) -> None:
        self._module = module
        self.merging = merging  # kernels launched with smem_merge_branch_allocs=True

    @cached_property
    def ifs(self) -> list[Any]:
        """Every scf.if, in printing order (an if's index names it in a branch path); walked
        only when a TMEM allocation lies in one."""
        return if_ops(self._module)


def _total(records: list[CapturedAllocation], compiled: int | None, requested: int | None) -> tuple[int, str]:
    """The kernel's dynamic SMEM and where it comes from: what its launch states (``smem=``)
    when that is more than the allocations need, else the compiler's own size for them."""
    end = max([a.end for a in records] + [0])
    needed = compiled if compiled is not None else end
    how = "the compiler's launch size for its allocations" if compiled is not None else "the end of its allocations"
    if requested is None:
        return needed, how
    if requested >= needed:
        return requested, f"the launch's smem={requested} (its allocations end at {end} B)"
    return needed, f"{how}: the launch states smem={requested}, less than the {needed} B they need"


def _name(p: Pending) -> str:
    if p.given_name:
        return str(p.given_name)
    if p.site is not None and p.site.via == "cutlass.memory.tmem":
        return "tmem_holding_buf" if p.how == "scalar" and getattr(p.dtype, "width", 0) == 32 else "tmem_dealloc_mbar"
    if p.site is not None and p.site.assigned:
        return p.site.assigned
    if p.site is not None:
        return f"{p.how}@{p.site.source}"
    return p.how


def _count(p: Pending) -> int | None:
    if p.how in ("struct",):
        return None
    if p.how == "bytes":
        return int(p.size or 0)
    if p.dtype is not None and p.size is not None:
        width = 8 if getattr(p.dtype, "__name__", "") == "Boolean" else int(getattr(p.dtype, "width", 8))
        return p.size * 8 // width if width else None
    return p.count if isinstance(p.count, int) else None


def _struct_prefixes(records: list[CapturedAllocation]) -> dict[int, str]:
    """Field paths stay bare unless two structs (or a struct and another allocation) would share a name."""
    structs = [i for i, a in enumerate(records) if a.how == "struct"]
    if not structs:
        return {}
    if len(structs) == 1:
        fields = set(records[structs[0]].struct._annotations)
        if not any(a.name in fields for a in records if a.how != "struct"):
            return {}
    return {i: f"{records[i].name}." for i in structs}


def _tmem_records(pending: list[PendingTmem], kernel: str) -> tuple[CapturedTmem, ...]:
    out = []
    blocks = 0
    for t in pending:
        name = t.given_name or (t.site.assigned if t.site else None)
        if t.how == "block":
            name = name or ("tmem" if blocks == 0 else f"tmem#{blocks + 1}")
            blocks += 1
        else:
            name = name or f"pool@{t.site.source if t.site else '?'}"
        out.append(
            CapturedTmem(
                name=name,
                columns=t.columns,
                offset=t.offset,
                source=t.site.source if t.site else None,
                kernel=kernel,
                dtype=dtype_name(t.dtype) if t.dtype is not None else None,
                layout=t.layout,
                pool=t.block if t.how == "pool" else None,
            )
        )
    return tuple(out)


def capture(arch: str | int | hardware.Arch | None = None) -> Capture:
    """Record the shared and tensor memory of every kernel compiled inside the ``with`` block.

    ``with smemviz.capture() as cap: compiled = cute.compile(host, *args)``, then
    ``cap.plan`` (one kernel) or ``cap.plans`` (by kernel symbol). ``arch`` is
    the architecture the plans judge capacity against (default: the one the
    DSL compiles for, ``--gpu-arch`` or ``$CUTE_DSL_ARCH``).
    """
    return Capture(arch)
