"""The Hopper GEMM's shared-memory traffic on the H200: Nsight Compute's counts of its
stmatrix epilogue and WGMMA operand reads for each swizzle variant, beside what smemviz
predicts, and the time each variant takes.

On the GPU machine, from the project root (``source .gpu2/install.sh`` first):

    python3 -m benchmarks.bank_gemm_h200 --out "$OUT"

1. every variant is launched once on an odd shape and checked against an fp32 product;
2. the variants of each family are timed interleaved (CUDA events, medians after warm-up);
3. one child process launches each variant once under ``ncu`` (counters summed over the
   launch) and the counts are joined with :func:`smemviz.kernel.gemm.predict_epilogue`.

Writes ``bank_gemm_h200.json`` (and ncu's raw CSV) under ``--out`` and prints a table.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

from smemviz.device import GpuQueryError, query_gpu
from smemviz.kernel.gemm import GemmConfig, GemmProblem

ROOT = Path(__file__).resolve().parents[1]

# (family, name, config): each family is timed together; "auto" is the DSL's own layout
VARIANTS = [
    ("epilogue bf16 128x256", "c:auto", GemmConfig(dtype="bf16")),
    ("epilogue bf16 128x256", "c:32B", GemmConfig(dtype="bf16", c_swizzle="32B")),
    ("epilogue bf16 128x256", "c:interleaved", GemmConfig(dtype="bf16", c_swizzle="interleaved")),
    ("epilogue bf16 128x256", "c:none", GemmConfig(dtype="bf16", c_swizzle="none")),
    ("epilogue f16 128x128", "c:auto", GemmConfig(dtype="f16", tile_n=128)),
    ("epilogue f16 128x128", "c:none", GemmConfig(dtype="f16", tile_n=128, c_swizzle="none")),
    ("operands bf16 128x256", "ab:auto", GemmConfig(dtype="bf16")),
    ("operands bf16 128x256", "ab:64B", GemmConfig(dtype="bf16", ab_swizzle="64B")),
    ("operands bf16 128x256", "ab:32B", GemmConfig(dtype="bf16", ab_swizzle="32B")),
    ("operands bf16 128x256", "ab:interleaved", GemmConfig(dtype="bf16", ab_swizzle="interleaved")),
    ("operands bf16 128x128", "ab:auto", GemmConfig(dtype="bf16", tile_n=128)),
    ("operands bf16 128x128", "ab:interleaved", GemmConfig(dtype="bf16", tile_n=128, ab_swizzle="interleaved")),
    ("operands f8e4m3 128x256", "ab:auto", GemmConfig(dtype="f8e4m3")),
    ("operands f8e4m3 128x256", "ab:interleaved", GemmConfig(dtype="f8e4m3", ab_swizzle="interleaved")),
]
PROFILED = GemmProblem(1024, 1024, 1024)  # 32-64 CTAs: every counter is summed over the launch
ODD = GemmProblem(1000, 744, 520)
# epilogue families: a short K makes the epilogue a large share; a long one shows the usual case
TIMED = {
    "epilogue": [GemmProblem(8192, 8192, 256), GemmProblem(8192, 8192, 4096)],
    "operands": [GemmProblem(8192, 8192, 4096)],
}
METRICS = [
    "gpu__time_duration.sum",
    "smsp__sass_inst_executed_op_shared_stsm.sum",
    "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_stsm.sum",
    "smsp__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_stsm.sum",
    "smsp__sass_data_bytes_mem_shared_op_stsm.sum",
    "smsp__sass_inst_executed_op_shared_gmma.sum",
    "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum",
    "smsp__sass_data_bytes_mem_shared_op_gmma.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma.sum",
    "l1tex__lsuin_requests_op_gmma.sum",
    "smsp__inst_executed_pipe_tensor_op_gmma.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
]
KERNEL_FILTER = "regex:Sm90Gemm"


def _child(indices: list[int]) -> None:
    """Launch each variant once on PROFILED (what ncu counts), in order."""
    import torch

    from smemviz.kernel.gemm._host import prepare_gemm
    from smemviz.kernel.gemm._measure import random_operands

    for i in indices:
        config = VARIANTS[i][2]
        a, b = random_operands(config.dtype, PROFILED)
        prepared = prepare_gemm(a, b, config)
        torch.cuda.synchronize()
        prepared()
        torch.cuda.synchronize()
        print("launched", i, config.label(), flush=True)


def _known_metrics() -> list[str]:
    """METRICS less any this ncu does not know (an unknown name stops the whole profile)."""
    query = subprocess.run(["ncu", "--query-metrics"], capture_output=True, text=True, timeout=300).stdout
    names = {line.split(" ")[0] for line in query.splitlines() if line.strip()}
    return [m for m in METRICS if m.rsplit(".", 1)[0] in names]


def _read_ncu_csv(text: str) -> list[dict[str, str]]:
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    rows = list(csv.reader(lines))
    if not rows:
        return []
    header = rows[0]
    return [dict(zip(header, r)) for r in rows[1:] if len(r) == len(header) and r[0].strip().isdigit()]


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except (AttributeError, ValueError):
        return None


def _profile(out: Path, log) -> list[dict]:
    metrics = _known_metrics()
    log(f"ncu metrics ({len(metrics)} of {len(METRICS)} known): {', '.join(metrics)}")
    report = out / "bank_gemm.ncu-rep"
    indices = list(range(len(VARIANTS)))
    cmd = [
        "ncu",
        "--clock-control",
        "none",
        "--metrics",
        ",".join(metrics),
        "-k",
        KERNEL_FILTER,
        "-f",
        "-o",
        str(report.with_suffix("")),
        sys.executable,
        __file__,
        "--child",
        ",".join(map(str, indices)),
    ]
    run = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=1200)
    (out / "ncu_launch.log").write_text(run.stdout + run.stderr)
    raw = subprocess.run(
        ["ncu", "-i", str(report), "--csv", "--page", "raw", "--print-units", "base"], capture_output=True, text=True
    ).stdout
    (out / "bank_gemm_ncu.csv").write_text(raw)
    rows = _read_ncu_csv(raw)
    launched = [int(ln.split()[1]) for ln in run.stdout.splitlines() if ln.startswith("launched ")]
    if len(rows) != len(launched):
        log(f"ncu profiled {len(rows)} kernels for {len(launched)} launches: the join is by order and may be off")
    measured = []
    for i, row in zip(launched, rows):
        measured.append(
            {"variant": i, "kernel": row.get("Kernel Name", "")[:80], **{m: _number(row.get(m, "")) for m in metrics}}
        )
    return measured


def _profile_sources(out: Path, log) -> None:
    """Per-SASS-instruction counters (ncu's source page) of the bf16 128x256 variants, kept raw."""
    picks = [i for i, (family, _, _) in enumerate(VARIANTS) if family.endswith("bf16 128x256")]
    report = out / "bank_gemm_sources"
    cmd = [
        "ncu",
        "--clock-control",
        "none",
        "--section",
        "SourceCounters",
        "-k",
        KERNEL_FILTER,
        "-f",
        "-o",
        str(report),
    ]
    cmd += [sys.executable, __file__, "--child", ",".join(map(str, picks))]
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=300)
        (out / "ncu_sources_launch.log").write_text(run.stdout + run.stderr)
        for k in range(len(picks)):
            page = subprocess.run(
                [
                    "ncu",
                    "-i",
                    f"{report}.ncu-rep",
                    "--page",
                    "source",
                    "--csv",
                    "--print-source",
                    "sass",
                    "--launch-skip",
                    str(k),
                    "--launch-count",
                    "1",
                ],
                capture_output=True,
                text=True,
                timeout=300,
            )
            (out / f"bank_gemm_source_{picks[k]}.csv").write_text(page.stdout + page.stderr)
        log(f"source counters of variants {picks} written")
    except (OSError, subprocess.SubprocessError) as exc:
        log(f"source counters not collected: {exc}")


def _check_and_time(log) -> tuple[list[dict], list[dict]]:
    import torch

    from smemviz.kernel.gemm._host import prepare_gemm
    from smemviz.kernel.gemm._measure import prepare_checked, random_operands, sample_interleaved

    checks = []
    for i, (family, name, config) in enumerate(VARIANTS):
        a, b = random_operands(config.dtype, ODD, seed=i)
        _, rel = prepare_checked(config, a, b)
        checks.append({"variant": i, "family": family, "name": name, "rel_err": rel, "passed": rel < 1e-2})
        log(f"check {family:26s} {name:8s} rel err {rel:.2e}")
    timings = []
    families: dict[str, list[int]] = {}
    for i, (family, _, _) in enumerate(VARIANTS):
        families.setdefault(family, []).append(i)
    for family, members in families.items():
        for problem in TIMED[family.split()[0]]:
            launches = {}
            for i in members:
                config = VARIANTS[i][2]
                a, b = random_operands(config.dtype, problem, seed=i)
                launches[VARIANTS[i][1]] = prepare_gemm(a, b, config)
            samples = sample_interleaved(launches, iters=20, rounds=9, warmup=5)
            torch.cuda.synchronize()
            for name, ms in samples.items():
                med = sorted(ms)[len(ms) // 2]
                timings.append(
                    {
                        "family": family,
                        "name": name,
                        "problem": [problem.m, problem.n, problem.k],
                        "median_ms": med,
                        "ms": ms,
                    }
                )
                log(f"time  {family:26s} {name:8s} {problem.m}x{problem.n}x{problem.k}: {med:.4f} ms")
    return checks, timings


def _predictions() -> list[dict]:
    from smemviz.kernel.gemm._banks import predict_epilogue, predict_mainloop
    from smemviz.kernel.gemm._layout import gemm_layout

    out = []
    for i, (family, name, config) in enumerate(VARIANTS):
        p = predict_epilogue(config, PROFILED)
        g = predict_mainloop(config, PROFILED)
        layout = gemm_layout(config)
        out.append(
            {
                "variant": i,
                "family": family,
                "name": name,
                "label": config.label(),
                "config": {k: getattr(config, k) for k in ("dtype", "tile_m", "tile_n", "ab_swizzle", "c_swizzle")},
                "stages": layout.stages,
                "stsm_instructions": p.instructions,
                "stsm_wavefronts": p.wavefronts,
                "stsm_ideal": p.ideal,
                "stsm_conflicts": p.conflicts,
                "gmma_instructions": g.instructions,
                "gmma_wavefronts": g.wavefronts,
                "gmma_bytes": g.bytes,
                "gmma_conflicts": g.conflicts,
            }
        )
    return out


def markdown_tables(record: dict, sass_rows: list[dict]) -> str:
    """The record as the tables of results/bank_gemm_h200.md (predicted beside measured)."""
    measured = {m["variant"]: m for m in record["measured"]}
    out = [
        "| variant | stmatrix.x4 | wavefronts: predicted / ncu | conflicts: predicted / ncu "
        "| WGMMA (warp) | wavefronts: predicted / ncu | conflicts: ncu |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for p in record["predicted"]:
        m = measured[p["variant"]]
        out.append(
            f"| {p['family']} {p['name']} | {m['smsp__sass_inst_executed_op_shared_stsm.sum']:.0f} "
            f"| {p['stsm_wavefronts']} / {m['smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_stsm.sum']:.0f} "
            f"| {p['stsm_conflicts']} / {m['smsp__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_stsm.sum']:.0f} "
            f"| {m['smsp__sass_inst_executed_op_shared_gmma.sum']:.0f} "
            f"| {p['gmma_wavefronts']} / {m['l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum']:.0f} "
            f"| {m['l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma.sum']:.0f} |"
        )
    out += ["", "| variant | SASS | per launch | wavefronts per instruction | TMA instructions per launch |"]
    out += ["| --- | --- | --- | --- | --- |"]
    names = {p["variant"]: f"{p['family']} {p['name']}" for p in record["predicted"]}
    for variant in sorted({int(r["variant"]) for r in sass_rows}):
        rows = [r for r in sass_rows if int(r["variant"]) == variant]
        tma = {}
        for r in rows:
            op = r["sass"].split()[0]
            if op.startswith("UTMA"):
                tma[op] = tma.get(op, 0) + int(r["executed"])
        for op in ("STSM.16.M88.4", "HGMMA"):
            mine = [r for r in rows if r["sass"].startswith(op)]
            executed = sum(int(r["executed"]) for r in mine)
            per = sorted({int(r["wavefronts"]) / int(r["executed"]) for r in mine})
            out.append(
                f"| {names[variant]} | `{mine[0]['sass'].split()[0]}` x{len(mine)} | {executed} "
                f"| {', '.join(f'{x:g}' for x in per)} | {', '.join(f'{k} {v}' for k, v in sorted(tma.items()))} |"
            )
    out += ["", "| family | variant | problem | median ms | vs auto |", "| --- | --- | --- | --- | --- |"]
    base = {}
    for row in record["timings"]:
        key = (row["family"], tuple(row["problem"]))
        base.setdefault(key, row["median_ms"])
        out.append(
            f"| {row['family']} | {row['name']} | {'x'.join(map(str, row['problem']))} "
            f"| {row['median_ms']:.4f} | {row['median_ms'] / base[key]:.2f}x |"
        )
    return "\n".join(out) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "/tmp/bank_gemm")))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--skip-timing", action="store_true")
    parser.add_argument("--tables", type=Path, metavar="JSON", help="print a record's tables (CPU; no profiling)")
    args = parser.parse_args()
    if args.tables is not None:
        sass = args.tables.with_name(args.tables.stem + "_sass.csv")
        rows = list(csv.DictReader(sass.open())) if sass.exists() else []
        print(markdown_tables(json.loads(args.tables.read_text()), rows), end="")
        return 0
    if args.child is not None:
        _child([int(x) for x in args.child.split(",")])
        return 0
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []

    def log(text: str) -> None:
        print(text, flush=True)
        lines.append(text)

    started = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    predicted = _predictions()
    checks, timings = ([], []) if args.skip_timing else _check_and_time(log)
    measured = _profile(out, log)
    _profile_sources(out, log)
    try:
        gpu = ", ".join(query_gpu(["name", "driver_version", "compute_cap"]))
    except GpuQueryError as exc:
        gpu = f"unknown ({exc})"
    ncu = subprocess.run(["ncu", "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1:]
    result = {
        "date_utc": started,
        "gpu": gpu,
        "ncu": ncu,
        "command": "python3 -m benchmarks.bank_gemm_h200 --out $OUT",
        "profiled_problem": [PROFILED.m, PROFILED.n, PROFILED.k],
        "predicted": predicted,
        "measured": measured,
        "checks": checks,
        "timings": timings,
    }
    (out / "bank_gemm_h200.json").write_text(json.dumps(result, indent=2) + "\n")
    by_variant = {m["variant"]: m for m in measured}
    log("")
    log(
        f"{'variant':34s} {'stsm inst':>9s} {'pred wf':>8s} {'ncu wf':>8s} {'pred cf':>8s} {'ncu cf':>8s} {'gmma wf':>9s} {'gmma B':>10s}"
    )
    for p in predicted:
        m = by_variant.get(p["variant"], {})
        log(
            f"{p['family'] + ' ' + p['name']:38s} {m.get('smsp__sass_inst_executed_op_shared_stsm.sum')!s:>9s} "
            f"{p['stsm_wavefronts']:>8d} {m.get('smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_stsm.sum')!s:>8s} "
            f"{p['stsm_conflicts']:>8d} {m.get('smsp__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_stsm.sum')!s:>8s} "
            f"{p['gmma_wavefronts']:>12d} {m.get('l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum')!s:>12s} "
            f"{m.get('l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma.sum')!s:>11s}"
        )
    (out / "bank_gemm_h200.log").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
