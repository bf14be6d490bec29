"""smemviz: see, check and tune shared-memory and tensor-memory layouts of
CuTe DSL kernels.

The core (allocations, allocators, the layout plan, reports, hardware facts)
needs nothing beyond Python. Figures (plotly), the notebook explorer
(ipywidgets), exports and the kernel bridge (CuTe DSL) load on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

from . import hardware
from ._errors import CapacityError, DeclarationError, DeclarationTypeError, DslUnavailableError, LayoutStateError
from ._version import __version__
from .analysis._lint import Finding, Findings
from .analysis._max_fit import MaxFit, max_fit
from .analysis._occupancy import Occupancy, occupancy
from .hardware import get_arch
from .layout._allocation import ResourceContext, SmemAllocation, TmemAllocation
from .layout._allocator import SmemAllocator, TmemAllocator, compare_layouts, groups_to_lifetimes
from .layout._plan import AliasGroup, CapacityCheck, LayoutPlan, Region
from .sources._cutlass import plan_from_cutlass
from .sources._inputs import LayoutPair, as_layouts, as_plan
from .sources._struct import plan_from_struct

# public name -> module that defines it; imported on first access
_LAZY: dict[str, str] = {
    # figures (plotly)
    "smem_figure": "smemviz.figures",
    "tmem_figure": "smemviz.figures",
    "bank_figure": "smemviz.figures",
    "lifetime_figure": "smemviz.figures",
    "compare_figure": "smemviz.figures",
    # notebook explorer (ipywidgets + plotly)
    "explore": "smemviz.explorer",
    "Explorer": "smemviz.explorer",
    # exports, layout files
    "export": "smemviz._export",
    "EXPORT_FORMATS": "smemviz._export",
    "read_plans": "smemviz._export",
    "BrowserNotFoundError": "smemviz._export",
    "ExportTimeoutError": "smemviz._export",
    "find_browser": "smemviz._export",
    "start_renderer": "smemviz._export",
    "stop_renderer": "smemviz._export",
    "load_layout": "smemviz.sources.layout_file",
    # kernel bridge (CuTe DSL)
    "probe": "smemviz.kernel",
    "ProbeResult": "smemviz.kernel",
}

__all__ = [
    "SmemAllocation",
    "TmemAllocation",
    "ResourceContext",
    "SmemAllocator",
    "TmemAllocator",
    "groups_to_lifetimes",
    "compare_layouts",
    "LayoutPlan",
    "Region",
    "AliasGroup",
    "CapacityCheck",
    "CapacityError",
    "LayoutStateError",
    "DslUnavailableError",
    "DeclarationError",
    "DeclarationTypeError",
    "plan_from_cutlass",
    "plan_from_struct",
    "as_plan",
    "Finding",
    "Findings",
    "Occupancy",
    "occupancy",
    "as_layouts",
    "LayoutPair",
    "get_arch",
    "max_fit",
    "MaxFit",
    "hardware",
    "__version__",
]  # the lazy names stay out of __all__, so ``import *`` never needs the extras


# lazy module -> the extra that installs what it needs
_EXTRAS = {
    "smemviz.figures": "viz",
    "smemviz.explorer": "viz",
    "smemviz._export": "export",
    "smemviz.kernel": "cutlass",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'smemviz' has no attribute {name!r}")
    try:
        imported = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        extra = _EXTRAS.get(module, "all")
        raise ModuleNotFoundError(
            f"smemviz.{name} needs {exc.name or 'a missing package'}: pip install 'smemviz[{extra}]'",
            name=exc.name,
        ) from exc
    value = getattr(imported, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
