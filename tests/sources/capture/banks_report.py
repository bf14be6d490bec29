"""The bank analysis of captured kernels, as Markdown tables (results/captured_banks.md).

``python -m tests.sources.capture.banks_report gemm`` from the repository root: smemviz's Hopper
GEMM in each C staging mode, its captured epilogue against ``epilogue_reports`` and
``predict_epilogue``; ``python -m tests.sources.capture.banks_report NAME ...`` for CUTLASS
examples of ``cutlass_examples.EXAMPLES`` (read from ``.cutlass_examples/``).
"""

from __future__ import annotations

import collections
import os
import sys

C_MODES = ("auto", "none", "interleaved", "32B", "64B")


def gemm(problem_mnk: tuple[int, int, int] = (8192, 8192, 256)) -> None:
    from smemviz.analysis.banks import analyse_captured, analyse_declared
    from smemviz.kernel._compile import compile_host
    from smemviz.kernel.gemm import GemmConfig, GemmProblem, predict_epilogue
    from smemviz.kernel.gemm._banks import epilogue_reports
    from smemviz.kernel.gemm._host import _fake_operands, gemm_kernel
    from smemviz.sources.capture import capture

    problem = GemmProblem(*problem_mnk)
    print(f"Launch: {problem.m}x{problem.n}x{problem.k}; numbers are instructions, wavefronts, ideal, conflicts.\n")
    print(
        "| C mode | copies | declared access capture found (stage 0) | captured, per stage | "
        "`epilogue_reports`, per stage | launch: captured x CTAs | `predict_epilogue` |"
    )
    print("|---|---:|---|---|---|---|---|")
    for mode in C_MODES:
        config = GemmConfig(arch="sm_90a", c_swizzle=mode)
        _, kernel = gemm_kernel(config)
        with capture() as cap:
            compile_host(f"banks_report_{mode}", kernel, _fake_operands(config.dtype), "sm_90a", key=None)
        (kc,) = cap.kernels.values()
        counted = analyse_captured(kc)
        by_stage = {}
        for t in counted:
            (access,) = t.copy.accesses
            declared = analyse_declared(kc.plan, access)
            assert (declared.wavefronts, declared.ideal, declared.conflicts) == (t.wavefronts, t.ideal, t.conflicts)
            by_stage[t.copy.stage] = (t, access)
        _, first = by_stage[0]
        captured = " / ".join(
            f"{t.instructions}, {t.wavefronts}, {t.ideal}, {t.conflicts}"
            for t, _ in (by_stage[s] for s in sorted(by_stage))
        )
        predicted = " / ".join(
            f"{r.instructions}, {r.wavefronts}, {r.ideal}, {r.conflicts}" for r in epilogue_reports(config)
        )
        launch = predict_epilogue(config, problem)
        sums = [
            launch.ctas * sum(getattr(t, k) for t in counted)
            for k in ("instructions", "wavefronts", "ideal", "conflicts")
        ]
        print(
            f"| {mode} | {len(counted)} | `{first.instruction}` over `{first.layout}`, swizzle {first.swizzle}, "
            f"warps {first.warps[0]}x{first.warps[1]} | {captured} | {predicted} | "
            f"{', '.join(f'{x:,}' for x in sums)} | "
            f"{launch.instructions:,}, {launch.wavefronts:,}, {launch.ideal:,}, {launch.conflicts:,} |"
        )


def examples(names: list[str]) -> None:
    from smemviz.analysis import lint
    from smemviz.analysis.banks import analyse_captured
    from smemviz.kernel._compile import compile_host
    from smemviz.sources.capture import capture

    from .cutlass_examples import EXAMPLES, load

    for name in names:
        example = EXAMPLES[name]
        host, args = example.build(load(example))
        os.environ["CUTE_DSL_ARCH"] = example.arch
        with capture() as cap:
            compile_host(f"banks_report_{name}", host, args, example.arch)
        (kc,) = cap.kernels.values()
        print(f"\n### {name} ({example.arch})\n")
        print(f"{len(kc.banks)} records, {len(kc.plan.accesses)} declared accesses on the plan.\n")
        groups: collections.Counter = collections.Counter()
        totals: dict = collections.defaultdict(lambda: [0, 0, 0, 0])
        for t in analyse_captured(kc):
            row = totals[t.copy.site]
            for i, key in enumerate(("instructions", "wavefronts", "ideal", "conflicts")):
                row[i] += getattr(t, key)
        for r in kc.banks:
            groups[
                (
                    r.site,
                    r.instruction or "-",
                    r.view or "-",
                    r.region or "-",
                    _warps(r.warps),
                    len(r.accesses),
                    r.unread or r.note or "",
                )
            ] += 1
        print(
            "| site | records | instruction | view | region | warps | accesses each | counted (instr, wf, ideal, conflicts) | unread / note |"
        )
        print("|---|---:|---|---|---|---|---:|---|---|")
        for (site, instruction, view, region, warps, n, why), count in groups.items():
            t = totals.get(site)
            counted = ", ".join(str(x) for x in t) if t else "-"
            print(f"| {site} | {count} | {instruction} | {view} | {region} | {warps} | {n} | {counted} | {why} |")
        bank = [f for f in lint(kc.plan, example.arch) if f.rule.startswith("bank")]
        print(f"\nlint bank findings: {len(bank)}" + "".join(f"\n- {f.rule}: {f.message}" for f in bank))


def timing(names: list[str]) -> None:
    """What reading the SMEM copies adds to a captured compile: smemviz's GEMM ("gemm") in two
    C modes, or CUTLASS examples by name."""
    import time

    from smemviz.kernel._compile import compile_host
    from smemviz.kernel.gemm import GemmConfig
    from smemviz.kernel.gemm._host import _fake_operands, gemm_kernel
    from smemviz.sources.capture import _session, capture

    from .cutlass_examples import EXAMPLES, load

    original = _session.Capture._with_banks
    spent = [0.0]

    def timed(self, kc, *args):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        out = original(self, kc, *args)
        spent[0] += time.perf_counter() - start
        return out

    _session.Capture._with_banks = timed  # type: ignore[method-assign]
    jobs = []
    for name in names:
        if name == "gemm":
            for mode in ("auto", "none"):
                config = GemmConfig(arch="sm_90a", c_swizzle=mode)
                jobs.append((f"smemviz GEMM, C {mode}", gemm_kernel(config)[1], _fake_operands(config.dtype), "sm_90a"))
        else:
            example = EXAMPLES[name]
            host, args = example.build(load(example))
            jobs.append((name, host, args, example.arch))
    print("| kernel | capture + compile | reading the SMEM copies | records |")
    print("|---|---:|---:|---:|")
    for label, host, args, arch in jobs:
        spent[0] = 0.0
        start = time.perf_counter()
        with capture() as cap:
            compile_host(f"banks_timing_{label}", host, args, arch)
        total = time.perf_counter() - start
        (kc,) = cap.kernels.values()
        print(f"| {label} | {total:.2f} s | {spent[0]:.3f} s | {len(kc.banks)} |")
    _session.Capture._with_banks = original  # type: ignore[method-assign]


def _warps(warps: tuple[int, ...]) -> str:
    if not warps:
        return "-"
    return f"{warps[0]}-{warps[-1]}" if len(warps) > 1 else str(warps[0])


if __name__ == "__main__":
    args = sys.argv[1:]
    if args == ["gemm"]:
        gemm()
    elif args[:1] == ["timing"]:
        timing(args[1:])
    else:
        examples(args)
