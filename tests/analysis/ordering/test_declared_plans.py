"""Declared plans: the edge each alias needs, from the kinds of its two accesses."""

from __future__ import annotations

import pytest

from smemviz.analysis.ordering import ACCESS_KINDS, needed_edge, needed_edges


def test_the_table_of_issue_28():
    rows = {
        ("umma_read", "tma_load"): "tcgen05.commit on the stage's empty barrier",
        ("wgmma_read", "tma_load"): "wait_group retiring the WGMMA, then an arrive on the stage's empty barrier",
        (
            "tma_store",
            "st",
        ): "cp.async.bulk.wait_group.read by the thread that issued the store, then a barrier to the writers",
        ("stmatrix", "tma_store"): "fence.proxy.async.shared::cta",
        ("ld", "st"): "named barrier",
        ("tcgen05_ld", "tcgen05_st"): "tcgen05.wait::ld by the readers",
        ("umma_write_acc", "tcgen05_ld"): "tcgen05.commit to an mbarrier",
        ("tcgen05_ld", "tmem_dealloc"): "every reader's tcgen05.wait::ld, then a barrier with the deallocating warp",
    }
    for (earlier, later), words in rows.items():
        assert words in needed_edge(earlier, later), (earlier, later)


def test_a_declared_alias_reads_as_a_sentence():
    [need] = needed_edges([("smem_b", "umma_read", "epi_c", "tma_load")])
    assert need.line() == (
        "UMMA reads smem_b -> TMA writes epi_c over it: needs the consumer release by tcgen05.commit "
        "on the stage's empty barrier, and the producer waits that phase before the TMA load"
    )


def test_every_pair_of_kinds_has_an_edge():
    for a in ACCESS_KINDS:
        for b in ACCESS_KINDS:
            assert needed_edge(a, b)


def test_unknown_kinds_are_refused():
    with pytest.raises(ValueError, match="unknown access kind 'tma'"):
        needed_edges([("a", "tma", "b", "st")])
