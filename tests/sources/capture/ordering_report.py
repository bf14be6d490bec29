"""Capture one kernel's ordering model and print what the check says (results/ordering_capture.md).

``python -m tests.sources.capture.ordering_report NAME`` from the repository root, NAME one of
``gemm-aliased`` / ``gemm-apart`` (smemviz's Hopper GEMM, C staging over the A stages or apart),
``gemm-sm100`` / ``gemm-sm100-aliased`` (its Blackwell GEMM: two accumulator buffers, or one with C over A)
or a CUTLASS example of ``cutlass_examples.EXAMPLES`` (read from ``.cutlass_examples/``).
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any


def _gemm(alias: bool, arch: str = "sm_90a") -> tuple[Any, tuple[Any, ...], str]:
    from smemviz.kernel.gemm import GemmConfig
    from smemviz.kernel.gemm._host import _fake_operands, gemm_kernel

    # on Blackwell: two accumulator buffers, or one with C staged over the A stages
    extra = {"acc_stages": 1 if alias else 2} if arch == "sm_100a" else {}
    config = GemmConfig(alias_epilogue=alias, arch=arch, **extra)
    _, kernel = gemm_kernel(config)
    return kernel, _fake_operands(config.dtype), arch


def _example(name: str) -> tuple[Any, tuple[Any, ...], str]:
    from .cutlass_examples import EXAMPLES, load

    example = EXAMPLES[name]
    host, args = example.build(load(example))
    return host, args, example.arch


def main(name: str) -> None:
    from smemviz.analysis.ordering import check_ordering
    from smemviz.kernel._compile import compile_host
    from smemviz.sources.capture import capture

    if name.startswith("gemm-sm100"):
        host, args, arch = _gemm(name == "gemm-sm100-aliased", "sm_100a")
    elif name.startswith("gemm-"):
        host, args, arch = _gemm(name == "gemm-aliased")
    else:
        host, args, arch = _example(name)
    os.environ.setdefault("CUTE_DSL_ARCH", arch)
    with capture() as cap:
        compile_host(f"ordering_report_{name}", host, args, arch)
    (kc,) = cap.kernels.values()
    model = kc.ordering
    assert model is not None
    print("pipelines:", ", ".join(f"{p.name} ({p.kind}, {p.stages} stages, tx {p.tx_count})" for p in model.pipelines))
    print("roles:", ", ".join(p.role.name for p in model.programs))
    print("regions:", ", ".join(f"{r.name} {r.start}+{r.size}/{r.stages}" for r in model.regions))
    start = time.process_time()
    report = check_ordering(model)
    print(f"check: {time.process_time() - start:.2f} s CPU")
    print(report.text())


if __name__ == "__main__":
    main(sys.argv[1])
