"""Capture one kernel's ordering model and print what the check says (results/ordering_capture.md).

``python -m tests.sources.capture.ordering_report NAME`` from the repository root, NAME one of
``gemm-aliased`` / ``gemm-apart`` (smemviz's Hopper GEMM, C staging over the A stages or apart)
or a CUTLASS example of ``cutlass_examples.EXAMPLES`` (read from ``.cutlass_examples/``).
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any


def _gemm(alias: bool) -> tuple[Any, tuple[Any, ...], str]:
    from smemviz.kernel.gemm import GemmConfig
    from smemviz.kernel.gemm._host import _fake_operands, gemm_kernel

    config = GemmConfig(alias_epilogue=alias, arch="sm_90a")
    _, kernel = gemm_kernel(config)
    return kernel, _fake_operands(config.dtype), "sm_90a"


def _example(name: str) -> tuple[Any, tuple[Any, ...], str]:
    from .cutlass_examples import EXAMPLES, load

    example = EXAMPLES[name]
    host, args = example.build(load(example))
    return host, args, example.arch


def main(name: str) -> None:
    from smemviz.analysis.ordering import check_ordering
    from smemviz.kernel._compile import compile_host
    from smemviz.sources.capture import capture

    host, args, arch = _gemm(name == "gemm-aliased") if name.startswith("gemm-") else _example(name)
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
