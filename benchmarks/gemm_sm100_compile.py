"""Compile every configuration of smemviz's Blackwell GEMM for sm_100a on this machine (no GPU
needed) and write what the compiled code says next to what the plans say.

    python -m benchmarks.gemm_sm100_compile --out results

Writes ``gemm_sm100.md``: per config, stages, the plan's SMEM and the launch's request,
``tcgen05.alloc`` columns, registers per thread (from the cubin), compile seconds, and
whether every PTX fact agrees with the plans (``smemviz.kernel.gemm_plan_facts``). The
kernel has not run: no Blackwell GPU was available.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results")
    args = parser.parse_args(argv)
    os.environ.setdefault("CUTE_DSL_ARCH", "sm_100a")

    from importlib.metadata import version

    from smemviz.kernel._compile import clear_cache
    from smemviz.kernel._cubin import register_counts
    from smemviz.kernel._ptx import gemm_plan_facts
    from smemviz.kernel.gemm import gemm_layout, supported_configs
    from smemviz.kernel.gemm._host import compile_gemm

    clear_cache()
    rows = []
    example = None
    for config in supported_configs("sm_100a"):
        layout = gemm_layout(config)
        t0 = time.perf_counter()
        compiled = compile_gemm(config)
        seconds = time.perf_counter() - t0
        facts = gemm_plan_facts(layout, compiled.ptx)
        wrong = [f.fact for f in facts if not f.agrees]
        rows.append(
            f"| {layout.config.label()} | {layout.stages} | {layout.unified_bytes} | {compiled.dynamic_smem_bytes} | "
            f"{layout.tmem_plan.tmem_alloc_columns} | {', '.join(map(str, layout.acc_columns()))} | "
            f"{max(register_counts(compiled.cubin))} | {seconds:.1f} | {'all agree' if not wrong else '; '.join(wrong)} |"
        )
        if example is None and config.acc_stages == 2:
            example = (layout, facts)
    assert example is not None
    layout, facts = example
    md = [
        "# smemviz's Blackwell GEMM (sm_100a): compiled only, never run",
        "",
        "No Blackwell GPU has been available to this project. Every configuration below was traced and "
        "compiled for sm_100a on a CPU-only machine; none has been launched, so there are no correctness "
        "or speed results. The GPU tests (`tests/kernel/sm100/test_gemm_gpu.py`, marked `blackwell`) and "
        "`benchmarks/gemm_h200.py --arch sm_100a` are written for a B200-class GPU and have not run.",
        "",
        f"{dt.datetime.now(dt.timezone.utc).isoformat(timespec='seconds')}; nvidia-cutlass-dsl "
        f"{version('nvidia-cutlass-dsl')}; command: `python -m benchmarks.gemm_sm100_compile --out results`.",
        "",
        "| config | stages | plan SMEM B | launch requests B | tcgen05.alloc cols | accumulator columns "
        "| registers/thread | compile s | PTX vs plans |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        *rows,
        "",
        "Compile seconds are wall time of `compile_gemm` in this run, on a shared 2-core machine, with the "
        "CuTe DSL's own caches as it found them.",
        "",
        f"The PTX of `{layout.config.label()}` read against its plans:",
        "",
        "| fact | plan | PTX |",
        "| --- | --- | --- |",
        *(f"| {f.fact} | {f.plan} | {f.ptx} |" for f in facts),
        "",
    ]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "gemm_sm100.md").write_text("\n".join(md))
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
