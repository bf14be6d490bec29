"""Pictures of the ordering of shared bytes, written under docs/ (static images, kaleido):

* ``ordering-diagram.png``: the pipeline diagram of smemviz's own Hopper GEMM as capture
  records it (compiled for sm_90a on the CPU, its epilogue's C staging over A's stages);
* ``ordering-byte-map.png``: the byte map of the same kernel's layout, the sA -> sC alias
  drawn over its shared bytes (its hover names the edge).

    CUTE_DSL_ARCH=sm_90a python -m scripts.shoot_ordering      (from the repository root)

The compile takes about half a minute on a CPU; it needs the CUTLASS DSL (nvidia-cutlass-dsl).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
ARCH = "sm_90a"


def captured_gemm():
    """smemviz's Hopper GEMM, its epilogue aliased over the mainloop's A stages: the layout's
    plan, carrying the ordering model capture recorded while compiling it."""
    os.environ.setdefault("CUTE_DSL_ARCH", ARCH)
    from smemviz.kernel._compile import compile_host
    from smemviz.kernel.gemm import GemmConfig
    from smemviz.kernel.gemm._host import _fake_operands, gemm_kernel
    from smemviz.sources.capture import capture

    config = GemmConfig(alias_epilogue=True, arch=ARCH)
    layout, kernel = gemm_kernel(config)
    with capture() as cap:
        compile_host("ordering_pictures", kernel, _fake_operands(config.dtype), ARCH, key=None)
    (kc,) = cap.kernels.values()
    return replace(layout.plan, ordering=kc.ordering)


def main() -> None:
    import smemviz
    from smemviz.analysis import analyse
    from smemviz.figures import ordering_figure, smem_figure

    an = analyse(captured_gemm(), ARCH)
    print(an.ordering.text())
    # through smemviz.export: its renderer tries a failed render once more in a fresh browser
    for name, figure in (("ordering-diagram.png", ordering_figure(an)), ("ordering-byte-map.png", smem_figure(an))):
        smemviz.export(an.plan, DOCS / name, arch=ARCH, figure=figure, width=900)
    print("wrote", ", ".join(f"docs/{n}" for n in ("ordering-diagram.png", "ordering-byte-map.png")))


if __name__ == "__main__":
    main()
