"""The ordering check's two findings on smemviz's Hopper GEMM, shown on the GPU.

On the GPU machine, from the project root (the CuTe DSL installed, see the GPU notes):

    python3 -m benchmarks.ordering_h200 --out "$OUT"

Three parts, each bounded in time, results in ``ordering_h200.json`` under ``--out``:

* ``alias``: the GEMM with C staged over the A stages, as shipped and with the test-only
  mutation ``no-epilogue-barrier`` (the consumers' named barrier before the first C write
  dropped; the check gives ``unordered-alias`` on sA/sC). Each is run many times on several
  shapes against an fp32 ``torch`` product; wrong elements are counted per run, and the
  rows they fall in (row modulo the 128-row tile) are tallied.
* ``sanitizer``: ``compute-sanitizer --tool racecheck`` and ``--tool synccheck`` on one small
  launch of each variant (in parallel, each with its own time limit).
* ``hang``: the test-only mutation ``empty-count+1`` (the mainloop's empty barriers expect one
  arrival more than the consumer warps give; the check gives ``mbarrier-arrive-count``) is
  launched in a child process; the child is killed once it has not finished ``--hang-s``
  seconds after its launch, and ``nvidia-smi`` is read to show the GPU idle again. The
  unmutated kernel is launched the same way as the control.

The mutations exist only for this: ``Sm90Gemm(layout, _test_mutation=...)``.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ALIAS_MUTATION = "no-epilogue-barrier"
HANG_MUTATION = "empty-count+1"
ATOL, RTOL = 0.125, 0.01
PIDS = Path("/tmp/ordering_h200_children.pids")  # each child's process group, for a final kill by id


def _started(proc: subprocess.Popen) -> subprocess.Popen:
    with PIDS.open("a") as f:
        f.write(f"{proc.pid}\n")
    return proc


def _compiled(mutation: str | None):
    from cutlass.cutlass_dsl import CuTeDSL

    from smemviz.kernel._compile import compile_host
    from smemviz.kernel.gemm import GemmConfig, gemm_layout
    from smemviz.kernel.gemm._host import _fake_operands
    from smemviz.kernel.gemm._sm90 import Sm90Gemm

    CuTeDSL._get_dsl().envar.no_cache = True  # each variant traced afresh, never served from a cache
    config = GemmConfig(alias_epilogue=True, arch="sm_90a")
    layout = gemm_layout(config)
    kernel = Sm90Gemm(layout, _test_mutation=mutation)
    name = f"ordering_{(mutation or 'clean').replace('-', '_').replace('+', 'p')}"
    return layout, compile_host(name, kernel, _fake_operands(config.dtype), "sm_90a", key=None)


def _operands(torch, m: int, n: int, k: int, seed: int):
    from smemviz.kernel.gemm._host import _cute_view

    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn((1, m, k), device="cuda", dtype=torch.float16, generator=g)
    b = torch.randn((1, n, k), device="cuda", dtype=torch.float16, generator=g)
    c = torch.empty((1, m, n), device="cuda", dtype=torch.float16)
    ref = (a[0].float() @ b[0].float().T).unsqueeze(0)
    return a, b, c, ref, (_cute_view(a), _cute_view(b), _cute_view(c))


def _wrong(torch, c, ref):
    return ~((c.float() - ref).abs() <= ATOL + RTOL * ref.abs())  # NaN counts as wrong


def part_alias(args, log) -> dict:
    import torch

    out: dict = {"atol": ATOL, "rtol": RTOL, "repeats": args.repeats, "shapes": []}
    t0 = time.perf_counter()
    layout, clean = _compiled(None)
    _, mutated = _compiled(ALIAS_MUTATION)
    out["stages"] = layout.stages
    out["ptx_differs"] = clean.ptx != mutated.ptx
    out["compile_s"] = round(time.perf_counter() - t0, 1)
    log(f"alias: compiled both in {out['compile_s']} s, {layout.stages} stages")
    tile_m = layout.config.tile_m
    for m, n, k in args.shapes:
        a, b, c, ref, views = _operands(torch, m, n, k, seed=m + n + k)
        row = {"m": m, "n": n, "k": k, "k_tiles": -(-k // layout.config.tile_k)}
        for label, compiled in (("clean", clean), ("mutated", mutated)):
            per_run = []
            rows = torch.zeros(tile_m, dtype=torch.int64, device="cuda")
            for _ in range(args.repeats):
                c.fill_(float("nan"))
                compiled(*views)
                bad = _wrong(torch, c, ref)
                per_run.append(bad.sum())
                rows += bad[0].any(dim=1).view(-1, tile_m).sum(dim=0)
            torch.cuda.synchronize()
            counts = [int(x) for x in torch.stack(per_run).tolist()]
            hit_rows = [i for i, v in enumerate(rows.tolist()) if v]
            row[label] = {
                "runs_wrong": sum(1 for x in counts if x),
                "wrong_elements_max": max(counts),
                "wrong_elements_total": sum(counts),
                "tile_rows_hit": [hit_rows[0], hit_rows[-1]] if hit_rows else [],
            }
        log(
            f"alias {m}x{n}x{k} ({row['k_tiles']} k-tiles): clean {row['clean']['runs_wrong']}/{args.repeats} runs "
            f"wrong, mutated {row['mutated']['runs_wrong']}/{args.repeats} (max {row['mutated']['wrong_elements_max']} "
            f"elements, tile rows {row['mutated']['tile_rows_hit']})"
        )
        out["shapes"].append(row)
        del a, b, c, ref, views
    return out


def child_run(variant: str, m: int, n: int, k: int) -> int:
    """One launch (for the sanitizer and the hang): prints 'launched', then the check."""
    import torch

    _, compiled = _compiled(None if variant == "clean" else variant)
    _, _, c, ref, views = _operands(torch, m, n, k, seed=1)
    torch.cuda.synchronize()
    print("launched", flush=True)
    compiled(*views)
    torch.cuda.synchronize()
    wrong = int(_wrong(torch, c, ref).sum())
    print(f"finished, {wrong} wrong elements", flush=True)
    return 0


def _nvidia_smi() -> dict:
    q = {
        "apps": ["--query-compute-apps=pid,used_memory", "--format=csv,noheader"],
        "gpu": ["--query-gpu=name,driver_version,utilization.gpu,memory.used", "--format=csv,noheader"],
    }
    return {k: subprocess.run(["nvidia-smi", *a], capture_output=True, text=True).stdout.strip() for k, a in q.items()}


def _child(variant: str, shape, wrap: list[str] | None = None) -> list[str]:
    m, n, k = shape
    cmd = [sys.executable, "-m", "benchmarks.ordering_h200", "--child", variant, "--child-shape", f"{m},{n},{k}"]
    return (wrap or []) + cmd


def _watch(cmd: list[str], hang_s: float, limit_s: float, log_path: Path) -> dict:
    """Run ``cmd`` in its own process group; kill the group if it has not finished ``hang_s``
    after printing 'launched' (or ``limit_s`` in all). Returns what happened."""
    start = time.perf_counter()
    proc = _started(
        subprocess.Popen(
            cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
        )
    )
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout] and None, daemon=True).start()  # type: ignore[union-attr]
    seen: list[str] = []
    launched = None
    killed = False
    while proc.poll() is None:
        now = time.perf_counter()
        if (launched is not None and now - launched > hang_s) or now - start > limit_s:
            os.killpg(proc.pid, signal.SIGKILL)
            killed = True
            proc.wait()
            break
        try:
            line = lines.get(timeout=0.2)
        except queue.Empty:
            continue
        seen.append(line.rstrip())
        if line.startswith("launched") and launched is None:
            launched = time.perf_counter()
    time.sleep(0.5)
    while not lines.empty():
        seen.append(lines.get().rstrip())
    log_path.write_text("\n".join(seen) + "\n")
    return {
        "cmd": " ".join(cmd[cmd.index("-m") :] if "-m" in cmd else cmd[1:]),
        "returncode": proc.returncode,
        "killed_after_s": round(time.perf_counter() - launched, 1) if killed and launched else None,
        "killed": killed,
        "seconds_after_launch": round(time.perf_counter() - launched, 1) if launched else None,
        "last_lines": seen[-6:],
    }


def part_sanitizer(args, out_dir: Path, log) -> dict:
    shape = (256, 256, 64 * 5)
    runs = {}
    procs = {}
    for tool in ("racecheck", "synccheck"):
        for variant in ("clean", ALIAS_MUTATION):
            wrap = ["compute-sanitizer", "--tool", tool, "--print-limit", "20"]
            cmd = _child(variant, shape, wrap)
            path = out_dir / f"san_{tool}_{variant.replace('-', '_')}.log"
            f = path.open("w")
            procs[(tool, variant)] = (
                _started(subprocess.Popen(cmd, cwd=ROOT, stdout=f, stderr=subprocess.STDOUT, start_new_session=True)),
                f,
                path,
            )
    deadline = time.perf_counter() + args.sanitizer_s
    for (tool, variant), (p, f, path) in procs.items():
        try:
            p.wait(timeout=max(1.0, deadline - time.perf_counter()))
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            timed_out = True
        f.close()
        text = path.read_text(errors="replace").splitlines()
        summary = [x for x in text if "ERROR SUMMARY" in x or "RACECHECK SUMMARY" in x or "hazard" in x.lower()]
        runs[f"{tool} {variant}"] = {
            "returncode": p.returncode,
            "timed_out": timed_out,
            "summary": summary[-4:],
            "result": [x for x in text if x.startswith("finished")],
        }
        log(f"sanitizer {tool} {variant}: rc {p.returncode}, timed out {timed_out}, {summary[-2:]}")
    return {"shape": shape, "runs": runs}


def part_hang(args, out_dir: Path, log) -> dict:
    from smemviz.kernel.gemm import GemmConfig, gemm_layout

    stages = gemm_layout(GemmConfig(alias_epilogue=True, arch="sm_90a")).stages
    shape = (128, 256, 64 * (2 * stages + 1))  # one CTA, each stage refilled twice
    res: dict = {"shape": shape, "hang_s": args.hang_s}
    res["control"] = _watch(_child("clean", shape), args.hang_s, 120, out_dir / "hang_control.log")
    log(f"hang control: {res['control']}")
    res["mutated"] = _watch(_child(HANG_MUTATION, shape), args.hang_s, 120, out_dir / "hang_mutated.log")
    log(f"hang mutated: {res['mutated']}")
    time.sleep(2)
    res["nvidia_smi_after_kill"] = _nvidia_smi()
    log(f"nvidia-smi after the kill: {res['nvidia_smi_after_kill']}")
    res["after"] = _watch(_child("clean", shape), args.hang_s, 120, out_dir / "hang_after.log")
    log(f"clean launch after the kill: {res['after']}")
    res["nvidia_smi_end"] = _nvidia_smi()
    return res


def _shapes(text: str) -> list[tuple[int, int, int]]:
    return [tuple(int(v) for v in s.split("x")) for s in text.split(",")]  # type: ignore[misc]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=".")
    p.add_argument("--parts", default="alias,sanitizer,hang")
    p.add_argument("--repeats", type=int, default=200)
    p.add_argument(
        "--shapes",
        type=_shapes,
        default=_shapes(
            "4096x4096x64,4096x4096x128,4096x4096x192,4096x4096x256,4096x4096x320,4096x4096x576,8192x2048x1088"
        ),
    )
    p.add_argument("--sanitizer-s", type=float, default=200)
    p.add_argument("--hang-s", type=float, default=20)
    p.add_argument("--child")
    p.add_argument("--child-shape")
    args = p.parse_args(argv)
    if args.child:
        m, n, k = (int(v) for v in args.child_shape.split(","))
        return child_run(args.child, m, n, k)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)

    def log(msg: str) -> None:
        print(msg, flush=True)

    result: dict = {"gpu": _nvidia_smi(), "command": "python3 -m benchmarks.ordering_h200 --out OUT"}
    for part in args.parts.split(","):
        t0 = time.perf_counter()
        try:
            if part == "alias":
                result[part] = part_alias(args, log)
            elif part == "sanitizer":
                result[part] = part_sanitizer(args, out_dir, log)
            elif part == "hang":
                result[part] = part_hang(args, out_dir, log)
        except Exception as exc:  # keep the other parts' results
            result[part] = {"error": f"{type(exc).__name__}: {exc}"}
            log(f"{part} failed: {exc!r}")
        result.setdefault("seconds", {})[part] = round(time.perf_counter() - t0, 1)
        (out_dir / "ordering_h200.json").write_text(json.dumps(result, indent=1) + "\n")
    log(json.dumps(result.get("seconds")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
