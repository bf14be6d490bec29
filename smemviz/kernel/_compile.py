"""Compile CuTe DSL host functions for a chosen architecture, keep PTX and cubin,
read back the dynamic shared memory the launch requests, and cache the result.

Compiling needs no GPU: the architecture is passed to the DSL explicitly and
kernel arguments can be fake tensors. The requested dynamic SMEM is read from
the host launch code the DSL generates (the ``cudaLaunchConfig_t`` it fills),
so it is what the driver will be asked for, not a number smemviz computed.
"""

from __future__ import annotations

import re
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import hardware
from ..layout._emit import require_cutlass

__all__ = ["CompiledKernel", "compile_host", "launch", "normalise_arch", "cache_info", "clear_cache"]


def normalise_arch(arch: str | int) -> str:
    """Deprecated: :func:`smemviz.hardware.compile_target`, which this only called."""
    warnings.warn(
        "smemviz.kernel.normalise_arch is deprecated and will be removed in the next release; "
        "use smemviz.hardware.compile_target (the same answer)",
        DeprecationWarning,
        stacklevel=2,
    )
    return hardware.compile_target(arch)


@dataclass(frozen=True)
class CompiledKernel:
    """A compiled kernel: its PTX, cubin, the dynamic SMEM its launch requests,
    and the callable that launches it on a GPU."""

    name: str
    arch: str
    ptx: str = field(repr=False)
    cubin: bytes = field(repr=False)
    dynamic_smem_bytes: int | None
    compile_seconds: float
    launcher: Any = field(repr=False, compare=False, default=None)
    host_fn: Any = field(repr=False, compare=False, default=None)

    @property
    def kernel_names(self) -> tuple[str, ...]:
        return tuple(re.findall(r"^\.visible \.entry (\w+)\(", self.ptx, flags=re.M))

    def smem_alignment(self) -> int | None:
        """The alignment of the dynamic SMEM array as declared in the PTX."""
        m = re.search(r"\.extern \.shared \.align (\d+) \.b8 \w+\[\]", self.ptx)
        return int(m.group(1)) if m else None

    def write(self, folder: str | Path) -> dict[str, Path]:
        """Write ``<name>.<arch>.ptx`` and ``.cubin`` into ``folder``; return the paths."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        ptx = folder / f"{self.name}.{self.arch}.ptx"
        cubin = folder / f"{self.name}.{self.arch}.cubin"
        ptx.write_text(self.ptx)
        cubin.write_bytes(self.cubin)
        return {"ptx": ptx, "cubin": cubin}

    def __call__(self, *args: Any) -> Any:
        if self.launcher is None:
            raise RuntimeError(f"kernel {self.name!r} ({self.arch}) has no launcher")
        return self.launcher(*args)


# -- reading the launch configuration -------------------------------------------------

_LAUNCH_CFG = r"!llvm\.struct<\(array<3 x i32>, array<3 x i32>, i64, ptr, ptr, i32\)>"


def dynamic_smem_from_ir(ir_text: str) -> int | None:
    """The dynamic SMEM bytes stored into the launch configuration, if constant.

    Looks for the ``cudaLaunchConfig_t`` alloca (grid, block, dynamic SMEM,
    stream, attributes, count), the GEP of its field 2 and the constant stored
    there. Returns ``None`` when there is no launch or the size is not constant;
    raises ``ValueError`` if several launches disagree.
    """
    constants = dict(re.findall(r"(%\w+) = llvm\.mlir\.constant\((\d+) : i64\) : i64", ir_text))
    configs = re.findall(r"(%\w+) = llvm\.alloca %\w+ x " + _LAUNCH_CFG, ir_text)
    found: set[int] = set()
    for cfg in configs:
        geps = re.findall(r"(%\w+) = llvm\.getelementptr " + re.escape(cfg) + r"\[0, 2\] : ", ir_text)
        for gep in geps:
            for value in re.findall(r"llvm\.store (%\w+), " + re.escape(gep) + r" : i64", ir_text):
                if value in constants:
                    found.add(int(constants[value]))
    if not found:
        return None
    if len(found) > 1:
        raise ValueError(f"launches request different dynamic SMEM sizes: {sorted(found)}")
    return found.pop()


# -- compiling, with a cache -----------------------------------------------------------

_cache: dict[Hashable, CompiledKernel] = {}
_lock = threading.Lock()
_stats = {"hits": 0, "misses": 0}


def compile_host(
    name: str,
    host_fn: Callable[..., Any],
    args: tuple[Any, ...],
    arch: str,
    key: Hashable | None = None,
) -> CompiledKernel:
    """Compile ``host_fn(*args)`` (a ``@cute.jit`` function) for ``arch``.

    With ``key``, the result is cached: the same key returns the same
    :class:`CompiledKernel` without tracing again.
    """
    arch = hardware.compile_target(arch)
    full_key = (name, arch, key) if key is not None else None
    if full_key is not None:
        with _lock:
            hit = _cache.get(full_key)
            if hit is not None:
                _stats["hits"] += 1
                return hit
    _, cute = require_cutlass()
    with tempfile.TemporaryDirectory(prefix="smemviz-") as dump:
        options = f"--keep-ptx --keep-cubin --gpu-arch={arch} --dump-dir={dump}"
        start = time.perf_counter()
        fn = cute.compile(host_fn, *args, options=options)
        seconds = time.perf_counter() - start
    artifacts = fn.artifacts
    if not artifacts.PTX or not artifacts.CUBIN:
        raise RuntimeError(f"compiling {name!r} for {arch} produced no PTX/cubin")
    compiled = CompiledKernel(
        name=name,
        arch=arch,
        ptx=artifacts.PTX,
        cubin=bytes(artifacts.CUBIN),
        dynamic_smem_bytes=dynamic_smem_from_ir(str(fn.ir_module)),
        compile_seconds=seconds,
        launcher=fn,
        host_fn=host_fn,
    )
    if full_key is not None:
        with _lock:
            _stats["misses"] += 1
            _cache[full_key] = compiled
    return compiled


def cache_info() -> dict[str, int]:
    """Hits, misses and entries of the compiled-kernel cache."""
    with _lock:
        return {**_stats, "entries": len(_cache)}


def clear_cache() -> None:
    with _lock:
        _cache.clear()
        _stats["hits"] = _stats["misses"] = 0


def plan_key(plan: Any) -> tuple:
    """A hashable key for a SMEM/TMEM plan: every region's placement and type."""
    return (
        plan.memory,
        plan.unified_bytes,
        plan.base_alignment,
        tuple(
            (r.name, r.kind, r.offset, r.size, r.alignment, r.group, r.phase, r.dtype, r.count) for r in plan.regions
        ),
    )


def launch(compiled: CompiledKernel, *tensors: Any) -> None:
    """Launch a kernel compiled with fake tensors on real (torch, CUDA) tensors.

    The fake tensors the kernels are compiled with match the real ones in
    dtype, rank and alignment, so the compiled function takes them as they are;
    a mismatch is an error to see, not a reason to compile again.
    """
    from cutlass.cute.runtime import from_dlpack

    compiled(*[from_dlpack(t, assumed_align=16) for t in tensors])
