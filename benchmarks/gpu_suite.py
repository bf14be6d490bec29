"""Run every GPU test and the timing benchmark, and write the results file.

On the GPU machine (see README section on GPU runs), from the project root:

    python3 -m benchmarks.gpu_suite --out "$OUT"

writes ``gpu_results.json`` and ``gpu_results.md`` (GPU name, date, per-test
pass/fail and time, compile/launch timings, the command) into ``--out`` and
prints a short table last. Copy both into ``results/`` and commit them.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from smemviz.device import query_gpu

ROOT = Path(__file__).resolve().parents[1]


def _gpu_description() -> dict[str, str]:
    try:
        name, driver, cc, mem = query_gpu(["name", "driver_version", "compute_cap", "memory.total"])
        return {"name": name, "driver": driver, "compute_capability": cc, "memory": mem}
    except Exception as exc:  # no GPU: recorded, the tests then skip
        return {"name": "none", "error": str(exc)}


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for mod in ("torch", "cutlass"):
        try:
            m = __import__(mod)
            out[mod] = getattr(m, "__version__", "?")
        except Exception as exc:
            out[mod] = f"not importable: {exc}"
    try:
        from importlib.metadata import version

        out["nvidia-cutlass-dsl"] = version("nvidia-cutlass-dsl")
    except Exception:
        pass
    return out


def _tests(junit: Path) -> list[dict[str, object]]:
    rows = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        outcome = "passed"
        message = ""
        for tag in ("failure", "error", "skipped"):
            node = case.find(tag)
            if node is not None:
                outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[tag]
                message = (node.get("message") or "")[:400]
        rows.append(
            {
                "test": f"{case.get('classname', '').split('.')[-1]}::{case.get('name')}",
                "outcome": outcome,
                "seconds": round(float(case.get("time") or 0), 3),
                "message": message,
            }
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "results")
    args = parser.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    command = "python3 -m benchmarks.gpu_suite --out $OUT"
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}

    junit = out / "junit.xml"
    gpu_tests = sorted(str(t.relative_to(ROOT)) for t in (ROOT / "tests").rglob("test_*_gpu.py"))  # beside their areas
    pytest_cmd = [
        sys.executable,
        "-m",
        "pytest",
        *gpu_tests,
        "-m",
        "gpu or blackwell",
        "--noconftest",
        "-p",
        "no:cacheprovider",
        "-q",
        "-rA",
        f"--junitxml={junit}",
    ]
    started = dt.datetime.now(dt.timezone.utc)
    tests_run = subprocess.run(pytest_cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    (out / "pytest.log").write_text(tests_run.stdout + tests_run.stderr)
    tests = _tests(junit) if junit.exists() else []

    bench_json = out / "bench_compile.json"
    bench_cmd = [sys.executable, "benchmarks/bench_compile.py", "--launch", "--json", str(bench_json)]
    bench_run = subprocess.run(bench_cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    (out / "bench.log").write_text(bench_run.stdout + bench_run.stderr)
    timings = json.loads(bench_json.read_text()) if bench_json.exists() else {"error": bench_run.stderr[-2000:]}

    results = {
        "date_utc": started.isoformat(timespec="seconds"),
        "gpu": _gpu_description(),
        "versions": _versions(),
        "command": command,
        "pytest_command": " ".join(shlex.quote(c) for c in pytest_cmd[1:]).replace(str(junit), "$OUT/junit.xml"),
        "pytest_exit_code": tests_run.returncode,
        "tests": tests,
        "timings": timings,
    }
    (out / "gpu_results.json").write_text(json.dumps(results, indent=2) + "\n")

    counts: dict[str, int] = {}
    for t in tests:
        counts[t["outcome"]] = counts.get(t["outcome"], 0) + 1
    lines = [
        "# GPU results",
        "",
        f"- GPU: {results['gpu'].get('name')} (compute capability {results['gpu'].get('compute_capability', '?')}, "
        f"driver {results['gpu'].get('driver', '?')})",
        f"- date (UTC): {results['date_utc']}",
        f"- versions: {', '.join(f'{k} {v}' for k, v in results['versions'].items())}",
        f"- command: `{command}` (tests: `python {results['pytest_command']}`)",
        f"- tests: {', '.join(f'{v} {k}' for k, v in sorted(counts.items()))}",
        "",
        "| test | result | seconds |",
        "| --- | --- | --- |",
    ]
    for t in tests:
        note = f" ({t['message']})" if t["outcome"] == "skipped" and t["message"] else ""
        lines.append(f"| `{t['test']}` | {t['outcome']}{note} | {t['seconds']} |")
    lines += ["", "## Timings (one notebook-like process)", "", "| measure | value |", "| --- | --- |"]
    for k, v in timings.items():
        lines.append(f"| {k} | {v} |")
    (out / "gpu_results.md").write_text("\n".join(lines) + "\n")

    print("\n".join(lines[-(len(timings) + 4 + len(tests) + 6) :]))
    print(tests_run.stdout[-3000:] if tests_run.returncode else "", file=sys.stderr)
    return 0 if tests_run.returncode == 0 and bench_run.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
