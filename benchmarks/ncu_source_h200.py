"""Nsight Compute's per-instruction shared-memory counters of smemviz's Hopper GEMM, one CSV
per C staging mode, as ``smemviz.read_ncu`` reads them.

On the GPU machine, from the project root (``source .gpu2/install.sh`` first):

    python3 -m benchmarks.ncu_source_h200 --out "$OUT" auto none

and on any machine with the CuTe DSL, the recorded CSVs replayed (results/ncu_attribution.md):

    CUTE_DSL_ARCH=sm_90a python -m benchmarks.ncu_source_h200 --attribution auto none interleaved 32B

For each C staging mode named: one child process compiles the GEMM with line info
(``CUTE_DSL_LINEINFO=1``) and launches it once on 1024x1024x1024 under
``ncu --section SourceCounters --import-source yes -k regex:Sm90Gemm -c 1``; the report is
then printed with ``ncu -i REPORT --page source --csv --print-source cuda,sass`` into
``ncu_gemm_c_<mode>.csv``. Everything lands in ``--out`` (with the reports and a log) and,
packed, in ``ncu_source.tgz``; ``--probe`` also reads the first report back through Nsight
Compute's Python interface (``smemviz.analysis.ncu.read_ncu_rep``) and compares its rows with
the CSV's (``ncu_report_probe.txt``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBLEM = (1024, 1024, 1024)
KERNEL_FILTER = "regex:Sm90Gemm"


def _child(mode: str) -> None:
    """Compile the GEMM in C staging ``mode`` with line info and launch it once."""
    import torch

    from smemviz.kernel.gemm import GemmConfig, GemmProblem
    from smemviz.kernel.gemm._host import prepare_gemm
    from smemviz.kernel.gemm._measure import random_operands

    config = GemmConfig(c_swizzle=mode)
    a, b = random_operands(config.dtype, GemmProblem(*PROBLEM))
    prepared = prepare_gemm(a, b, config)
    torch.cuda.synchronize()
    out = prepared()
    torch.cuda.synchronize()
    ref = (a.float() @ b.float().T).to(out.dtype)
    rel = float((out.float() - ref.float()).norm() / ref.float().norm())
    print(f"launched c:{mode} {config.label()} rel err {rel:.2e}", flush=True)


def _probe(report: Path, out: Path) -> None:
    """The first report read back through Nsight Compute's Python interface (``ncu_report``):
    the rows ``smemviz.analysis.ncu.read_ncu_rep`` gives, beside the CSV's."""
    from smemviz.analysis.ncu import read_ncu_rep, read_source_csv

    lines: list[str] = []
    try:
        rep = read_ncu_rep(report)
        csv_rows = read_source_csv((out / f"ncu_{report.stem}.csv").read_text()).rows
        lines.append(f"ncu-rep: {len(rep.rows)} rows, grid {rep.grid_size}; csv: {len(csv_rows)} rows")

        def key(r):
            return (r.address, r.sass, r.line, r.executed, r.wavefronts, r.ideal, r.excessive)

        by_pc = {r.address: key(r) for r in csv_rows}
        same = [r for r in rep.rows if by_pc.get(r.address) == key(r)]
        lines.append(f"rows equal to the CSV's: {len(same)} of {len(rep.rows)}")
        lines += [repr(r) for r in rep.rows if r.wavefronts]
    except Exception as exc:  # noqa: BLE001 - what failed is the finding
        lines.append(f"read_ncu_rep failed: {type(exc).__name__}: {exc}")
    (out / "ncu_report_probe.txt").write_text("\n".join(lines) + "\n")


def attribution_tables(modes: list[str]) -> str:
    """results/ncu's CSV of each mode through ``read_ncu`` against a CPU capture of the same GEMM."""
    from smemviz import read_ncu
    from smemviz.kernel._compile import compile_host
    from smemviz.kernel.gemm import GemmConfig
    from smemviz.kernel.gemm._host import _fake_operands, gemm_kernel
    from smemviz.sources.capture import capture

    def pair(measured, predicted):
        return f"{measured:,}" if predicted is None else f"{measured:,} / {predicted:,}"

    out = []
    for mode in modes:
        config = GemmConfig(arch="sm_90a", c_swizzle=mode)
        _, kernel = gemm_kernel(config)
        with capture() as cap:
            compile_host(f"ncu_attribution_{mode}", kernel, _fake_operands(config.dtype), "sm_90a", key=None)
        (kc,) = cap.kernels.values()
        res = read_ncu(ROOT / "results" / "ncu" / f"ncu_gemm_c_{mode}.csv", kc)
        by = {}
        for r in res.rows:
            by[r.by or "not attributed"] = by.get(r.by or "not attributed", 0) + 1
        out += [
            f"### C staging `{mode}`",
            "",
            f"{len(res.rows)} shared-memory SASS rows: "
            + ", ".join(f"{n} by {k}" if k != "not attributed" else f"{n} not attributed" for k, n in by.items())
            + f"; {len(res.modelled)} modelled; CTAs {res.ctas} ({res.ctas_from}); "
            + ("no disagreement." if res.agrees else f"{len(res.disagreements)} disagreements."),
            "",
            "| access | regions | rows | lines ncu gave | instructions | wavefronts | ideal | conflicts | agrees |",
            "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | --- |",
        ]
        for t in res.accesses:
            rows = [r for r in res.rows if r.access == t.name]
            lines = sorted({r.site.rsplit(":", 1)[1] for r in rows if r.site}, key=int)
            verdict = {None: "not modelled", True: "yes", False: "**no**"}[t.agrees]
            out.append(
                f"| `{t.name}` | {'+'.join(t.regions)} | {t.rows} | {', '.join(lines)} "
                f"| {pair(t.executed, t.predicted_instructions)} | {pair(t.wavefronts, t.predicted_wavefronts)} "
                f"| {pair(t.ideal, t.predicted_ideal)} | {pair(t.conflicts, t.predicted_conflicts)} | {verdict} |"
            )
        out += ["", "| region | rows | instructions | wavefronts | ideal | conflicts | agrees |"]
        out += ["| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
        for t in res.regions:
            verdict = {None: "not modelled", True: "yes", False: "**no**"}[t.agrees]
            if t.unmodelled_rows and t.modelled:
                verdict += f" ({t.unmodelled_rows} TMA rows not modelled)"
            out.append(
                f"| {t.name} | {t.rows} | {t.executed:,} | {pair(t.wavefronts, t.predicted_wavefronts)} "
                f"| {pair(t.ideal, t.predicted_ideal)} | {pair(t.conflicts, t.predicted_conflicts)} | {verdict} |"
            )
        for d in res.disagreements:
            out.append(f"- disagreement: {d}")
        for r in res.unattributed:
            out.append(f"- not attributed: `{r.sass}` at {r.site}: {r.reason}")
        out.append("")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modes", nargs="*", default=["auto", "none"])
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "ncu_out")))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--probe", action="store_true")
    parser.add_argument(
        "--attribution", action="store_true", help="replay results/ncu's CSVs against CPU captures (Markdown)"
    )
    args = parser.parse_args()
    if args.child is not None:
        _child(args.child)
        return 0
    if args.attribution:
        print(attribution_tables(args.modes or ["auto", "none"]), end="")
        return 0
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "CUTE_DSL_LINEINFO": "1", "PYTHONUNBUFFERED": "1"}
    log: list[str] = []
    made: list[Path] = []
    for mode in args.modes:
        report = out / f"gemm_c_{mode}"
        cmd = [
            "ncu",
            "--clock-control",
            "none",
            "--section",
            "SourceCounters",
            "--import-source",
            "yes",
            "-k",
            KERNEL_FILTER,
            "-c",
            "1",
            "-f",
            "-o",
            str(report),
            sys.executable,
            "-m",
            "benchmarks.ncu_source_h200",
            "--child",
            mode,
        ]
        run = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=400)
        log.append(f"$ {' '.join(cmd)}\nrc {run.returncode}\n{run.stdout}\n{run.stderr}")
        print(f"c:{mode} profiled, rc {run.returncode}", flush=True)
        page = subprocess.run(
            ["ncu", "-i", f"{report}.ncu-rep", "--page", "source", "--csv", "--print-source", "cuda,sass"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        csv_path = out / f"ncu_gemm_c_{mode}.csv"
        csv_path.write_text(page.stdout)
        log.append(f"export c:{mode}: rc {page.returncode}, {len(page.stdout)} chars\n{page.stderr}")
        made += [csv_path, Path(f"{report}.ncu-rep")]
        print(f"c:{mode} csv {len(page.stdout)} chars, rc {page.returncode}", flush=True)
    if args.probe and args.modes:
        first = out / f"gemm_c_{args.modes[0]}.ncu-rep"
        for view in ("sass", "cuda"):
            page = subprocess.run(
                ["ncu", "-i", str(first), "--page", "source", "--csv", "--print-source", view],
                capture_output=True,
                text=True,
                timeout=300,
            )
            path = out / f"ncu_gemm_c_{args.modes[0]}_{view}.csv"
            path.write_text(page.stdout + page.stderr)
            made.append(path)
        _probe(first, out)
        made.append(out / "ncu_report_probe.txt")
    version = subprocess.run(["ncu", "--version"], capture_output=True, text=True).stdout
    log.append(f"ncu --version:\n{version}")
    (out / "ncu_source.log").write_text("\n\n".join(log) + "\n")
    made.append(out / "ncu_source.log")
    with tarfile.open(out / "ncu_source.tgz", "w:gz") as tar:
        for path in made:
            if path.exists():
                tar.add(path, arcname=path.name)
    print(version.strip().splitlines()[-1] if version.strip() else "ncu version unknown")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
