"""smemviz's Hopper GEMM against torch.matmul (cuBLAS) and CUTLASS's CuTe DSL example, one process.

On the GPU machine, from the project root:

    python3 -m benchmarks.gemm_h200 --out "$OUT" [--cutlass-example PATH/dense_gemm.py]

For every dtype and size, every candidate (smemviz configs, torch.matmul, the
CUTLASS example's tile/cluster choices) is timed in interleaved rounds: each
round launches each candidate ``--iters`` times back to back between two CUDA
events; the reported time is the median over rounds, after warm-up. Inputs are
random normal (never zeros). Each smemviz candidate's output is checked against
an fp32 product first. Writes ``gemm_h200.json`` and ``gemm_h200.md`` into
``--out`` and prints a short table last. CUTLASS's example is read from the
given path, never copied into this repository.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import json
import platform
import shlex
import statistics
import subprocess
import sys
from pathlib import Path

from smemviz.device import query_gpu

ROOT = Path(__file__).resolve().parents[1]

SMEMVIZ_CONFIGS = [  # (tile_n, cluster_m, alias_epilogue)
    (256, 2, True),
    (256, 2, False),
    (256, 1, True),
    (128, 2, True),
    (128, 2, False),
]
# Blackwell (--arch sm_100a): (tile_n, alias_epilogue, acc_stages), one CTA per cluster
SMEMVIZ_CONFIGS_SM100 = [(256, False, 2), (256, True, 1), (128, False, 2)]
CUTLASS_CONFIGS = [((128, 256), (2, 1)), ((128, 256), (1, 1)), ((128, 128), (2, 1))]
CUTLASS_PERSISTENT_CONFIGS = [((128, 256), (2, 1)), ((128, 256), (1, 1))]


def _gpu() -> dict:
    try:
        name, driver, clock, power = query_gpu(["name", "driver_version", "clocks.max.sm", "power.limit"])
        return {"name": name, "driver": driver, "max_sm_clock": clock, "power_limit": power}
    except Exception as exc:
        return {"name": "unknown", "error": str(exc)}


def _gpu_state() -> str:
    """SM clock, power draw, temperature and active clock-limit reasons, as nvidia-smi reports them."""
    try:
        return ", ".join(query_gpu(["clocks.sm", "power.draw", "temperature.gpu", "clocks_event_reasons.active"]))
    except Exception as exc:
        return f"unknown ({exc})"


def _versions() -> dict:
    import torch

    out = {"python": platform.python_version(), "torch": torch.__version__, "cuda": str(torch.version.cuda)}
    try:
        from importlib.metadata import version

        out["nvidia-cutlass-dsl"] = version("nvidia-cutlass-dsl")
    except Exception as exc:
        out["nvidia-cutlass-dsl"] = f"unknown ({exc})"
    return out


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    except Exception:
        return "unknown"


def _load_module(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cutlass_candidates(path: str, dtype: str, a, b, c, log, persistent: bool = False):
    """Compiled launches of CUTLASS's Hopper example (or its persistent variant) for
    each tile/cluster it accepts."""
    import cuda.bindings.driver as cuda_driver
    import cutlass
    import cutlass.cute as cute
    import torch

    from smemviz.kernel.gemm._host import _cute_view

    module = _load_module(path, "cutlass_dense_gemm_persistent" if persistent else "cutlass_dense_gemm")
    stream = cuda_driver.CUstream(torch.cuda.current_stream().cuda_stream)
    views = (_cute_view(a), _cute_view(b), _cute_view(c))
    out = {}
    for tile, cluster in CUTLASS_PERSISTENT_CONFIGS if persistent else CUTLASS_CONFIGS:
        kind = "cutlass persistent" if persistent else "cutlass example"
        name = f"{kind} {tile[0]}x{tile[1]} cl{cluster[0]}x{cluster[1]}"
        try:
            if persistent:
                kernel = module.HopperWgmmaGemmPersistentKernel(cutlass.Float32, tile, cluster, 1, True)
                clusters = cutlass.utils.HardwareInfo().get_max_active_clusters(cluster[0] * cluster[1])
                compiled = cute.compile(kernel, *views, clusters, stream)
                out[name] = lambda compiled=compiled: compiled(*views, stream)
            else:
                kernel = module.HopperWgmmaGemmKernel(cutlass.Float32, tile, cluster)
                compiled = cute.compile(kernel, *views, stream)
                out[name] = lambda compiled=compiled: compiled(*views, stream)
        except Exception as exc:
            log(f"{name} ({dtype}): not run: {type(exc).__name__}: {str(exc)[:200]}")
    return out


def _time(candidates: dict, iters: int, rounds: int, warmup: int) -> dict:
    from smemviz.kernel.gemm._measure import sample_interleaved

    samples = sample_interleaved(candidates, iters=iters, rounds=rounds, warmup=warmup)
    return {
        name: {"median_ms": statistics.median(v), "min_ms": min(v), "max_ms": max(v)} for name, v in samples.items()
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results")
    parser.add_argument("--sizes", default="8192,4096")
    parser.add_argument("--dtypes", default="f16,bf16")
    parser.add_argument("--cutlass-example", default=None, help="CUTLASS's Hopper dense_gemm.py (sm_90a only)")
    parser.add_argument("--cutlass-persistent", default=None, help="CUTLASS's dense_gemm_persistent.py, timed too")
    parser.add_argument(
        "--arch",
        default="sm_90a",
        choices=["sm_90a", "sm_100a"],
        help="sm_100a times the Blackwell GEMM (results gemm_sm100.*) on a B200-class GPU",
    )
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--commit", default=None, help="the commit the carried tree was copied from")
    parser.add_argument(
        "--data",
        choices=["randn", "ints"],
        default="randn",
        help="random normal inputs, or random integers in [-2, 2] as CUTLASS's example draws them",
    )
    args = parser.parse_args(argv)

    import torch

    from smemviz.kernel.gemm import GemmConfig, GemmProblem, gemm_layout
    from smemviz.kernel.gemm._host import prepare_gemm

    log_lines: list[str] = []

    def log(msg: str) -> None:
        print(msg, flush=True)
        log_lines.append(msg)

    rows = []
    for dtype in args.dtypes.split(","):
        tdt = {"f16": torch.float16, "bf16": torch.bfloat16}[dtype]
        for size in (int(s) for s in args.sizes.split(",")):
            problem = GemmProblem(size, size, size)
            g = torch.Generator(device="cuda").manual_seed(size)
            if args.data == "randn":
                a = torch.randn(size, size, generator=g, device="cuda").to(tdt)
                b = torch.randn(size, size, generator=g, device="cuda").to(tdt)
            else:
                a = torch.randint(-2, 3, (size, size), generator=g, device="cuda").to(tdt)
                b = torch.randint(-2, 3, (size, size), generator=g, device="cuda").to(tdt)
            ref = None
            candidates = {}
            meta = {}
            if args.arch == "sm_100a":
                configs = [
                    GemmConfig(dtype=dtype, tile_n=tn, alias_epilogue=al, acc_stages=acc, arch=args.arch)
                    for tn, al, acc in SMEMVIZ_CONFIGS_SM100
                ]
            else:
                configs = [
                    GemmConfig(dtype=dtype, tile_n=tn, cluster_m=cm, alias_epilogue=al)
                    for tn, cm, al in SMEMVIZ_CONFIGS
                ]
            for cfg in configs:
                layout = gemm_layout(cfg)
                name = f"smemviz {layout.config.label()}"
                run = prepare_gemm(a, b, cfg)
                run.out.fill_(float("nan"))
                out = run().float()
                if ref is None:
                    ref = a.float() @ b.float().T
                err = float((out - ref).norm() / ref.norm())
                candidates[name] = run
                meta[name] = {"rel_err": err, "stages": layout.stages, "smem_bytes": layout.unified_bytes}
                del out
            c_torch = torch.empty(size, size, dtype=tdt, device="cuda")
            candidates["torch.matmul"] = lambda a=a, b=b, c=c_torch: torch.matmul(a, b.T, out=c)
            if args.cutlass_example:
                c_ref = torch.empty(size, size, dtype=tdt, device="cuda")
                candidates.update(
                    _cutlass_candidates(
                        args.cutlass_example, dtype, a.unsqueeze(0), b.unsqueeze(0), c_ref.unsqueeze(0), log
                    )
                )
            if args.cutlass_persistent:
                c_per = torch.empty(size, size, dtype=tdt, device="cuda")
                candidates.update(
                    _cutlass_candidates(
                        args.cutlass_persistent,
                        dtype,
                        a.unsqueeze(0),
                        b.unsqueeze(0),
                        c_per.unsqueeze(0),
                        log,
                        persistent=True,
                    )
                )
            del ref
            times = _time(candidates, args.iters, args.rounds, args.warmup)
            log(f"{dtype} {size}^3 GPU state right after timing: {_gpu_state()}")
            for name, t in times.items():
                row = {
                    "dtype": dtype,
                    "m": size,
                    "n": size,
                    "k": size,
                    "candidate": name,
                    "tflops": problem.tflops(t["median_ms"] / 1e3),
                    **t,
                    **meta.get(name, {}),
                }
                rows.append(row)
                log(f"{dtype} {size}^3 {name}: {row['tflops']:.0f} TFLOP/s (median {t['median_ms']:.3f} ms)")

    summary = []
    for dtype in args.dtypes.split(","):
        for size in (int(s) for s in args.sizes.split(",")):
            sel = [r for r in rows if r["dtype"] == dtype and r["m"] == size]
            from smemviz.kernel.gemm._measure import REL_ERR_LIMIT

            # only a correct kernel can be the best one: rows over the error limit are left out
            correct = [r for r in sel if r["candidate"].startswith("smemviz") and r["rel_err"] < REL_ERR_LIMIT[dtype]]
            if not correct:
                log(f"{dtype} {size}^3: no smemviz candidate within the error limit {REL_ERR_LIMIT[dtype]}")
                continue
            ours = max(correct, key=lambda r: r["tflops"])
            torch_row = next(r for r in sel if r["candidate"] == "torch.matmul")
            cut = [r for r in sel if r["candidate"].startswith("cutlass example")]
            best_cut = max(cut, key=lambda r: r["tflops"]) if cut else None
            summary.append(
                {
                    "dtype": dtype,
                    "size": size,
                    "smemviz_best": ours["candidate"],
                    "smemviz_tflops": ours["tflops"],
                    "torch_tflops": torch_row["tflops"],
                    "vs_torch": ours["tflops"] / torch_row["tflops"],
                    "cutlass_best": best_cut["candidate"] if best_cut else None,
                    "cutlass_tflops": best_cut["tflops"] if best_cut else None,
                    "vs_cutlass": ours["tflops"] / best_cut["tflops"] if best_cut else None,
                }
            )

    command = "python3 -m benchmarks.gemm_h200 " + " ".join(shlex.quote(x) for x in (argv or sys.argv[1:]))
    record = {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "gpu": _gpu(),
        "versions": _versions(),
        "commit": args.commit or _commit(),
        "command": command,
        "data": args.data,
        "method": f"{args.data} inputs; interleaved rounds, {args.iters} launches per sample between CUDA events, median of {args.rounds} rounds after {args.warmup} warm-up launches each",
        "rows": rows,
        "summary": summary,
        "log": log_lines,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = "gemm_sm100" if args.arch == "sm_100a" else "gemm_h200"
    (out / f"{stem}.json").write_text(json.dumps(record, indent=2))
    md = [
        f"# smemviz GEMM ({args.arch}) on the {record['gpu'].get('name')}",
        "",
        f"{record['date']} on {record['gpu'].get('name')} (driver {record['gpu'].get('driver')}); "
        f"versions {record['versions']}; commit `{record['commit']}`.",
        "",
        f"Command: `{command}`",
        "",
        f"Method: {record['method']}.",
        "",
        "| dtype | size | smemviz best | TFLOP/s | torch.matmul | ratio | CUTLASS example best | TFLOP/s | ratio |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for s in summary:
        cut = (
            f"{s['cutlass_best']} | {s['cutlass_tflops']:.0f} | {s['vs_cutlass']:.3f}"
            if s["cutlass_best"]
            else "not run | | "
        )
        md.append(
            f"| {s['dtype']} | {s['size']}^3 | {s['smemviz_best']} | {s['smemviz_tflops']:.0f} | "
            f"{s['torch_tflops']:.0f} | {s['vs_torch']:.3f} | {cut} |"
        )
    md += [
        "",
        "All candidates:",
        "",
        "| dtype | size | candidate | TFLOP/s | median ms | min ms | max ms | stages | SMEM B | rel err |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        md.append(
            f"| {r['dtype']} | {r['m']}^3 | {r['candidate']} | {r['tflops']:.0f} | {r['median_ms']:.3f} | "
            f"{r['min_ms']:.3f} | {r['max_ms']:.3f} | {r.get('stages', '')} | {r.get('smem_bytes', '')} | "
            f"{r['rel_err']:.1e} |"
            if "rel_err" in r
            else f"| {r['dtype']} | {r['m']}^3 | {r['candidate']} | {r['tflops']:.0f} | {r['median_ms']:.3f} | "
            f"{r['min_ms']:.3f} | {r['max_ms']:.3f} | | | |"
        )
    (out / f"{stem}.md").write_text("\n".join(md) + "\n")
    print("\n".join(md[: 10 + len(summary)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
