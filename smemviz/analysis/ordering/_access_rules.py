"""The access rules over one run: pairs of accesses to the same bytes that no edge
orders (``unordered-alias``), generic writes read by the async proxy without a fence
(``proxy-fence``), and the edge each alias between two regions rides on."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

from .._finding import Finding
from ._describe import role_text
from ._edges import ASYNC_READS, GENERIC_WRITES, needed_edge
from ._result import AliasEdge, finding
from ._run import TCGEN05_TRACKED, AccessRec, Run

__all__ = ["Race", "access_findings", "more_pairs"]

Keyed = list[tuple[tuple[str, ...], Finding]]


@dataclass(frozen=True)
class Race:
    """The unordered pairs of one run between two regions before one later access: the
    first pair's finding, and every pair (the witness first) as its two call sites (sorted)
    and the descriptions of its earlier and later access."""

    key: tuple[str, ...]
    finding: Finding
    pairs: tuple[tuple[tuple[str, str], str, str], ...]


def _ordered(run: Run, x: AccessRec, y: AccessRec) -> bool:
    if x.role == y.role and x.kind in TCGEN05_TRACKED and y.kind in TCGEN05_TRACKED:
        return True  # one thread's tcgen05 MMAs and copies run in issue order
    return any(run.before(e, y.start) for e in x.ends()) or any(run.before(e, x.start) for e in y.ends())


def _in_order(run: Run, x: AccessRec, y: AccessRec) -> tuple[AccessRec, AccessRec]:
    """An ordered pair, earlier first: y, issued later, may be known done before x (a
    warpgroup's WGMMA retired by another warp of it)."""
    if any(run.before(e, y.start) for e in x.ends()) or not any(run.before(e, x.start) for e in y.ends()):
        return x, y
    return y, x


def _conflicts(run: Run) -> Iterator[tuple[AccessRec, AccessRec]]:
    """Pairs (earlier, later) over shared bytes with a write among them, by a sweep over starts."""
    by_memory: dict[str, list[AccessRec]] = {}
    for a in run.accesses:
        by_memory.setdefault(a.memory, []).append(a)
    for accs in by_memory.values():
        accs.sort(key=lambda a: a.lo)
        active: list[AccessRec] = []
        for a in accs:
            active = [b for b in active if b.hi > a.lo]
            for b in active:
                if a.write or b.write:
                    yield (b, a) if b.start < a.start else (a, b)
            active.append(a)


def _describe(x: AccessRec) -> str:
    return f"{x.kind} at {x.op.event.site}"


def _intended(run: Run, x: AccessRec, y: AccessRec, by_site: dict[str, list[AccessRec]]) -> tuple[AccessRec, AccessRec]:
    """Which of two unordered accesses the kernel means to come first. A dealloc last;
    in one role, program order; in a loop both sit in, the earlier iteration; where one role runs
    both call sites (two warpgroups running one program), that program's order; a read that some instance of the
    write's call site is ordered before reads that data, so this write is a later
    round (the read first); a read no instance is ordered before is missing its wait
    (the write first); else the order they ran in."""
    if x.kind == "tmem_dealloc" or y.kind == "tmem_dealloc":
        return (y, x) if x.kind == "tmem_dealloc" else (x, y)
    if x.role == y.role:  # one role: its program says which comes first
        return (x, y) if x.start < y.start else (y, x)
    xi, yi = dict(x.op.iters), dict(y.op.iters)
    for loop_id in xi.keys() & yi.keys():
        if xi[loop_id] != yi[loop_id]:
            return (x, y) if xi[loop_id] < yi[loop_id] else (y, x)
    firsts = _program_order(by_site, x.site, y.site)
    if firsts is not None:  # a role runs both call sites: its program says which is first
        return (x, y) if firsts else (y, x)
    if x.write != y.write:
        w, r = (x, y) if x.write else (y, x)
        consumed = any(o.end is not None and run.before(o.end, r.start) for o in by_site[w.site])
        return (r, w) if consumed else (w, r)
    return (x, y) if x.start < y.start else (y, x)


def _program_order(by_site: dict[str, list[AccessRec]], xs: str, ys: str) -> bool | None:
    """Whether call site ``xs`` runs before ``ys`` in the program of a role that runs both
    (None: no role runs both)."""
    if xs == ys:
        return None
    for role in sorted({a.role for a in by_site[xs]} & {a.role for a in by_site[ys]}):
        first_x = min(a.start for a in by_site[xs] if a.role == role)
        first_y = min(a.start for a in by_site[ys] if a.role == role)
        return first_x < first_y
    return None


def more_pairs(earlier: list[str]) -> str:
    """The other accesses one missing edge leaves unordered with the same later access, after
    the witness (``earlier``: their descriptions)."""
    if not earlier:
        return ""
    return f"; and {len(earlier)} more pair{'' if len(earlier) == 1 else 's'}: {', '.join(earlier)}"


def _race(run: Run, x: AccessRec, y: AccessRec, scenario: str) -> Finding:
    """An unordered pair, earlier first."""
    span = f"{'columns' if x.memory == 'tmem' else 'bytes'} {max(x.lo, y.lo):,}..{min(x.hi, y.hi) - 1:,}"
    msg = (
        f"{x.region} ({_describe(x)}, {role_text(run, x.role)}) and {y.region} ({_describe(y)}, "
        f"{role_text(run, y.role)}) share {span} and no edge orders them{scenario}"
    )
    fix = f"order {x.region}'s {x.kind} before {y.region}'s {y.kind}: {needed_edge(x.kind, y.kind)}"
    return finding("unordered-alias", "error", tuple(dict.fromkeys((x.region, y.region))), msg, fix)


def _after_dealloc(run: Run, x: AccessRec, y: AccessRec, scenario: str) -> tuple[tuple[str, ...], Finding] | None:
    """A TMEM access that the dealloc of its columns is ordered before."""
    dealloc, access = (x, y) if x.kind == "tmem_dealloc" else (y, x)
    if dealloc.kind != "tmem_dealloc" or access.kind == "tmem_dealloc" or not run.before(dealloc.start, access.start):
        return None
    msg = f"{access.region} is accessed ({_describe(access)}, {role_text(run, access.role)}) after TMEM is deallocated at {dealloc.site}{scenario}"
    fix = "move the access before the dealloc, or the dealloc after every access (a barrier with the accessing warps)"
    key = ("tmem-lifecycle", "after", access.site)
    return key, finding("tmem-lifecycle", "error", (access.region,), msg, fix)


def _fence_missing(run: Run, w: AccessRec, r: AccessRec, scenario: str) -> tuple[tuple[str, ...], Finding] | None:
    """A generic write ordered before an async-proxy read needs a proxy fence by the writer in between."""
    fences = run.fences.get(w.role, [])
    written = w.end if w.end is not None else w.start  # a cp.async has written once it lands
    first = next((f for f in fences if f > written), None)
    if first is not None and run.before(first, r.start):
        return None
    msg = (
        f"{w.region} is written by {_describe(w)} ({role_text(run, w.role)}) and read by the async proxy "
        f"({_describe(r)}, {role_text(run, r.role)}) with no proxy fence by the writers in between{scenario}"
    )
    fix = f"fence_view_async_shared() (fence.proxy.async.shared::cta) after the {w.kind}, before the barrier that publishes {w.region}"
    key = ("proxy-fence", w.site, r.site)
    return key, finding("proxy-fence", "error", tuple(dict.fromkeys((w.region, r.region))), msg, fix)


def _edge_path(run: Run, x: AccessRec, y: AccessRec) -> str:
    """The hand-overs between roles on the path of the order from x's end to y's start
    that crosses roles least (a 0-1 search backwards over the predecessors)."""
    assert x.end is not None
    target = next((e for e in x.ends() if run.before(e, y.start)), x.end)
    best: dict[int, int] = {y.start: 0}
    via: dict[int, int] = {}
    queue: deque[int] = deque([y.start])
    while queue:
        node = queue.popleft()
        if node == target:
            break
        for p in run.preds[node]:
            if not run.before(target, p):
                continue
            cost = best[node] + (run.node_role[p] != run.node_role[node])
            if cost < best.get(p, cost + 1):
                best[p], via[p] = cost, node
                (queue.appendleft if cost == best[node] else queue.append)(p)
    steps, node = [], target
    if x.end != x.start:
        steps.append(run.labels[target])  # the async access ends here: a completion or wait
    while node in via:
        nxt = via[node]
        if run.node_role[nxt] != run.node_role[node]:
            steps += [run.labels[node], run.labels[nxt]]
        node = nxt
    return " -> ".join(dict.fromkeys(steps)) or f"program order in {role_text(run, y.role)}"


def _ordered_pair(
    run: Run,
    x: AccessRec,
    y: AccessRec,
    scenario: str,
    seen: set[tuple[str, ...]],
    found: Keyed,
    chosen: dict[tuple[str, str], tuple[AccessRec, AccessRec]],
) -> None:
    """An ordered pair: a missing proxy fence between them, and the pair an alias's edge is read from."""
    x, y = _in_order(run, x, y)
    sites = (x.site, y.site)
    if x.kind in GENERIC_WRITES and y.kind in ASYNC_READS and ("proxy-fence", *sites) not in seen:
        missing = _fence_missing(run, x, y, scenario)
        if missing is not None:
            seen.add(missing[0])
            found.append(missing)
    pair = (x.region, y.region)
    if x.region != y.region and y.write:
        old = chosen.get(pair)
        if old is None or (y.start, -x.start) < (old[1].start, -old[0].start):
            chosen[pair] = (x, y)


def access_findings(run: Run, scenario: str) -> tuple[Keyed, list[AliasEdge], list[Race]]:
    """Missing proxy fences and accesses after a dealloc, the edge of each alias between two
    regions, and the races: one per missing hand-over (two regions, one later access)."""
    found: Keyed = []
    seen: set[tuple[str, ...]] = set()
    aliases: dict[tuple[str, str], AliasEdge] = {}
    chosen: dict[tuple[str, str], tuple[AccessRec, AccessRec]] = {}
    races: dict[tuple[str, ...], list[tuple[AccessRec, AccessRec]]] = {}
    by_site: dict[str, list[AccessRec]] = {}
    for a in run.accesses:
        by_site.setdefault(a.site, []).append(a)
    for x, y in _conflicts(run):
        if x.role == y.role and x.end == x.start and y.end == y.start:
            continue  # two plain accesses of one role: program order
        sites = (x.site, y.site)
        late = _after_dealloc(run, x, y, scenario)
        if late is not None:
            if late[0] not in seen:
                seen.add(late[0])
                found.append(late)
            continue
        if _ordered(run, x, y):
            _ordered_pair(run, x, y, scenario, seen, found, chosen)
            continue
        if ("unordered-alias", *sorted(sites)) in seen:
            continue
        seen.add(("unordered-alias", *sorted(sites)))
        x, y = _intended(run, x, y, by_site)
        # one missing hand-over between two regions before one later access is one finding
        group: tuple[str, ...] = ("unordered-alias", x.region, y.region, y.site)
        races.setdefault(group, []).append((x, y))
        if x.region != y.region:
            aliases.setdefault(
                (x.region, y.region), AliasEdge(x.region, y.region, _describe(x), _describe(y), "unordered")
            )
    grouped = [
        Race(
            group,
            _race(run, x, y, scenario),
            tuple(((min(a.site, b.site), max(a.site, b.site)), _describe(a), _describe(b)) for a, b in pairs),
        )
        for group, pairs in races.items()
        for x, y in pairs[:1]
    ]
    for pair, (x, y) in chosen.items():
        if pair not in aliases:
            aliases[pair] = AliasEdge(x.region, y.region, _describe(x), _describe(y), _edge_path(run, x, y))
    return found, list(aliases.values()), grouped
