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


def _gemm_plan():
    from smemviz import SmemAllocation, SmemAllocator

    s = SmemAllocator(steps=("load", "mma", "epilogue"))
    s.add(SmemAllocation("a_stages", 3 * 16384, alignment=1024, stages=3), live=range(0, 2))
    s.add(SmemAllocation("b_stages", 3 * 16384, alignment=1024, stages=3), live=range(0, 2))
    s.add(SmemAllocation("epi_c", 65536 + 16384, alignment=1024), live="epilogue")
    s.compute_layout()
    return s.plan


def test_a_lifetime_plan_states_each_handover():
    from smemviz.analysis.ordering import plan_needs

    kinds = {
        "a_stages": ("tma_load", "umma_read"),
        "b_stages": ("tma_load", "umma_read"),
        "epi_c": ("stmatrix", "tma_store"),
    }
    needs = plan_needs(_gemm_plan(), kinds)
    assert not needs.unknown
    assert {(n.earlier, n.later) for n in needs.needs} == {("a_stages", "epi_c"), ("b_stages", "epi_c")}
    assert all("tcgen05.commit" in n.edge for n in needs.needs)
    assert needs.lines()[0].startswith("UMMA reads a_stages -> stmatrix writes epi_c over it: needs tcgen05.commit")


def test_alias_group_phases_hand_over_in_turn_and_missing_kinds_are_said():
    from smemviz import SmemAllocation, SmemAllocator
    from smemviz.analysis.ordering import plan_needs

    s = SmemAllocator()
    s.add(SmemAllocation("sQ", 16384, alignment=1024))
    s.add_alias_group([[SmemAllocation("sK", 16384)], [SmemAllocation("sV", 16384)], [SmemAllocation("sO", 8192)]])
    s.compute_layout()
    needs = plan_needs(s.plan, {"sK": ("tma_load", "wgmma_read"), "sV": ("tma_load", "wgmma_read")})
    assert [(n.earlier, n.later) for n in needs.needs] == [("sK", "sV")]  # sK -> sO is not a direct hand-over
    assert "wait_group retiring the WGMMA" in needs.needs[0].edge
    assert needs.unknown == (("sV", "sO"),)
    assert "declare the access kinds of both" in needs.lines()[-1]
