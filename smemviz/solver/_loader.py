"""Which form of the search kernel runs: compiled by numba when it can be,
else the same source as plain Python (slower, the same answers node for node)."""

from __future__ import annotations

import functools
import importlib.util
import sys
import warnings
from types import ModuleType

__all__ = ["load_core", "core_kind", "core"]


@functools.cache
def load_core(compiled: bool) -> ModuleType:
    """The search kernel, compiled by numba or as plain Python (one source, two forms)."""
    spec = importlib.util.find_spec(f"{__package__}._core")
    assert spec is not None and spec.origin is not None
    name = f"{__package__}._core_{'compiled' if compiled else 'python'}"
    module = importlib.util.module_from_spec(importlib.util.spec_from_file_location(name, spec.origin))  # type: ignore[arg-type]
    module.__dict__["COMPILE"] = compiled  # read by the module as it runs
    assert module.__spec__ is not None and module.__spec__.loader is not None
    sys.modules[name] = module  # numba's cache finds compiled functions' modules by name
    try:
        module.__spec__.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


@functools.cache
def core_kind() -> str:
    """"compiled" when numba compiles the kernel here, else "python" (said once, as a warning).

    The first call on a machine compiles (seconds); numba caches the result beside the source.
    """
    try:
        kernel = load_core(True)
        if not _cached(kernel):
            print("smemviz: compiling the lifetime solver's search kernel with numba "
                  "(once: numba keeps it for later sessions; about 10 s)...", file=sys.stderr, flush=True)
        _warm_up(kernel)
    except Exception as exc:  # numba missing, or too old or too new for this numpy
        warnings.warn(
            f"smemviz: the lifetime solver runs as plain Python (same layouts, about 50x slower) because numba "
            f"could not compile it: {type(exc).__name__}: {exc}",
            RuntimeWarning,
            stacklevel=3,
        )
        return "python"
    return "compiled"


def core() -> ModuleType:
    """The kernel to use here."""
    return load_core(core_kind() == "compiled")


def _cached(kernel: ModuleType) -> bool:
    """Whether numba has compiled the kernel here before (its index files beside the source)."""
    from pathlib import Path

    origin = getattr(kernel, "__file__", None)
    return origin is not None and any((Path(origin).parent / "__pycache__").glob("_core.run-*.nbi"))


def _warm_up(kernel: ModuleType) -> None:
    """Compile every entry point on a one-buffer problem."""
    import numpy as np

    one = np.ones(1, np.int64)
    ptr = np.array([0, 0], np.int64)
    none = np.zeros(0, np.int64)
    sec = np.array([0, 1], np.int64)
    zero = np.zeros(1, np.int64)
    kernel.run(one, one, one, zero, 0, ptr, none, sec, zero, sec, zero, 1, 8,
               np.zeros((1024, kernel.MEMO_COLUMNS), np.int64), np.zeros(2, np.int64), np.empty(64, np.int64))
    kernel.pack(np.array([1, 1], np.int64), np.array([1, 1], np.int64), 2, 2, 8)
    kernel.pack_subsets(np.array([1, 1], np.int64), np.array([1, 1], np.int64))
