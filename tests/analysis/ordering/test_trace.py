"""Flat traced events (each with its role, loops and call site) nest into the model's
programs, and a model's programs flatten back into the same records."""

from __future__ import annotations

from dataclasses import replace

from smemviz.analysis.ordering import (
    CallSite,
    Context,
    Fence,
    LoopInfo,
    WarpRole,
    check_ordering,
    contexts,
    programs_from_trace,
)

from .kernels import blackwell_gemm, hopper_gemm, tmem_in_place


def test_programs_survive_flattening():
    for model in (hopper_gemm(), blackwell_gemm(), tmem_in_place(), hopper_gemm(k_tiles=None)):
        records = list(contexts(model))
        assert programs_from_trace(records) == model.programs
        rebuilt = replace(model, programs=programs_from_trace(records))
        assert check_ordering(rebuilt).text() == check_ordering(model).text()


def test_each_event_knows_its_role_loop_and_site():
    records = list(contexts(hopper_gemm()))
    event, ctx = next((e, c) for e, c in records if e.site.line == 41)
    assert event.kind == "wgmma_read"
    assert ctx.role == WarpRole("mma", 4, 8) and ctx.role.warp_text() == "warps 4-11"
    assert ctx.loop == LoopInfo("k", 5) and str(ctx.site) == "gemm.py:41"
    _, tail = next((e, c) for e, c in records if e.site.line == 60)
    assert tail.loop is None


def test_sibling_loops_with_their_own_ids_stay_apart():
    role = WarpRole("w", 0)
    fence = [Fence(kind="proxy_async", site=CallSite("k.py", i)) for i in range(3)]
    a, b = LoopInfo("a", 2), LoopInfo("b", None)
    records = [(fence[0], Context(fence[0].site, role, (a,))), (fence[1], Context(fence[1].site, role, (b,)))]
    records.append((fence[2], Context(fence[2].site, role, ())))
    [program] = programs_from_trace(records)
    assert [type(s).__name__ for s in program.body] == ["Loop", "Loop", "Fence"]
    assert program.body[1].trips is None
