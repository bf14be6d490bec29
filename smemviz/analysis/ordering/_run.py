"""One run of the unrolled kernel under the mbarrier rules, and the happens-before
order it shows.

The roles run in a fixed order, each as far as it can; async work (a TMA load, the
MMAs a ``tcgen05.commit`` tracks) completes as soon as it may. Each operation becomes
a node whose predecessors are what it must follow: the role's previous operation, the
arrivals that completed the phase a wait observed, the arrivals of a named-barrier
generation, the issue of an async operation. The checker then asks whether this run
stands for every schedule: whether each wait could only have seen the phase it saw and
each arrival could only have counted toward its phase (``waits`` and ``arrivals``).
Where it does, the kernel's hangs are this run's and its races are the pairs of
accesses this order leaves unordered.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...layout.ordering import _model as m
from ._unroll import BarrierKey, Op

__all__ = ["AccessRec", "BarState", "Run", "RoleState", "run", "TCGEN05_TRACKED", "WRITE_KINDS"]

WRITE_KINDS = frozenset(
    {"tma_load", "umma_write_acc", "st", "stmatrix", "cp_async", "tcgen05_st", "tcgen05_cp", "tmem_dealloc"}
)
SYNC_KINDS = frozenset({"ld", "st", "ldmatrix", "stmatrix"})
GROUP_UNITS = {"tma_store": "bulk", "wgmma_read": "wgmma", "cp_async": "cp_async"}
TCGEN05_TRACKED = frozenset({"umma_read", "umma_write_acc", "tcgen05_cp"})
PROXY_FENCES = frozenset({"proxy_async", "view_async_shared"})
CTA_WIDE = ("cta", "cluster")


@dataclass
class AccessRec:
    """An access as run: where it starts and ends in the order, and the bytes it touches."""

    start: int
    end: int | None
    role: int
    op: Op
    memory: str
    lo: int
    hi: int
    kind: str = ""
    region: str = ""
    write: bool = False
    site: str = ""
    more_ends: list[int] = field(
        default_factory=list
    )  # other nodes it is known done at (a warpgroup's peer retired it)

    def ends(self) -> list[int]:
        return ([self.end] if self.end is not None else []) + self.more_ends

    def __post_init__(self) -> None:
        e = self.op.event
        self.kind = e.kind if isinstance(e, m.Access) else "tmem_dealloc"
        self.region = e.region if isinstance(e, m.Access) else "TMEM allocation"
        self.write = self.kind in WRITE_KINDS
        self.site = str(e.site)


@dataclass
class BarState:
    """An mbarrier as run: its phases, and who arrived in each."""

    count: int
    completed: int = 0
    pending: int = 0
    tx: int = 0
    current: list[tuple[int, int, int]] = field(default_factory=list)  # (node, arrivals, tx)
    history: list[list[tuple[int, int, int]]] = field(default_factory=list)
    completion: list[int] = field(default_factory=list)
    expect_phase: dict[int, int] = field(default_factory=dict)  # role -> phase of its last expect_tx


@dataclass
class RoleState:
    """A role as run: where it is, and its async work not yet known done."""

    index: int
    name: str
    ops: list[Op]
    pc: int = 0
    last: int | None = None
    waiting_bar: tuple[str, int] | None = None
    open_groups: dict[str, list[AccessRec]] = field(default_factory=dict)
    committed: dict[str, list[list[AccessRec]]] = field(default_factory=dict)
    tc_pending: list[AccessRec] = field(default_factory=list)
    tc_ld: list[AccessRec] = field(default_factory=list)
    tc_st: list[AccessRec] = field(default_factory=list)
    last_commit: int | None = None  # a commit's arrive also waits for every earlier commit's
    wgmma_groups: int = 0  # WGMMA groups committed so far
    wgmma_all: list[list[AccessRec]] = field(default_factory=list)  # every WGMMA group, in order
    peer_upto: int = 0  # the WGMMA groups its waits retired for its warpgroup

    @property
    def done(self) -> bool:
        return self.pc >= len(self.ops)


@dataclass
class _BarGen:
    arrivals: list[int] = field(default_factory=list)
    threads: int = 0
    waiters: list[int] = field(default_factory=list)  # role indices


class Run:
    """The run's nodes, their order and what the checks need of them."""

    def __init__(self, model: m.OrderingModel, programs: list[tuple[str, list[Op]]]):
        self.model = model
        self.labels: list[str] = []
        self.node_role: list[int] = []
        self.node_op: list[Op | None] = []
        self.anc: list[int] = []
        self.preds: list[list[int]] = []
        self.roles = [RoleState(i, name, ops) for i, (name, ops) in enumerate(programs)]
        self.accesses: list[AccessRec] = []
        self.barriers: dict[BarrierKey, BarState] = {}
        self.waits: list[tuple[int, BarrierKey, int]] = []
        self.arrivals: list[tuple[int, BarrierKey, int]] = []
        self.overflows: list[tuple[int, BarrierKey, int]] = []
        self.tx_late: list[tuple[int, BarrierKey, int]] = []  # TMA bytes landing after their phase completed
        self.fences: dict[int, list[int]] = {}
        self.inits: dict[str, list[int]] = {}
        self.barrier_uses: list[tuple[int, str]] = []
        self.allocs: list[tuple[int, int, m.TmemAlloc]] = []
        self.deallocs: list[tuple[int, int, m.TmemDealloc]] = []
        self.cluster_syncs: list[int] = []
        self.bar_gens: dict[str, list[_BarGen]] = {}
        self.bar_overflows: list[tuple[int, str]] = []
        self.unread: list[str] = []
        self.warpgroup = _warpgroups(model, programs)
        self.wg_retired: dict[int, list[tuple[int, int, int]]] = {}  # warpgroup -> (role, groups retired, by node)

    # ---- the order

    def node(self, role: int, op: Op | None, label: str, preds: list[int]) -> int:
        n = len(self.labels)
        a = 0
        for p in preds:
            a |= self.anc[p] | (1 << p)
        self.labels.append(label)
        self.node_role.append(role)
        self.node_op.append(op)
        self.anc.append(a)
        self.preds.append(list(preds))
        return n

    def before(self, a: int, b: int) -> bool:
        """a happens before b (or is b)."""
        return a == b or bool((self.anc[b] >> a) & 1)

    def chain(self, r: RoleState, op: Op, label: str, extra: list[int] | None = None) -> int:
        preds = ([r.last] if r.last is not None else []) + (extra or [])
        n = self.node(r.index, op, label, preds)
        r.last = n
        return n

    # ---- mbarriers

    def bar(self, key: BarrierKey) -> BarState:
        if key not in self.barriers:
            p = self.model.pipeline(key[0])
            count = p.full_init() if key[1] == "full" else p.empty_init()
            self.barriers[key] = BarState(count=max(count, 1), pending=max(count, 1))
        return self.barriers[key]

    def arrive(self, node: int, key: BarrierKey, amount: int, tx: int) -> None:
        b = self.bar(key)
        self.arrivals.append((node, key, b.completed))
        self.barrier_uses.append((node, key[0]))
        b.current.append((node, amount, tx))
        if tx:
            b.expect_phase[self.node_role[node]] = b.completed
        spill = max(amount - b.pending, 0)
        if spill:
            self.overflows.append((node, key, b.completed))
        b.pending -= amount - spill
        b.tx += tx
        self.complete_if_done(b, node)
        if spill and b.pending == b.count:
            b.current.append((node, spill, 0))
            b.pending = max(b.pending - spill, 0)
            self.complete_if_done(b, node)

    def complete_tx(self, node: int, key: BarrierKey, tx: int) -> None:
        b = self.bar(key)
        expected = b.expect_phase.get(self.node_role[node], b.completed)
        if expected != b.completed:
            self.tx_late.append((node, key, expected))
        self.arrivals.append((node, key, b.completed))
        b.current.append((node, 0, -tx))
        b.tx -= tx
        self.complete_if_done(b, node)

    def complete_if_done(self, b: BarState, node: int) -> None:
        """A phase completes with its last contribution; its completion follows all of them."""
        if b.pending == 0 and b.tx == 0:
            done = self.node(self.node_role[node], None, f"phase {b.completed} complete", [c for c, _, _ in b.current])
            b.completion.append(done)
            b.history.append(b.current)
            b.current = []
            b.completed += 1
            b.pending = b.count

    # ---- named barriers

    def bar_threads(self, name: str) -> int | None:
        if name in CTA_WIDE:
            return self.model.threads
        for nb in self.model.barriers:
            if nb.name == name:
                return nb.threads
        return None

    def named_sync(self, r: RoleState, op: Op) -> None:
        e = op.event
        assert isinstance(e, m.BarrierSync)
        need = self.bar_threads(e.barrier)
        n = self.chain(r, op, f"{'bar.sync' if e.wait else 'bar.arrive'} {e.barrier!r} at {e.site}")
        if e.barrier == "cluster":
            self.cluster_syncs.append(n)
        if need is None:
            self.unread.append(f"named barrier {e.barrier!r} (at {e.site}) is not declared")
            return
        gens = self.bar_gens.setdefault(e.barrier, [_BarGen()])
        gen = gens[-1]
        gen.arrivals.append(n)
        gen.threads += e.threads if e.threads is not None else self.model.programs[r.index].role.threads
        if e.wait:
            gen.waiters.append(r.index)
            r.waiting_bar = (e.barrier, len(gens) - 1)
        if gen.threads >= need:
            if gen.threads > need:
                self.bar_overflows.append((n, e.barrier))
            gens.append(_BarGen())
            for w in gen.waiters:
                role = self.roles[w]
                role.waiting_bar = None
                self.chain(role, op, f"{e.barrier!r} generation {len(gens) - 2} complete", list(gen.arrivals))


def _span(model: m.OrderingModel, op: Op) -> tuple[str, int, int]:
    e = op.event
    assert isinstance(e, m.Access)
    region = model.region(e.region)
    base = region.start + (op.stage or 0) * region.slot if op.stage is not None else region.start
    default = region.slot if op.stage is not None else region.size
    size = e.bytes * e.multicast if e.bytes is not None else default
    return region.memory, base + e.offset, base + e.offset + size


class _Runner(Run):
    """How each operation moves the run; ``Run`` is the record the checks read."""

    def step(self, r: RoleState) -> bool:  # noqa: C901 - one branch per operation
        """Run the role's next operation; False when it must wait."""
        op = r.ops[r.pc]
        e = op.event
        if op.what == "wait":
            assert op.barrier is not None
            b = self.bar(op.barrier)
            if b.completed % 2 == op.parity:
                return False
            extra = [b.completion[b.completed - 1]] if b.completed else []
            n = self.chain(
                r, op, f"{_name(e)} waits {_barrier_text(op.barrier)} phase parity {op.parity} at {e.site}", extra
            )
            self.waits.append((n, op.barrier, b.completed))
            self.barrier_uses.append((n, op.barrier[0]))
        elif op.what == "arrive":
            assert op.barrier is not None
            n = self.chain(r, op, f"{_name(e)} arrives on {_barrier_text(op.barrier)} at {e.site}")
            self.arrive(n, op.barrier, op.arrivals, op.tx)
        elif op.what == "tc_commit":
            assert op.barrier is not None
            n = self.chain(r, op, f"tcgen05.commit ({_name(e)}) at {e.site}")
            after = [n] + ([r.last_commit] if r.last_commit is not None else [])
            a = self.node(r.index, op, f"tcgen05.commit arrives on {_barrier_text(op.barrier)}", after)
            r.last_commit = a
            for acc in r.tc_pending:
                acc.end = a
            r.tc_pending = []
            self.arrive(a, op.barrier, op.arrivals, 0)
            self.barrier_uses.append((n, op.barrier[0]))
        elif op.what == "cp_arrive":
            self.cp_arrive(r, op)
        elif op.what == "access":
            self.access(r, op)
        elif op.what == "bar":
            self.named_sync(r, op)
        else:
            self.other(r, op)
        r.pc += 1
        return True

    def cp_arrive(self, r: RoleState, op: Op) -> None:
        """``cp.async.mbarrier.arrive``: arrives once the thread's earlier cp.async copies land."""
        assert op.barrier is not None
        e = op.event
        n = self.chain(r, op, f"cp.async.mbarrier.arrive ({_name(e)}) at {e.site}")
        a = self.node(r.index, op, f"cp.async copies land, arrive on {_barrier_text(op.barrier)}", [n])
        pending = r.open_groups.get("cp_async", []) + [acc for g in r.committed.get("cp_async", []) for acc in g]
        for acc in pending:
            if acc.end is None:
                acc.end = a
        self.arrive(a, op.barrier, op.arrivals, 0)
        self.barrier_uses.append((n, op.barrier[0]))

    def access(self, r: RoleState, op: Op) -> None:
        e = op.event
        assert isinstance(e, m.Access)
        try:
            memory, lo, hi = _span(self.model, op)
        except KeyError:
            self.unread.append(f"region {e.region!r} (at {e.site}) is not in the model")
            return
        n = self.chain(r, op, f"{e.kind} {e.region} at {e.site}")
        rec = AccessRec(n, n if e.kind in SYNC_KINDS else None, r.index, op, memory, lo, hi)
        self.accesses.append(rec)
        if e.kind == "tma_load":
            c = self.node(r.index, op, f"TMA load of {e.region} completes", [n])
            rec.end = c
            if op.barrier is not None:
                self.complete_tx(c, op.barrier, op.tx)
        elif e.kind in GROUP_UNITS:
            r.open_groups.setdefault(GROUP_UNITS[e.kind], []).append(rec)
        elif e.kind in TCGEN05_TRACKED:
            r.tc_pending.append(rec)
        elif e.kind == "tcgen05_ld":
            r.tc_ld.append(rec)
        elif e.kind == "tcgen05_st":
            r.tc_st.append(rec)

    def other(self, r: RoleState, op: Op) -> None:
        e = op.event
        n = self.chain(r, op, f"{_name(e)} at {e.site}")
        if isinstance(e, m.Fence) and e.kind in PROXY_FENCES:
            self.fences.setdefault(r.index, []).append(n)
        elif op.what == "commit_group":
            group = r.open_groups.pop(op.unit, [])
            r.committed.setdefault(op.unit, []).append(group)
            if op.unit == "wgmma":
                r.wgmma_groups += 1
                self.retired_by_peer(r, group)
        elif op.what == "wait_group":
            groups = r.committed.get(op.unit, [])
            keep = len(groups) - op.pending
            for group in groups[: max(keep, 0)]:
                for acc in group:
                    _also_done(acc, n)
            r.committed[op.unit] = groups[max(keep, 0) :]
            if op.unit == "wgmma" and r.index in self.warpgroup:
                self.retire_peers(r, r.wgmma_groups - op.pending, n)
        elif op.what == "tc_wait":
            for acc in r.tc_ld if op.unit == "ld" else r.tc_st:
                acc.end = n
            r.tc_ld, r.tc_st = ([], r.tc_st) if op.unit == "ld" else (r.tc_ld, [])
        elif isinstance(e, m.Init):
            self.inits.setdefault(e.pipeline, []).append(n)
        elif isinstance(e, m.TmemAlloc):
            self.allocs.append((n, r.index, e))
        elif isinstance(e, m.TmemDealloc):
            self.deallocs.append((n, r.index, e))
            rec = AccessRec(n, n, r.index, op, "tmem", 0, e.columns)
            self.accesses.append(rec)

    # ---- a warpgroup's WGMMAs: one operation for all its warps, whichever warp retires it

    def retire_peers(self, r: RoleState, upto: int, node: int) -> None:
        """``r``'s wait_group retired its warpgroup's first ``upto`` WGMMA groups: the same
        groups of the other warps of the warpgroup (roles of their own) are done there too."""
        wg = self.warpgroup[r.index]
        start = r.peer_upto
        if upto <= start:
            return
        r.peer_upto = upto
        self.wg_retired.setdefault(wg, []).append((r.index, upto, node))
        for peer in self.roles:
            if peer.index == r.index or self.warpgroup.get(peer.index) != wg:
                continue
            for group in peer.wgmma_all[start:upto]:
                for acc in group:
                    _also_done(acc, node)

    def retired_by_peer(self, r: RoleState, group: list[AccessRec]) -> None:
        """A group ``r`` commits that another warp of its warpgroup already retired is done there."""
        wg = self.warpgroup.get(r.index)
        r.wgmma_all.append(group)
        index = len(r.wgmma_all) - 1
        seen: set[int] = set()
        for role, upto, node in self.wg_retired.get(wg, []) if wg is not None else []:
            if role not in seen and upto > index:
                seen.add(role)
                for acc in group:
                    _also_done(acc, node)

    def can_step(self, r: RoleState) -> bool:
        return not r.done and r.waiting_bar is None

    def prologue(self, ops: list[Op]) -> int | None:
        """Run the prologue; the last CTA-wide sync in it, which the roles start after."""
        pro = RoleState(-1, "prologue", ops)
        join: int | None = None
        for op in ops:
            e = op.event
            if isinstance(e, m.BarrierSync) and e.barrier in CTA_WIDE:
                join = self.chain(pro, op, f"{e.barrier} sync in the prologue at {e.site}")
                if e.barrier == "cluster":
                    self.cluster_syncs.append(join)
            elif op.what in ("wait", "arrive", "tc_commit", "cp_arrive", "access", "bar"):
                self.unread.append(f"{_name(e)} in the prologue at {e.site} is not modelled there")
            else:
                self.other(pro, op)
        return join


def _also_done(acc: AccessRec, node: int) -> None:
    if acc.end is None:
        acc.end = node
    elif node != acc.end and node not in acc.more_ends:
        acc.more_ends.append(node)


def _warpgroups(model: m.OrderingModel, programs: list[tuple[str, list[Op]]]) -> dict[int, int]:
    """Role index -> its warpgroup, for roles that lie in one warpgroup beside another such role
    issuing WGMMAs (a warpgroup's WGMMA is one operation of its four warps: the warp that
    waits it out has waited for all of them)."""
    roles = {p.role.name: p.role for p in model.programs}
    out: dict[int, int] = {}
    for i, (name, ops) in enumerate(programs):
        role = roles.get(name)
        if role is None or role.first_warp // 4 != (role.first_warp + role.warps - 1) // 4:
            continue
        if any(op.what == "commit_group" and op.unit == "wgmma" for op in ops):
            out[i] = role.first_warp // 4
    counts: dict[int, int] = {}
    for wg in out.values():
        counts[wg] = counts.get(wg, 0) + 1
    return {i: wg for i, wg in out.items() if counts[wg] > 1}


def _name(e: m.Event) -> str:
    if isinstance(e, m.PipelineOp):
        return f"{e.op} of {e.pipeline!r}"
    if isinstance(e, m.SequenceOp):
        return f"{e.op} (group {e.group}) of {e.pipeline!r}"
    if isinstance(e, m.Access):
        return e.kind
    if isinstance(e, m.Fence):
        return f"fence {e.kind}"
    if isinstance(e, m.WaitGroup):
        return f"{e.unit} wait_group({e.pending}{', read' if e.read else ''})"
    if isinstance(e, m.CommitGroup):
        return f"{e.unit} commit_group"
    if isinstance(e, m.Tcgen05Wait) and e.registers:
        return "the registers of tcgen05.ld read"
    if isinstance(e, m.Tcgen05Wait):
        return f"tcgen05.wait::{e.kind}"
    return type(e).__name__


def _barrier_text(key: BarrierKey) -> str:
    return f"stage {key[2]}'s {key[1]} barrier of {key[0]!r}"


def run(model: m.OrderingModel, programs: list[tuple[str, list[Op]]], prologue: list[Op]) -> Run:
    """Run every role as far as it can go; the roles left not done hang."""
    r = _Runner(model, programs)
    join = r.prologue(prologue)
    for role in r.roles:
        role.last = join
    progress = True
    while progress:
        progress = False
        for role in r.roles:
            while r.can_step(role) and r.step(role):
                progress = True
    return r


barrier_text = _barrier_text  # the checks name barriers the same way
