"""``bank_conflicts(instruction, addresses)``: one warp's access, as the H200 counts it.

Pure Python, no GPU and no CuTe DSL. The rules are those of
:mod:`._instructions` (calibrated with Nsight Compute); the result also carries
which lane's bytes land in which bank in which wavefront, for the bank picture.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from ... import hardware
from ..._limits import int_size, shorten
from ..._smem_instructions import WARP, WORD, InstructionSpec, lookup

__all__ = ["BankConflicts", "LaneWord", "bank_conflicts", "conflicts_html", "max_smem_bytes"]

BANKS = hardware.SMEM_BANKS


def max_smem_bytes() -> tuple[int, str]:
    """The largest shared memory of any architecture smemviz knows, and which one has it."""
    best = max(hardware.ARCHS.values(), key=lambda a: (a.smem_per_sm, a.smem_per_block))
    return max(best.smem_per_sm, best.smem_per_block), best.name


_MAX_SMEM, _MAX_ARCH = max_smem_bytes()


@dataclass(frozen=True)
class LaneWord:
    """One 4-byte bank word a lane touches, and the wavefront that serves it."""

    lane: int
    wavefront: int
    bank: int
    word: int  # byte address of the word (a multiple of 4)
    first_byte: int  # first byte of the word the lane uses (0..3)
    nbytes: int  # bytes of the word the lane uses


@dataclass(frozen=True)
class BankConflicts:
    """One execution of ``instruction`` by one warp: wavefronts and conflicts as ncu counts them.

    ``wavefronts`` is ncu's per-instruction count (``smsp__sass_..._wavefronts_...``, an
    instruction-level metric collected by patching the SASS); ``l1tex_wavefronts`` the
    L1TEX unit's own counter (``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld/st``;
    ``None`` for cp.async, not recorded), which differs from it for some 8/16-byte loads
    whose lanes pair up;
    ``conflicts`` is ncu's conflict counter, the L1TEX wavefronts less the phases the L1TEX
    serves. ``ideal`` is the fewest wavefronts the same instruction could take with no bank
    shared (its phases, merged where the lanes pair up).
    """

    instruction: str
    addresses: tuple[int | None, ...]
    wavefronts: int
    conflicts: int
    ideal: int
    phases: tuple[tuple[int, ...], ...]  # lanes of each phase as served (a merged pair is one)
    phase_wavefronts: tuple[int, ...]
    l1tex_wavefronts: int | None = None

    @property
    def replays(self) -> int:
        """Wavefronts beyond the ideal: what the conflicts cost."""
        return self.wavefronts - self.ideal

    @property
    def n_way(self) -> int:
        """The worst phase's wavefronts: an n-way conflict in the textbook sense."""
        return max(self.phase_wavefronts)

    @property
    def conflict_free(self) -> bool:
        return self.wavefronts == self.ideal

    @cached_property
    def lane_words(self) -> tuple[LaneWord, ...]:
        """Every (lane, word) the access touches with its wavefront, lanes in order."""
        spec = lookup(self.instruction)
        out: list[LaneWord] = []
        first = 0
        for lanes, count in zip(self.phases, self.phase_wavefronts):
            rank: dict[int, dict[int, int]] = {}  # bank -> word (or serial) -> rank
            for lane in lanes:
                addr = self.addresses[lane]
                assert addr is not None
                for word, lo, n in _words(addr, spec.width):
                    bank = (word // WORD) % BANKS
                    ranks = rank.setdefault(bank, {})
                    key = word if spec.words_merge else len(ranks)
                    r = ranks.setdefault(key, len(ranks))
                    out.append(LaneWord(lane, first + r, bank, word, lo, n))
            first += count
        return tuple(out)

    def summary(self) -> str:
        """One line: wavefronts against the ideal, ncu's conflicts, and the verdict."""
        state = "conflict-free" if self.conflict_free else f"{self.n_way}-way, {self.replays} replayed wavefront(s)"
        return f"{self.instruction}: {self.wavefronts} wavefronts (ideal {self.ideal}), {self.conflicts} conflicts; {state}"

    def _repr_html_(self) -> str:
        """The notebook's view: the numbers and the 32-bank picture, plain HTML."""
        return conflicts_html(self)

    def grid(self) -> list[list[tuple[int, ...]]]:
        """``grid[w][b]``: the lanes served by bank ``b`` in wavefront ``w``."""
        cells: list[list[list[int]]] = [[[] for _ in range(BANKS)] for _ in range(self.wavefronts)]
        for lw in self.lane_words:
            cell = cells[lw.wavefront][lw.bank]
            if lw.lane not in cell:
                cell.append(lw.lane)
        return [[tuple(c) for c in row] for row in cells]


# the notebook view: one hue per lane (a lane's cells read as one), replayed wavefronts in red
_HTML_CSS = (
    "<style>.smemviz-bc{overflow-x:auto;max-width:100%}"
    ".smemviz-bc .g{border-collapse:separate;border-spacing:1px;font-family:monospace;font-size:10px;line-height:14px}"
    ".smemviz-bc .g td{width:22px;padding:0;text-align:center;background:#f1f3f4}"
    ".smemviz-bc th{font-weight:normal;color:#546e7a;padding:0 4px;text-align:right}"
    ".smemviz-bc tr.r th{color:#d62728}.smemviz-bc .n td{padding:0 10px 0 0}"
    ".smemviz-bc .n span,.smemviz-bc .k{color:#546e7a}.smemviz-bc .k{font-size:11px}"
    ".smemviz-bc .t{font-size:13px;margin:2px 0 4px 0}</style>"
)


def _lane_colour(lane: int) -> str:
    return f"hsl({(lane * 360 * 7 // WARP) % 360},70%,{72 if lane % 2 else 58}%)"


def conflicts_html(access: object, *, title: str | None = None) -> str:
    """A :class:`BankConflicts` (or an access report: its worst instruction, under its own
    summary) as one HTML fragment: a table of the numbers and the grid of 32 banks by
    wavefronts, each cell numbered with the lane it serves, the wavefronts a conflict adds
    marked in red. No plotly, no script: what a notebook shows for the value."""
    from html import escape

    worst = getattr(access, "worst", access)
    if not isinstance(worst, BankConflicts):
        raise TypeError(f"expected BankConflicts or an access report, got {type(access).__name__}")
    head = title if title is not None else getattr(access, "summary", worst.summary)()
    numbers: list[tuple[str, object]] = [
        ("wavefronts", worst.wavefronts),
        ("ideal", worst.ideal),
        ("conflicts (ncu)", worst.conflicts),
        ("worst phase", f"{worst.n_way}-way"),
    ]
    if worst is not access:  # a report over many instructions: the picture is its worst one
        numbers = [
            ("instructions", getattr(access, "instructions", 1)),
            ("wavefronts", getattr(access, "wavefronts", worst.wavefronts)),
            ("ideal", getattr(access, "ideal", worst.ideal)),
            ("worst instruction", f"{worst.wavefronts} wavefronts, {worst.n_way}-way"),
        ]
    facts = "".join(f"<td><span>{escape(k)}</span> <b>{escape(str(v))}</b></td>" for k, v in numbers)
    replay: list[bool] = []
    for count in worst.phase_wavefronts:
        replay += [False] + [True] * (count - 1)
    rows = ["<tr><th></th>" + "".join(f"<th>{b}</th>" for b in range(BANKS)) + "</tr>"]
    for w, cells in enumerate(worst.grid()):
        tds = []
        for lanes in cells:
            if not lanes:
                tds.append("<td></td>")
                continue
            text = str(lanes[0]) if len(lanes) == 1 else f"{lanes[0]}+"
            tds.append(
                f'<td title="lanes {", ".join(map(str, lanes))}" style="background:{_lane_colour(lanes[0])}">{text}</td>'
            )
        label = f"w{w} replay" if replay[w] else f"w{w}"
        tr = '<tr class="r">' if replay[w] else "<tr>"
        rows.append(f"{tr}<th>{label}</th>{''.join(tds)}</tr>")
    return (
        f'{_HTML_CSS}<div class="smemviz-bc"><div class="t">{escape(head)}</div>'
        f'<table class="n"><tr>{facts}</tr></table><table class="g">{"".join(rows)}</table>'
        '<div class="k">32 banks across, one row per wavefront; each cell is the lane it serves '
        "(hover: every lane)</div></div>"
    )


def _words(addr: int, width: int) -> list[tuple[int, int, int]]:
    """The bank words ``[addr, addr + width)`` covers: (word address, first byte, bytes)."""
    if width <= WORD:
        word = addr - addr % WORD
        return [(word, addr - word, width)]
    return [(addr + k, 0, WORD) for k in range(0, width, WORD)]


def _check_addresses(spec: InstructionSpec, addresses: object) -> tuple[int | None, ...]:
    if (
        isinstance(addresses, (str, bytes, Mapping))
        or not hasattr(addresses, "__len__")
        or not hasattr(addresses, "__getitem__")
    ):
        hint = " (a mapping: give the addresses in lane order, e.g. a list)" if isinstance(addresses, Mapping) else ""
        raise TypeError(
            f"addresses must be a sequence of {WARP} byte offsets, one per lane, not {type(addresses).__name__}{hint}"
        )
    seq: Sequence[object] = addresses  # type: ignore[assignment]
    try:
        n = len(seq)
    except OverflowError:  # len() of a range past the machine's word
        raise ValueError(f"{spec.name} takes {WARP} addresses, one per lane; got far more") from None
    if n != WARP:
        raise ValueError(f"{spec.name} takes {WARP} addresses, one per lane; got {n}")
    try:
        values = [seq[lane] for lane in range(WARP)]
    except (LookupError, TypeError) as exc:
        raise TypeError(
            f"addresses must be a sequence of {WARP} byte offsets, one per lane: reading it by lane failed "
            f"({type(exc).__name__})"
        ) from None
    out: list[int | None] = []
    for lane, value in enumerate(values):
        if (
            type(value) is int
            and lane < spec.lanes
            and 0 <= value
            and value + spec.width <= _MAX_SMEM
            and not value % spec.alignment
        ):
            out.append(value)  # the common case, checked in one go
            continue
        if value is None and lane >= spec.lanes:
            out.append(None)  # a lane the instruction does not read
            continue
        if isinstance(value, bool) or isinstance(value, float):
            raise TypeError(f"lane {lane}: address {shorten(value)} is not an integer byte offset")
        try:
            addr = operator.index(value)  # type: ignore[arg-type]
        except TypeError:
            raise TypeError(f"lane {lane}: address {shorten(value)} is not an integer byte offset") from None
        if lane >= spec.lanes:
            out.append(addr)  # ignored by the instruction: not checked further
            continue
        if addr < 0:
            raise ValueError(f"lane {lane}: address {int_size(addr)} is negative")
        if addr + spec.width > _MAX_SMEM:
            raise ValueError(
                f"lane {lane}: address {int_size(addr)} (+{spec.width} B) is past the largest shared "
                f"memory of any architecture ({_MAX_SMEM} B, {_MAX_ARCH})"
            )
        if addr % spec.alignment:
            what = "row address" if spec.kind in ("ldmatrix", "stmatrix") else "address"
            raise ValueError(
                f"lane {lane}: {what} {addr} is misaligned for {spec.name}, which needs "
                f"{spec.alignment}-byte alignment ({addr % spec.alignment} B over)"
            )
        out.append(addr)
    return tuple(out)


def _phase_wavefronts(addrs: tuple[int | None, ...], lanes: range, spec: InstructionSpec) -> int:
    """Wavefronts one phase takes: the most distinct words (or lane writes) in one bank."""
    width = spec.width
    counts = [0] * BANKS
    if spec.words_merge:
        if width <= WORD:
            words = {addrs[lane] >> 2 for lane in lanes}  # type: ignore[operator]
        else:
            n = width >> 2
            words = set()
            for lane in lanes:
                first = addrs[lane] >> 2  # type: ignore[operator]
                words.update(range(first, first + n))
        for w in words:
            counts[w & 31] += 1
        return max(counts)
    for lane in lanes:
        a = addrs[lane]
        assert a is not None
        for k in range(a >> 2, (a + width + 3) >> 2):
            counts[k & 31] += 1
    return max(counts)


def _lane_pattern(addrs: tuple[int | None, ...], lanes: range) -> int:
    """1 when every lane reads what lane i^1 reads, 2 when (only) what lane i^2 reads, else 0."""
    if all(addrs[i] == addrs[i ^ 1] for i in lanes):
        return 1
    if all(addrs[i] == addrs[i ^ 2] for i in lanes):
        return 2
    return 0


def bank_conflicts(instruction: str, addresses: Sequence[int | None]) -> BankConflicts:
    """Wavefronts and bank conflicts of one warp executing ``instruction`` once.

    ``addresses`` are 32 byte offsets into shared memory, one per lane. For
    ldmatrix/stmatrix, lanes 8j..8j+7 give the row addresses of matrix j; lanes the
    instruction does not read are ignored (and may be ``None``). Raises TypeError
    or ValueError naming the lane and the limit for a bad instruction or address.
    """
    spec = lookup(instruction)
    addrs = _check_addresses(spec, addresses)
    phases: list[tuple[int, ...]] = []
    counts: list[int] = []
    ideal = 0
    step = spec.merge_lanes or spec.phase_lanes
    for start in range(0, spec.lanes, step):
        unit = range(start, start + step)
        pattern = _lane_pattern(addrs, unit) if spec.merge_lanes else 0
        if pattern and _phase_wavefronts(addrs, unit, spec) == 1:
            phases.append(tuple(unit))
            counts.append(1)
            ideal += 1
            continue
        ideal += 1 if pattern else step // spec.phase_lanes
        for s in range(start, start + step, spec.phase_lanes):
            lanes = range(s, s + spec.phase_lanes)
            phases.append(tuple(lanes))
            counts.append(_phase_wavefronts(addrs, lanes, spec))
    wavefronts = sum(counts)
    l1tex: int | None = wavefronts
    if spec.merge_lanes and _lane_pattern(addrs, range(WARP)):
        # the L1TEX serves each unit of a warp whose lanes all pair up as one phase, conflicts and all
        units = [_phase_wavefronts(addrs, range(s, s + step), spec) for s in range(0, WARP, step)]
        l1tex, conflicts = sum(units), sum(units) - len(units)
    else:
        conflicts = wavefronts - len(phases)
        if spec.merge_lanes:
            l1tex = sum(
                _phase_wavefronts(addrs, range(s, s + spec.phase_lanes), spec) for s in range(0, WARP, spec.phase_lanes)
            )
            conflicts = l1tex - WARP // spec.phase_lanes
    if spec.kind == "cp.async":
        # ncu counts a cp.async's conflicts against the warp's bytes over 128, not its phases
        conflicts = wavefronts - max(1, spec.bytes_per_warp // 128)
        l1tex = None
    return BankConflicts(spec.name, addrs, wavefronts, conflicts, ideal, tuple(phases), tuple(counts), l1tex)
