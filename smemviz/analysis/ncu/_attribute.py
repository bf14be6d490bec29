"""Nsight Compute's shared-memory rows on a captured kernel's map: which captured access each
SASS row is, which regions it touches, and what smemviz predicted for it.

A row is attributed, in this order:

1. **by call site**: ncu maps the row to ``file:line``; capture recorded an access (or a
   pipeline's barrier operation) whose call starts on that line, or whose statement spans it
   (a call written over several lines: the compiler may name any of them), and the access
   issues this kind of instruction (``STSM`` is a ``stmatrix``, ``HGMMA`` a ``wgmma_read``);
2. **by address**: the row names an absolute shared-memory address (``[0x400]``, no register),
   and one captured region holds it;
3. **by instruction**: the row's line holds no such access, but exactly one group of captured
   accesses issues this instruction (the DSL may give a WGMMA the line of its ``@cute.jit``),
   so it can only be theirs.

A WGMMA row (``HGMMA``, ...) also names its form: ``SS`` when A and B are both shared-memory
descriptors (``gdesc`` with no A register), ``RS`` when A is a register. Where capture noted each
GEMM call's operands (A, B) and form, an ``SS`` row can only be a call that read both from
shared memory and an ``RS`` row only a call whose A is in registers; the row touches the regions
those calls read for the operands the instruction reads (``RS``: B alone). By instruction, the
calls of the row's form are its candidates, whatever their number of sites; at a call site
holding calls of both forms, the row's regions are narrowed to its form's. Where the form leaves
out some of what its sites read, the access is named with it (``wgmma_read SS @ ...``).

A pipeline's ``try_wait`` / ``try_acquire`` orders nothing and no program of the model holds it,
but capture notes it beside the model: its line's mbarrier rows are that pipeline's barriers.

Anything else is listed with the reason. Predictions:

* per-lane copies (``STSM``, ``LDSM``, ``LDS``, ``STS``, ``LDGSTS``): the wavefronts and ideal of
  each warp instruction capture recorded at the site, counted by the bank model
  (``bank_conflicts``, the addresses as compiled); a row gets ``executed`` times that when every
  instruction of the site gives the same, and each access gets ``CTAs x`` the sum over its records;
* ``HGMMA``/``QGMMA``: ``wgmma_reads`` of the instruction's N and input type (A from shared
  memory when the instruction names two descriptors' worth: ``gdesc`` with no A register), a
  quarter per warp as ncu counts them;
* TMA (``UTMALDG``/``UTMASTG``) and mbarrier (``SYNCS``) rows: attributed, not modelled (ncu
  counts no L1 shared wavefronts for them).

``conflicts`` here is ncu's "L1 Wavefronts Shared Excessive": wavefronts beyond the ideal.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..banks import bank_conflicts, wgmma_reads
from ..banks._wgmma import WARPS_PER_WARPGROUP
from ._report import NcuSource, SassRow, read_report

__all__ = ["NcuRow", "NcuTotals", "NcuAttribution", "read_ncu", "attribute"]

# SASS opcode (first name) -> the captured access kinds that issue it
_OPCODE_KINDS: dict[str, tuple[str, ...]] = {
    "STSM": ("stmatrix",),
    "LDSM": ("ldmatrix",),
    "LDS": ("ld",),
    "STS": ("st",),
    "LD": ("ld",),
    "ST": ("st",),
    "LDGSTS": ("cp_async",),
    "HGMMA": ("wgmma_read",),
    "QGMMA": ("wgmma_read",),
    "IGMMA": ("wgmma_read",),
    "BGMMA": ("wgmma_read",),
    "UTMALDG": ("tma_load",),
    "UTMASTG": ("tma_store",),
    "UTMAREDG": ("tma_store",),
    "UBLKCP": ("tma_load", "tma_store"),
    "UTCHMMA": ("umma_read",),
    "UTCQMMA": ("umma_read",),
    "UTCIMMA": ("umma_read",),
    "UTCOMMA": ("umma_read",),
}
_BARRIER_OPCODES = ("SYNCS",)  # mbarrier operations: the pipelines' barrier words
# every opcode that reaches shared memory, whether or not ncu counts it as a shared access
SMEM_OPCODES = (*_OPCODE_KINDS, *_BARRIER_OPCODES, "ATOMS", "LDGDEPBAR", "UTMACCTL")
_UNTOUCHED = ("LDGDEPBAR", "UTMACCTL")  # name no shared bytes: not rows of the map
_PER_LANE = ("stmatrix", "ldmatrix", "ld", "st", "cp_async")
_ABSOLUTE = re.compile(r"\[\s*(0x[0-9a-fA-F]+|\d+)\s*\]")
_GMMA_SHAPE = re.compile(r"^[HQIB]GMMA\.(\d+)x(\d+)x(\d+)\.")
_GMMA_TYPES = {"BF16": "bf16", "TF32": "tf32", "E4M3": "f8e4m3", "E5M2": "f8e5m2"}


@dataclass(frozen=True)
class NcuRow:
    """One shared-memory SASS row: ncu's counts, where it lands on the map, what was predicted."""

    address: int | None
    sass: str
    site: str | None  # file.py:line ncu maps the row to
    executed: int
    counted_shared: bool  # ncu counts it as a shared access (Address Space names Shared)
    wavefronts: int | None
    ideal: int | None
    conflicts: int | None  # ncu's excessive wavefronts
    access: str | None = None  # the captured access it is ("stmatrix @ _sm90.py:385")
    kind: str | None = None
    sites: tuple[str, ...] = ()  # the captured call sites of that access
    regions: tuple[str, ...] = ()
    by: str = ""  # "call site", "address", "instruction"; "" when not attributed
    reason: str = ""  # why it is not attributed, or how it was
    predicted_wavefronts: int | None = None
    predicted_ideal: int | None = None
    predicted_conflicts: int | None = None
    model: str = ""  # what the prediction comes from, or why there is none

    @property
    def opcode(self) -> str:
        return SassRow(self.address, self.sass, None, None, 0).opcode

    @property
    def attributed(self) -> bool:
        return bool(self.by)

    @property
    def modelled(self) -> bool:
        return self.predicted_wavefronts is not None

    @property
    def agrees(self) -> bool | None:
        """Predicted equals measured (wavefronts, ideal, conflicts); None when not modelled."""
        if not self.modelled:
            return None
        return (self.predicted_wavefronts, self.predicted_ideal, self.predicted_conflicts) == (
            self.wavefronts,
            self.ideal,
            self.conflicts,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "address": None if self.address is None else hex(self.address),
            "sass": self.sass,
            "site": self.site,
            "executed": self.executed,
            "counted_shared": self.counted_shared,
            "wavefronts": self.wavefronts,
            "ideal": self.ideal,
            "conflicts": self.conflicts,
            "access": self.access,
            "kind": self.kind,
            "sites": list(self.sites),
            "regions": list(self.regions),
            "by": self.by,
            "reason": self.reason,
            "predicted": None
            if not self.modelled
            else {
                "wavefronts": self.predicted_wavefronts,
                "ideal": self.predicted_ideal,
                "conflicts": self.predicted_conflicts,
            },
            "model": self.model,
            "agrees": self.agrees,
        }


@dataclass(frozen=True)
class NcuTotals:
    """The rows of one captured access (or one region) summed: measured beside predicted."""

    name: str  # the access ("stmatrix @ _sm90.py:385") or the region ("sC", "sA+sB")
    regions: tuple[str, ...]
    rows: int
    executed: int
    wavefronts: int
    ideal: int
    conflicts: int
    predicted_instructions: int | None = None  # CTAs x the warp instructions capture recorded
    predicted_wavefronts: int | None = None
    predicted_ideal: int | None = None
    predicted_conflicts: int | None = None
    model: str = ""
    # rows of the group with no prediction (TMA beside stmatrix in one region): their measured
    # wavefronts, ideal and conflicts, left out of the comparison
    unmodelled_rows: int = 0
    unmodelled: tuple[int, int, int] = (0, 0, 0)

    @property
    def modelled(self) -> bool:
        return self.predicted_wavefronts is not None

    @property
    def agrees(self) -> bool | None:
        """The modelled rows' measured sums equal the prediction; None when nothing is modelled."""
        if not self.modelled:
            return None
        measured = (
            self.wavefronts - self.unmodelled[0],
            self.ideal - self.unmodelled[1],
            self.conflicts - self.unmodelled[2],
        )
        same = (self.predicted_wavefronts, self.predicted_ideal, self.predicted_conflicts) == measured
        return same and self.predicted_instructions in (None, self.executed)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "regions": list(self.regions),
            "rows": self.rows,
            "executed": self.executed,
            "wavefronts": self.wavefronts,
            "ideal": self.ideal,
            "conflicts": self.conflicts,
            "predicted": None
            if not self.modelled
            else {
                "instructions": self.predicted_instructions,
                "wavefronts": self.predicted_wavefronts,
                "ideal": self.predicted_ideal,
                "conflicts": self.predicted_conflicts,
            },
            "model": self.model,
            "unmodelled_rows": self.unmodelled_rows,
            "unmodelled": list(self.unmodelled),
            "agrees": self.agrees,
        }


@dataclass(frozen=True)
class NcuAttribution:
    """Nsight Compute's shared-memory rows of one launch, attributed to a captured kernel."""

    kernel: str  # the kernel ncu profiled
    captured: str  # the captured kernel's symbol
    origin: str  # "csv", "ncu-rep"
    ctas: int | None
    ctas_from: str  # "given", "the report's grid", "inferred from ...", or why unknown
    rows: tuple[NcuRow, ...]
    accesses: tuple[NcuTotals, ...]
    regions: tuple[NcuTotals, ...]
    disagreements: tuple[str, ...] = field(default=())
    # the captured regions' bytes (name, first byte, size): where the map draws what was measured
    spans: tuple[tuple[str, int, int], ...] = field(default=())

    @property
    def attributed(self) -> tuple[NcuRow, ...]:
        return tuple(r for r in self.rows if r.attributed)

    @property
    def unattributed(self) -> tuple[NcuRow, ...]:
        return tuple(r for r in self.rows if not r.attributed)

    @property
    def modelled(self) -> tuple[NcuRow, ...]:
        return tuple(r for r in self.rows if r.modelled)

    @property
    def agrees(self) -> bool:
        """Every modelled row and access: predicted equals measured."""
        return not self.disagreements

    def to_dict(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "captured": self.captured,
            "origin": self.origin,
            "ctas": self.ctas,
            "ctas_from": self.ctas_from,
            "rows": [r.to_dict() for r in self.rows],
            "accesses": [t.to_dict() for t in self.accesses],
            "regions": [t.to_dict() for t in self.regions],
            "disagreements": list(self.disagreements),
            "agrees": self.agrees,
        }

    def text(self) -> str:
        """The attribution as plain text: per access, per region, the rows, what disagrees."""
        out = [
            f"ncu: {_short(self.kernel)} ({self.origin}); captured: {_short(self.captured)}",
            f"CTAs: {self.ctas if self.ctas is not None else '?'} ({self.ctas_from})",
            f"shared-memory rows: {len(self.rows)}, attributed {len(self.attributed)}, "
            f"modelled {len(self.modelled)}, unattributed {len(self.unattributed)}",
            "",
            "per access (measured / predicted):",
        ]
        out += _totals_table(self.accesses)
        out += ["", "per region (measured / predicted):"]
        out += _totals_table(self.regions)
        out += ["", "rows:"]
        head = f"  {'address':>8s}  {'sass':34s} {'site':18s} {'exec':>6s} {'wavefronts':>13s} {'ideal':>13s} {'conflicts':>13s}  access"
        out.append(head)
        for r in self.rows:
            addr = f"{r.address & 0xFFFFF:#07x}" if r.address is not None else "-"
            out.append(
                f"  {addr:>8s}  {_cut(r.sass, 34):34s} {r.site or '-':18s} {r.executed:>6d} "
                f"{_pair(r.wavefronts, r.predicted_wavefronts):>13s} {_pair(r.ideal, r.predicted_ideal):>13s} "
                f"{_pair(r.conflicts, r.predicted_conflicts):>13s}  "
                + (f"{r.access} [{'+'.join(r.regions)}] by {r.by}" if r.attributed else f"NOT ATTRIBUTED: {r.reason}")
            )
        unmodelled = sorted({(r.access or "-", r.model) for r in self.rows if r.attributed and not r.modelled})
        if unmodelled:
            out += ["", "attributed, not modelled:"]
            out += [f"  {access}: {why}" for access, why in unmodelled]
        out += ["", "disagreements:" if self.disagreements else "disagreements: none"]
        out += [f"  {d}" for d in self.disagreements]
        return "\n".join(out) + "\n"


def _short(name: str, n: int = 72) -> str:
    return name if len(name) <= n else name[: n - 3] + "..."


def _cut(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "~"


def _pair(measured: int | None, predicted: int | None) -> str:
    m = "-" if measured is None else str(measured)
    return m if predicted is None else f"{m}/{predicted}"


def _totals_table(totals: Sequence[NcuTotals]) -> list[str]:
    if not totals:
        return ["  (none)"]
    out = [
        f"  {'':40s} {'rows':>4s} {'instructions':>15s} {'wavefronts':>17s} {'ideal':>17s} {'conflicts':>17s}  agrees"
    ]
    for t in totals:
        agrees = {None: "not modelled", True: "yes", False: "NO"}[t.agrees]
        out.append(
            f"  {_cut(t.name, 40):40s} {t.rows:>4d} {_pair(t.executed, t.predicted_instructions):>15s} "
            f"{_pair(t.wavefronts, t.predicted_wavefronts):>17s} {_pair(t.ideal, t.predicted_ideal):>17s} "
            f"{_pair(t.conflicts, t.predicted_conflicts):>17s}  {agrees}"
            + (f" ({t.model})" if t.model and t.agrees is None else "")
            + (f" ({t.unmodelled_rows} rows not modelled: {t.model})" if t.unmodelled_rows and t.modelled else "")
        )
    return out


# -- what capture recorded ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Event:
    """A captured access or barrier operation at a call site."""

    kind: str  # an access kind, or "mbarrier"
    site: str  # file.py:line
    line: int
    file: str  # base name
    regions: tuple[str, ...]
    # a GEMM read's (form, operand, region) of each call at the site, where capture noted them
    operands: tuple[tuple[str, str, str], ...] = ()


def _walk(steps: Iterable[Any]) -> Iterable[Any]:
    for step in steps:
        body = getattr(step, "body", None)
        if body is not None and not hasattr(step, "kind"):
            yield from _walk(body)
        else:
            yield step


def _captured(source: Any) -> tuple[Any, Any, str]:
    """(ordering model, bank records, kernel symbol) of a capture, one kernel's capture, or a plan."""
    return _capture_parts(source)[:3]


def _capture_parts(source: Any) -> tuple[Any, Any, str, Any, Any]:
    """:func:`_captured`'s, and what capture noted beside the model (GEMM operands, pipeline
    probes; none for a plan)."""
    kernels = getattr(source, "kernels", None)
    if kernels is not None and not hasattr(source, "banks"):
        kernels = dict(kernels)
        if len(kernels) != 1:
            raise ValueError(
                f"{len(kernels)} kernels were captured ({', '.join(kernels)}); pass one (cap.kernels[name])"
            )
        source = next(iter(kernels.values()))
    if hasattr(source, "banks"):  # a KernelCapture
        beside = tuple(getattr(source, "gemm_operands", ())), tuple(getattr(source, "probes", ()))
        return source.ordering, tuple(source.banks), source.kernel, *beside
    ordering = getattr(source, "ordering", None)  # a plan carrying the model
    if ordering is not None:
        return ordering, (), getattr(ordering, "name", ""), (), ()
    raise TypeError(
        f"read_ncu needs what capture recorded (smemviz.capture()'s result, one of its kernels, or a plan "
        f"carrying the ordering model), not {type(source).__name__}"
    )


def _events(
    model: Any, records: Sequence[Any], operands: Sequence[Any] = (), probes: Sequence[Any] = ()
) -> list[_Event]:
    out: list[_Event] = []
    roles: dict[tuple[str, str], set[tuple[str, str, str]]] = {}
    for o in operands:  # each GEMM operand read: its call's form and which operand it is
        roles.setdefault((o.kind, str(o.site)), set()).add((o.form, o.operand, o.region))
    if model is not None:
        barriers = {p.name: p.barrier_region for p in model.pipelines}
        for probe in probes:  # a try_wait / try_acquire: a probe of its pipeline's barriers
            if barriers.get(probe.pipeline):
                site = probe.site
                out.append(_Event("mbarrier", str(site), site.line, site.file, (f"{probe.pipeline} barriers",)))
        steps = list(_walk(model.prologue))
        for program in model.programs:
            steps += list(_walk(program.body))
        for step in steps:
            site = getattr(step, "site", None)
            if site is None:
                continue
            kind = getattr(step, "kind", None)
            region = getattr(step, "region", None)
            if region is not None and kind is not None:
                known = tuple(sorted(roles.get((kind, str(site)), ())))
                out.append(_Event(kind, str(site), site.line, site.file, (region,), known))
            pipeline = getattr(step, "pipeline", None)
            if pipeline is not None and barriers.get(pipeline):
                name = f"{pipeline} barriers"
                out.append(_Event("mbarrier", str(site), site.line, site.file, (name,)))
    for rec in records:  # a copy the model does not hold (no ordering read): its view is its region
        file, _, line = rec.site.rpartition(":")
        if not any(e.site == rec.site and e.kind == rec.kind for e in out) and line.isdigit():
            out.append(_Event(rec.kind, rec.site, int(line), file, (rec.view or rec.region or "?",)))
    unique: dict[tuple[str, str], _Event] = {}
    for e in out:
        key = (e.kind, e.site)
        if key in unique and unique[key].regions != e.regions:
            merged = tuple(sorted(set(unique[key].regions) | set(e.regions)))
            unique[key] = _Event(e.kind, e.site, e.line, e.file, merged, e.operands)
        else:
            unique.setdefault(key, e)
    return list(unique.values())


# -- a WGMMA's form: which operands it reads from shared memory ----------------------------------

_FORM_READS = {"SS": ("A", "B"), "RS": ("B",)}
_FORM_TEXT = {"SS": "A and B from shared memory", "RS": "A from registers, B from shared memory"}


def _gmma_form(row: SassRow) -> str | None:
    """``SS`` for a WGMMA row whose A is a descriptor (``gdesc`` right after D), ``RS`` for one
    whose A is a register; None for any other row."""
    if _GMMA_SHAPE.match(row.opcode) is None:
        return None
    ops = [o.strip() for o in row.operands.split(",")]
    if len(ops) < 3:
        return None
    if ops[1].startswith("gdesc"):
        return "SS"
    return "RS" if re.match(r"R\d+$", ops[1]) else None


def _typed(e: _Event) -> bool:
    """Capture noted the operand and form of every region the event reads."""
    return bool(e.operands) and set(e.regions) <= {r for _, _, r in e.operands}


def _by_form(form: str, events: Sequence[_Event]) -> tuple[list[_Event], tuple[str, ...]] | None:
    """The events with a GEMM call of ``form`` and the regions those calls read for the operands
    an instruction of that form reads; None where some event's operands were not noted."""
    if not events or not all(_typed(e) for e in events):
        return None
    reads = _FORM_READS[form]
    kept = [e for e in events if any(f == form and o in reads for f, o, _ in e.operands)]
    regions = tuple(sorted({r for e in kept for f, o, r in e.operands if f == form and o in reads}))
    return kept, regions


def _calls_text(form: str, events: Sequence[_Event]) -> str:
    """The calls of ``form`` at each event's site, by operand: "fmha.py:1666 (A sQ, B sK)"."""
    out = []
    for e in sorted(events, key=lambda e: _site_key(e.site)):
        parts = [
            f"{o} {'+'.join(sorted(r for f, oo, r in e.operands if f == form and oo == o))}"
            for o in _FORM_READS[form]
            if any(f == form and oo == o for f, oo, _ in e.operands)
        ]
        out.append(f"{e.site} ({', '.join(parts)})")
    return ", ".join(out)


# -- source statements: a call over several lines -------------------------------------------------


@lru_cache(maxsize=32)
def _statement_spans(path: str) -> dict[int, int]:
    """First line -> last line of each simple statement of a Python file ({} if unreadable)."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return {}
    spans: dict[int, int] = {}
    compound: tuple[type[ast.stmt], ...] = (ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.AsyncWith)
    compound += (ast.Try, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Match)
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not isinstance(node, compound):
            end = node.end_lineno or node.lineno
            spans[node.lineno] = max(spans.get(node.lineno, node.lineno), end)
    return spans


def _find_source(path: str | None, roots: Sequence[str | Path]) -> str | None:
    """The file ncu names, here: as named, else its trailing parts under one of ``roots``."""
    if not path:
        return None
    if os.path.isfile(path):
        return path
    parts = Path(path).parts
    for root in roots:
        for k in range(min(len(parts), 6), 0, -1):
            candidate = Path(root, *parts[-k:])
            if candidate.is_file():
                return str(candidate)
    return None


# -- predictions ---------------------------------------------------------------------------------


def _lane_bits(opcode: str) -> tuple[int | None, int | None, bool]:
    """(bits one lane moves, matrices, trans) of a per-lane SMEM opcode, as far as it says."""
    parts = opcode.split(".")
    name = parts[0]
    if name in ("STSM", "LDSM"):
        matrices = int(parts[-1]) if parts[-1].isdigit() else 1
        return 32 * matrices, matrices, "MT88" in parts
    widths = {"U8": 8, "S8": 8, "U16": 16, "S16": 16, "64": 64, "128": 128, "32": 32}
    for p in parts[1:]:
        if p in widths:
            return widths[p], None, False
    return (32 if name in ("LDS", "STS", "LD", "ST") else None), None, False


@dataclass
class _SiteModel:
    """What capture's records at one site predict."""

    per_instruction: tuple[int, int] | None  # (wavefronts, ideal) shared by every instruction
    instructions: int  # warp instructions per CTA
    wavefronts: int
    ideal: int
    note: str = ""
    bits: int | None = None
    matrices: int | None = None
    trans: bool = False
    instruction: str = ""


def _site_models(records: Sequence[Any]) -> dict[str, _SiteModel]:
    by_site: dict[str, list[Any]] = {}
    for rec in records:
        by_site.setdefault(rec.site, []).append(rec)
    out: dict[str, _SiteModel] = {}
    for site, recs in by_site.items():
        read = [r for r in recs if r.instruction is not None and r.addresses]
        if not read:
            why = "; ".join(sorted({r.unread for r in recs if r.unread})) or "capture read no addresses"
            out[site] = _SiteModel(None, 0, 0, 0, note=f"capture could not read it: {why}")
            continue
        cache: dict[tuple[str, tuple[int | None, ...]], tuple[int, int]] = {}
        rates: set[tuple[int, int]] = set()
        n = wf = ideal = 0
        for rec in read:
            for addrs in rec.addresses:
                key = (rec.instruction, addrs)
                if key not in cache:
                    bc = bank_conflicts(rec.instruction, addrs)
                    cache[key] = (bc.wavefronts, bc.ideal)
                w, i = cache[key]
                rates.add((w, i))
                n += 1
                wf += w
                ideal += i
        note = ""
        if len(read) < len(recs):
            note = f"{len(recs) - len(read)} of {len(recs)} records unread"
        if any(r.alternatives > 1 for r in read):
            note = "a run-time index: each value is its own record, the per-CTA sums are not the launch's"
            n = wf = ideal = 0
        first = read[0]
        out[site] = _SiteModel(
            next(iter(rates)) if len(rates) == 1 else None,
            n,
            wf,
            ideal,
            note,
            first.bits,
            first.matrices,
            first.trans,
            first.instruction,
        )
    return out


def _gmma_prediction(row: SassRow) -> tuple[int, int, str] | None:
    """(wavefronts, ideal) per warp instruction of a WGMMA row from wgmma_reads, and the model."""
    m = _GMMA_SHAPE.match(row.opcode)
    if m is None:
        return None
    _m, n, _k = (int(x) for x in m.groups())
    mods = row.opcode.split(".")[4:]
    dtype = next((_GMMA_TYPES[x] for x in mods if x in _GMMA_TYPES), "f16" if row.opcode.startswith("H") else None)
    if dtype is None:
        return None
    # A from registers: an R operand before the descriptor ("HGMMA ... R24, R120, gdesc[UR4]")
    ops = [o.strip() for o in row.operands.split(",")]
    a_in_smem = len(ops) > 1 and ops[1].startswith("gdesc")
    try:
        reads = wgmma_reads(n, dtype, a_in_smem=a_in_smem)
    except ValueError:
        return None
    wf = reads.wavefronts // WARPS_PER_WARPGROUP
    ideal = reads.ideal // WARPS_PER_WARPGROUP
    model = f"wgmma_reads(n={n}, {dtype}{'' if a_in_smem else ', A in registers'}): {reads.wavefronts} wavefronts a warpgroup, a quarter a warp"
    return wf, ideal, model


# -- attribution -----------------------------------------------------------------------------------


def _kinds_of(opcode: str) -> tuple[str, ...] | None:
    name = opcode.split(".")[0]
    if name in _BARRIER_OPCODES:
        return ("mbarrier",)
    return _OPCODE_KINDS.get(name)


def _is_smem_row(row: SassRow) -> bool:
    name = row.opcode.split(".")[0]
    if name in _UNTOUCHED:
        return False
    return row.counted_shared or name in SMEM_OPCODES


def _access_name(kind: str, sites: Sequence[str], form: str = "") -> str:
    kind = f"{kind} {form}" if form else kind
    if len(sites) > 3:  # every barrier operation of a pipeline, say
        return f"{kind} @ {sites[0]} .. {sites[-1]} ({len(sites)} sites)"
    return f"{kind} @ {', '.join(sites)}"


@dataclass(frozen=True)
class _Placed:
    """The captured events a row is, how they were found, why (or why none), the regions it
    touches (None: every region of the events) and the WGMMA form that narrowed them."""

    events: list[_Event]
    by: str
    reason: str
    regions: tuple[str, ...] | None = None
    form: str = ""


def _place(
    row: SassRow,
    kinds: tuple[str, ...],
    events: Sequence[_Event],
    by_file: dict[str, list[_Event]],
    spans_model: Sequence[Any],
    statement_end: Any,
) -> _Placed:
    """The captured events a row is (see ``_Placed``)."""
    form = _gmma_form(row)
    # 1. call site: an event on the row's line, or whose statement spans it
    if row.line is not None and row.file is not None:
        here = [e for e in by_file.get(os.path.basename(row.file), []) if e.kind in kinds]
        found = [e for e in here if e.line == row.line]
        if not found:
            found = [e for e in here if e.line < row.line <= statement_end(row.file, e.line)]
        if found:
            return _narrow_at_site(form, found)
    # 2. an absolute address inside one region
    m = _ABSOLUTE.search(row.operands)
    if m is not None and spans_model:
        addr = int(m.group(1), 0)
        holders = [s.name for s in spans_model if s.start <= addr < s.start + s.size]
        candidates = [e for e in events if e.kind in kinds and set(e.regions) & set(holders)]
        if len(holders) == 1 and candidates:
            return _Placed(candidates, "address", f"{m.group(1)} lies in {holders[0]}")
    # 3. the one group of captured accesses that issues this instruction
    candidates = [e for e in events if e.kind in kinds]
    where = f"ncu maps it to {row.site}" if row.site else "it has no line info"
    wanted = "/".join(kinds)
    narrowed = _by_form(form, candidates) if form else None
    if form and narrowed is not None:  # the calls of the instruction's form
        kept, regions = narrowed
        opcode = row.opcode.split(".")[0]
        if not kept:
            return _Placed(
                [],
                "",
                f"{where}, where capture recorded no {wanted}; an {form} {opcode} ({_FORM_TEXT[form]}), "
                f"and capture recorded no GEMM call of that form",
            )
        return _Placed(
            kept,
            "instruction",
            f"{where}, where capture recorded no {wanted}; an {form} {opcode} ({_FORM_TEXT[form]}) can only be "
            f"a captured GEMM call of that form: {_calls_text(form, kept)}",
            regions,
            _named_form(form, kept, regions),
        )
    groups = {(e.kind, e.regions) for e in candidates}
    if len(groups) == 1:
        return _Placed(
            candidates,
            "instruction",
            (f"{where}, where capture recorded no {wanted}; the only captured {candidates[0].kind} accesses are these"),
        )
    if not candidates:
        return _Placed([], "", f"{where}; capture recorded no {wanted} access in this kernel")
    names = "; ".join(sorted(f"{e.kind} {'+'.join(e.regions)} @ {e.site}" for e in candidates))
    return _Placed([], "", f"{where}, where capture recorded no {wanted}; it could be any of: {names}")


def _narrow_at_site(form: str | None, found: list[_Event]) -> _Placed:
    """A row at the call site of ``found``: a WGMMA row touches the regions its form's calls read
    there, where the site holds calls of another form too."""
    narrowed = _by_form(form, found) if form else None
    if not form or narrowed is None:
        return _Placed(found, "call site", "")
    kept, regions = narrowed
    if not kept:
        return _Placed(found, "call site", f"an {form} instruction, but capture noted no {form} GEMM call here")
    if len(kept) == len(found) and set(regions) == {r for e in found for r in e.regions}:
        return _Placed(found, "call site", "")
    return _Placed(
        kept,
        "call site",
        f"an {form} instruction ({_FORM_TEXT[form]}): of the GEMM calls here, those of that form read "
        f"{_calls_text(form, kept)}",
        regions,
        _named_form(form, kept, regions),
    )


def _named_form(form: str, kept: Sequence[_Event], regions: tuple[str, ...]) -> str:
    """The form, where it leaves out some of what the kept sites read (their access is then not
    all of those sites): it is named with the access."""
    return form if set(regions) != {r for e in kept for r in e.regions} else ""


def attribute(
    source: NcuSource,
    captured: Any,
    *,
    ctas: int | None = None,
    source_roots: Sequence[str | Path] = (),
) -> NcuAttribution:
    """Attribute ``source``'s shared-memory rows to what ``captured`` recorded (see the module)."""
    model, records, symbol, operands, probes = _capture_parts(captured)
    events = _events(model, records, operands, probes)
    spans_model = list(model.regions) if model is not None else []
    site_models = _site_models(records)
    roots = [*source_roots, os.getcwd(), str(Path(__file__).resolve().parents[3])]

    by_file: dict[str, list[_Event]] = {}
    for e in events:
        by_file.setdefault(e.file, []).append(e)

    def statement_end(row_file: str | None, line: int) -> int:
        local = _find_source(row_file, roots)
        return _statement_spans(local).get(line, line) if local else line

    rows: list[NcuRow] = []
    for row in source.rows:
        if not _is_smem_row(row):
            continue
        kinds = _kinds_of(row.opcode)
        base: dict[str, Any] = dict(
            address=row.address,
            sass=" ".join(row.sass.split()),
            site=row.site,
            executed=row.executed,
            counted_shared=row.counted_shared,
            wavefronts=row.wavefronts,
            ideal=row.ideal,
            conflicts=row.excessive,
        )
        if kinds is None:
            rows.append(NcuRow(**base, reason=f"no captured access kind issues {row.opcode.split('.')[0]}"))
            continue
        placed = _place(row, kinds, events, by_file, spans_model, statement_end)
        found = placed.events
        if not found:
            rows.append(NcuRow(**base, reason=placed.reason))
            continue
        kind = found[0].kind
        sites = tuple(sorted({e.site for e in found}, key=_site_key))
        touched = placed.regions if placed.regions is not None else tuple(sorted({r for e in found for r in e.regions}))
        pred = _predict(row, kind, sites, site_models)
        rows.append(
            NcuRow(
                **base,
                access=_access_name(kind, sites, placed.form),
                kind=kind,
                sites=sites,
                regions=touched,
                by=placed.by,
                reason=placed.reason,
                predicted_wavefronts=pred[0],
                predicted_ideal=pred[1],
                predicted_conflicts=None if pred[0] is None or pred[1] is None else pred[0] - pred[1],
                model=pred[2],
            )
        )

    ctas, ctas_from = _ctas(rows, site_models, ctas, source.grid_size)
    accesses = _totals(rows, lambda r: r.access, site_models, ctas, True)
    regions = _totals(rows, lambda r: "+".join(r.regions), site_models, None, False)
    disagreements = [
        f"{r.sass} at {r.site}: measured {r.wavefronts}/{r.ideal}/{r.conflicts}, predicted "
        f"{r.predicted_wavefronts}/{r.predicted_ideal}/{r.predicted_conflicts} (wavefronts/ideal/conflicts)"
        for r in rows
        if r.agrees is False
    ]
    if source.kernel and symbol and source.kernel != symbol:
        disagreements.insert(0, f"ncu profiled {_short(source.kernel)}, the capture is of {_short(symbol)}")
    for t in (*accesses, *regions):
        if t.agrees is False:
            disagreements.append(
                f"{t.name}: measured {t.executed} instructions, {t.wavefronts}/{t.ideal}/{t.conflicts}; predicted "
                f"{t.predicted_instructions} instructions, {t.predicted_wavefronts}/{t.predicted_ideal}/"
                f"{t.predicted_conflicts} (wavefronts/ideal/conflicts)"
            )
    return NcuAttribution(
        kernel=source.kernel,
        captured=symbol,
        origin=source.origin,
        ctas=ctas,
        ctas_from=ctas_from,
        rows=tuple(rows),
        accesses=accesses,
        regions=regions,
        disagreements=tuple(disagreements),
        spans=tuple((s.name, int(s.start), int(s.size)) for s in spans_model),
    )


def _site_key(site: str) -> tuple[str, int]:
    file, _, line = site.rpartition(":")
    return file, int(line) if line.isdigit() else 0


def _predict(
    row: SassRow, kind: str, sites: Sequence[str], site_models: dict[str, _SiteModel]
) -> tuple[int | None, int | None, str]:
    if kind in _PER_LANE:
        models = [site_models[s] for s in sites if s in site_models]
        if not models:
            return None, None, "capture recorded no lane addresses for it"
        if len(models) > 1:
            return None, None, "several sites: compared per access only"
        sm = models[0]
        if sm.note.startswith("capture could not"):
            return None, None, sm.note
        bits, matrices, trans = _lane_bits(row.opcode)
        if (sm.bits, sm.matrices, sm.trans) != (bits, matrices, trans) and bits is not None:
            return (
                None,
                None,
                (
                    f"the SASS moves {bits} bits a lane{f' in {matrices} matrices' if matrices else ''}"
                    f"{' transposed' if trans else ''}; capture recorded {sm.instruction} ({sm.bits} bits)"
                ),
            )
        if sm.per_instruction is None:
            return None, None, "the site's instructions differ: compared per access only"
        w, i = sm.per_instruction
        return (
            row.executed * w,
            row.executed * i,
            f"bank_conflicts on capture's lane addresses ({sm.instruction}: {w}/{i} per warp instruction)",
        )
    if kind == "wgmma_read":
        g = _gmma_prediction(row)
        if g is None:
            return None, None, f"no WGMMA model for {row.opcode}"
        return row.executed * g[0], row.executed * g[1], g[2]
    if kind in ("tma_load", "tma_store"):
        return None, None, "TMA: the copy engine moves the bytes, no lane addresses to model"
    if kind == "mbarrier":
        return None, None, "mbarrier operation: no bank model"
    return None, None, f"{kind}: not modelled"


def _ctas(
    rows: Sequence[NcuRow], site_models: dict[str, _SiteModel], given: int | None, grid: int | None
) -> tuple[int | None, str]:
    if given is not None:
        return given, "given"
    if grid is not None:
        return grid, "the report's grid size"
    for r in rows:
        if r.kind in _PER_LANE and r.by == "call site" and len(r.sites) == 1 and r.sites[0] in site_models:
            site = r.sites[0]
            per_cta = site_models[site].instructions
            executed = sum(x.executed for x in rows if x.access == r.access)
            if per_cta and executed % per_cta == 0:
                return (
                    executed // per_cta,
                    f"inferred: {executed} {r.opcode} executed / {per_cta} per CTA captured at {site}",
                )
            return None, f"not inferred: {executed} executed at {site} is no multiple of the {per_cta} captured per CTA"
    return None, "not given, not in the report, and no per-lane access to infer it from"


def _totals(
    rows: Sequence[NcuRow], key: Any, site_models: dict[str, _SiteModel], ctas: int | None, per_access: bool
) -> tuple[NcuTotals, ...]:
    groups: dict[str, list[NcuRow]] = {}
    for r in rows:
        if r.attributed:
            groups.setdefault(key(r), []).append(r)
    out = []
    for name, members in groups.items():
        first = members[0]
        modelled = [r for r in members if r.modelled]
        other = [r for r in members if not r.modelled]
        pred: dict[str, int | None] = dict(instructions=None, wavefronts=None, ideal=None, conflicts=None)
        model = "; ".join(sorted({r.model for r in other}))
        if modelled:
            pred.update(
                wavefronts=sum(r.predicted_wavefronts or 0 for r in modelled),
                ideal=sum(r.predicted_ideal or 0 for r in modelled),
                conflicts=sum(r.predicted_conflicts or 0 for r in modelled),
            )
        sm = site_models.get(first.sites[0]) if per_access and len(first.sites) == 1 else None
        if ctas is not None and first.kind in _PER_LANE and sm is not None and sm.instructions and not sm.note:
            # the access as capture recorded it, times the launch's CTAs: its instructions too
            pred.update(
                instructions=ctas * sm.instructions,
                wavefronts=ctas * sm.wavefronts,
                ideal=ctas * sm.ideal,
                conflicts=ctas * (sm.wavefronts - sm.ideal),
            )
            other = []
            model = ""
        out.append(
            NcuTotals(
                name=name,
                regions=first.regions if per_access else tuple(name.split("+")),
                rows=len(members),
                executed=sum(r.executed for r in members),
                wavefronts=sum(r.wavefronts or 0 for r in members),
                ideal=sum(r.ideal or 0 for r in members),
                conflicts=sum(r.conflicts or 0 for r in members),
                predicted_instructions=pred["instructions"],
                predicted_wavefronts=pred["wavefronts"],
                predicted_ideal=pred["ideal"],
                predicted_conflicts=pred["conflicts"],
                model=model,
                unmodelled_rows=len(other),
                unmodelled=(
                    sum(r.wavefronts or 0 for r in other),
                    sum(r.ideal or 0 for r in other),
                    sum(r.conflicts or 0 for r in other),
                ),
            )
        )
    return tuple(sorted(out, key=lambda t: t.name))


def read_ncu(
    report: Any,
    plan: Any,
    *,
    ctas: int | None = None,
    source_roots: Sequence[str | Path] = (),
) -> NcuAttribution:
    """Nsight Compute's shared-memory counters of one launch on smemviz's map of the kernel.

    ``report``: the CSV of ``ncu --page source --csv --print-source cuda,sass`` (a path or its
    text; the kernel compiled with ``CUTE_DSL_LINEINFO=1`` so rows carry their source line), or
    an ``.ncu-rep`` path (read through Nsight Compute's ``ncu_report`` where it is installed).
    ``plan``: what ``smemviz.capture()`` recorded of the same kernel: the capture, one of its
    kernels (``cap.kernels[name]``), or a plan carrying the ordering model (then no per-lane
    predictions: those need the captured lane addresses). ``ctas``: the launch's CTAs, for the
    per-access instruction counts (by default the report's grid size where it has one, else
    inferred from a per-lane access). ``source_roots``: folders to find the kernel's source in
    when ncu names it by a path of another machine (a call written over several lines).

    Every shared-memory SASS row is attributed to a captured access and its regions, or listed
    with the reason it is not (see :mod:`smemviz.analysis.ncu`); measured and predicted stand
    side by side per row, per access and per region, and each disagreement is listed.
    """
    return attribute(read_report(report), plan, ctas=ctas, source_roots=source_roots)
