"""What this machine says: its GPU as ``nvidia-smi`` reports it, and the architecture a
layout is judged against when none is given ($CUTE_DSL_ARCH, else that GPU).

:mod:`smemviz.hardware` is the facts table and asks no machine; everything here
does (a subprocess, the environment), so the table stays a plain value.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from typing import Literal, overload

from .hardware import ARCH_ENV, ARCHS, TMEM_FALLBACK_ARCH, Arch, get_arch

__all__ = ["GpuQueryError", "query_gpu", "detect_arch", "default_arch"]


def _arch_or_none(value: str) -> Arch | None:
    try:
        return get_arch(value)
    except (TypeError, ValueError):
        return None


class GpuQueryError(RuntimeError):
    """``nvidia-smi`` could not say what was asked (absent, failed, or printed nothing)."""


def query_gpu(fields: Sequence[str], timeout: float = 30) -> list[str]:
    """GPU 0's ``fields`` (``nvidia-smi --query-gpu`` names, e.g. ``"name"``), as text, in order;
    :class:`GpuQueryError` says why when ``nvidia-smi`` cannot answer."""
    import shutil
    import subprocess

    exe = shutil.which("nvidia-smi")
    if exe is None:
        raise GpuQueryError("nvidia-smi is not on PATH")
    try:
        done = subprocess.run(
            [exe, f"--query-gpu={','.join(fields)}", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise GpuQueryError(f"nvidia-smi did not run: {exc}") from exc
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise GpuQueryError(f"nvidia-smi exited {done.returncode} with {done.stderr.strip() or 'no output'!r}")
    values = [v.strip() for v in lines[0].split(",")]
    if len(values) != len(fields):
        raise GpuQueryError(f"nvidia-smi gave {len(values)} values for {len(fields)} fields: {lines[0]!r}")
    return values


@functools.lru_cache(maxsize=1)
def _gpu_arch() -> tuple[str, str] | None:
    """(arch name, GPU name) of GPU 0 as ``nvidia-smi`` reports it, asked once per process."""
    try:
        cap, gpu = query_gpu(["compute_cap", "name"], timeout=5)
    except GpuQueryError:
        return None
    major, _, minor = cap.partition(".")
    if not (major.isdigit() and minor.isdigit()):
        return None
    arch = _arch_or_none(f"sm_{major}{minor}")
    return (arch.name, gpu) if arch else None


def detect_arch() -> tuple[Arch, str] | None:
    """The architecture to assume and where it came from: ``$CUTE_DSL_ARCH`` first,
    else the GPU that ``nvidia-smi`` reports; ``None`` when neither says."""
    env = os.environ.get(ARCH_ENV, "").strip()
    if env:
        arch = _arch_or_none(env)
        if arch is not None:
            return arch, f"${ARCH_ENV}={env}"
    gpu = _gpu_arch()
    if gpu is not None:
        return ARCHS[gpu[0]], f"GPU {gpu[1]}"
    return None


@overload
def default_arch(memory: Literal["tmem"]) -> Arch: ...
@overload
def default_arch(memory: str) -> Arch | None: ...
def default_arch(memory: str) -> Arch | None:
    """The arch a layout of ``memory`` ("smem"/"tmem") is judged against when none is
    given: ``$CUTE_DSL_ARCH`` or the GPU present (:func:`detect_arch`). With neither,
    ``None`` for SMEM (reports then say no arch was given) and sm_100 for TMEM,
    whose 512 columns are the same on every TMEM arch."""
    found = detect_arch()
    arch = found[0] if found else None
    if memory == "tmem" and (arch is None or not arch.has_tmem):
        return ARCHS[TMEM_FALLBACK_ARCH]
    return arch
