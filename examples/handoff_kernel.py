"""Two warps hand a staged buffer to each other through a ``cutlass.pipeline.PipelineAsync``:
warp 0 writes a stage and commits it, warp 1 waits, reads it and releases it. Nothing in it
knows about smemviz. ``smemviz check`` captures it and checks its ordering on the CPU:

    smemviz check examples/handoff_kernel.py:build --arch sm_90a
    smemviz check examples/handoff_kernel.py:build_without_release --arch sm_90a   # hangs: caught
"""

import cutlass
import cutlass.cute as cute
from cutlass import pipeline
from cutlass.memory import SmemAllocator

STAGES = 2
LANES = 32


def _kernel(release: bool):
    @cute.kernel
    def handoff_kernel(out: cute.Tensor, trips: cutlass.Int32):
        smem = SmemAllocator()
        barriers = smem.allocate_array(cutlass.Int64, 2 * STAGES)
        staged = smem.allocate_tensor(cutlass.Int32, cute.make_layout((LANES, STAGES)), 16)
        tidx, _, _ = cute.arch.thread_idx()
        lane = tidx % LANES
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        handoff = pipeline.PipelineAsync.create(
            num_stages=STAGES,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, LANES),
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, LANES),
            barrier_storage=barriers,
        )
        if warp == 0:
            state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, STAGES)
            for i in cutlass.range(trips, unroll=1):
                handoff.producer_acquire(state)
                stage = staged[(None, state.index)]
                stage[lane] = i
                handoff.producer_commit(state)
                state.advance()
        else:
            state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, STAGES)
            total = cutlass.Int32(0)
            for _ in cutlass.range(trips, unroll=1):
                handoff.consumer_wait(state)
                stage = staged[(None, state.index)]
                total += stage[lane]
                if cutlass.const_expr(release):
                    handoff.consumer_release(state)
                state.advance()
            out[lane] = total

    @cute.jit
    def handoff_host(out: cute.Tensor, trips: cutlass.Int32):
        handoff_kernel(out, trips).launch(grid=(1, 1, 1), block=(2 * LANES, 1, 1))

    return handoff_host


def _compile(release: bool, arch: str):
    out = cute.runtime.make_fake_tensor(cutlass.Int32, (LANES,), stride=(1,))
    return cute.compile(_kernel(release), out, cutlass.Int32(4), options=f"--gpu-arch={arch}")


def build(arch: str = "sm_90a"):
    """Compile the kernel for ``arch`` (no GPU needed) and return the compiled function."""
    return _compile(True, arch)


def build_without_release(arch: str = "sm_90a"):
    """The same kernel with warp 1's ``consumer_release`` left out: warp 0 waits forever."""
    return _compile(False, arch)
