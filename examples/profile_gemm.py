"""smemviz's Hopper GEMM as ``smemviz profile`` takes a kernel (docs/ncu.md).

On a machine with an H200 (or another sm_90a GPU) and Nsight Compute:

    smemviz profile examples/profile_gemm.py:gemm
    SMEMVIZ_C_SWIZZLE=none smemviz profile examples/profile_gemm.py:gemm   # the 4-way conflicting staging

``gemm()`` compiles the GEMM (``prepare_gemm`` compiles on first use) and returns the callable
that launches it once on random 1024x1024x1024 operands: the contract of ``smemviz profile``.
"""

import os


def gemm():
    from smemviz.kernel import GemmConfig, GemmProblem, prepare_gemm
    from smemviz.kernel.gemm._measure import random_operands

    config = GemmConfig(c_swizzle=os.environ.get("SMEMVIZ_C_SWIZZLE", "auto"))
    a, b = random_operands(config.dtype, GemmProblem(1024, 1024, 1024))
    return prepare_gemm(a, b, config)
