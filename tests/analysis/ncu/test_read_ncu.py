"""``smemviz.read_ncu`` without the DSL: the recorded source pages read as ncu wrote them, an
``.ncu-rep`` through a stand-in of Nsight Compute's Python interface, and the attribution rules
(call site, a call's statement over several lines, address, the one access issuing an
instruction, a WGMMA's form against the GEMM calls capture noted, a pipeline's try_wait probe,
and the reasons a row is left unattributed) on a hand-built capture."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

import smemviz
from smemviz.analysis.ncu import NcuSource, SassRow, attribute, read_ncu, read_ncu_rep, read_source_csv
from smemviz.layout.ordering._model import (
    Access,
    CallSite,
    Group,
    OrderingModel,
    Pipeline,
    PipelineOp,
    RegionSpan,
    RoleProgram,
    WarpRole,
)
from smemviz.sources.capture._ordering_hooks import GemmOperand, PipelineProbe

from ...helpers import ROOT

RECORDED = ROOT / "results" / "ncu"
MODES = ("auto", "none", "interleaved", "32B")


@pytest.mark.parametrize("mode", MODES)
def test_a_recorded_source_page_reads_as_ncu_wrote_it(mode):
    text = (RECORDED / f"ncu_gemm_c_{mode}.csv").read_text()
    src = read_source_csv(text)
    # the columns this reading relies on, named as Nsight Compute 2025.3 prints them
    for column in ("Line No", "Address", "Instructions Executed", "Address Space", "L1 Wavefronts Shared"):
        assert column in src.columns
    assert {"L1 Wavefronts Shared Ideal", "L1 Wavefronts Shared Excessive", "L1 Conflicts Shared N-Way"} <= set(
        src.columns
    )
    assert "Sm90Gemm" in src.kernel and src.origin == "csv"
    assert len({r.address for r in src.rows}) == len(src.rows) > 500
    stsm = [r for r in src.rows if r.opcode == "STSM.16.M88.4"]
    assert len(stsm) == 16 and all(r.site == "_sm90.py:385" and r.executed == 256 for r in stsm)
    per_instruction = 16 if mode == "none" else 4
    assert all(r.wavefronts == 256 * per_instruction and r.ideal == 1024 for r in stsm)
    assert all(r.excessive == r.wavefronts - r.ideal for r in stsm)
    gmma = [r for r in src.rows if r.opcode.startswith("HGMMA")]
    assert len(gmma) == 8 and sum(r.executed for r in gmma) == 16384
    assert all(r.counted_shared and r.wavefronts == r.ideal == 20 * r.executed for r in gmma)


def test_the_sass_view_without_lines_gives_the_same_rows_without_sites():
    mixed = read_source_csv((RECORDED / "ncu_gemm_c_auto.csv").read_text())
    header = '"Address","Source","Instructions Executed","Address Space","L1 Wavefronts Shared","L1 Wavefronts Shared Ideal","L1 Wavefronts Shared Excessive"'
    lines = ['"Kernel Name","k"', header]
    for r in mixed.rows:
        values = [
            hex(r.address or 0),
            r.sass,
            str(r.executed),
            r.space,
            *(str(x) for x in (r.wavefronts, r.ideal, r.excessive)),
        ]
        lines.append(",".join(f'"{v}"' for v in values))
    sass = read_source_csv("\n".join(lines) + "\n")
    assert [(r.address, r.sass, r.executed, r.wavefronts) for r in sass.rows] == [
        (r.address, r.sass, r.executed, r.wavefronts) for r in mixed.rows
    ]
    assert all(r.site is None for r in sass.rows)


def test_a_file_that_is_no_source_page_is_refused():
    with pytest.raises(ValueError, match="not an Nsight Compute source page"):
        read_source_csv('"ID","Kernel Name","Metric Name"\n"0","k","x"\n')


# -- .ncu-rep through a stand-in of ncu_report (the interface's calls, as probed on the H200) --------


class _Ids:
    def __init__(self, ids):
        self.ids = ids

    def as_uint64(self, i):
        return self.ids[i]


class _Metric:
    def __init__(self, values):
        self.values = values  # pc -> value, or a scalar

    def num_instances(self):
        return len(self.values) if isinstance(self.values, dict) else 0

    def correlation_ids(self):
        return _Ids(list(self.values))

    def as_double(self, i):
        return float(list(self.values.values())[i])

    def as_uint64(self):
        return int(self.values)


@dataclass
class _Info:
    file: str
    number: int

    def file_name(self):
        return self.file

    def line(self):
        return self.number


class _Action:
    def __init__(self, name, metrics, sass, lines):
        self._name, self.metrics, self.sass, self.lines = name, metrics, sass, lines

    def name(self):
        return self._name

    def metric_by_name(self, name):
        return _Metric(self.metrics[name]) if name in self.metrics else None

    def sass_by_pc(self, pc):
        return self.sass[pc]

    def source_info(self, pc):
        return _Info("/elsewhere/kernel.py", self.lines[pc])


class _Range:
    def __init__(self, actions):
        self.actions = actions

    def num_actions(self):
        return len(self.actions)

    def action_by_idx(self, i):
        return self.actions[i]


class _Context:
    def __init__(self, actions):
        self.ranges = [_Range(actions)]

    def num_ranges(self):
        return 1

    def range_by_idx(self, i):
        return self.ranges[i]


class _NcuReport:
    def __init__(self, action):
        self.action = action

    def load_report(self, path):
        return _Context([self.action])


def test_an_ncu_rep_reads_through_ncu_report():
    action = _Action(
        "k",
        {
            "inst_executed": {0x100: 256, 0x110: 3840, 0x120: 32},
            "memory_l1_wavefronts_shared": {0x100: 4096, 0x110: 76800},
            "memory_l1_wavefronts_shared_ideal": {0x100: 1024, 0x110: 76800},
            "launch__grid_size": 32,
        },
        {0x100: "STSM.16.M88.4 [R3], R24", 0x110: "HGMMA.64x256x16.F32 R24, gdesc[UR4], R24", 0x120: "EXIT"},
        {0x100: 12, 0x110: 9, 0x120: 2},
    )
    src = read_ncu_rep("any.ncu-rep", module=_NcuReport(action))
    assert src.grid_size == 32 and src.origin == "ncu-rep" and len(src.rows) == 3
    stsm = src.rows[0]
    assert (stsm.opcode, stsm.site, stsm.executed, stsm.wavefronts, stsm.ideal, stsm.excessive) == (
        "STSM.16.M88.4",
        "kernel.py:12",
        256,
        4096,
        1024,
        3072,
    )
    # an instruction the shared counters have no instance for reads 0, as the CSV of the same report
    # prints it (every SYNCS row of the H200's FMHA report, results/ncu_attribution.md)
    exit_row = src.rows[2]
    assert (exit_row.wavefronts, exit_row.ideal, exit_row.excessive) == (0, 0, 0) and not exit_row.counted_shared


def test_an_ncu_rep_without_shared_counters_reads_none():
    action = _Action("k", {"inst_executed": {0x100: 4}}, {0x100: "STSM.16.M88.4 [R3], R24"}, {0x100: 12})
    (row,) = read_ncu_rep("any.ncu-rep", module=_NcuReport(action)).rows
    assert (row.executed, row.wavefronts, row.ideal, row.excessive) == (4, None, None, None)


# -- attribution rules on a hand-built capture -----------------------------------------------------------


KERNEL = textwrap.dedent(
    """\
    def kernel():
        x = 1
        cute.copy(
            r2s,
            frag,
            dst,
        )
        cute.gemm(mma, acc, a, b, acc)
    """
)


@dataclass(frozen=True)
class _Record:
    site: str
    kind: str = "stmatrix"
    instruction: str | None = "stmatrix.x4"
    bits: int | None = 128
    matrices: int | None = 4
    trans: bool = False
    view: str | None = "sC"
    region: str | None = "array"
    addresses: tuple = ()
    unread: str = ""
    alternatives: int = 1


@dataclass(frozen=True)
class _Capture:
    kernel: str
    ordering: OrderingModel
    banks: tuple
    gemm_operands: tuple = ()
    probes: tuple = ()


def _stmatrix_rows(conflicting: bool) -> tuple:
    """One stmatrix.x4's 32 row addresses (lane 8m + r: matrix m, row r), 16 B a row: packed,
    each matrix is 128 contiguous bytes (one wavefront); 64 B apart, rows 0, 2, 4, 6 share banks."""
    stride = 64 if conflicting else 16
    return tuple(r * stride + m * (16 if conflicting else 128) for m in range(4) for r in range(8))


def _capture(conflicting: bool = False) -> _Capture:
    site = CallSite("kernel.py", 3)
    model = OrderingModel(
        name="k",
        regions=(RegionSpan("sC", "smem", 0, 4096), RegionSpan("sA", "smem", 4096, 8192)),
        programs=(
            RoleProgram(
                WarpRole("warp 0", 0, 1),
                (
                    Access(kind="stmatrix", region="sC", site=site),
                    Access(kind="wgmma_read", region="sA", site=CallSite("kernel.py", 8)),
                ),
            ),
        ),
    )
    addresses = _stmatrix_rows(conflicting)
    return _Capture("k", model, (_Record("kernel.py:3", addresses=(addresses, addresses)),))


def _rows(*rows: SassRow) -> NcuSource:
    return NcuSource("k", rows, "rows")


@pytest.fixture
def source_file(tmp_path):
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL)
    return path


def _stsm(line: int, file: Path, wavefronts: int, executed: int = 10) -> SassRow:
    return SassRow(0x10 + line, "STSM.16.M88.4 [R3], R24", str(file), line, executed, "Shared", "Store", "128",
                   wavefronts, 4 * executed, wavefronts - 4 * executed)  # fmt: skip


def test_a_row_on_any_line_of_a_call_is_that_call(source_file):
    cap = _capture()
    res = attribute(_rows(_stsm(3, source_file, 40), _stsm(5, source_file, 40)), cap)
    assert [r.by for r in res.rows] == ["call site", "call site"]
    assert all(r.access == "stmatrix @ kernel.py:3" and r.regions == ("sC",) for r in res.rows)
    assert all(r.agrees for r in res.rows) and res.agrees
    (totals,) = res.accesses
    # 2 records of one instruction each per CTA: CTAs inferred from the 20 executed
    assert res.ctas == 10 and totals.predicted_instructions == totals.executed == 20


def test_a_row_past_the_call_without_its_source_is_not_that_call(source_file):
    cap = _capture()
    elsewhere = source_file.with_name("gone") / "kernel.py"
    res = attribute(_rows(_stsm(5, elsewhere, 40)), cap)
    (row,) = res.rows
    # no source to read the call's lines from: the one stmatrix access still claims it, by instruction
    assert row.by == "instruction" and "ncu maps it to kernel.py:5" in row.reason


def test_a_measured_conflict_the_model_does_not_predict_is_listed(source_file):
    cap = _capture(conflicting=False)
    res = attribute(_rows(_stsm(3, source_file, 160)), cap, ctas=10)
    (row,) = res.rows
    assert row.agrees is False and row.predicted_wavefronts == 40 and row.wavefronts == 160
    assert any("STSM.16.M88.4" in d and "predicted 40/40/0" in d for d in res.disagreements)
    assert any(d.startswith("stmatrix @ kernel.py:3") for d in res.disagreements)
    assert "disagreements:\n" in res.text() and not res.to_dict()["agrees"]


def test_a_conflicting_capture_predicts_the_conflict(source_file):
    cap = _capture(conflicting=True)
    res = attribute(_rows(_stsm(3, source_file, 160)), cap, ctas=5)
    (row,) = res.rows
    assert (row.predicted_wavefronts, row.predicted_ideal, row.predicted_conflicts) == (160, 40, 120)
    assert row.agrees and res.agrees


def test_wgmma_rows_on_another_line_are_the_one_wgmma_access():
    cap = _capture()
    row = SassRow(0x200, "HGMMA.64x256x16.F32 R24, gdesc[UR4], R24", "/x/kernel.py", 1, 100, "Shared", "Load",
                  "-", 2000, 2000, 0)  # fmt: skip
    res = attribute(_rows(row), cap)
    (r,) = res.rows
    assert r.by == "instruction" and r.access == "wgmma_read @ kernel.py:8" and r.regions == ("sA",)
    # m64n256k16 f16: 2048 B of A and 8192 B of B, 80 wavefronts a warpgroup, 20 a warp
    assert (r.predicted_wavefronts, r.predicted_ideal, r.predicted_conflicts) == (2000, 2000, 0) and r.agrees


def test_a_wgmma_with_a_in_registers_reads_only_b():
    cap = _capture()
    row = SassRow(0x200, "HGMMA.64x256x16.F32.BF16 R24, R120, gdesc[UR4], R24", None, None, 4, "Shared", "Load",
                  "-", 64, 64, 0)  # fmt: skip
    (r,) = attribute(_rows(row), cap).rows
    assert r.predicted_wavefronts == 4 * 64 // 4 and "A in registers" in r.model and r.agrees


def test_an_absolute_address_names_its_region():
    cap = _capture()
    row = SassRow(0x300, "LDS.128 R4, [0x1200]", None, None, 8, "Shared", "Load", "128", 8, 8, 0)
    model = OrderingModel(
        name="k",
        regions=cap.ordering.regions,
        programs=(
            RoleProgram(
                WarpRole("warp 0", 0, 1),
                (
                    Access(kind="ld", region="sA", site=CallSite("kernel.py", 20)),
                    Access(kind="ld", region="sC", site=CallSite("kernel.py", 21)),
                ),
            ),
        ),
    )
    (r,) = attribute(_rows(row), _Capture("k", model, ())).rows
    assert r.by == "address" and r.regions == ("sA",) and r.access == "ld @ kernel.py:20"
    assert not r.modelled and r.model == "capture recorded no lane addresses for it"


def test_rows_no_captured_access_explains_are_listed_with_the_reason():
    cap = _capture()
    rows = _rows(
        SassRow(0x400, "ATOMS.ADD R0, [R2], R3", "/x/kernel.py", 30, 4, "Shared", "Atomic", "32", 4, 4, 0),
        SassRow(0x410, "LDS R0, [R2]", "/x/kernel.py", 31, 4, "Shared", "Load", "32", 4, 4, 0),
        SassRow(0x420, "IADD3 R0, R1, R2, RZ", "/x/kernel.py", 31, 4),
    )
    res = attribute(rows, cap)
    assert len(res.rows) == 2 and not res.attributed  # the IADD3 is no shared-memory row
    atoms, lds = res.rows
    assert atoms.reason == "no captured access kind issues ATOMS"
    assert lds.reason == "ncu maps it to kernel.py:31; capture recorded no ld access in this kernel"
    assert "NOT ATTRIBUTED: no captured access kind issues ATOMS" in res.text()


def test_two_candidate_accesses_leave_an_off_line_row_unattributed():
    model = OrderingModel(
        name="k",
        regions=(RegionSpan("sA", "smem", 0, 1024), RegionSpan("sB", "smem", 1024, 1024)),
        programs=(
            RoleProgram(
                WarpRole("warp 0", 0, 1),
                (
                    Access(kind="ldmatrix", region="sA", site=CallSite("kernel.py", 20)),
                    Access(kind="ldmatrix", region="sB", site=CallSite("kernel.py", 24)),
                ),
            ),
        ),
    )
    row = SassRow(0x500, "LDSM.16.M88.4 R4, [R2]", "/x/kernel.py", 2, 8, "Shared", "Load", "128", 32, 32, 0)
    (r,) = attribute(_rows(row), _Capture("k", model, ())).rows
    assert not r.attributed and "it could be any of: ldmatrix sA @ kernel.py:20; ldmatrix sB @ kernel.py:24" in r.reason


# -- a WGMMA's form (SS / RS) and the GEMM calls capture noted ------------------------------------

QK, PV = CallSite("kernel.py", 50), CallSite("kernel.py", 60)  # a helper's gemm (QK^T and P.V), P.V's own


def _attention(noted: bool = True) -> _Capture:
    """The helper at line 50 issues QK^T (A sQ, B sK from shared memory) and P.V (A in registers,
    B sV); line 60 issues P.V again. ``noted``: capture noted each call's operands and form."""
    model = OrderingModel(
        name="k",
        regions=(RegionSpan("sQ", "smem", 0, 1024), RegionSpan("sK", "smem", 1024, 1024), RegionSpan("sV", "smem", 2048, 1024)),
        programs=(
            RoleProgram(
                WarpRole("warps 0-3", 0, 4),
                (
                    Access(kind="wgmma_read", region="sQ", site=QK),
                    Access(kind="wgmma_read", region="sK", site=QK),
                    Access(kind="wgmma_read", region="sV", site=QK),
                    Access(kind="wgmma_read", region="sV", site=PV),
                ),
            ),
        ),
    )  # fmt: skip
    operands = (
        GemmOperand("wgmma_read", QK, "sQ", "A", "SS"),
        GemmOperand("wgmma_read", QK, "sK", "B", "SS"),
        GemmOperand("wgmma_read", QK, "sV", "B", "RS"),
        GemmOperand("wgmma_read", PV, "sV", "B", "RS"),
    )
    return _Capture("k", model, (), operands if noted else ())


def _hgmma(operands: str, line: int, executed: int = 4) -> SassRow:
    """An m64n128k16 f16 WGMMA row: SS reads 12 wavefronts a warp, RS 8."""
    per_warp = 12 if operands.split(",")[1].strip().startswith("gdesc") else 8
    return SassRow(0x600 + line, f"HGMMA.64x128x16.F32 {operands}", "/x/kernel.py", line, executed, "Shared", "Load",
                   "-", per_warp * executed, per_warp * executed, 0)  # fmt: skip


SS_ROW = "R24, gdesc[UR12], R24"
RS_ROW = "R88, R32, gdesc[UR20].tnspB, R88"


def test_an_ss_wgmma_off_its_line_is_the_call_reading_a_and_b_from_shared_memory():
    (r,) = attribute(_rows(_hgmma(SS_ROW, 7)), _attention()).rows
    assert (r.by, r.kind, r.regions, r.sites) == ("instruction", "wgmma_read", ("sK", "sQ"), ("kernel.py:50",))
    assert r.access == "wgmma_read SS @ kernel.py:50"  # named with its form: the site reads sV too
    assert "an SS HGMMA (A and B from shared memory) can only be a captured GEMM call of that form" in r.reason
    assert "kernel.py:50 (A sQ, B sK)" in r.reason
    assert (r.predicted_wavefronts, r.wavefronts) == (48, 48) and r.agrees


def test_an_rs_wgmma_off_its_line_is_any_call_with_a_in_registers_and_reads_b_alone():
    (r,) = attribute(_rows(_hgmma(RS_ROW, 7)), _attention()).rows
    assert (r.by, r.regions, r.sites) == ("instruction", ("sV",), ("kernel.py:50", "kernel.py:60"))
    assert r.access == "wgmma_read RS @ kernel.py:50, kernel.py:60"
    assert "kernel.py:50 (B sV), kernel.py:60 (B sV)" in r.reason and "A from registers" in r.reason
    assert (r.predicted_wavefronts, r.wavefronts) == (32, 32) and "A in registers" in r.model


def test_a_wgmma_at_a_site_of_both_forms_touches_its_forms_regions():
    res = attribute(_rows(_hgmma(RS_ROW, 50), _hgmma(SS_ROW, 50), _hgmma(RS_ROW, 60)), _attention())
    rs, ss, own = res.rows
    assert [r.by for r in res.rows] == ["call site"] * 3
    assert (rs.access, rs.regions) == ("wgmma_read RS @ kernel.py:50", ("sV",))
    assert (ss.access, ss.regions) == ("wgmma_read SS @ kernel.py:50", ("sK", "sQ"))
    # line 60 holds one form only: nothing to narrow, the access keeps its plain name
    assert (own.access, own.regions, own.reason) == ("wgmma_read @ kernel.py:60", ("sV",), "")
    assert {t.name: t.regions for t in res.regions} == {"sK+sQ": ("sK", "sQ"), "sV": ("sV",)}
    assert sum(t.rows for t in res.regions) == 3 and res.agrees


def test_without_the_calls_operands_an_off_line_wgmma_stays_ambiguous():
    (r,) = attribute(_rows(_hgmma(SS_ROW, 7)), _attention(noted=False)).rows
    assert not r.attributed
    assert "it could be any of: wgmma_read sK+sQ+sV @ kernel.py:50; wgmma_read sV @ kernel.py:60" in r.reason
    # at the call site the row is still the call's, over every region the site reads
    (r,) = attribute(_rows(_hgmma(SS_ROW, 50)), _attention(noted=False)).rows
    assert (r.by, r.access, r.regions) == ("call site", "wgmma_read @ kernel.py:50", ("sK", "sQ", "sV"))


def test_a_wgmma_of_a_form_no_captured_call_has_is_not_attributed():
    cap = _attention()
    only_rs = _Capture("k", cap.ordering, (), tuple(o for o in cap.gemm_operands if o.form == "RS"))
    # sQ and sK at line 50 have no noted role now: nothing can be told by form
    (r,) = attribute(_rows(_hgmma(SS_ROW, 7)), only_rs).rows
    assert not r.attributed and "it could be any of" in r.reason
    rs_model = OrderingModel(
        name="k",
        regions=cap.ordering.regions,
        programs=(RoleProgram(WarpRole("warps 0-3", 0, 4), (Access(kind="wgmma_read", region="sV", site=PV),)),),
    )
    rs_only = _Capture("k", rs_model, (), (GemmOperand("wgmma_read", PV, "sV", "B", "RS"),))
    (r,) = attribute(_rows(_hgmma(SS_ROW, 7)), rs_only).rows
    assert not r.attributed and r.reason.endswith(
        "an SS HGMMA (A and B from shared memory), and capture recorded no GEMM call of that form"
    )
    (r,) = attribute(_rows(_hgmma(RS_ROW, 7)), rs_only).rows
    assert (r.by, r.access, r.regions) == ("instruction", "wgmma_read @ kernel.py:60", ("sV",))


# -- a pipeline's try_wait: a probe of its barriers --------------------------------------------------


def _two_pipelines(probes: tuple = ()) -> _Capture:
    def pipeline(name: str, line: int) -> Pipeline:
        group = Group("thread", 128)
        return Pipeline(name, "tma_async", 2, Group("thread", 1), group, CallSite("kernel.py", line),
                        barrier_region=f"{name}_full_empty")  # fmt: skip

    model = OrderingModel(
        name="k",
        pipelines=(pipeline("kv", 1), pipeline("q", 2)),
        regions=(RegionSpan("storage", "smem", 0, 64),),
        programs=(
            RoleProgram(
                WarpRole("warps 0-3", 0, 4),
                (
                    PipelineOp(op="consumer_wait", pipeline="q", site=CallSite("kernel.py", 40)),
                    PipelineOp(op="consumer_wait", pipeline="kv", site=CallSite("kernel.py", 41)),
                ),
            ),
        ),
    )
    return _Capture("k", model, (), (), probes)


def test_a_try_wait_line_is_a_probe_of_its_pipelines_barriers():
    row = SassRow(0x700, "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR7+0x20], R10", "/x/kernel.py", 44, 8, "-")
    (r,) = attribute(_rows(row), _two_pipelines()).rows
    assert not r.attributed and "it could be any of: mbarrier kv barriers @ kernel.py:41" in r.reason
    probe = PipelineProbe("consumer_try_wait", "kv", CallSite("kernel.py", 44))
    (r,) = attribute(_rows(row), _two_pipelines((probe,))).rows
    assert (r.by, r.kind, r.access, r.regions) == ("call site", "mbarrier", "mbarrier @ kernel.py:44", ("kv barriers",))
    assert not r.modelled and r.model == "mbarrier operation: no bank model"
    # a probe of a pipeline the model does not hold names no barriers
    gone = PipelineProbe("consumer_try_wait", "gone", CallSite("kernel.py", 44))
    (r,) = attribute(_rows(row), _two_pipelines((gone,))).rows
    assert not r.attributed


def test_read_ncu_is_on_the_face_and_refuses_what_is_no_capture():
    assert smemviz.read_ncu is read_ncu
    with pytest.raises(TypeError, match="needs what capture recorded"):
        read_ncu(RECORDED / "ncu_gemm_c_auto.csv", object())


def test_the_result_is_frozen_and_plain_data(source_file):
    import json

    res = attribute(_rows(_stsm(3, source_file, 40)), _capture())
    with pytest.raises(AttributeError):
        res.ctas = 3  # type: ignore[misc]
    data = json.loads(json.dumps(res.to_dict()))
    assert data["rows"][0]["predicted"] == {"wavefronts": 40, "ideal": 40, "conflicts": 0}
    assert data["accesses"][0]["name"] == "stmatrix @ kernel.py:3" and data["agrees"]
