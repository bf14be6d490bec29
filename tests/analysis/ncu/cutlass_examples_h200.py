"""Nsight Compute's per-instruction shared-memory counters of CUTLASS's Hopper examples
(``dense_gemm`` and ``fmha``, fetched into ``.cutlass_examples/``, never committed), one launch
each, as ``smemviz.read_ncu`` reads them.

On the GPU machine, from the project root (``source .gpu2/install.sh`` first, the examples
folder carried along):

    python3 -m tests.analysis.ncu.cutlass_examples_h200 --example hopper_fmha --out "$OUT"

runs the example's own script with its reference check (``PROFILED`` gives each one's arguments:
``dense_gemm`` with its defaults, f16 A/B/C, f32 accumulator, 128x128 tile, cluster 1x1, on
1024x1024x1024; ``fmha`` with its defaults, f16, 64x128 tile, not persistent, on Q 1x1024x16x128
and K/V 1x1000x16x128, whose ragged key length selects the residual mask the CPU capture
builds) under ``ncu --clock-control none --section SourceCounters --import-source yes -k
regex:KERNEL -c 1`` with ``CUTE_DSL_LINEINFO=1``, and prints the report with ``ncu -i REPORT
--page source --csv --print-source cuda,sass``. ``--keep CSV`` then writes what results/ncu keeps
of that page: the example's own source text blanked (its line numbers stay) and its path made
relative.

On any machine with the CuTe DSL and the examples, the recorded CSV replayed against a fresh
CPU capture (the last sections of results/ncu_attribution.md):

    CUTE_DSL_ARCH=sm_90a python -m tests.analysis.ncu.cutlass_examples_h200 --example hopper_fmha --attribution
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class Profiled:
    """How one example is launched under ncu."""

    kernel: str  # ncu's -k regex: the example's kernel class
    argv: tuple[str, ...]  # the example script's arguments

    def recorded(self, name: str) -> Path:
        return ROOT / "results" / "ncu" / f"ncu_cutlass_{name}.csv"


PROFILED = {
    "hopper_dense_gemm": Profiled("HopperWgmma", ("--mnkl", "1024,1024,1024,1")),
    "hopper_fmha": Profiled("HopperFused", ("--q_shape", "1,1024,16,128", "--k_shape", "1,1000,16,128")),
}


def keep(page: str) -> str:
    """The source page without the examples' source text (line numbers, SASS and counters kept),
    each file's path made relative to the project root."""
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for rec in csv.reader(io.StringIO(page)):
        if rec and rec[0] == "File Path" and ".cutlass_examples/" in rec[1]:
            rec = [rec[0], ".cutlass_examples/" + rec[1].split(".cutlass_examples/", 1)[1]]
        elif rec and rec[0].strip().isdigit():  # a source line: its number stays, its text goes
            rec = [rec[0], "", *rec[2:]]
        writer.writerow(rec)
    return out.getvalue()


def capture_example(name: str):
    """A CPU capture of the example's kernel in the configuration the device ran."""
    from smemviz.kernel._compile import compile_host
    from smemviz.sources.capture import capture
    from tests.sources.capture.cutlass_examples import EXAMPLES, load

    example = EXAMPLES[name]
    host, args = example.build(load(example))
    with capture() as cap:
        compile_host(f"ncu_cutlass_{name}", host, args, example.arch, key=None)
    (kc,) = cap.kernels.values()
    return kc


def attribution_table(name: str) -> str:
    from smemviz import read_ncu
    from tests.sources.capture.cutlass_examples import EXAMPLES, examples_dir

    folder = examples_dir() / Path(EXAMPLES[name].path).parent
    res = read_ncu(PROFILED[name].recorded(name), capture_example(name), source_roots=[folder])

    def pair(measured, predicted):
        return f"{measured:,}" if predicted is None else f"{measured:,} / {predicted:,}"

    by: dict[str, int] = {}
    for r in res.rows:
        by[r.by or "not attributed"] = by.get(r.by or "not attributed", 0) + 1
    out = [
        f"{len(res.rows)} shared-memory SASS rows: "
        + ", ".join(f"{n} by {k}" if k != "not attributed" else f"{n} not attributed" for k, n in by.items())
        + f"; {len(res.modelled)} modelled; CTAs {res.ctas} ({res.ctas_from}); "
        + (f"{len(res.disagreements)} disagreements." if res.disagreements else "no disagreement."),
        "",
        "| access | regions | rows | lines ncu gave | instructions | wavefronts | ideal | conflicts | agrees |",
        "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for t in res.accesses:
        rows = [r for r in res.rows if r.access == t.name]
        lines = sorted({r.site.rsplit(":", 1)[1] for r in rows if r.site}, key=int)
        verdict = {None: "not modelled", True: "yes", False: "**no**"}[t.agrees]
        model = f" ({t.model})" if t.model else ""
        out.append(
            f"| `{t.name}` | {'+'.join(t.regions)} | {t.rows} | {', '.join(lines)} "
            f"| {pair(t.executed, t.predicted_instructions)} | {pair(t.wavefronts, t.predicted_wavefronts)} "
            f"| {pair(t.ideal, t.predicted_ideal)} | {pair(t.conflicts, t.predicted_conflicts)} | {verdict}{model} |"
        )
    out += ["", "| SASS | line | kind | attributed by | access | wavefronts | ideal | conflicts | agrees |"]
    out += ["| --- | --- | --- | --- | --- | ---: | ---: | ---: | --- |"]
    for r in res.rows:
        verdict = {None: "not modelled", True: "yes", False: "**no**"}[r.agrees]
        out.append(
            f"| `{r.sass.strip()}` | {r.site or '-'} | {r.kind} | {r.by or 'not attributed'} | {r.access or '-'} "
            f"| {pair(r.wavefronts or 0, r.predicted_wavefronts)} | {pair(r.ideal or 0, r.predicted_ideal)} "
            f"| {pair(r.conflicts or 0, r.predicted_conflicts)} | {verdict} |"
        )
    out.append("")
    for d in res.disagreements:
        out.append(f"- disagreement: {d}")
    for r in res.unattributed:
        out.append(f"- not attributed: `{r.sass}` at {r.site}: {r.reason}")
    return "\n".join(out) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--example", choices=sorted(PROFILED), default="hopper_dense_gemm")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "ncu_out")))
    parser.add_argument("--keep", type=Path, help="write the kept page (results/ncu) from --out's CSV here")
    parser.add_argument("--attribution", action="store_true")
    args = parser.parse_args()
    from tests.sources.capture.cutlass_examples import EXAMPLES

    name, profiled, example = args.example, PROFILED[args.example], EXAMPLES[args.example].path
    if args.attribution:
        print(attribution_table(name), end="")
        return 0
    page = args.out / f"ncu_cutlass_{name}.csv"
    if args.keep:
        args.keep.write_text(keep(page.read_text()))
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    folder = ROOT / ".cutlass_examples" / Path(example).parent
    env = {**os.environ, "CUTE_DSL_LINEINFO": "1", "PYTHONUNBUFFERED": "1"}
    report = args.out / name
    cmd = ["ncu", "--clock-control", "none", "--section", "SourceCounters", "--import-source", "yes"]
    cmd += ["-k", f"regex:{profiled.kernel}", "-c", "1", "-f", "-o", str(report)]
    cmd += [sys.executable, Path(example).name, *profiled.argv]
    run = subprocess.run(cmd, capture_output=True, text=True, cwd=folder, env=env, timeout=400)
    (args.out / f"{name}.log").write_text(f"$ {' '.join(cmd)}\nrc {run.returncode}\n{run.stdout}\n{run.stderr}")
    export = ["ncu", "-i", f"{report}.ncu-rep", "--page", "source", "--csv", "--print-source", "cuda,sass"]
    page.write_text(subprocess.run(export, capture_output=True, text=True, timeout=300).stdout)
    print(f"{name}: profiled rc {run.returncode}; page {len(page.read_text())} chars")
    return run.returncode


if __name__ == "__main__":
    raise SystemExit(main())
