"""What the SMEM and TMEM allocators share: declarations, their checks, and computing the layout.

Every call is validated before anything changes, so a refused call leaves the
allocator as it was. ``compute_layout()`` packs the blocks as CUTLASS does
(:mod:`._packing`) or, with lifetimes, hands them to the solver
(:mod:`._solver_call`); the result is read as an immutable :class:`~smemviz.LayoutPlan`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal

from .. import hardware
from .._errors import DeclarationError, LayoutStateError
from ..solver import SOLVERS, Times, check_steps, describe_live, read_live
from ._allocation import _is_int
from ._build import Lifetimes, build_plan
from ._fit_budget import check_fit, data_room, refuse_over_fit
from ._packing import Placed, member_offsets, pack_blocks
from ._plan import LayoutPlan
from ._solver_call import Declarations, solve_placement

__all__ = ["capacity_checks_deferred"]

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
        self._live: dict[int, frozenset[int] | Times] = {}  # id(allocation) -> steps (or time values) it is live in
        self._lifetimes: Lifetimes | None = None  # set when the layout was solved from lifetimes
        self._allocations: list[Any] = []
        self._added: set[int] = set()
        self._alias_groups: list[list[list[Any]]] = []
        self._aliased: set[int] = set()
        self._layout_computed = False
        self._total = 0
        self._plan: LayoutPlan | None = None
        self._fixed: dict[int, tuple[int, int, int]] = {}  # id -> (offset, size, alignment) as computed
        self._layout_to_beat: dict[int, int] = {}  # id -> offset of a known valid layout (groups_to_lifetimes)

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

    def _read_lives(self, allocs: Sequence[Any], live: Any, owner: str = "") -> dict[int, frozenset[int] | Times]:
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
                    + (
                        "live in every step"
                        if id(a) not in self._live
                        else f"with live steps {describe_live(self._live[id(a)])}"
                    )
                    + f"; cannot add it again live in {describe_live(steps)}"
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

    def _add_many(self, allocs: Sequence[Any], lives: dict[int, frozenset[int] | Times] | None = None) -> None:
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
                    raise DeclarationError(
                        f"allocation {a.name!r} is already in another alias group", allocation=a.name
                    )
                seen.add(id(a))
        self._alias_groups.append(phase_lists)
        self._aliased |= seen

    # -- layout ----------------------------------------------------------------

    def compute_layout(
        self, solver: str | None = None, node_budget: int | Literal["auto"] = "auto", fit: int | None = None
    ) -> None:
        """Give every allocation its ``offset`` and fix the layout.

        Without lifetimes, blocks are packed as CUTLASS packs them. With ``live=``
        steps, or when ``solver`` is given, the layout is solved: ``"auto"``
        (the default then) searches exactly within ``node_budget`` search nodes
        and never does worse than the best greedy layout, ``"exact"`` the same,
        ``"greedy"`` only first fit. Alias groups are then read as lifetimes
        (see :func:`groups_to_lifetimes`) and the hand-written layout is the one
        to beat. Nothing changes when this raises (bad field, over capacity).

        ``node_budget="auto"`` is 2,000,000 nodes, fewer for large layouts
        (the same few seconds of search; it depends on the declarations only,
        so the layout is the same on any machine). ``fit`` is a capacity in
        units (bytes, TMEM columns) with no arch to name: a layout over it is
        refused, and the solver stops at the first layout within it.
        """
        if self._layout_computed:
            raise LayoutStateError("compute_layout() already called")
        if solver is not None and solver not in SOLVERS:
            raise ValueError(f"solver must be one of {', '.join(map(repr, SOLVERS))}, got {solver!r}")
        if node_budget != "auto" and not _is_int(node_budget):
            raise TypeError(
                f"node_budget must be an int >= 0 or 'auto', got {type(node_budget).__name__} {node_budget!r}"
            )
        if node_budget != "auto" and node_budget < 0:
            raise ValueError(f"node_budget must be an int >= 0 or 'auto', got {node_budget!r}")
        fit = check_fit(fit)
        for a in self.allocations:
            self._recheck(a)
        self._refuse_duplicate_names()
        placed, total = self._packed_layout()
        if solver is None and not self._live:
            if _CAPACITY_CHECKS.get():
                self._check_capacity_before_commit(total)
                if fit is not None:
                    refuse_over_fit(self, total, fit, getattr(self, "_barrier_bytes", 0), solved=False)
            self._commit(placed, total)
            return
        self._solve_lifetimes(solver or "auto", None if node_budget == "auto" else node_budget, placed, fit)

    def _recheck(self, a: Any) -> None:  # allocations are mutable: check them again
        if type(a) is self._own_type:
            self._check_fields(a)
        else:
            self._check_alloc(a, "compute_layout()")

    def _packed_layout(self) -> tuple[list[Placed], int]:
        """CUTLASS's layout: (block, base offset, size, alignment) for every block, and the total."""
        return pack_blocks(self._allocations, self._aliased, self._alias_groups, self._size, self._align)

    def _member_offsets(self, placed: list[Placed]) -> list[Placed]:
        """(allocation, offset, size, alignment) for every allocation of a packed layout."""
        return member_offsets(placed, self._size, self._align)

    def _commit(self, placed: list[Placed], total: int) -> None:
        # nothing here can fail. The placement is also kept apart from the (mutable)
        # allocations, so the plan shows the layout as computed here even if an
        # allocation is changed afterwards.
        self._fixed = {}
        for a, offset, size, al in self._member_offsets(placed):
            a.offset = offset
            self._fixed[id(a)] = (offset, size, al)
        self._total = total
        self._layout_computed = True

    def _solve_lifetimes(self, solver: str, node_budget: int | None, packed: list[Placed], fit: int | None) -> None:
        allocs = list(self.allocations)
        barriers = getattr(self, "_barrier_bytes", 0)
        room = data_room(self._memory, fit, barriers) if fit is not None else None
        capacity = self._data_capacity()
        declared = Declarations(allocs, self._size, self._align, dict(self._live), self._alias_groups, self._steps)
        offsets, total, lifetimes = solve_placement(
            declared,
            {id(a): o for a, o, _, _ in self._member_offsets(packed)},
            also=self._layout_to_beat,
            solver=solver,
            node_budget=node_budget,
            target=min((c for c in (capacity, room) if c is not None), default=None),
            enough=room,
        )
        if _CAPACITY_CHECKS.get():
            self._check_capacity_before_commit(total)
            if fit is not None:
                refuse_over_fit(self, total, fit, barriers, solved=True)
        self._fixed = {}
        for a, o in zip(allocs, offsets):
            a.offset = o
            self._fixed[id(a)] = (o, self._size(a), self._align(a))
        self._total = total
        self._lifetimes = lifetimes
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
                    allocation=name,
                    field="name",
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
        return self._usage_report("usage_report()")

    def print_usage_report(self) -> None:
        """Print the usage table: every region, alias groups, totals."""
        print(self._usage_report("print_usage_report()"))

    def _usage_report(self, caller: str) -> str:
        self._require_layout(caller)
        from ..analysis._report import text_report  # CUTLASS's allocator API prints the report: a listed arrow

        return text_report(self.plan)

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
