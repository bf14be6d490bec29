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

import copy
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal

from . import hardware
from ._aliasing import DEFAULT_NODE_BUDGET, SOLVERS, solve
from ._allocation import (
    SmemAllocation,
    TmemAllocation,
    _is_int,
    check_smem_fields,
    check_tmem_fields,
)
from ._errors import CapacityError, DeclarationError, DeclarationTypeError, LayoutStateError
from ._lifetimes import check_steps, phase_lifetimes, read_live
from ._pipelines import Pipeline, PipelineConfig
from ._plan import CapacityCheck, LayoutPlan, Lifetimes, build_plan
from ._units import align_up

__all__ = ["SmemAllocator", "TmemAllocator", "groups_to_lifetimes", "compare_layouts", "capacity_checks_deferred"]

# Off inside ``capacity_checks_deferred()``: the explorer calls a layout builder
# there, so an allocator made with ``arch=`` still computes an over-capacity
# layout, which the explorer then draws past the capacity line and reports.
_CAPACITY_CHECKS: ContextVar[bool] = ContextVar("smemviz_capacity_checks", default=True)


@contextmanager
def capacity_checks_deferred() -> Iterator[None]:
    """Within this block ``compute_layout()`` does not refuse a layout for
    exceeding its allocator's arch; the caller checks the plan's capacity."""
    token = _CAPACITY_CHECKS.set(False)
    try:
        yield
    finally:
        _CAPACITY_CHECKS.reset(token)


def _label(obj: Any) -> str:
    name = getattr(obj, "name", None)
    return name if isinstance(name, str) and name else type(obj).__name__


class _BaseAllocator:
    """Declaration bookkeeping and layout shared by the SMEM and TMEM allocators."""

    _memory: Literal["smem", "tmem"] = "smem"
    _unit = "B"
    # the allocation class this allocator owns, and its field check (set by subclasses)
    _own_type: type = object
    _check_fields: Callable[[Any], None] = staticmethod(lambda alloc: None)

    def __init__(self, arch: str | int | hardware.Arch | None = None, steps: Any = None) -> None:
        self._arch = hardware.get_arch(arch) if arch is not None else None
        self._steps = check_steps(steps)
        self._live: dict[int, frozenset[int]] = {}  # id(allocation) -> steps it is live in
        self._lifetimes: Lifetimes | None = None  # set when the layout was solved from lifetimes
        self._allocations: list[Any] = []
        self._added: set[int] = set()
        self._alias_groups: list[list[list[Any]]] = []
        self._aliased: set[int] = set()
        self._layout_computed = False
        self._total = 0
        self._plan: LayoutPlan | None = None
        self._fixed: dict[int, tuple[int, int, int]] = {}  # id -> (offset, size, alignment) as computed

    # -- hooks ---------------------------------------------------------------

    def _check_alloc(self, alloc: Any, where: str) -> None:
        raise NotImplementedError

    def _size(self, alloc: Any) -> int:
        raise NotImplementedError

    def _align(self, alloc: Any) -> int:
        return 1

    # -- declaration -----------------------------------------------------------

    @property
    def arch(self) -> str | None:
        return self._arch.name if self._arch else None

    @property
    def layout_computed(self) -> bool:
        return self._layout_computed

    def _ensure_open(self, action: str) -> None:
        if self._layout_computed:
            raise LayoutStateError(
                f"cannot {action}: compute_layout() was already called on this {type(self).__name__}; "
                "declare everything first, or start a new allocator"
            )

    @property
    def steps(self) -> tuple[str, ...] | None:
        """The program steps named with ``steps=``, or None."""
        return self._steps

    def add(self, alloc: Any, live: Any = None) -> Any:
        """Register a standalone allocation and return it.

        ``live`` says in which steps it is live: a step name, an int step, a
        set or list of them, or ``range(first, stop)``; without it, every step.
        Adding the same object again is a no-op: each allocation is laid out once.
        """
        if self._layout_computed:
            self._ensure_open(f"add {_label(alloc)!r}")
        # smemviz's own allocations were checked when made (and are checked again
        # by compute_layout(), as they are mutable); anything else is checked here
        if type(alloc) is not self._own_type:
            self._check_alloc(alloc, "add()")
        lives = self._read_lives([alloc], live)
        key = id(alloc)
        if key not in self._added:
            self._allocations.append(alloc)
            self._added.add(key)
        self._live.update(lives)
        return alloc

    def _read_lives(self, allocs: Sequence[Any], live: Any, owner: str = "") -> dict[int, frozenset[int]]:
        """Check ``live=`` for ``allocs`` without changing anything; id -> steps.

        A resource that declares no allocations has its ``live=`` checked all the
        same (under the resource's name, ``owner``): a wrong step is wrong there too.
        """
        if live is not None and not allocs:
            read_live(live, self._steps, owner, what="resource")
        if live is None:
            for a in allocs:
                if id(a) in self._live and id(a) in self._added:
                    raise ValueError(
                        f"allocation {_label(a)!r} was added with live= steps; add it again with the same steps or not at all"
                    )
            return {}
        out = {}
        for a in allocs:
            steps = read_live(live, self._steps, _label(a))
            if id(a) in self._added and self._live.get(id(a)) != steps:
                raise ValueError(
                    f"allocation {_label(a)!r} was already added "
                    + ("live in every step" if id(a) not in self._live else f"with live steps {sorted(self._live[id(a)])}")
                    + f"; cannot add it again live in {sorted(steps)}"
                )
            out[id(a)] = steps
        if out and self._alias_groups:
            first = self._alias_groups[0]
            members = " | ".join(" + ".join(_label(a) for a in phase) for phase in first)
            raise ValueError(
                f"allocation {_label(allocs[0])!r} has live= steps, but this allocator also has alias group 1 "
                f"[{members}]; use one or the other (groups_to_lifetimes() turns the groups into steps)"
            )
        return out

    def _add_many(self, allocs: Sequence[Any], lives: dict[int, frozenset[int]] | None = None) -> None:
        for a in allocs:
            if id(a) not in self._added:
                self._allocations.append(a)
                self._added.add(id(a))
        if lives:
            self._live.update(lives)

    def _collect_requirements(self, resource: Any, hook: str) -> list[Any]:
        method = getattr(resource, hook, None)
        if method is None:
            return []
        reqs = method()
        if reqs is None:
            return []
        try:
            reqs = list(reqs)
        except TypeError:
            raise TypeError(
                f"resource {_label(resource)!r}: {hook}() must return a list of allocations, got {reqs!r}"
            ) from None
        for a in reqs:
            self._check_alloc(a, f"resource {_label(resource)!r}")
        return reqs

    def add_resource(self, resource: Any, live: Any = None) -> None:
        """Register every allocation a resource declares (all live in ``live``)."""
        self._ensure_open(f"add resource {_label(resource)!r}")
        hook = self._requirements_hook
        if not hasattr(resource, hook):
            raise TypeError(f"resource {_label(resource)!r} has no {hook}() method")
        reqs = self._collect_requirements(resource, hook)
        self._add_many(reqs, self._read_lives(reqs, live, _label(resource)))

    _requirements_hook = "get_smem_requirements"

    def add_alias_group(self, phases: Sequence[Sequence[Any]]) -> None:
        """Declare phases that reuse one region in turn.

        Allocations within a phase coexist and are packed one after another;
        every phase starts at the group's base. Members need not be ``add()``-ed.
        """
        self._ensure_open("add an alias group")
        if self._live:
            first = next(a for a in self.allocations if id(a) in self._live)
            raise ValueError(
                f"cannot add an alias group: allocation {_label(first)!r} has live= steps; use one or the other "
                "(live= steps let the solver find the sharing that alias groups spell out)"
            )
        if isinstance(phases, (str, bytes)) or not isinstance(phases, Iterable):
            raise TypeError(f"alias group must be a list of phases (lists of allocations), got {phases!r}")
        phase_lists = []
        for i, phase in enumerate(phases):
            if isinstance(phase, (str, bytes)) or not isinstance(phase, Iterable):
                raise TypeError(
                    f"alias group phase {i + 1} must be a list of allocations, got {type(phase).__name__} {phase!r}"
                )
            phase_lists.append(list(phase))
        if len(phase_lists) < 2:
            raise ValueError(
                f"an alias group needs at least 2 phases, got {len(phase_lists)}: "
                + repr([[_label(a) for a in p] for p in phase_lists])
            )
        seen: set[int] = set()
        for i, phase in enumerate(phase_lists):
            if not phase:
                raise ValueError(f"alias group phase {i + 1} is empty")
            where = f"alias group phase {i + 1}"
            for a in phase:
                self._check_alloc(a, where)
                if id(a) in seen:
                    raise DeclarationError(
                        f"allocation {a.name!r} appears twice in the same alias group", allocation=a.name
                    )
                if id(a) in self._aliased:
                    raise DeclarationError(f"allocation {a.name!r} is already in another alias group", allocation=a.name)
                seen.add(id(a))
        self._alias_groups.append(phase_lists)
        self._aliased |= seen

    # -- layout ----------------------------------------------------------------

    def compute_layout(self, solver: str | None = None, node_budget: int = DEFAULT_NODE_BUDGET) -> None:
        """Give every allocation its ``offset`` and fix the layout.

        Without lifetimes, blocks are packed as CUTLASS packs them. With ``live=``
        steps, or when ``solver`` is given, the layout is solved: ``"auto"``
        (the default then) searches exactly within ``node_budget`` search nodes
        and never does worse than the best greedy layout, ``"exact"`` the same,
        ``"greedy"`` only first fit. Alias groups are then read as lifetimes
        (see :func:`groups_to_lifetimes`) and the hand-written layout is the one
        to beat. Nothing changes when this raises (bad field, over capacity).
        """
        if self._layout_computed:
            raise LayoutStateError("compute_layout() already called")
        if solver is not None and solver not in SOLVERS:
            raise ValueError(f"solver must be one of {', '.join(map(repr, SOLVERS))}, got {solver!r}")
        if not _is_int(node_budget):
            raise TypeError(f"node_budget must be an int >= 0, got {type(node_budget).__name__} {node_budget!r}")
        if node_budget < 0:
            raise ValueError(f"node_budget must be an int >= 0, got {node_budget!r}")
        for a in self.allocations:
            self._recheck(a)
        self._refuse_duplicate_names()
        placed, total = self._packed_layout()
        if solver is None and not self._live:
            if _CAPACITY_CHECKS.get():
                self._check_capacity_before_commit(total)
            self._commit(placed, total)
            return
        self._solve_lifetimes(solver or "auto", node_budget, placed)

    def _recheck(self, a: Any) -> None:  # allocations are mutable: check them again
        if type(a) is self._own_type:
            self._check_fields(a)
        else:
            self._check_alloc(a, "compute_layout()")

    def _packed_layout(self) -> tuple[list[tuple[Any, int, int, int]], int]:
        """CUTLASS's layout: (block, base offset, size, alignment) for every block, and the total."""
        size_of, align_of = self._size, self._align
        aliased = self._aliased
        blocks: list[tuple[int, int, Any]] = []  # (alignment, size, alloc or group)
        for a in self._allocations:
            if id(a) not in aliased:
                blocks.append((align_of(a), size_of(a), a))
        for group in self._alias_groups:
            g_size = 0
            g_align = 1
            for phase in group:
                cursor = 0
                for a in phase:
                    al = align_of(a)
                    if al > g_align:
                        g_align = al
                    cursor = align_up(cursor, al) + size_of(a)
                if cursor > g_size:
                    g_size = cursor
            blocks.append((g_align, g_size, group))
        blocks.sort(key=_by_alignment_desc)

        offsets: list[tuple[Any, int, int, int]] = []
        cursor = 0
        for al, size, item in blocks:
            base = align_up(cursor, al)
            offsets.append((item, base, size, al))
            cursor = base + size
        return offsets, cursor

    def _member_offsets(self, placed: list[tuple[Any, int, int, int]]) -> list[tuple[Any, int, int, int]]:
        """(allocation, offset, size, alignment) for every allocation of a packed layout."""
        size_of, align_of = self._size, self._align
        out = []
        for item, base, size, al in placed:
            if type(item) is list:
                for phase in item:
                    c = base
                    for a in phase:
                        a_align = align_of(a)
                        c = align_up(c, a_align)
                        a_size = size_of(a)
                        out.append((a, c, a_size, a_align))
                        c += a_size
            else:
                out.append((item, base, size, al))
        return out

    def _commit(self, placed: list[tuple[Any, int, int, int]], total: int) -> None:
        # nothing here can fail. The placement is also kept apart from the (mutable)
        # allocations, so the plan shows the layout as computed here even if an
        # allocation is changed afterwards.
        self._fixed = {}
        for a, offset, size, al in self._member_offsets(placed):
            a.offset = offset
            self._fixed[id(a)] = (offset, size, al)
        self._total = total
        self._layout_computed = True

    def _solve_lifetimes(self, solver: str, node_budget: int, packed: list[tuple[Any, int, int, int]]) -> None:
        allocs = list(self.allocations)
        live = dict(self._live)
        if self._alias_groups:
            steps, live = phase_lifetimes(self._alias_groups)
        elif self._steps is not None:
            steps = self._steps
        else:
            steps = tuple(str(k) for k in range(max((max(v) for v in live.values()), default=0) + 1))
        every = frozenset(range(len(steps)))
        # the packed layout is valid for any lifetimes: the solver's layout to beat
        given = {id(a): o for a, o, _, _ in self._member_offsets(packed)}
        solution = solve(
            [self._size(a) for a in allocs],
            [self._align(a) for a in allocs],
            [live.get(id(a), every) for a in allocs],
            solver=solver,  # type: ignore[arg-type]
            node_budget=node_budget,
            incumbents=[[given[id(a)] for a in allocs]],
            target=self._data_capacity(),  # the search also asks for a layout that fits
        )
        if _CAPACITY_CHECKS.get():
            self._check_capacity_before_commit(solution.peak)
        self._fixed = {}
        for a, o in zip(allocs, solution.offsets):
            a.offset = o
            self._fixed[id(a)] = (o, self._size(a), self._align(a))
        self._total = solution.peak
        self._lifetimes = Lifetimes(
            steps=steps,
            live={k: tuple(sorted(v)) for k, v in live.items()},
            lower_bound=solution.lower_bound,
            optimal=solution.optimal,
            solver=solution.solver,
        )
        self._layout_computed = True

    def _refuse_duplicate_names(self) -> None:
        """Two different allocations of one name are refused, as layout files refuse them:
        the plan, the report and ``plan.region(name)`` find regions by name."""
        first: dict[str, int] = {}
        members = [*self._allocations, *(a for g in self._alias_groups for p in g for a in p)]
        slot = getattr(self, "_tmem_ptr_alloc", None)
        if slot is not None:
            members.append(slot)
        for a in members:
            name = getattr(a, "name", None)
            if not isinstance(name, str):
                continue
            if first.setdefault(name, id(a)) != id(a):
                raise DeclarationError(
                    f"two different allocations are named {name!r}; names must be unique in one "
                    f"{type(self).__name__} (rename one, or add the same object twice)",
                    allocation=name, field="name",
                )

    def _check_capacity_before_commit(self, total: int) -> None:
        pass

    def _data_capacity(self) -> int | None:
        """The most units the data layout may take on this arch, or None without an arch."""
        return None

    def _reset_copy(self) -> None:
        """Give a shallow copy its own mutable state (see :func:`groups_to_lifetimes`)."""

    def _require_layout(self, what: str) -> None:
        if not self._layout_computed:
            raise LayoutStateError(f"call compute_layout() before {what}")

    @property
    def total(self) -> int:
        """Units the data layout needs (after ``compute_layout()``)."""
        self._require_layout("reading total")
        return self._total

    @property
    def allocations(self) -> tuple[Any, ...]:
        """Every declared allocation: standalone ones in add order, then group members."""
        out = list(self._allocations)
        seen = set(self._added)
        for group in self._alias_groups:
            for phase in group:
                for a in phase:
                    if id(a) not in seen:
                        seen.add(id(a))
                        out.append(a)
        return tuple(out)

    @property
    def alias_groups(self) -> tuple[tuple[tuple[Any, ...], ...], ...]:
        return tuple(tuple(tuple(p) for p in g) for g in self._alias_groups)

    # -- the plan ----------------------------------------------------------------

    def _barrier_entries(self) -> list[tuple[str, int]]:
        return []

    def _tmem_ptr(self) -> Any:
        return None

    @property
    def plan(self) -> LayoutPlan:
        """The computed layout as an immutable :class:`LayoutPlan`."""
        self._require_layout("reading the plan")
        if self._plan is None:
            # offsets, sizes and alignments come from compute_layout(); names and
            # types are read from the allocations, so they are checked again
            own_type, check_fields = self._own_type, self._check_fields
            for a in self.allocations:
                if type(a) is own_type:
                    check_fields(a)
                else:
                    self._check_alloc(a, "reading the plan")
            fixed = self._fixed
            solved = self._lifetimes is not None
            self._plan = build_plan(
                self._memory,
                self.allocations if solved else [a for a in self._allocations if id(a) not in self._aliased],
                [] if solved else self._alias_groups,
                self._total,
                size_of=lambda a: fixed[id(a)][1],
                align_of=lambda a: fixed[id(a)][2],
                offset_of=lambda a: fixed[id(a)][0],
                barriers=self._barrier_entries(),
                tmem_ptr=self._tmem_ptr(),
                arch=self.arch,
                lifetimes=self._lifetimes,
            )
        return self._plan

    def usage_report(self) -> str:
        """The usage table as text."""
        self._require_layout("usage_report()")
        return self.plan.report()

    def print_usage_report(self) -> None:
        """Print the usage table: every region, alias groups, totals."""
        self._require_layout("print_usage_report()")
        print(self.plan.report())

    def _repr_html_(self) -> str:
        if not self._layout_computed:
            from html import escape

            return (
                f"<div><b>{escape(type(self).__name__)}</b>: {len(self.allocations)} allocations, "
                f"{len(self._alias_groups)} alias groups, layout not computed yet</div>"
            )
        return self.plan._repr_html_()

    def __repr__(self) -> str:
        state = f"total={self._total} {self._unit}" if self._layout_computed else "not computed"
        return (
            f"{type(self).__name__}({len(self.allocations)} allocations, "
            f"{len(self._alias_groups)} alias groups, {state})"
        )


def barriers_per_stage(group: Any) -> int:
    """Barrier pairs per stage of a pipeline group: its ``num_barriers_per_stage``,
    or, for groups from CUTLASS releases before 4.8 that lack it, members + 1
    (one full barrier per member and a shared empty one, as those releases counted)."""
    label = _label(group)
    per_stage = getattr(group, "num_barriers_per_stage", None)
    if per_stage is None:
        members = getattr(group, "members", None)
        try:
            count = len(members) if members is not None else 0
        except TypeError:
            count = 0
        if count <= 0:
            raise DeclarationError(
                f"pipeline group {label!r} has neither num_barriers_per_stage nor members to count "
                f"(members + 1 barrier pairs per stage), got members={members!r}",
                allocation=label, field="members",
            )
        return count + 1
    if not _is_int(per_stage) or per_stage <= 0:
        raise DeclarationError(
            f"pipeline group {label!r}: num_barriers_per_stage must be a positive int, got {per_stage!r}",
            allocation=label, field="num_barriers_per_stage",
        )
    return per_stage


def _by_alignment_desc(block: tuple[int, int, Any]) -> int:
    return -block[0]


class SmemAllocator(_BaseAllocator):
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
            raise TypeError(
                f"{where}: {_label(alloc)!r} is a TMEM allocation; give it to a TmemAllocator"
            )
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
            self._arch.name, "smem", unified, self._arch.smem_per_block, "B",
            tuple((a.name, a.size_bytes, a.alignment) for a in largest),
            breakdown=f"data {total:,} B + barriers {self._barrier_bytes:,} B",
        )
        if not verdict.fits:
            raise CapacityError(verdict.message())

    # -- pipelines -------------------------------------------------------------

    @staticmethod
    def _stages(cfg: Any, kind: str, label: str) -> int:
        stages = getattr(cfg, "num_stages", None)
        if not _is_int(stages) or stages <= 0:
            raise DeclarationError(
                f"{kind} {label!r}: pipeline_config.num_stages must be a positive int, got {stages!r}",
                allocation=label,
                field="num_stages",
            )
        return stages

    def add_resource(self, resource: Any, live: Any = None) -> None:
        """Register a resource's data allocations (all live in ``live``) and,
        when it owns a pipeline whose barriers are not placed yet,
        ``num_stages * 16`` bytes of mbarriers (always live).

        Members of a pipeline group leave their barriers to the group
        (see :meth:`add_pipeline_group`).
        """
        label = _label(resource)
        self._ensure_open(f"add resource {label!r}")
        cfg = getattr(resource, "pipeline_config", None)
        if not hasattr(resource, "get_smem_requirements") and cfg is None:
            raise TypeError(
                f"resource {label!r} has neither get_smem_requirements() nor a pipeline_config"
            )
        reqs = self._collect_requirements(resource, "get_smem_requirements")
        needs_barriers = (
            cfg is not None
            and getattr(cfg, "barrier_ptr", None) is None
            and getattr(resource, "pipeline_group", None) is None
        )
        nbytes = self._stages(cfg, "resource", label) * hardware.BARRIER_BYTES_PER_STAGE if needs_barriers else 0
        lives = self._read_lives(reqs, live, label)
        self._add_many(reqs, lives)
        if needs_barriers:
            self._barrier_resources.append(resource)
            self._add_barriers(self._resource_barriers, f"{label}.barriers", nbytes)

    def add_pipeline(self, name: str, stages: int) -> Pipeline:
        """Declare a pipeline that owns ``stages`` x 16 B of mbarriers (a layout
        file's ``[[pipeline]]``) and return it; its region is ``<name>.barriers``."""
        if not isinstance(name, str) or not name:
            raise DeclarationTypeError(f"pipeline name must be a non-empty str, got {name!r}", field="name")
        self._stages(PipelineConfig(stages), "pipeline", name)  # checked before anything changes
        taken = [label for label, _ in self._barrier_entries()]
        if f"{name}.barriers" in taken:
            raise DeclarationError(f"pipeline {name!r} is declared twice (its barriers {name}.barriers exist already)",
                                   allocation=name, field="name")
        pipeline = Pipeline(name, PipelineConfig(stages))
        self.add_resource(pipeline)
        return pipeline

    def add_pipeline_group(self, group: Any) -> None:
        """Register a pipeline group's barriers: ``(N + 1) * S`` stage pairs for
        N members and S stages (``num_barriers_per_stage * num_stages * 16`` bytes;
        a group without ``num_barriers_per_stage`` is counted as its members + 1)."""
        label = _label(group)
        self._ensure_open(f"add pipeline group {label!r}")
        cfg = getattr(group, "pipeline_config", None)
        if cfg is None:
            raise ValueError(
                f"pipeline group {label!r} has no pipeline_config; register it once the group is built"
            )
        stages = self._stages(cfg, "pipeline group", label)
        per_stage = barriers_per_stage(group)
        self._barrier_groups.append(group)
        self._add_barriers(self._group_barriers, f"{label}.barriers", per_stage * stages * hardware.BARRIER_BYTES_PER_STAGE)

    def _add_barriers(self, into: list, name: str, nbytes: int) -> None:
        align = hardware.MBARRIER_ALIGNMENT
        self._barrier_bytes = align_up(self._barrier_bytes, align) + nbytes
        into.append((name, nbytes))

    def _barrier_entries(self) -> list[tuple[str, int]]:
        return self._resource_barriers + self._group_barriers

    @property
    def barrier_smem_bytes(self) -> int:
        """Bytes of pipeline mbarrier storage (16 per stage per pipeline)."""
        return self._barrier_bytes

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

    # -- trace time (needs the CuTe DSL) ----------------------------------------------

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
            raise TypeError(
                f"allocation {alloc.name!r} has no dtype; use get_as_type(alloc, dtype, count)"
            )
        from . import _emit

        return _emit.typed_view(self._smem_base, self._offset_of(alloc), alloc.dtype, alloc.count)

    def get_as_type(self, alloc: SmemAllocation, dtype: Any, count: int = 1) -> Any:
        """A ``cutlass.Array`` view of ``alloc`` reinterpreted as ``count`` x ``dtype``."""
        self._require_allocated("get_as_type()")
        self._check_member(alloc, "get_as_type()")
        from ._dtypes import dtype_bytes

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
            raise TypeError(
                f"{where}: {_label(alloc)!r} is an SMEM allocation; give it to an SmemAllocator"
            )
        if all(hasattr(alloc, f) for f in ("name", "num_columns", "offset")):
            check_tmem_fields(alloc)
            return
        raise TypeError(f"{where}: expected a TmemAllocation, got {type(alloc).__name__} {alloc!r}")

    _own_type = TmemAllocation
    _check_fields = staticmethod(check_tmem_fields)

    def _size(self, alloc: Any) -> int:
        return int(alloc.num_columns)

    def _data_capacity(self) -> int | None:
        arch = self._arch if self._arch is not None else hardware.default_arch("tmem")
        return arch.tmem_columns

    def _check_capacity_before_commit(self, total: int) -> None:
        arch = self._arch if self._arch is not None else hardware.default_arch("tmem")
        largest = sorted(self.allocations, key=lambda a: -a.num_columns)[:3]
        verdict = CapacityCheck(arch.name, "tmem", total, arch.tmem_columns, "cols",
                                tuple((a.name, a.num_columns, 1) for a in largest))
        if not verdict.fits:
            raise CapacityError(verdict.message())

    @property
    def total_tmem_columns(self) -> int:
        """Columns the layout uses (after ``compute_layout()``)."""
        return self.total

    @property
    def tcgen05_alloc_columns(self) -> int:
        """Columns to request from ``tcgen05.alloc``: a power of two from 32 to 512."""
        return hardware.tmem_alloc_columns(self.total)


def groups_to_lifetimes(allocator: _BaseAllocator) -> Any:
    """A new allocator with the same declarations, where the alias groups are
    read as lifetimes, so the solver can re-lay them out.

    Each step is one combination of phases (one per group): phases of a group
    are live in different steps, phases of different groups and every other
    allocation meet in some step. The hand-written layout stays valid, so the
    solved one is never larger. The allocations themselves are shared: the
    one laid out last sets their offsets.
    """
    if not isinstance(allocator, _BaseAllocator):
        raise TypeError(f"expected an SmemAllocator or TmemAllocator, got {type(allocator).__name__}")
    steps, live = phase_lifetimes(allocator._alias_groups)
    new = copy.copy(allocator)
    new._allocations = list(allocator.allocations)
    new._added = {id(a) for a in new._allocations}
    new._alias_groups = []
    new._aliased = set()
    new._steps = steps
    new._live = live
    new._lifetimes = None
    new._layout_computed = False
    new._total = 0
    new._plan = None
    new._reset_copy()
    return new


def _clone(allocator: _BaseAllocator) -> Any:
    """An uncomputed copy with copies of every allocation (so laying it out
    leaves the caller's offsets alone)."""
    twins = {id(a): copy.copy(a) for a in allocator.allocations}
    new = copy.copy(allocator)
    new._allocations = [twins[id(a)] for a in allocator._allocations]
    new._added = {id(a) for a in new._allocations}
    new._alias_groups = [[[twins[id(a)] for a in phase] for phase in group] for group in allocator._alias_groups]
    new._aliased = {id(a) for g in new._alias_groups for p in g for a in p}
    new._live = {id(twins[k]): v for k, v in ((id(a), allocator._live.get(id(a))) for a in allocator.allocations) if v}
    new._lifetimes = None
    new._layout_computed = False
    new._total = 0
    new._plan = None
    new._reset_copy()
    ptr = getattr(allocator, "_tmem_ptr_alloc", None)
    if ptr is not None:
        setattr(new, "_tmem_ptr_alloc", twins[id(ptr)])  # noqa: B010 (SMEM allocators only)
    return new


def compare_layouts(allocator: _BaseAllocator, node_budget: int = DEFAULT_NODE_BUDGET) -> dict[str, LayoutPlan]:
    """Plans of the same declarations laid out three ways, for comparison:

    * ``"hand-written"`` (alias groups as declared) or ``"no aliasing"`` (when
      sharing comes only from ``live=`` steps): the layout without a solver;
    * ``"greedy"``: first fit in the best of several orders;
    * ``"optimal"``: the exact search (``optimal`` says whether it is proven).

    The allocator itself is not laid out; capacity is not enforced here.
    """
    if not isinstance(allocator, _BaseAllocator):
        raise TypeError(f"expected an SmemAllocator or TmemAllocator, got {type(allocator).__name__}")
    with capacity_checks_deferred():
        plain = _clone(allocator)
        plain._live = {}
        plain.compute_layout()
        out = {"hand-written" if allocator._alias_groups else "no aliasing": plain.plan}
        for label, solver in (("greedy", "greedy"), ("optimal", "auto")):
            solved = _clone(allocator)
            if solved._alias_groups:
                solved = groups_to_lifetimes(solved)
            solved.compute_layout(solver=solver, node_budget=node_budget)
            out[label] = solved.plan
    return out
