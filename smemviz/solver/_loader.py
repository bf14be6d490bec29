"""Which form of the search kernel runs: compiled by numba when it can be,
else the same source as plain Python (slower, the same answers node for node)."""

from __future__ import annotations

import functools
import importlib.util
import sys
import warnings
from types import ModuleType

from .._optional import extra_for

__all__ = ["load_core", "core_kind", "core", "FAST_EXTRA"]


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


# what to install for the compiled form (the extra that brings numba and numpy)
FAST_EXTRA = f"pip install 'smemviz[{extra_for('numba')}]'"


@functools.cache
def core_kind() -> str:
    """ "compiled" when numba compiles the kernel here, else "python" (said once, as a warning).

    The first call on a machine compiles (seconds); numba caches the result beside the source.
    """
    if _numba_missing():
        warnings.warn(
            f"smemviz: the lifetime solver runs as plain Python (the same layouts, node for node; 10-25x slower); "
            f"{FAST_EXTRA} compiles its search kernel with numba",
            RuntimeWarning,
            stacklevel=3,
        )
        return "python"
    try:
        kernel = load_core(True)
        if not _cached(kernel):
            print(
                "smemviz: compiling the lifetime solver's search kernel with numba "
                "(once: numba keeps it for later sessions; 20-40 s)...",
                file=sys.stderr,
                flush=True,
            )
        _warm_up(kernel)
    except Exception as exc:  # numba too old or too new for this numpy, or broken
        warnings.warn(
            f"smemviz: the lifetime solver runs as plain Python (the same layouts; 10-25x slower) because numba "
            f"could not compile it: {type(exc).__name__}: {exc}. {FAST_EXTRA} installs versions that work",
            RuntimeWarning,
            stacklevel=3,
        )
        return "python"
    return "compiled"


def _numba_missing() -> bool:
    try:
        return importlib.util.find_spec("numba") is None
    except (ImportError, ValueError):  # a broken install, or an import hook that refuses it
        return True


def core() -> ModuleType:
    """The kernel to use here."""
    return load_core(core_kind() == "compiled")


def _cached(kernel: ModuleType) -> bool:
    """Whether numba has compiled the kernel here before (its index files beside the source)."""
    from pathlib import Path

    origin = getattr(kernel, "__file__", None)
    return origin is not None and any((Path(origin).parent / "__pycache__").glob("_core.run-*.nbi"))


def _warm_up(kernel: ModuleType) -> None:
    """Compile every entry point on a one-buffer problem (the argument types of real calls)."""
    arr = kernel.as_array
    one, ptr, sec = arr([1]), arr([0, 0]), arr([0, 1])
    graph = kernel.Graph(one, one, one, ptr, arr([]), sec, arr([0]), sec, arr([0]))
    memo = kernel.new_memo()
    kernel.run(graph, arr([0]), 0, 1, 8, memo)
    kernel.regrow(memo.table, 2048)
    kernel.pack(arr([1, 1]), arr([1, 1]), 2, 2, 8)
    kernel.pack_subsets(arr([1, 1]), arr([1, 1]))
