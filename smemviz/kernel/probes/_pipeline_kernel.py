"""A producer/consumer kernel whose mbarriers live in the allocator's barrier
region: warp 0 copies tiles from global memory into a staged SMEM allocation,
warp 1 takes them out to global memory, synchronised by a real
``cutlass.pipeline.PipelineAsync`` built from the resource's
``pipeline_config`` after ``SmemAllocator.assign_barrier_ptrs()``.
"""

from __future__ import annotations

from typing import Any

import cutlass
import cutlass.cute as cute
from cutlass import pipeline

__all__ = ["StagedCopyKernel", "WARP"]

WARP = 32


class StagedCopyKernel:
    """``out[i] = inp[i] + 1`` through ``stages`` SMEM buffers of ``tile`` Int32.

    ``info`` receives the barrier storage's and the stage buffer's byte offsets
    from the unified array's base, as the kernel computed them.
    """

    def __init__(self, allocator: Any, resource: Any, n_tiles: int) -> None:
        self.allocator = allocator
        self.resource = resource
        self.stages = resource.pipeline_config.num_stages
        self.tile = resource.tile
        self.n_tiles = n_tiles

    @cute.jit
    def __call__(self, inp: cute.Tensor, out: cute.Tensor, info: cute.Tensor):
        self.kernel(inp, out, info).launch(grid=[1, 1, 1], block=[2 * WARP, 1, 1])

    @cute.kernel
    def kernel(self, inp: cute.Tensor, out: cute.Tensor, info: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        warp = tidx // WARP
        lane = tidx % WARP
        base = self.allocator.allocate()
        self.allocator.assign_barrier_ptrs()
        cfg = self.resource.pipeline_config
        buffers = self.allocator.get(self.resource.buffers)
        pipe = pipeline.PipelineAsync.create(
            num_stages=self.stages,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, WARP),
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, WARP),
            barrier_storage=cfg.barrier_ptr,
        )
        if tidx == 0:
            info[0] = cutlass.Int32(cfg.barrier_ptr.toint() - base.data_ptr().toint())
            info[1] = cutlass.Int32(buffers.data_ptr().toint() - base.data_ptr().toint())
        if warp == 0:
            state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, self.stages)
            for t in cutlass.range(self.n_tiles):
                pipe.producer_acquire(state)
                for j in cutlass.range(lane, self.tile, WARP):
                    buffers[state.index * self.tile + j] = inp[t * self.tile + j]
                pipe.producer_commit(state)
                state.advance()
            pipe.producer_tail(state)
        if warp == 1:
            state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.stages)
            for t in cutlass.range(self.n_tiles):
                pipe.consumer_wait(state)
                for j in cutlass.range(lane, self.tile, WARP):
                    out[t * self.tile + j] = buffers[state.index * self.tile + j] + cutlass.Int32(1)
                pipe.consumer_release(state)
                state.advance()
