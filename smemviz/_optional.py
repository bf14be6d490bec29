"""Optional dependencies: one way to import them, and one message that names the extra.

The core needs nothing beyond Python. Each heavier package belongs to an extra
of ``pyproject.toml``; a missing one is reported as ``pip install 'smemviz[extra]'``
so the fix is in the error, whichever room asked.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["EXTRAS", "extra_for", "require", "installed"]

# top-level package -> the smemviz extra that installs it
EXTRAS: dict[str, str] = {
    "plotly": "viz",
    "ipywidgets": "viz",
    "anywidget": "viz",
    "kaleido": "export",
    "choreographer": "export",
    "jupyterlab": "jupyter",
    "cutlass": "cutlass",
    "numba": "fast",
    "numpy": "fast",
}


def extra_for(module: str) -> str:
    """The extra that installs ``module`` (``"all"`` when it belongs to none)."""
    return EXTRAS.get(module.split(".")[0], "all")


def require(module: str, what: str, error: type[ImportError] = ImportError) -> ModuleType:
    """``module``, imported; or ``error`` saying what needs it (``what``, e.g. "static export
    needs kaleido") and which extra brings it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise error(f"{what}: pip install 'smemviz[{extra_for(module)}]' ({exc})") from exc


def installed(module: str) -> ModuleType | None:
    """``module`` when it can be imported here, else ``None`` (for features that step aside)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        return None
