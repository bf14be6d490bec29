"""The staged A, B and C layouts the Hopper GEMM builds for a config, traced on the CPU
(a file of its own, so the CuTe DSL can compile the jit function in it)."""

from __future__ import annotations

import cutlass
import cutlass.cute as cute
from cutlass.tensor_utils import LayoutEnum

from smemviz.layout._emit import resolve_dtype

_SEEN: dict[str, str] = {}
_KERNEL: list = []


@cute.jit
def _trace():
    kernel = _KERNEL[0]
    cfg = kernel.layout.config
    ab = resolve_dtype(cfg.dtype)
    c = resolve_dtype(cfg.out_dtype)
    a, b, epi = kernel._staged_layouts(LayoutEnum.ROW_MAJOR, LayoutEnum.ROW_MAJOR, LayoutEnum.ROW_MAJOR, ab, c)
    _SEEN.update(a=str(a), b=str(b), c=str(epi))


def staged_layouts(config) -> dict[str, str]:
    """{"a", "b", "c"}: the DSL's printed staged layouts of ``config``'s Hopper kernel."""
    from smemviz.kernel.gemm._layout import gemm_layout
    from smemviz.kernel.gemm._sm90 import Sm90Gemm

    _KERNEL[:] = [Sm90Gemm(gemm_layout(config))]
    _SEEN.clear()
    # compiled for Hopper explicitly: WGMMA refuses to trace for another arch, whatever ran before
    cute.compile(_trace, options="--gpu-arch=sm_90a")
    return dict(_SEEN)


assert cutlass  # the DSL is imported for the jit decorator's sake
