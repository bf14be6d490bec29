"""The search kernel: is there a layout of one component within a cap?

Written in the subset of Python that numba compiles (flat int64 arrays, no
objects), so one source is both the compiled core and, run as plain Python,
the reference the tests hold it to. ``_loader.load_core`` picks the form.
It also holds the exact packing of one step's buffers (:func:`pack`).

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

Work is counted in nodes, never in time: the same input gives the same
answer on any machine, compiled or not.
"""

from __future__ import annotations

import numpy as np

# status codes of :func:`run`
FOUND, EXHAUSTED, OUT_OF_NODES = 0, 1, 2

# stats slots shared by the recursion
_NODES, _LIMIT, _OUT, _PRUNED, _TRAIL, _STAMP = range(6)

# slots of the state table's header
_MEMO_COUNT, _POOL_USED = range(2)

# columns of the state table (one entry per row: one cache line)
_HASH, _START, _LEN, _ORDER, _OFF, _RANK, _CAP, _BOUND = range(8)
MEMO_COLUMNS = 8

# what a frame of the search stack does next
_ENTER, _NEXT, _RESUME = 0, 1, 2

_NO_BOUND = 1 << 62
_RANK_BITS = 20  # candidate keys pack (offset, rank); ranks stay below 2**20


def _jit(fn):  # replaced by numba's compiler when the compiled form is loaded
    return fn


if globals().get("COMPILE"):
    from numba import njit

    _jit = njit(cache=True)  # noqa: F811


@_jit
def _mix(h, v):
    h = int(h)  # plain ints when not compiled: no wrapping warnings
    v = int(v)
    h ^= v + 0x1E3779B97F4A7C15 + (h << 6) + (h >> 2)
    return h & 0x7FFFFFFFFFFFFFFF  # 63 bits: the same in plain Python and in wrapping int64


@_jit
def _memo_find(heap, sub, m, min_off, rank, order_id, memo, pool):
    """Slot of the state (the buffers ``heap[sub:sub+m]`` at their lowest offsets,
    searched in static order ``order_id``), or the empty slot where it would go; and its hash."""
    h = _mix(m, order_id)
    for k in range(sub, sub + m):
        i = heap[k]
        h = _mix(h, i)
        h = _mix(h, min_off[i])
        h = _mix(h, rank[i])
    mask = memo.shape[0] - 1
    s = h & mask
    while memo[s, _LEN] > 0:
        if memo[s, _HASH] == h and memo[s, _LEN] == m + 1 and memo[s, _ORDER] == order_id:
            start = memo[s, _START]
            same = True
            for k in range(m):
                i = heap[sub + k]
                if pool[start + 3 * k] != i or pool[start + 3 * k + 1] != min_off[i] or pool[start + 3 * k + 2] != rank[i]:
                    same = False
                    break
            if same:
                return s, h
        s = (s + 1) & mask
    return s, h


@_jit
def _memo_store(heap, sub, m, min_off, rank, order_id, last_off, last_rank, cap, bound, memo, memo_info, pool):
    """Remember that this state has no layout within ``cap`` from (last_off, last_rank)
    on, and that none of its layouts has a peak below ``bound``."""
    slot, h = _memo_find(heap, sub, m, min_off, rank, order_id, memo, pool)
    if memo[slot, _LEN] == 0:
        if 4 * (memo_info[_MEMO_COUNT] + 1) > 3 * memo.shape[0] or memo_info[_POOL_USED] + 3 * m > pool.shape[0]:
            return  # the table is full: search on without remembering
        start = memo_info[_POOL_USED]
        for k in range(m):
            pool[start + 3 * k] = heap[sub + k]
            pool[start + 3 * k + 1] = min_off[heap[sub + k]]
            pool[start + 3 * k + 2] = rank[heap[sub + k]]
        memo_info[_POOL_USED] = start + 3 * m
        memo_info[_MEMO_COUNT] += 1
        memo[slot, _HASH] = h
        memo[slot, _START] = start
        memo[slot, _LEN] = m + 1
        memo[slot, _ORDER] = order_id
    # a known entry did not prune this search, so it says less on cap or on position: the newer one stays
    memo[slot, _OFF] = last_off
    memo[slot, _RANK] = last_rank
    memo[slot, _CAP] = cap
    memo[slot, _BOUND] = bound


@_jit
def _push(stats, tr_kind, tr_idx, tr_val, kind, idx, val):
    t = stats[_TRAIL]
    tr_kind[t] = kind
    tr_idx[t] = idx
    tr_val[t] = val
    stats[_TRAIL] = t + 1


@_jit
def _undo(mark, stats, tr_kind, tr_idx, tr_val, off, min_off, total, rank, who):
    """Put back every change logged since ``mark``."""
    t = stats[_TRAIL]
    while t > mark:
        t -= 1
        k = tr_kind[t]
        if k == 0:
            off[tr_idx[t]] = tr_val[t]
        elif k == 1:
            min_off[tr_idx[t]] = tr_val[t]
        elif k == 2:
            total[tr_idx[t]] = tr_val[t]
        else:
            rank[tr_idx[t]] = tr_val[t]
            who[tr_val[t]] = tr_idx[t]
    stats[_TRAIL] = t


@_jit
def _candidates(heap, sub, m, last_off, last_rank, min_off, size, rank, out):
    """Keys (offset << RANK_BITS | rank) of the buffers worth placing next, sorted, at ``heap[out:]``; their count."""
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
    heap[out:out + c].sort()
    return c


@_jit
def _frame_sections(heap, sub, m, sec_ptr, sec_idx, sec_seen, stats, out):
    """The sections holding the buffers at ``heap[sub:sub+m]``, each once, at ``heap[out:]``; their count."""
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


@_jit
def _place(i, o, cap, most_left, heap, secs, nsecs, size, align, nbr_ptr, nbr_idx, sec_ptr, sec_idx, mem_ptr,
           mem_idx, off, min_off, total, sec_seen, stats, tr_kind, tr_idx, tr_val):
    """Put buffer ``i`` at ``o`` (logged on the trail) and say whether the rest can still fit within ``cap``.

    ``heap[secs:secs+nsecs]`` are the sections of the frame's buffers.
    """
    end = o + size[i]
    _push(stats, tr_kind, tr_idx, tr_val, 0, i, off[i])
    off[i] = o
    for e in range(sec_ptr[i], sec_ptr[i + 1]):
        t = sec_idx[e]
        _push(stats, tr_kind, tr_idx, tr_val, 2, t, total[t])
        total[t] -= size[i]
    for e in range(nbr_ptr[i], nbr_ptr[i + 1]):
        j = nbr_idx[e]
        if off[j] < 0:
            a = align[j]
            lo = -(-end // a) * a
            if lo > min_off[j]:
                _push(stats, tr_kind, tr_idx, tr_val, 1, j, min_off[j])
                min_off[j] = lo
    # every buffer still to place goes at or above o (most_left: the bytes left in
    # the most crowded section before this placement, a quick bound from above)
    if o + most_left > cap:
        rest = 0
        for k in range(secs, secs + nsecs):
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
            for g in range(mem_ptr[t], mem_ptr[t + 1]):
                x = mem_idx[g]
                if off[x] < 0 and min_off[x] < lowest:
                    lowest = min_off[x]
            if lowest + total[t] > cap:
                if lowest + total[t] < stats[_PRUNED]:
                    stats[_PRUNED] = lowest + total[t]
                return False
    return True


@_jit
def _rerank(heap, a, b, rank, who, total, sec_ptr, sec_idx, size, span, stats, tr_kind, tr_idx, tr_val):
    """Order the group ``heap[a:b]`` afresh, as a problem of its own: by the bytes left
    in its most crowded section, then lifetime, then area (among the ranks it holds)."""
    m = b - a
    crowd = np.empty(m, np.int64)
    order = np.empty(m, np.int64)
    ranks = np.empty(m, np.int64)
    for k in range(m):
        i = heap[a + k]
        c = 0
        for e in range(sec_ptr[i], sec_ptr[i + 1]):
            if total[sec_idx[e]] > c:
                c = total[sec_idx[e]]
        crowd[k] = c
        order[k] = k
        ranks[k] = rank[i]
    ranks.sort()
    for k in range(1, m):  # insertion sort by (crowding, span, area, index), all but the index descending
        x = order[k]
        q = k - 1
        while q >= 0 and _before(x, order[q], heap, a, crowd, span, size):
            order[q + 1] = order[q]
            q -= 1
        order[q + 1] = x
    for k in range(m):
        i = heap[a + order[k]]
        if rank[i] != ranks[k]:
            _push(stats, tr_kind, tr_idx, tr_val, 3, i, rank[i])
            rank[i] = ranks[k]
            who[ranks[k]] = i


@_jit
def _before(x, y, heap, a, crowd, span, size):
    i, j = heap[a + x], heap[a + y]
    if crowd[x] != crowd[y]:
        return crowd[x] > crowd[y]
    if span[i] != span[j]:
        return span[i] > span[j]
    if size[i] * span[i] != size[j] * span[j]:
        return size[i] * span[i] > size[j] * span[j]
    return i < j


@_jit
def _split(heap, sub, m, skip, off, sec_ptr, sec_idx, mem_ptr, mem_idx, seen, sec_seen, stats, out, starts):
    """Groups of the buffers at ``heap[sub:sub+m]`` (less ``skip``) that share no
    section, written one after another from ``heap[out]``, each sorted;
    ``heap[starts + g]`` is where group ``g`` begins. Returns the count."""
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
                for g in range(mem_ptr[t], mem_ptr[t + 1]):
                    j = mem_idx[g]
                    if off[j] < 0 and seen[j] != stamp:
                        seen[j] = stamp
                        heap[w] = j
                        w += 1
        heap[heap[starts + count]:w].sort()
        count += 1
    heap[starts + count] = w
    return count


@_jit
def run(size, align, span, rank, order_id, nbr_ptr, nbr_idx, sec_ptr, sec_idx, mem_ptr, mem_idx, cap, limit, memo, memo_info,
        pool):
    """One depth-first search for a layout within ``cap`` using at most ``limit`` nodes.

    Returns (status, nodes, least pruned bound, offsets). EXHAUSTED proves no
    layout has a peak below the least pruned bound.

    ``memo`` (a power of two x MEMO_COLUMNS, one entry per row), ``memo_info`` and ``pool`` are the
    table of searched states; the caller keeps them across searches of the same
    component, so a longer search in the same ``order_id`` resumes rather than restarts.

    The recursion (place a buffer, then each group of the rest in turn) runs
    on an explicit stack of frames, one per node on the current path.
    """
    n = size.shape[0]
    nsec = mem_ptr.shape[0] - 1
    off = np.full(n, -1, np.int64)
    min_off = np.zeros(n, np.int64)
    total = np.zeros(nsec, np.int64)
    for s in range(nsec):
        for g in range(mem_ptr[s], mem_ptr[s + 1]):
            total[s] += size[mem_idx[g]]
    who = np.empty(n, np.int64)  # buffer of each rank
    for i in range(n):
        who[rank[i]] = i
    seen = np.zeros(n, np.int64)
    sec_seen = np.zeros(nsec, np.int64)
    stats = np.zeros(6, np.int64)
    stats[_LIMIT] = limit
    stats[_PRUNED] = _NO_BOUND
    trail = n + sec_idx.shape[0] + nbr_idx.shape[0] + 8 + n * (n + 1)  # the last part: groups ordered afresh
    tr_kind = np.empty(trail, np.int64)
    tr_idx = np.empty(trail, np.int64)
    tr_val = np.empty(trail, np.int64)
    # per-frame scratch (candidates, groups, group starts) is taken from ``heap`` like a stack
    heap = np.empty(n + (n + 1) * (3 * n + 2 + nsec), np.int64)
    depth_cap = n + 2
    f_sub = np.zeros(depth_cap, np.int64)  # where the frame's buffers are in heap
    f_m = np.zeros(depth_cap, np.int64)
    f_last_off = np.zeros(depth_cap, np.int64)
    f_last_rank = np.zeros(depth_cap, np.int64)
    f_state = np.zeros(depth_cap, np.int64)
    f_cand = np.zeros(depth_cap, np.int64)
    f_ncand = np.zeros(depth_cap, np.int64)
    f_q = np.zeros(depth_cap, np.int64)
    f_mark = np.zeros(depth_cap, np.int64)
    f_o = np.zeros(depth_cap, np.int64)
    f_r = np.zeros(depth_cap, np.int64)
    f_stacked = np.zeros(depth_cap, np.int64)
    f_groups = np.zeros(depth_cap, np.int64)
    f_starts = np.zeros(depth_cap, np.int64)
    f_count = np.zeros(depth_cap, np.int64)
    f_g = np.zeros(depth_cap, np.int64)
    f_top = np.zeros(depth_cap, np.int64)  # heap in use below this frame's scratch
    f_secs = np.zeros(depth_cap, np.int64)  # where the frame's sections are in heap
    f_nsecs = np.zeros(depth_cap, np.int64)
    f_most = np.zeros(depth_cap, np.int64)  # bytes left in the frame's most crowded section on entry
    f_saved = np.zeros(depth_cap, np.int64)  # the least pruned bound outside this frame's subtree
    for i in range(n):
        heap[i] = i
    d = 0
    f_sub[0] = 0
    f_m[0] = n
    f_last_off[0] = -1
    f_last_rank[0] = -1
    f_state[0] = _ENTER
    f_top[0] = n
    result = False  # what the frame just popped answered
    while d >= 0:
        state = f_state[d]
        sub = f_sub[d]
        m = f_m[d]
        if state == _ENTER:
            stats[_NODES] += 1
            if stats[_NODES] > limit:
                stats[_OUT] = 1
                break
            f_saved[d] = stats[_PRUNED]
            stats[_PRUNED] = _NO_BOUND
            if m == 0:
                result = True
                stats[_PRUNED] = f_saved[d]
                d -= 1
                continue
            slot, h = _memo_find(heap, sub, m, min_off, rank, order_id, memo, pool)
            if memo[slot, _LEN] > 0 and cap <= memo[slot, _CAP] and (memo[slot, _OFF] < f_last_off[d] or (
                    memo[slot, _OFF] == f_last_off[d] and memo[slot, _RANK] <= f_last_rank[d])):
                result = False  # searched before, from no later a position, within no smaller a cap
                stats[_PRUNED] = min(f_saved[d], memo[slot, _BOUND])
                d -= 1
                continue
            f_secs[d] = f_top[d]
            f_nsecs[d] = _frame_sections(heap, sub, m, sec_ptr, sec_idx, sec_seen, stats, f_secs[d])
            most = 0
            for k in range(f_secs[d], f_secs[d] + f_nsecs[d]):
                if total[heap[k]] > most:
                    most = total[heap[k]]
            f_most[d] = most
            f_cand[d] = f_secs[d] + f_nsecs[d]
            f_ncand[d] = _candidates(heap, sub, m, f_last_off[d], f_last_rank[d], min_off, size, rank, f_cand[d])
            f_groups[d] = f_cand[d] + m
            f_starts[d] = f_groups[d] + m
            f_q[d] = 0
            f_state[d] = _NEXT
            continue
        if state == _RESUME:  # a group below answered
            if result:
                f_g[d] += 1
                if f_g[d] == f_count[d]:  # every group placed: so is this frame
                    result = True
                    stats[_PRUNED] = min(f_saved[d], stats[_PRUNED])
                    d -= 1
                    continue
                g = f_g[d]
                _enter(d + 1, heap[f_starts[d] + g], heap[f_starts[d] + g + 1] - heap[f_starts[d] + g],
                       -1, -1, f_starts[d] + m + 1, f_sub, f_m, f_last_off, f_last_rank, f_state, f_top)
                d += 1
                continue
            _undo(f_mark[d], stats, tr_kind, tr_idx, tr_val, off, min_off, total, rank, who)
            if not f_stacked[d]:  # its offset is final, so any later sibling would have to go below it
                f_q[d] = f_ncand[d]
            else:
                f_q[d] += 1
            f_state[d] = _NEXT
        # _NEXT: try the candidates from f_q on
        descended = False
        while f_q[d] < f_ncand[d]:
            key = heap[f_cand[d] + f_q[d]]
            o = key >> _RANK_BITS
            r = key & ((1 << _RANK_BITS) - 1)
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
                    f_q[d] += 1
                    continue
                break
            mark = stats[_TRAIL]
            if _place(i, o, cap, f_most[d], heap, f_secs[d], f_nsecs[d], size, align, nbr_ptr, nbr_idx, sec_ptr,
                      sec_idx, mem_ptr, mem_idx, off, min_off, total, sec_seen, stats, tr_kind, tr_idx, tr_val):
                count = _split(heap, sub, m, i, off, sec_ptr, sec_idx, mem_ptr, mem_idx, seen, sec_seen, stats,
                               f_groups[d], f_starts[d])
                if count > 1:  # independent groups: each is ordered and laid out as a problem of its own
                    for g in range(count):
                        _rerank(heap, heap[f_starts[d] + g], heap[f_starts[d] + g + 1], rank, who, total, sec_ptr,
                                sec_idx, size, span, stats, tr_kind, tr_idx, tr_val)
                f_mark[d] = mark
                f_o[d] = o
                f_r[d] = r
                f_stacked[d] = stacked
                f_count[d] = count
                f_g[d] = 0
                f_state[d] = _RESUME
                if count == 0:  # nothing left in this frame
                    result = True
                    stats[_PRUNED] = min(f_saved[d], stats[_PRUNED])
                    d -= 1
                else:
                    fresh = count > 1
                    _enter(d + 1, heap[f_starts[d]], heap[f_starts[d] + 1] - heap[f_starts[d]], -1 if fresh else o,
                           -1 if fresh else r, f_starts[d] + m + 1, f_sub, f_m, f_last_off, f_last_rank, f_state, f_top)
                    d += 1
                descended = True
                break
            _undo(mark, stats, tr_kind, tr_idx, tr_val, off, min_off, total, rank, who)
            if not stacked:
                break
            f_q[d] += 1
        if descended:
            continue
        _memo_store(heap, sub, m, min_off, rank, order_id, f_last_off[d], f_last_rank[d], cap, stats[_PRUNED], memo,
                    memo_info, pool)
        result = False
        stats[_PRUNED] = min(f_saved[d], stats[_PRUNED])
        d -= 1
    nodes = min(stats[_NODES], limit)
    if stats[_OUT]:
        return OUT_OF_NODES, nodes, stats[_PRUNED], off
    return (FOUND if result else EXHAUSTED), nodes, stats[_PRUNED], off


@_jit
def _enter(d, sub, m, last_off, last_rank, top, f_sub, f_m, f_last_off, f_last_rank, f_state, f_top):
    """Set up frame ``d`` to place the ``m`` buffers at ``heap[sub:]`` after (last_off, last_rank)."""
    f_sub[d] = sub
    f_m[d] = m
    f_last_off[d] = last_off
    f_last_rank[d] = last_rank
    f_state[d] = _ENTER
    f_top[d] = top


@_jit
def regrow(memo, slots):
    """The same table of searched states with ``slots`` slots (a larger power of two)."""
    out = np.zeros((slots, memo.shape[1]), np.int64)
    mask = slots - 1
    for s in range(memo.shape[0]):
        if memo[s, _LEN] > 0:
            t = memo[s, _HASH] & mask
            while out[t, _LEN] > 0:
                t = (t + 1) & mask
            out[t, :] = memo[s, :]
    return out


@_jit
def pack_subsets(size, align):
    """The least end of buffers that are all live together, over every order:
    a subset's least end is the least, over its buffers, of that buffer
    bump-placed after the least end of the others (a lower start never ends
    higher, so the least end of the rest is all that matters)."""
    n = size.shape[0]
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
    n = size.shape[0]
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
