"""The search kernel: is there a layout of one component within a cap?

Written in the subset of Python that numba compiles (int64 arrays, and named
tuples of them), so one source is both the compiled core and, run as plain
Python over lists (:mod:`._plain`), the reference the tests hold it to.
``_loader.load_core`` picks the form. It also holds the exact packing of one
step's buffers (:func:`pack`).

The search walks canonical layouts: buffers are placed in increasing
(offset, rank) order, each at the lowest aligned offset above the buffers it
is live with. A node prunes

* candidates that are out of (offset, rank) order (each layout is met once),
  or that sit at or above where another unplaced buffer could already lie
  entirely (that one would drop into the gap: dominance);
* placements after which some section's lowest reachable offset plus the
  bytes still to place in it exceeds the cap (cross-section inference);
* the remaining siblings once a buffer with nothing left to stack on it has
  been tried (its offset can no longer change);
* states already searched to the end, within no smaller a cap, from an
  earlier or equal position (a table keyed by the unplaced buffers, their
  lowest offsets and ranks, kept by the caller across searches; each entry
  also keeps the least bound met under it, so a proof stays a proof).

After each placement the unplaced buffers may fall apart into groups that no
longer share a section; each group is then searched on its own, as a problem
of its own (ordered afresh by what is left of it, from no earlier position),
and when one has no layout the others are not searched again (they cannot help).

The recursion runs on an explicit stack: one row of ``frames`` per node on
the current path, its columns named below (``_SUB`` ...). A frame is entered
(:func:`_enter`), tries its candidates (:func:`_next`) and, after a child
answers, goes on (:func:`_resume`); each says where the walk goes next.

Compiled, ``run`` reads its arrays through views numba does not count
references to (:func:`_unowned`): counting them, an atomic operation each
time a step was entered or took a field of a named tuple, was most of a
node's time.

Work is counted in nodes, never in time: the same input gives the same
answer on any machine, compiled or not.
"""

from __future__ import annotations

from collections import namedtuple

if globals().get("COMPILE"):  # set by the loader before the module runs
    import numpy as np
    from numba import carray, njit, types
    from numba.extending import intrinsic

    _jit = njit(cache=True)
    # the steps of a search are inlined into run by numba (its own inliner), so the
    # named tuples they pass are taken apart once, not at every call
    _inline = njit(cache=True, inline="always")

    @intrinsic
    def _data(typingctx, a):  # the address of an array's first element
        def codegen(context, builder, sig, args):
            return context.make_array(a)(context, builder, args[0]).data

        return types.CPointer(a.dtype)(a), codegen

    @_inline
    def _unowned(a):
        """``a`` seen through a view that holds no reference to it.

        Each array the steps name is a counted reference in numba, counted up
        and down (an atomic operation each time) wherever a step is entered or
        takes a field of a named tuple: some 300 times a node. A view made from
        the address alone is not counted; ``run`` keeps the arrays themselves
        alive while the search reads them through such views.
        """
        return carray(_data(a), a.shape)  # type: ignore[call-arg]

    @_inline
    def _sort_range(a, lo, hi):
        """Sort ``a[lo:hi]`` in place (Shell's sort, gaps 1, 4, 13, ...).

        Written out rather than sorting a slice: a slice is a new array (a view)
        and its sort a call; sorting slices made the search's nodes some 40 %
        slower (1.14 against 0.82 us a node on the hardest seed-0 instances).
        """
        gap = 1
        while 3 * gap + 1 < hi - lo:
            gap = 3 * gap + 1
        while gap > 0:
            for k in range(lo + gap, hi):
                x = a[k]
                q = k
                while q - gap >= lo and a[q - gap] > x:
                    a[q] = a[q - gap]
                    q -= gap
                a[q] = x
            gap //= 3
else:
    from . import _plain as np  # type: ignore[no-redef]

    def _jit(fn):  # the plain-Python form: the functions as written
        return fn

    _inline = _jit

    def _unowned(a):  # type: ignore[misc]  # plain Python counts no references: the array itself
        return a

    def _sort_range(a, lo, hi):  # type: ignore[misc]
        """Sort ``a[lo:hi]`` in place (a list's own sort: the same order, far faster here)."""
        a[lo:hi] = sorted(a[lo:hi])


# status codes of :func:`run`
FOUND, EXHAUSTED, OUT_OF_NODES = 0, 1, 2

# the problem, read-only during a search: per buffer its size, alignment and
# span; per buffer its neighbours and sections, per section its members (CSR rows)
Graph = namedtuple("Graph", ["size", "align", "span", "nbr_ptr", "nbr_idx", "sec_ptr", "sec_idx", "mem_ptr", "mem_idx"])

# the table of searched states, kept by the caller across searches of one component
Memo = namedtuple("Memo", ["table", "info", "pool"])

# what one search changes: offsets placed (-1: not yet), lowest offsets reachable,
# bytes left per section, ranks and the buffer of each rank, visit stamps, the
# counters below, the trail of changes, scratch taken like a stack, the frames
Search = namedtuple(
    "Search", ["off", "min_off", "total", "rank", "who", "seen", "sec_seen", "stats", "trail", "heap", "frames"]
)

# slots of Search.stats
_NODES, _LIMIT, _OUT, _PRUNED, _TRAIL, _STAMP, _CAP, _ORDER_ID = range(8)
_STATS = 8

# columns of Search.trail (one change per row) and the kinds of change
_T_KIND, _T_IDX, _T_VAL = range(3)
_SET_OFF, _SET_MIN, _SET_TOTAL, _SET_RANK = range(4)

# slots of Memo.info
_MEMO_COUNT, _POOL_USED = range(2)

# columns of Memo.table (one entry per row: one cache line)
_HASH, _START, _LEN, _ORDER, _OFF, _RANK, _CAP_SEEN, _BOUND = range(8)
MEMO_COLUMNS = 8

# columns of a frame (row ``d`` of Search.frames: ``frames[d, _SUB]`` ...)
(
    _SUB,  # where the frame's buffers are in heap
    _M,  # how many
    _LAST_OFF,  # the (offset, rank) the frame's placements must come after
    _LAST_RANK,
    _STATE,  # what the frame does next: _ENTER, _NEXT or _RESUME
    _TOP,  # heap in use below this frame's scratch
    _SECS,  # where the frame's sections are in heap
    _NSECS,
    _MOST,  # bytes left in the frame's most crowded section on entry
    _CAND,  # where its candidate keys are in heap
    _NCAND,
    _Q,  # the candidate it tries next
    _MARK,  # the trail before its current placement
    _STACKED,  # 1 when the buffer just placed has unplaced neighbours
    _GROUPS,  # where the groups of the rest are in heap
    _STARTS,  # where each group begins (heap[_STARTS + g])
    _COUNT,  # how many groups
    _G,  # the group being searched
    _SAVED,  # the least pruned bound outside this frame's subtree
) = range(19)
FRAME_COLUMNS = 19

# what a frame does next
_ENTER, _NEXT, _RESUME = 0, 1, 2

# where the walk goes after a step of a frame
_STAY, _DOWN, _UP_YES, _UP_NO, _STOP = range(5)

_NO_BOUND = 1 << 62
_RANK_BITS = 20  # candidate keys pack (offset, rank); ranks stay below 2**20
_RANK_MASK = (1 << _RANK_BITS) - 1


def as_array(values):
    """Ints in the form this core's functions take (int64 arrays compiled, lists not)."""
    return np.array(values, np.int64)


def new_memo():
    """An empty, small table of searched states."""
    return Memo(np.zeros((1024, MEMO_COLUMNS), np.int64), np.zeros(2, np.int64), np.empty(1024, np.int64))


def grown(pool, used, size):
    """``pool`` with room for ``size`` numbers, its first ``used`` kept."""
    out = np.empty(size, np.int64)
    out[:used] = pool[:used]
    return out


@_inline
def _mix(h, v):
    h = int(h)  # plain ints when not compiled: no wrapping warnings
    v = int(v)
    h ^= v + 0x1E3779B97F4A7C15 + (h << 6) + (h >> 2)
    return h & 0x7FFFFFFFFFFFFFFF  # 63 bits: the same in plain Python and in wrapping int64


# -- the table of searched states ------------------------------------------------


@_inline
def _memo_find(s, d, memo):
    """Slot of the frame's state (its buffers at their lowest offsets, searched in
    this static order), or the empty slot where it would go; and its hash."""
    frames = s.frames
    heap, min_off, rank, table, pool = s.heap, s.min_off, s.rank, memo.table, memo.pool
    sub, m, order_id = frames[d, _SUB], frames[d, _M], s.stats[_ORDER_ID]
    h = _mix(m, order_id)
    for k in range(sub, sub + m):
        i = heap[k]
        h = _mix(h, i)
        h = _mix(h, min_off[i])
        h = _mix(h, rank[i])
    mask = len(table) - 1
    slot = h & mask
    while table[slot, _LEN] > 0:
        if table[slot, _HASH] == h and table[slot, _LEN] == m + 1 and table[slot, _ORDER] == order_id:
            start = table[slot, _START]
            same = True
            for k in range(m):
                i = heap[sub + k]
                p = start + 3 * k
                if pool[p] != i or pool[p + 1] != min_off[i] or pool[p + 2] != rank[i]:
                    same = False
                    break
            if same:
                return slot, h
        slot = (slot + 1) & mask
    return slot, h


@_inline
def _memo_store(s, d, memo):
    """Remember that the frame's state has no layout within the cap from its
    position on, and that none of its layouts has a peak below the least pruned bound."""
    frames = s.frames
    heap, min_off, rank, stats, table, info, pool = s.heap, s.min_off, s.rank, s.stats, memo.table, memo.info, memo.pool
    sub, m = frames[d, _SUB], frames[d, _M]
    slot, h = _memo_find(s, d, memo)
    if table[slot, _LEN] == 0:
        if 4 * (info[_MEMO_COUNT] + 1) > 3 * len(table) or info[_POOL_USED] + 3 * m > len(pool):
            return  # the table is full: search on without remembering
        start = info[_POOL_USED]
        for k in range(m):
            i = heap[sub + k]
            pool[start + 3 * k] = i
            pool[start + 3 * k + 1] = min_off[i]
            pool[start + 3 * k + 2] = rank[i]
        info[_POOL_USED] = start + 3 * m
        info[_MEMO_COUNT] += 1
        table[slot, _HASH] = h
        table[slot, _START] = start
        table[slot, _LEN] = m + 1
        table[slot, _ORDER] = stats[_ORDER_ID]
    # a known entry did not prune this search, so it says less on cap or on position: the newer one stays
    table[slot, _OFF] = frames[d, _LAST_OFF]
    table[slot, _RANK] = frames[d, _LAST_RANK]
    table[slot, _CAP_SEEN] = stats[_CAP]
    table[slot, _BOUND] = stats[_PRUNED]


# -- the trail of changes ----------------------------------------------------------


@_inline
def _push(s, kind, idx, val):
    """Log a change (``kind`` of ``idx``, ``val`` before it) so it can be put back."""
    t = s.stats[_TRAIL]
    trail = s.trail
    trail[t, _T_KIND] = kind
    trail[t, _T_IDX] = idx
    trail[t, _T_VAL] = val
    s.stats[_TRAIL] = t + 1


@_inline
def _undo(s, mark):
    """Put back every change logged since ``mark``."""
    off, min_off, total, rank, who, trail = s.off, s.min_off, s.total, s.rank, s.who, s.trail
    t = s.stats[_TRAIL]
    while t > mark:
        t -= 1
        kind, i, v = trail[t, _T_KIND], trail[t, _T_IDX], trail[t, _T_VAL]
        if kind == _SET_OFF:
            off[i] = v
        elif kind == _SET_MIN:
            min_off[i] = v
        elif kind == _SET_TOTAL:
            total[i] = v
        else:
            rank[i] = v
            who[v] = i
    s.stats[_TRAIL] = t


# -- one frame's scratch -------------------------------------------------------------


@_inline
def _candidates(s, g, d):
    """Keys (offset << RANK_BITS | rank) of the buffers worth placing next, sorted,
    at ``heap[frames[d, _CAND]:]``; their count."""
    frames = s.frames
    heap, min_off, rank, size = s.heap, s.min_off, s.rank, g.size
    sub, m, last_off, last_rank, out = (
        frames[d, _SUB],
        frames[d, _M],
        frames[d, _LAST_OFF],
        frames[d, _LAST_RANK],
        frames[d, _CAND],
    )
    min_height = _NO_BOUND
    for k in range(sub, sub + m):
        i = heap[k]
        if min_off[i] + size[i] < min_height:
            min_height = min_off[i] + size[i]
    c = 0
    for k in range(sub, sub + m):
        i = heap[k]
        o = min_off[i]
        if o < min_height and (o > last_off or (o == last_off and rank[i] > last_rank)):
            heap[out + c] = (o << _RANK_BITS) | rank[i]
            c += 1
    _sort_range(heap, out, out + c)
    return c


@_inline
def _frame_sections(s, g, d):
    """The sections holding the frame's buffers, each once, at ``heap[frames[d, _SECS]:]``; their count."""
    frames = s.frames
    heap, sec_seen, stats, sec_ptr, sec_idx = s.heap, s.sec_seen, s.stats, g.sec_ptr, g.sec_idx
    sub, m, out = frames[d, _SUB], frames[d, _M], frames[d, _SECS]
    stats[_STAMP] += 1
    stamp = stats[_STAMP]
    c = 0
    for k in range(sub, sub + m):
        i = heap[k]
        for e in range(sec_ptr[i], sec_ptr[i + 1]):
            t = sec_idx[e]
            if sec_seen[t] != stamp:
                sec_seen[t] = stamp
                heap[out + c] = t
                c += 1
    return c


# -- placing a buffer ----------------------------------------------------------------


@_inline
def _place(s, g, d, i, o):
    """Put buffer ``i`` at ``o`` (logged on the trail) and say whether the rest of the
    frame can still fit within the cap."""
    frames = s.frames
    off, min_off, total, heap, sec_seen, stats = s.off, s.min_off, s.total, s.heap, s.sec_seen, s.stats
    size, align, nbr_ptr, nbr_idx, sec_ptr, sec_idx, mem_ptr, mem_idx = (
        g.size,
        g.align,
        g.nbr_ptr,
        g.nbr_idx,
        g.sec_ptr,
        g.sec_idx,
        g.mem_ptr,
        g.mem_idx,
    )
    cap = stats[_CAP]
    end = o + size[i]
    _push(s, _SET_OFF, i, off[i])
    off[i] = o
    for e in range(sec_ptr[i], sec_ptr[i + 1]):
        t = sec_idx[e]
        _push(s, _SET_TOTAL, t, total[t])
        total[t] -= size[i]
    for e in range(nbr_ptr[i], nbr_ptr[i + 1]):
        j = nbr_idx[e]
        if off[j] < 0:
            a = align[j]
            lo = -(-end // a) * a
            if lo > min_off[j]:
                _push(s, _SET_MIN, j, min_off[j])
                min_off[j] = lo
    # every buffer still to place goes at or above o (the frame's most crowded
    # section before this placement: a quick bound from above)
    if o + frames[d, _MOST] > cap:
        rest = 0
        for k in range(frames[d, _SECS], frames[d, _SECS] + frames[d, _NSECS]):
            if total[heap[k]] > rest:
                rest = total[heap[k]]
        if o + rest > cap:
            if o + rest < stats[_PRUNED]:
                stats[_PRUNED] = o + rest
            return False
    # a section's lowest reachable offset plus what is left in it must fit
    stats[_STAMP] += 1
    stamp = stats[_STAMP]
    for e in range(nbr_ptr[i], nbr_ptr[i + 1]):
        j = nbr_idx[e]
        if off[j] >= 0:
            continue
        for f in range(sec_ptr[j], sec_ptr[j + 1]):
            t = sec_idx[f]
            if sec_seen[t] == stamp or min_off[j] + total[t] <= cap:
                continue
            sec_seen[t] = stamp
            lowest = _NO_BOUND
            for x_at in range(mem_ptr[t], mem_ptr[t + 1]):
                x = mem_idx[x_at]
                if off[x] < 0 and min_off[x] < lowest:
                    lowest = min_off[x]
            if lowest + total[t] > cap:
                if lowest + total[t] < stats[_PRUNED]:
                    stats[_PRUNED] = lowest + total[t]
                return False
    return True


@_inline
def _split(s, g, d, skip):
    """Groups of the frame's buffers (less ``skip``) that share no section, written one
    after another from ``heap[frames[d, _GROUPS]]``, each sorted; ``heap[frames[d, _STARTS] + k]``
    is where group ``k`` begins. Returns the count."""
    frames = s.frames
    heap, off, seen, sec_seen, stats = s.heap, s.off, s.seen, s.sec_seen, s.stats
    sec_ptr, sec_idx, mem_ptr, mem_idx = g.sec_ptr, g.sec_idx, g.mem_ptr, g.mem_idx
    sub, m, out, starts = frames[d, _SUB], frames[d, _M], frames[d, _GROUPS], frames[d, _STARTS]
    stats[_STAMP] += 1
    stamp = stats[_STAMP]
    count = 0
    w = out
    for k in range(sub, sub + m):
        i = heap[k]
        if i == skip or seen[i] == stamp:
            continue
        heap[starts + count] = w
        seen[i] = stamp
        heap[w] = i
        w += 1
        r = w - 1
        while r < w:
            a = heap[r]
            r += 1
            for e in range(sec_ptr[a], sec_ptr[a + 1]):
                t = sec_idx[e]
                if sec_seen[t] == stamp:
                    continue
                sec_seen[t] = stamp
                for x_at in range(mem_ptr[t], mem_ptr[t + 1]):
                    j = mem_idx[x_at]
                    if off[j] < 0 and seen[j] != stamp:
                        seen[j] = stamp
                        heap[w] = j
                        w += 1
        _sort_range(heap, heap[starts + count], w)
        count += 1
    heap[starts + count] = w
    return count


@_inline
def _rerank(s, g, a, b, free):
    """Order the group ``heap[a:b]`` afresh, as a problem of its own: by the bytes left
    in its most crowded section, then lifetime, then area (among the ranks it holds).

    Its scratch (crowding, order, ranks) is ``heap[free:]``, unused until the next
    frame opens there: no arrays made in the search's hot loop.
    """
    heap, rank, who, total, sec_ptr, sec_idx = s.heap, s.rank, s.who, s.total, g.sec_ptr, g.sec_idx
    m = b - a
    crowd, order, ranks = free, free + m, free + 2 * m
    for k in range(m):
        i = heap[a + k]
        c = 0
        for e in range(sec_ptr[i], sec_ptr[i + 1]):
            if total[sec_idx[e]] > c:
                c = total[sec_idx[e]]
        heap[crowd + k] = c
        heap[order + k] = k
        heap[ranks + k] = rank[i]
    _sort_range(heap, ranks, ranks + m)
    for k in range(1, m):  # insertion sort by (crowding, span, area, index), all but the index descending
        x = heap[order + k]
        q = k - 1
        while q >= 0 and _before(
            g, heap[a + x], heap[a + heap[order + q]], heap[crowd + x], heap[crowd + heap[order + q]]
        ):
            heap[order + q + 1] = heap[order + q]
            q -= 1
        heap[order + q + 1] = x
    for k in range(m):
        i = heap[a + heap[order + k]]
        r = heap[ranks + k]
        if rank[i] != r:
            _push(s, _SET_RANK, i, rank[i])
            rank[i] = r
            who[r] = i


@_inline
def _before(g, i, j, crowd_i, crowd_j):
    """Whether buffer ``i`` (its section crowding ``crowd_i``) goes before ``j``."""
    span, size = g.span, g.size
    if crowd_i != crowd_j:
        return crowd_i > crowd_j
    if span[i] != span[j]:
        return span[i] > span[j]
    if size[i] * span[i] != size[j] * span[j]:
        return size[i] * span[i] > size[j] * span[j]
    return i < j


# -- the frames: the search's steps --------------------------------------------------


@_inline
def _open(frames, d, sub, m, last_off, last_rank, top):
    """Set frame ``d`` up to place the ``m`` buffers at ``heap[sub:]`` after (last_off, last_rank)."""
    frames[d, _SUB] = sub
    frames[d, _M] = m
    frames[d, _LAST_OFF] = last_off
    frames[d, _LAST_RANK] = last_rank
    frames[d, _STATE] = _ENTER
    frames[d, _TOP] = top


@_inline
def _enter(s, g, d, memo):
    """A new node: count it, answer at once when nothing is left or the state was searched
    before, else gather its sections and candidates."""
    frames = s.frames
    stats, heap, total = s.stats, s.heap, s.total
    stats[_NODES] += 1
    if stats[_NODES] > stats[_LIMIT]:
        stats[_OUT] = 1
        return _STOP
    frames[d, _SAVED] = stats[_PRUNED]
    stats[_PRUNED] = _NO_BOUND
    if frames[d, _M] == 0:
        return _UP_YES
    slot, _ = _memo_find(s, d, memo)
    table = memo.table
    if (
        table[slot, _LEN] > 0
        and stats[_CAP] <= table[slot, _CAP_SEEN]
        and (
            table[slot, _OFF] < frames[d, _LAST_OFF]
            or (table[slot, _OFF] == frames[d, _LAST_OFF] and table[slot, _RANK] <= frames[d, _LAST_RANK])
        )
    ):
        stats[_PRUNED] = table[slot, _BOUND]  # searched before, from no later a position, within no smaller a cap
        return _UP_NO
    frames[d, _SECS] = frames[d, _TOP]
    frames[d, _NSECS] = _frame_sections(s, g, d)
    most = 0
    for k in range(frames[d, _SECS], frames[d, _SECS] + frames[d, _NSECS]):
        if total[heap[k]] > most:
            most = total[heap[k]]
    frames[d, _MOST] = most
    frames[d, _CAND] = frames[d, _SECS] + frames[d, _NSECS]
    frames[d, _NCAND] = _candidates(s, g, d)
    frames[d, _GROUPS] = frames[d, _CAND] + frames[d, _M]
    frames[d, _STARTS] = frames[d, _GROUPS] + frames[d, _M]
    frames[d, _Q] = 0
    frames[d, _STATE] = _NEXT
    return _STAY


@_inline
def _resume(s, d, placed):
    """A group below answered (``placed``): search the next group, or, when one failed,
    take the placement back and go on with the next candidate."""
    frames = s.frames
    heap = s.heap
    if placed:
        frames[d, _G] += 1
        if frames[d, _G] == frames[d, _COUNT]:  # every group placed: so is this frame
            return _UP_YES
        at = frames[d, _STARTS] + frames[d, _G]
        _open(frames, d + 1, heap[at], heap[at + 1] - heap[at], -1, -1, frames[d, _STARTS] + frames[d, _M] + 1)
        return _DOWN
    _undo(s, frames[d, _MARK])
    if frames[d, _STACKED] == 0:  # its offset is final, so any later sibling would have to go below it
        frames[d, _Q] = frames[d, _NCAND]
    else:
        frames[d, _Q] += 1
    frames[d, _STATE] = _NEXT
    return _STAY


@_inline
def _next(s, g, d, memo):
    """Try the frame's candidates from the next on: place one and go down into the
    first group of the rest, or, with none left, remember the state and answer no."""
    frames = s.frames
    heap, off, total, who, stats = s.heap, s.off, s.total, s.who, s.stats
    size, nbr_ptr, nbr_idx, sec_ptr, sec_idx = g.size, g.nbr_ptr, g.nbr_idx, g.sec_ptr, g.sec_idx
    cap = stats[_CAP]
    while frames[d, _Q] < frames[d, _NCAND]:
        key = heap[frames[d, _CAND] + frames[d, _Q]]
        o = key >> _RANK_BITS
        r = key & _RANK_MASK
        i = who[r]
        over = o + size[i]
        for e in range(sec_ptr[i], sec_ptr[i + 1]):
            if total[sec_idx[e]] + o > over:
                over = total[sec_idx[e]] + o
        stacked = False
        for e in range(nbr_ptr[i], nbr_ptr[i + 1]):
            if off[nbr_idx[e]] < 0:
                stacked = True
                break
        if over > cap:
            # it does not fit here; when nothing is left to raise it, it never will
            if over < stats[_PRUNED]:
                stats[_PRUNED] = over
            if stacked:
                frames[d, _Q] += 1
                continue
            break
        mark = stats[_TRAIL]
        if _place(s, g, d, i, o):
            count = _split(s, g, d, i)
            starts = frames[d, _STARTS]
            if count > 1:  # independent groups: each is ordered and laid out as a problem of its own
                for k in range(count):
                    _rerank(s, g, heap[starts + k], heap[starts + k + 1], starts + frames[d, _M] + 1)
            frames[d, _MARK] = mark
            frames[d, _STACKED] = 1 if stacked else 0
            frames[d, _COUNT] = count
            frames[d, _G] = 0
            frames[d, _STATE] = _RESUME
            if count == 0:  # nothing left in this frame
                return _UP_YES
            fresh = count > 1
            _open(
                frames,
                d + 1,
                heap[starts],
                heap[starts + 1] - heap[starts],
                -1 if fresh else o,
                -1 if fresh else r,
                starts + frames[d, _M] + 1,
            )
            return _DOWN
        _undo(s, mark)
        if not stacked:
            break
        frames[d, _Q] += 1
    _memo_store(s, d, memo)
    return _UP_NO


@_inline
def _start(g, rank, cap, limit, order_id):
    """A fresh search of every buffer of ``g`` (ranks copied: the search reorders them)."""
    size, nbr_idx, sec_idx, mem_ptr, mem_idx = g.size, g.nbr_idx, g.sec_idx, g.mem_ptr, g.mem_idx
    n = len(size)
    nsec = len(mem_ptr) - 1
    total = np.zeros(nsec, np.int64)
    for t in range(nsec):
        for e in range(mem_ptr[t], mem_ptr[t + 1]):
            total[t] += size[mem_idx[e]]
    rank = rank.copy()
    who = np.empty(n, np.int64)  # buffer of each rank
    for i in range(n):
        who[rank[i]] = i
    stats = np.zeros(_STATS, np.int64)
    stats[_LIMIT] = limit
    stats[_PRUNED] = _NO_BOUND
    stats[_CAP] = cap
    stats[_ORDER_ID] = order_id
    trail = n + len(sec_idx) + len(nbr_idx) + 8 + n * (n + 1)  # the last part: groups ordered afresh
    # per-frame scratch (sections, candidates, groups, group starts) is taken from ``heap`` like a stack
    # (and, above the deepest frame's, the scratch of ordering a group afresh: 3 per buffer)
    heap = np.empty(n + (n + 1) * (3 * n + 2 + nsec) + 3 * n, np.int64)
    for i in range(n):
        heap[i] = i
    return Search(
        np.full(n, -1, np.int64),
        np.zeros(n, np.int64),
        total,
        rank,
        who,
        np.zeros(n, np.int64),
        np.zeros(nsec, np.int64),
        stats,
        np.empty((trail, 3), np.int64),
        heap,
        np.zeros((n + 2, FRAME_COLUMNS), np.int64),
    )


@_inline
def _views(s):
    """The search's arrays through uncounted views (:func:`_unowned`)."""
    return Search(
        _unowned(s.off),
        _unowned(s.min_off),
        _unowned(s.total),
        _unowned(s.rank),
        _unowned(s.who),
        _unowned(s.seen),
        _unowned(s.sec_seen),
        _unowned(s.stats),
        _unowned(s.trail),
        _unowned(s.heap),
        _unowned(s.frames),
    )


@_jit
def run(g, rank, order_id, cap, limit, memo):
    """One depth-first search for a layout of ``g`` within ``cap`` using at most ``limit`` nodes,
    buffers ranked by ``rank`` (static order ``order_id``).

    Returns (status, nodes, least pruned bound, offsets). EXHAUSTED proves no
    layout has a peak below the least pruned bound.

    ``memo`` (a :data:`Memo`: a power of two x MEMO_COLUMNS table, one entry per
    row, its counts and pool) is the table of searched states; the caller keeps
    it across searches of the same component, so a longer search in the same
    ``order_id`` resumes rather than restarts.
    """
    owned = _start(g, rank, cap, limit, order_id)  # alive until its offsets are returned
    s = _views(owned)
    g = Graph(
        _unowned(g.size),
        _unowned(g.align),
        _unowned(g.span),
        _unowned(g.nbr_ptr),
        _unowned(g.nbr_idx),
        _unowned(g.sec_ptr),
        _unowned(g.sec_idx),
        _unowned(g.mem_ptr),
        _unowned(g.mem_idx),
    )
    memo = Memo(_unowned(memo.table), _unowned(memo.info), _unowned(memo.pool))
    frames, stats = s.frames, s.stats
    _open(frames, 0, 0, len(g.size), -1, -1, len(g.size))
    d = 0
    placed = False  # what the frame just left answered
    while d >= 0:
        state = frames[d, _STATE]
        if state == _ENTER:
            move = _enter(s, g, d, memo)
        elif state == _RESUME:
            move = _resume(s, d, placed)
        else:
            move = _next(s, g, d, memo)
        if move == _DOWN:
            d += 1
        elif move == _UP_YES or move == _UP_NO:
            placed = move == _UP_YES
            if frames[d, _SAVED] < stats[_PRUNED]:  # the bound outside the frame's subtree comes back
                stats[_PRUNED] = frames[d, _SAVED]
            d -= 1
        elif move == _STOP:
            break
    nodes = min(stats[_NODES], limit)
    if stats[_OUT]:
        return OUT_OF_NODES, nodes, stats[_PRUNED], owned.off
    return (FOUND if placed else EXHAUSTED), nodes, stats[_PRUNED], owned.off


@_jit
def regrow(table, slots):
    """The same table of searched states with ``slots`` slots (a larger power of two)."""
    out = np.zeros((slots, MEMO_COLUMNS), np.int64)
    mask = slots - 1
    for k in range(len(table)):
        if table[k, _LEN] > 0:
            t = table[k, _HASH] & mask
            while out[t, _LEN] > 0:
                t = (t + 1) & mask
            for c in range(MEMO_COLUMNS):
                out[t, c] = table[k, c]
    return out


# -- one step's exact packing --------------------------------------------------------


@_jit
def pack_subsets(size, align):
    """The least end of buffers that are all live together, over every order:
    a subset's least end is the least, over its buffers, of that buffer
    bump-placed after the least end of the others (a lower start never ends
    higher, so the least end of the rest is all that matters)."""
    n = len(size)
    end = np.zeros(1 << n, np.int64)
    for mask in range(1, 1 << n):
        least = _NO_BOUND
        for i in range(n):
            if (mask >> i) & 1:
                a = align[i]
                e = -(-end[mask ^ (1 << i)] // a) * a + size[i]
                if e < least:
                    least = e
        end[mask] = least
    return end[(1 << n) - 1]


@_jit
def pack(size, align, best, simple, node_cap):
    """The least end of buffers that are all live together (each bump-placed after
    the previous, in every order), or ``simple`` when ``node_cap`` nodes do not settle it.

    A search, for steps too large for :func:`pack_subsets`: ``size``/``align``
    are sorted by (alignment, size) descending and ``best`` is the end of that
    order; a subset reached with an end no lower than before is not searched
    again. Fewer than 63 buffers (a subset is one int64 mask).
    """
    n = len(size)
    full = (1 << n) - 1
    slots = 1
    while slots < 4 * node_cap:
        slots *= 2
    seen_mask = np.full(slots, -1, np.int64)
    seen_end = np.zeros(slots, np.int64)
    mask_at = np.zeros(n + 1, np.int64)
    end_at = np.zeros(n + 1, np.int64)
    left_at = np.zeros(n + 1, np.int64)
    next_at = np.zeros(n + 1, np.int64)  # the next buffer the frame tries
    left = 0
    for i in range(n):
        left += size[i]
    nodes = 0
    d = 0
    mask_at[0] = 0
    end_at[0] = 0
    left_at[0] = left
    entering = True
    while d >= 0:
        if entering:
            nodes += 1
            if nodes > node_cap:
                return simple
            mask = mask_at[d]
            end = end_at[d]
            if mask == full:
                if end < best:
                    best = end
                d -= 1
                entering = False
                continue
            if end + left_at[d] >= best:
                d -= 1
                entering = False
                continue
            s = (int(mask) * 0x1E3779B1) & (slots - 1)
            while seen_mask[s] != -1 and seen_mask[s] != mask:
                s = (s + 1) & (slots - 1)
            if seen_mask[s] == mask and seen_end[s] <= end:
                d -= 1
                entering = False
                continue
            seen_mask[s] = mask
            seen_end[s] = end
            next_at[d] = 0
        elif best <= simple:
            return simple
        # try the next buffer not yet in this frame's subset
        mask = mask_at[d]
        i = next_at[d]
        while i < n and (mask >> i) & 1:
            i += 1
        if i == n:
            d -= 1
            entering = False
            continue
        next_at[d] = i + 1
        a = align[i]
        mask_at[d + 1] = mask | (1 << i)
        end_at[d + 1] = -(-end_at[d] // a) * a + size[i]
        left_at[d + 1] = left_at[d] - size[i]
        d += 1
        entering = True
    return best
