"""The SMEM probe kernel (CuTe DSL): one CTA writes every region's tag through
its typed view, step by step, and copies the whole unified SMEM array to
global memory after each step.

Everything plan-specific is a trace-time constant: the kernel is specialised
per layout and cached by the plan (see :mod:`._compile`).
"""

from __future__ import annotations

from typing import Any

import cutlass
import cutlass.cute as cute

from ... import hardware
from ...layout import _emit
from ._schedule import ProbeSchedule

__all__ = ["SmemProbeKernel", "INFO_WORDS"]

# info[0]: %dynamic_smem_size as the kernel sees it; info[1]: base address mod 1024
INFO_WORDS = 2


class SmemProbeKernel:
    """Probe kernel for one schedule. ``out`` is ``Uint8[steps, unified_bytes]``,
    ``info`` is ``Int32[INFO_WORDS]``."""

    def __init__(self, plan: Any, schedule: ProbeSchedule, threads: int = 256) -> None:
        self.plan = plan
        self.schedule = schedule
        self.threads = threads
        self.n_bytes = schedule.unified_bytes
        self.n_steps = len(schedule.steps)
        # flat trace-time tables, indexed with range_constexpr in the kernel
        self.steps = [
            [(w.offset, _emit.resolve_dtype(w.dtype), w.count, w.value, w.tail_offset, w.tail_count) for w in step]
            for step in schedule.steps
        ]

    @cute.jit
    def __call__(self, out: cute.Tensor, info: cute.Tensor):
        self.kernel(out, info).launch(grid=[1, 1, 1], block=[self.threads, 1, 1])

    @cute.kernel
    def kernel(self, out: cute.Tensor, info: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        base = _emit.unified_array(self.plan)
        for i in cutlass.range(tidx, self.n_bytes, self.threads):
            base[i] = cutlass.Uint8(0)
        cute.arch.sync_threads()
        if tidx == 0:
            info[0] = cute.arch.dynamic_smem_size()
            info[1] = cutlass.Int32(base.data_ptr().toint() % hardware.MAX_SMEM_BASE_ALIGNMENT)
        for s in cutlass.range_constexpr(self.n_steps):
            for w in cutlass.range_constexpr(len(self.steps[s])):
                offset, dtype, count, value, tail_offset, tail_count = self.steps[s][w]
                view = _emit.typed_view(base, offset, dtype, count)
                element = dtype(value)
                for i in cutlass.range(tidx, count, self.threads):
                    view[i] = element
                if tail_count > 0:
                    tail = _emit.typed_view(base, tail_offset, cutlass.Uint8, tail_count)
                    tail_element = cutlass.Uint8(self.schedule.steps[s][w].tag)
                    for i in cutlass.range(tidx, tail_count, self.threads):
                        tail[i] = tail_element
            cute.arch.sync_threads()
            for i in cutlass.range(tidx, self.n_bytes, self.threads):
                out[s, i] = base[i]
            cute.arch.sync_threads()
