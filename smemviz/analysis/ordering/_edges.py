"""The table of edges: what must order an earlier access before a later one over the
same bytes, by the kinds of the two accesses.

Both the checker (in a finding's fix) and declared plans (the edge each shared byte
needs) read it, so the two always name the same edge.
"""

from __future__ import annotations

__all__ = ["GENERIC_WRITES", "ASYNC_READS", "TMEM_KINDS", "kind_class", "needed_edge"]

GENERIC_WRITES = frozenset({"st", "stmatrix", "cp_async"})
GENERIC_READS = frozenset({"ld", "ldmatrix"})
ASYNC_READS = frozenset({"tma_store", "wgmma_read", "umma_read", "tcgen05_cp"})
TMEM_KINDS = frozenset({"tcgen05_ld", "tcgen05_st", "tcgen05_cp", "umma_write_acc", "tmem_dealloc"})


def kind_class(kind: str) -> str:
    """generic_read, generic_write, tma_load, or the async kind itself."""
    if kind in GENERIC_WRITES:
        return "generic_write"
    if kind in GENERIC_READS:
        return "generic_read"
    return kind


# (earlier class, later class) -> the edge; "*" matches any class
_TABLE: tuple[tuple[str, str, str], ...] = (
    (
        "umma_read",
        "tmem_dealloc",
        "tcgen05.commit to an mbarrier after the last MMA, waited (directly or through a chain) before the deallocating warp frees",
    ),
    (
        "umma_write_acc",
        "tmem_dealloc",
        "tcgen05.commit to an mbarrier after the last MMA, waited (directly or through a chain) before the deallocating warp frees",
    ),
    (
        "*",
        "tmem_dealloc",
        "every reader's tcgen05.wait::ld, then a barrier with the deallocating warp (directly or through a chain)",
    ),
    (
        "umma_read",
        "tma_load",
        "the consumer release by tcgen05.commit on the stage's empty barrier, and the producer "
        "waits that phase before the TMA load",
    ),
    (
        "umma_read",
        "*",
        "tcgen05.commit to an mbarrier after the last MMA reading it, waited by the writing warps",
    ),
    (
        "wgmma_read",
        "tma_load",
        "warpgroup wait_group retiring the WGMMA, then an arrive on the stage's empty barrier "
        "that the producer waits before the TMA load",
    ),
    (
        "wgmma_read",
        "*",
        "warpgroup wait_group retiring the WGMMA, then a barrier (named barrier or mbarrier) to the writing warps",
    ),
    (
        "tma_store",
        "*",
        "cp.async.bulk.wait_group.read by the thread that issued the store, then a barrier to the writers",
    ),
    (
        "cp_async",
        "*",
        "cp.async.wait_group (or cp.async.mbarrier.arrive) by the copying threads, then the barrier that publishes it",
    ),
    (
        "generic_write",
        "async_read",
        "fence.proxy.async.shared::cta (fence_view_async_shared) by the writers, then the barrier that publishes it",
    ),
    (
        "tcgen05_ld",
        "*",
        "tcgen05.wait::ld by the readers, then tcgen05.fence::before_thread_sync, a barrier to the "
        "writers and tcgen05.fence::after_thread_sync",
    ),
    (
        "umma_write_acc",
        "*",
        "tcgen05.commit to an mbarrier after the MMA, waited before the next access",
    ),
    (
        "tma_load",
        "*",
        "a wait on the full barrier the TMA load completes on, for the phase it fills",
    ),
    (
        "generic_read",
        "tma_load",
        "an arrive on the stage's empty barrier by the readers, waited by the producer before the TMA load",
    ),
    (
        "*",
        "*",
        "a named barrier (bar.sync) between the two warp groups, or an mbarrier arrive by the "
        "earlier warps that the later ones wait",
    ),
)


def _matches(pattern: str, cls: str) -> bool:
    if pattern == "*":
        return True
    if pattern == "async_read":
        return cls in ASYNC_READS
    return pattern == cls


def needed_edge(earlier_kind: str, later_kind: str) -> str:
    """The edge that orders an ``earlier_kind`` access before a ``later_kind`` one over
    the same bytes."""
    earlier = (earlier_kind, kind_class(earlier_kind))
    later = (later_kind, kind_class(later_kind))
    for a, b, edge in _TABLE:
        if any(_matches(a, k) for k in earlier) and any(_matches(b, k) for k in later):
            return edge
    raise AssertionError("the table ends with a catch-all")
