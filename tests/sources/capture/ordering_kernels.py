"""A small two-warp kernel for the ordering capture tests: warp 0 writes a staged buffer
and hands each stage to warp 1 through a ``PipelineAsync``; warp 1 reads it and gives the
stage back. ``make(drop_release=True)`` builds the same kernel without the consumer's
release, a hang the check must find from the capture alone."""

from __future__ import annotations

from typing import Any

import cutlass
import cutlass.cute as cute
from cutlass import pipeline
from cutlass.memory import SmemAllocator

STAGES = 2
ELEMS = 32  # one Int32 per lane and stage


def make(drop_release: bool = False) -> Any:
    @cute.kernel
    def handoff_kernel(out: cute.Tensor, trips: cutlass.Int32):
        smem = SmemAllocator()
        bars = smem.allocate_array(cutlass.Int64, 2 * STAGES)
        buf = smem.allocate_tensor(cutlass.Int32, cute.make_layout((ELEMS, STAGES)), 16)
        tidx, _, _ = cute.arch.thread_idx()
        lane = tidx % 32
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        handoff = pipeline.PipelineAsync.create(
            num_stages=STAGES,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
            barrier_storage=bars,
        )
        if warp == 0:
            state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, STAGES)
            for i in cutlass.range(trips, unroll=1):
                handoff.producer_acquire(state)
                stage = buf[(None, state.index)]
                stage[lane] = i
                handoff.producer_commit(state)
                state.advance()
        else:
            state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, STAGES)
            total = cutlass.Int32(0)
            for _i in cutlass.range(trips, unroll=1):
                handoff.consumer_wait(state)
                stage = buf[(None, state.index)]
                total += stage[lane]
                if cutlass.const_expr(not drop_release):
                    handoff.consumer_release(state)
                state.advance()
            out[lane] = total

    @cute.jit
    def handoff_host(out: cute.Tensor, trips: cutlass.Int32):
        handoff_kernel(out, trips).launch(grid=(1, 1, 1), block=(64, 1, 1))

    return handoff_host
