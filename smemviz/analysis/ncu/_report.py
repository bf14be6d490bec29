"""Nsight Compute's per-instruction rows, read from its source page.

Two inputs give the same rows:

* the CSV of ``ncu --page source --csv --print-source cuda,sass`` (the kernel built with line
  info: ``CUTE_DSL_LINEINFO=1``): a ``"File Path"`` line per source file, a ``"Function
  Name"`` line, a header (``"Line No","Source","Address","Source",...``), then each source
  line that has code (``Line No`` set) followed by the SASS instructions mapped to it
  (``Address`` set; ``...`` marks a gap). ``--print-source sass`` (no ``Line No``) is read too,
  without source lines;
* an ``.ncu-rep`` through Nsight Compute's Python report interface (``ncu_report``, shipped in
  ``extras/python`` of the tool): the same instruction-level metrics by program counter
  (``inst_executed``, ``memory_l1_wavefronts_shared``, ``memory_l1_wavefronts_shared_ideal``),
  with ``sass_by_pc`` and ``source_info`` for the text and the line.

Numbers are kept as ncu prints them; a ``-`` (not applicable) is ``None``.
"""

from __future__ import annotations

import csv
import glob
import io
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["SassRow", "NcuSource", "read_source_csv", "read_ncu_rep", "read_report"]

# the source page's column names (Nsight Compute 2025.3)
LINE = "Line No"
ADDRESS = "Address"
EXECUTED = "Instructions Executed"
SPACE = "Address Space"
OPERATION = "Access Operation"
SIZE = "Access Size"
NWAY = "L1 Conflicts Shared N-Way"
EXCESSIVE = "L1 Wavefronts Shared Excessive"
WAVEFRONTS = "L1 Wavefronts Shared"
IDEAL = "L1 Wavefronts Shared Ideal"


@dataclass(frozen=True)
class SassRow:
    """One SASS instruction of the profiled kernel with ncu's counters for it (one launch)."""

    address: int | None
    sass: str  # the instruction as ncu prints it, predicate included ("@P0 BRA ...")
    file: str | None  # the source file ncu maps it to (its path as the report has it)
    line: int | None  # the source line (None: no line info)
    executed: int  # warp-level instructions executed
    space: str = "-"  # "Shared", "Global,Shared", "-"
    operation: str = "-"  # "Load", "Store", "-"
    size: str = "-"  # bits one lane moves, as ncu prints it
    wavefronts: int | None = None
    ideal: int | None = None
    excessive: int | None = None

    @property
    def opcode(self) -> str:
        """The instruction with its modifiers, without predicate or operands (``STSM.16.M88.4``)."""
        parts = self.sass.split()
        if parts and parts[0].startswith("@"):
            parts = parts[1:]
        return parts[0] if parts else ""

    @property
    def operands(self) -> str:
        parts = self.sass.split(None, 2 if self.sass.lstrip().startswith("@") else 1)
        return parts[-1] if len(parts) > (2 if self.sass.lstrip().startswith("@") else 1) else ""

    @property
    def site(self) -> str | None:
        """``file.py:line`` (the file's base name), as capture names call sites."""
        if self.file is None or self.line is None:
            return None
        return f"{os.path.basename(self.file)}:{self.line}"

    @property
    def counted_shared(self) -> bool:
        """ncu counts the row as a shared-memory access (its address space names Shared)."""
        return "Shared" in self.space.split(",")


@dataclass(frozen=True)
class NcuSource:
    """The rows of one profiled kernel and what the report says about the launch."""

    kernel: str
    rows: tuple[SassRow, ...]
    origin: str  # "csv" or "ncu-rep"
    grid_size: int | None = None  # CTAs of the launch, when the report holds it (an .ncu-rep does)
    columns: tuple[str, ...] = ()  # the CSV header as printed


def _number(text: str | None) -> int | None:
    if text is None:
        return None
    text = text.strip().replace(",", "")
    if text in ("", "-", "n/a"):
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return int(value) if value == int(value) else round(value)


def _address(text: str) -> int | None:
    text = text.strip()
    try:
        return int(text, 16) if text.lower().startswith("0x") else int(text)
    except ValueError:
        return None


def _row(cells: list[str], index: dict[str, int], sass_col: int, file: str | None, line: int | None) -> SassRow:
    def cell(name: str) -> str | None:
        i = index.get(name)
        return cells[i] if i is not None and i < len(cells) else None

    return SassRow(
        address=_address(cells[index[ADDRESS]]),
        sass=cells[sass_col].strip(),
        file=file,
        line=line,
        executed=_number(cell(EXECUTED)) or 0,
        space=(cell(SPACE) or "-").strip() or "-",
        operation=(cell(OPERATION) or "-").strip() or "-",
        size=(cell(SIZE) or "-").strip() or "-",
        wavefronts=_number(cell(WAVEFRONTS)),
        ideal=_number(cell(IDEAL)),
        excessive=_number(cell(EXCESSIVE)),
    )


def _is_header(rec: list[str]) -> bool:
    return ADDRESS in rec and "Source" in rec and rec[0].strip() in (LINE, ADDRESS, "# Address")


def read_source_csv(text: str) -> NcuSource:
    """The SASS rows of an ncu source-page CSV (``--print-source cuda,sass`` or ``sass``)."""
    header: list[str] | None = None
    index: dict[str, int] = {}
    sass_col = 0
    file: str | None = None
    line: int | None = None
    kernels: list[str] = []
    rows: list[SassRow] = []
    seen: set[int] = set()
    for rec in csv.reader(io.StringIO(text)):
        key = rec[0].strip() if rec else ""
        if key in ("File Path", "File Name") and len(rec) >= 2:
            file, line = rec[1], None
        elif key in ("Function Name", "Kernel Name") and len(rec) >= 2:
            kernels += [] if rec[1] in kernels else [rec[1]]
        elif _is_header(rec):
            header = [c.strip() for c in rec]
            index = {}
            for i, name in enumerate(header):
                index.setdefault(name, i)
            # the SASS text is the "Source" column after the address (the first is the CUDA line's)
            sass_col = next(i for i in range(index[ADDRESS] + 1, len(header)) if header[i] == "Source")
        elif header is not None and rec:
            cells = rec + [""] * (len(header) - len(rec))
            if LINE in index and cells[index[LINE]].strip():
                line = _number(cells[index[LINE]])
                continue
            address_text = cells[index[ADDRESS]].strip()
            if not address_text or address_text == "...":
                continue
            row = _row(cells, index, sass_col, file if LINE in index else None, line if LINE in index else None)
            if row.address is not None and row.address in seen:
                continue
            if row.address is not None:
                seen.add(row.address)
            rows.append(row)
    if header is None:
        raise ValueError(
            "not an Nsight Compute source page: no header with 'Address' and 'Source' "
            "(export it with: ncu -i REPORT --page source --csv --print-source cuda,sass)"
        )
    if len(kernels) > 1:
        raise ValueError(f"the source page holds {len(kernels)} kernels ({', '.join(kernels)}); profile one (-k, -c 1)")
    rows.sort(key=lambda r: (r.address is None, r.address or 0))
    return NcuSource(kernels[0] if kernels else "", tuple(rows), "csv", None, tuple(header))


# -- .ncu-rep, through Nsight Compute's own Python interface ----------------------------------


def _ncu_report_module() -> Any:
    try:
        import ncu_report  # noqa: PLC0415

        return ncu_report
    except ImportError:
        pass
    roots = [os.environ.get("NCU_REPORT_PATH", "")]
    roots += sorted(glob.glob("/opt/nvidia/nsight-compute/*/extras/python"), reverse=True)
    roots += sorted(glob.glob("/usr/local/cuda*/nsight-compute*/extras/python"), reverse=True)
    for root in roots:
        if root and os.path.isfile(os.path.join(root, "ncu_report.py")):
            sys.path.insert(0, root)
            try:
                import ncu_report  # noqa: PLC0415

                return ncu_report
            finally:
                sys.path.remove(root)
    raise ImportError(
        "reading an .ncu-rep needs Nsight Compute's Python interface (ncu_report, in the tool's "
        "extras/python; set NCU_REPORT_PATH to that folder), or export the CSV instead: "
        "ncu -i REPORT --page source --csv --print-source cuda,sass"
    )


def _instances(action: Any, name: str) -> dict[int, float]:
    try:
        metric = action.metric_by_name(name)
    except Exception:  # noqa: BLE001 - a metric the report does not hold
        return {}
    if metric is None:
        return {}
    n = metric.num_instances()
    if not n:
        return {}
    pcs = metric.correlation_ids()
    return {int(pcs.as_uint64(i)): metric.as_double(i) for i in range(n)}


def _scalar(action: Any, name: str) -> int | None:
    try:
        metric = action.metric_by_name(name)
    except Exception:  # noqa: BLE001
        return None
    if metric is None:
        return None
    try:
        return int(metric.as_uint64())
    except Exception:  # noqa: BLE001
        return None


def read_ncu_rep(path: str | Path, *, module: Any = None, kernel: str | None = None) -> NcuSource:
    """The SASS rows of one kernel in an ``.ncu-rep`` (profiled with ``--section SourceCounters``),
    read through ``ncu_report`` (``module``: that interface, found in the tool's folder if None)."""
    nr = module if module is not None else _ncu_report_module()
    ctx = nr.load_report(str(path))
    actions = [
        ctx.range_by_idx(r).action_by_idx(a)
        for r in range(ctx.num_ranges())
        for a in range(ctx.range_by_idx(r).num_actions())
    ]
    if kernel is not None:
        actions = [a for a in actions if kernel in a.name()]
    if len(actions) != 1:
        names = ", ".join(a.name() for a in actions) or "none"
        raise ValueError(f"{path}: {len(actions)} profiled kernels match ({names}); profile one (-k, -c 1) or name it")
    (action,) = actions
    executed = _instances(action, "inst_executed")
    if not executed:
        raise ValueError(f"{path}: no per-instruction counters (profile with --section SourceCounters)")
    wavefronts = _instances(action, "memory_l1_wavefronts_shared")
    ideal = _instances(action, "memory_l1_wavefronts_shared_ideal")
    rows = []
    for pc in sorted(executed):
        info = action.source_info(pc)
        file = info.file_name() if info is not None else None
        line = info.line() if info is not None else None
        # a counter the report holds has no instance for an instruction that never reached it; the
        # CSV prints those as 0 (seen on the H200: every SYNCS row), and so is it read here
        wf = wavefronts.get(pc, 0 if wavefronts else None)
        idl = ideal.get(pc, 0 if ideal else None)
        rows.append(
            SassRow(
                address=pc,
                sass=str(action.sass_by_pc(pc)).strip(),
                file=file or None,
                line=int(line) if line else None,
                executed=int(executed[pc]),
                space="Shared" if pc in wavefronts else "-",
                wavefronts=None if wf is None else int(wf),
                ideal=None if idl is None else int(idl),
                excessive=None if wf is None or idl is None else int(wf - idl),
            )
        )
    return NcuSource(action.name(), tuple(rows), "ncu-rep", _scalar(action, "launch__grid_size"))


def read_report(report: Any) -> NcuSource:
    """An :class:`NcuSource` from a CSV path or text, an ``.ncu-rep`` path, or rows already read."""
    if isinstance(report, NcuSource):
        return report
    if isinstance(report, (str, Path)):
        text = str(report)
        if "\n" in text or text.lstrip().startswith('"'):
            return read_source_csv(text)
        path = Path(report)
        if path.suffix == ".ncu-rep":
            return read_ncu_rep(path)
        return read_source_csv(path.read_text(encoding="utf-8", errors="replace"))
    if isinstance(report, Iterable):
        rows = tuple(report)
        if all(isinstance(r, SassRow) for r in rows):
            return NcuSource("", rows, "rows")
    raise TypeError(f"read_ncu reads a source-page CSV (path or text) or an .ncu-rep path, not {type(report).__name__}")
