"""An access as plain data (what a layout file's ``access`` key holds) and the lint findings of
conflicting accesses, so that ``smemviz check`` and the layout-file reader can take them.

    {"region": "epi_c", "instruction": "stmatrix.x4", "layout": "(128,32):(32,1)",
     "dtype": "bf16", "swizzle": "64B", "warps": [8, 1]}

``threads`` ([rows, lanes per row]) applies to per-thread ld/st and cp.async;
``stage`` picks a stage; ``layout``, ``dtype`` and ``swizzle`` default to the region's own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..._dtypes import dtype_width
from .._lint import Finding
from ._advice import advise
from ._instructions import lookup
from ._patterns import AccessAtom, AccessReport, analyze_access, ldmatrix_atom, stmatrix_atom, vector_atom

__all__ = ["AccessSpec", "access_from_dict", "bank_findings", "ACCESS_KEYS"]

ACCESS_KEYS = ("region", "instruction", "layout", "dtype", "swizzle", "warps", "threads", "stage")
BANK_RULE = "bank-conflict"
BANK_FACT = "H200 calibration: results/bank_calibration.csv (ncu wavefronts and conflicts per warp instruction)"


@dataclass(frozen=True)
class AccessSpec:
    """One region's access by a CTA's warps, as a layout file or a kernel describes it."""

    region: str
    instruction: str
    layout: str | None = None
    dtype: str | None = None
    swizzle: str | None = "region"  # "region": the region's own mode
    warps: tuple[int, int] = (1, 1)
    threads: tuple[int, int] | None = None
    stage: int = 0

    def atom(self, element_bytes: int) -> AccessAtom:
        spec = lookup(self.instruction)
        n = spec.lanes // 8
        trans = self.instruction.endswith(".trans")
        if spec.kind == "ldmatrix":
            return ldmatrix_atom(n, trans, element_bytes)
        if spec.kind == "stmatrix":
            return stmatrix_atom(n, trans, element_bytes)
        return vector_atom(spec.name, element_bytes, self.threads or (8, 4))

    def analyze(self, plan: Any) -> AccessReport:
        region = plan.region(self.region)
        dtype = self.dtype or region.dtype
        if dtype is None:
            raise ValueError(f"access of {self.region!r}: the region has no dtype; give 'dtype'")
        atom = self.atom(dtype_width(dtype) // 8)
        return analyze_access(plan, self.region, atom, layout=self.layout, dtype=dtype, swizzle=self.swizzle,
                              warps=self.warps, stage=self.stage)


def _pair(value: object, key: str, where: str) -> tuple[int, int]:
    if (not isinstance(value, (list, tuple)) or len(value) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value)):
        raise ValueError(f"{where}: '{key}' must be two positive integers [rows, columns], got {value!r}")
    return int(value[0]), int(value[1])


def access_from_dict(data: Mapping[str, Any], region: str | None = None) -> AccessSpec:
    """An :class:`AccessSpec` from a layout file's ``access`` table, refusing unknown keys and bad values."""
    if not isinstance(data, Mapping):
        raise TypeError(f"an access must be a table of {', '.join(ACCESS_KEYS)}, not {type(data).__name__}")
    name = data.get("region", region)
    where = f"access of {name!r}" if name else "access"
    unknown = sorted(set(data) - set(ACCESS_KEYS))
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; known: {', '.join(ACCESS_KEYS)}")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where}: 'region' must name a region")
    instruction = data.get("instruction")
    lookup(instruction)  # TypeError / ValueError naming the spelling
    for key in ("layout", "dtype", "swizzle"):
        if key in data and data[key] is not None and not isinstance(data[key], str):
            raise ValueError(f"{where}: '{key}' must be text, got {data[key]!r}")
    stage = data.get("stage", 0)
    if not isinstance(stage, int) or isinstance(stage, bool) or stage < 0:
        raise ValueError(f"{where}: 'stage' must be a non-negative integer, got {stage!r}")
    warps = _pair(data.get("warps", [1, 1]), "warps", where)
    threads = _pair(data["threads"], "threads", where) if "threads" in data else None
    return AccessSpec(name, str(instruction), data.get("layout"), data.get("dtype"), data.get("swizzle", "region"),
                      warps, threads, stage)


def bank_findings(plan: Any, accesses: Iterable[AccessSpec]) -> tuple[Finding, ...]:
    """A warning for each access that conflicts, its fix taken from :func:`advise`."""
    out = []
    for acc in accesses:
        rep = acc.analyze(plan)
        if rep.conflict_free:
            continue
        region = plan.region(acc.region)
        dtype = acc.dtype or region.dtype
        adv = advise(plan, acc.region, acc.atom(dtype_width(dtype) // 8), layout=acc.layout, dtype=dtype,
                     warps=acc.warps, stage=acc.stage, swizzle=acc.swizzle)
        if adv.fixes:
            fix = f"{adv.swizzle} swizzle on a {adv.alignment}-byte boundary: {adv.allocation_line}; {adv.dsl_line}"
        elif adv.swizzle:
            fix = f"{adv.swizzle} swizzle on a {adv.alignment}-byte boundary cuts it to {adv.best.n_way}-way; " \
                  f"the rest is the access itself"
        else:
            fix = "no swizzle helps: " + adv.reason
        message = (f"{acc.instruction} on {acc.region!r} is {rep.n_way}-way: {rep.wavefronts} wavefronts where "
                   f"{rep.ideal} would do ({rep.instructions} instructions, {rep.conflicts} conflicts as ncu counts)")
        out.append(Finding(BANK_RULE, "warning", (acc.region,), message, fix, BANK_FACT))
    return tuple(out)
