"""``smemviz profile FILE.py:FUNCTION``: capture a kernel, launch it once under Nsight Compute,
and put ncu's shared-memory counters on the captured map (:func:`read_ncu`).

The contract: ``FUNCTION()`` builds and compiles the kernel (as for ``smemviz capture``) and
returns a callable that launches it once on real tensors when called with no arguments, e.g.
``prepare_gemm(a, b, config)`` for smemviz's GEMM. It is called twice: here, under capture (the
map and the predictions), and in a child process that ncu profiles (the counters), where the
returned callable is called once. Both compile with line info (``CUTE_DSL_LINEINFO=1``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ._attribute import NcuAttribution, read_ncu

__all__ = ["ProfileError", "profile", "profile_capture", "find_ncu", "NCU_SECTION"]

NCU_SECTION = "SourceCounters"  # the section whose per-instruction counters the source page shows


class ProfileError(RuntimeError):
    """Nsight Compute is missing, or could not profile or print the launch."""


def _launch_child(target: str) -> int:
    """In the profiled process: ``FUNCTION()`` compiles, its callable launches once."""
    from ...sources.capture._cli import load_function

    launch = load_function(target)()
    if not callable(launch):
        sys.stderr.write(f"{target} returned {type(launch).__name__}, not a callable that launches the kernel\n")
        return 2
    launch()
    try:
        import torch

        torch.cuda.synchronize()
    except ImportError:  # the launch's own stream sync is the caller's then
        pass
    return 0


def _capture(target: str, arch: str | None, kernel: str | None) -> tuple[Any, Any]:
    """(the captured kernel, the launch callable) of ``FUNCTION()`` run under capture."""
    from ...sources.capture import CaptureError, capture
    from ...sources.capture._cli import load_function

    fn = load_function(target)
    with capture(arch) as cap:
        launch = fn()
    if not callable(launch):
        raise TypeError(
            f"{target} must return a callable that launches the kernel once (it returned {type(launch).__name__})"
        )
    kernels = cap.kernels
    names = [k for k in kernels if kernel is None or kernel in k]
    if len(names) != 1:
        raise CaptureError(
            f"{len(names)} of the captured kernels match{f' {kernel!r}' if kernel else ''}: {', '.join(kernels)}"
        )
    return kernels[names[0]], launch


def find_ncu(ncu: str | None = None) -> str | None:
    """The path of Nsight Compute's ``ncu`` (``ncu``: a name or path to look for), or None."""
    return shutil.which(ncu or "ncu")


def profile(
    target: str,
    *,
    arch: str | None = None,
    kernel: str | None = None,
    ncu: str | None = None,
    keep_csv: str | Path | None = None,
    timeout: float = 600,
) -> NcuAttribution:
    """Capture ``FILE.py:FUNCTION``'s kernel, launch it once under ncu, attribute the counters."""
    return profile_capture(target, arch=arch, kernel=kernel, ncu=ncu, keep_csv=keep_csv, timeout=timeout)[1]


def profile_capture(
    target: str,
    *,
    arch: str | None = None,
    kernel: str | None = None,
    ncu: str | None = None,
    keep_csv: str | Path | None = None,
    timeout: float = 600,
) -> tuple[Any, NcuAttribution]:
    """(the captured kernel, its attribution): :func:`profile`, with the capture kept for its map."""
    ncu_path = find_ncu(ncu)
    if not ncu_path:
        raise ProfileError(
            f"no Nsight Compute at {ncu}" if ncu else "Nsight Compute's ncu is not on PATH (pass --ncu PATH)"
        )
    os.environ["CUTE_DSL_LINEINFO"] = "1"  # rows carry their source line: the capture compiles so too
    kc, _ = _capture(target, arch, kernel)
    env = {**os.environ, "CUTE_DSL_LINEINFO": "1", "PYTHONUNBUFFERED": "1"}
    name_filter = "regex:^" + re.escape(kc.kernel[:100])
    with tempfile.TemporaryDirectory(prefix="smemviz-ncu-") as tmp:
        report = Path(tmp) / "launch"
        cmd = [ncu_path, "--section", NCU_SECTION, "--import-source", "yes", "--clock-control", "none"]
        cmd += ["-k", name_filter, "-c", "1", "-f", "-o", str(report)]
        cmd += [sys.executable, "-m", "smemviz.analysis.ncu._profile", "--launch", target]
        run = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
        rep = report.with_suffix(".ncu-rep")
        if run.returncode != 0 or not rep.is_file():
            tail = "\n".join((run.stdout + run.stderr).strip().splitlines()[-12:])
            raise ProfileError(f"ncu exited {run.returncode} without a report of {kc.kernel[:60]}:\n{tail}")
        page = subprocess.run(
            [ncu_path, "-i", str(rep), "--page", "source", "--csv", "--print-source", "cuda,sass"],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if page.returncode != 0 or not page.stdout.strip():
            raise ProfileError(f"ncu could not print the source page: {page.stderr.strip()[-400:]}")
    if keep_csv is not None:
        Path(keep_csv).write_text(page.stdout, encoding="utf-8")
    roots = [str(Path(target.rpartition(":")[0]).resolve().parent)]
    return kc, read_ncu(page.stdout, kc, source_roots=roots)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) == 2 and args[0] == "--launch":
        return _launch_child(args[1])
    sys.stderr.write("usage: python -m smemviz.analysis.ncu._profile --launch FILE.py:FUNCTION (what ncu runs)\n")
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
