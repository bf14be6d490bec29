"""The bank model against every H200 measurement of the smemviz GEMM on record
(results/bank_gemm_h200.json, from benchmarks/bank_gemm_h200.py): the epilogue's stmatrix
and the mainloop's WGMMA reads, per launch and per SASS instruction, must agree exactly."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from smemviz.kernel.gemm import GemmConfig, GemmProblem, predict_epilogue, predict_mainloop

RESULTS = Path(__file__).resolve().parents[3] / "results"
RECORD = json.loads((RESULTS / "bank_gemm_h200.json").read_text())
MEASURED = {m["variant"]: m for m in RECORD["measured"]}
PROBLEM = GemmProblem(*RECORD["profiled_problem"])
CASES = [(p, MEASURED[p["variant"]]) for p in RECORD["predicted"]]


def _config(recorded: dict) -> GemmConfig:
    return GemmConfig(**recorded["config"])


def test_the_record_covers_both_accesses_and_every_layout_mode():
    assert "H200" in RECORD["gpu"] and len(CASES) == len(RECORD["predicted"]) >= 14
    modes = {(p["config"]["ab_swizzle"], p["config"]["c_swizzle"]) for p, _ in CASES}
    assert {c for _, c in modes} >= {"auto", "none", "interleaved", "32B"}
    assert {a for a, _ in modes} >= {"auto", "interleaved", "32B", "64B"}
    assert all(c["passed"] for c in RECORD["checks"]) and len(RECORD["checks"]) == len(CASES)
    # at least one recorded launch conflicts, so agreement is not agreement on zero
    assert any(m["smsp__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_stsm.sum"] > 0 for _, m in CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]['family']} {c[0]['name']}".replace(" ", "-"))
def test_stmatrix_epilogue_as_measured(case):
    recorded, measured = case
    p = predict_epilogue(_config(recorded), PROBLEM)
    assert p.instructions == measured["smsp__sass_inst_executed_op_shared_stsm.sum"]
    assert p.wavefronts == measured["smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_stsm.sum"]
    assert p.conflicts == measured["smsp__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_stsm.sum"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]['family']} {c[0]['name']}".replace(" ", "-"))
def test_wgmma_operand_reads_as_measured(case):
    recorded, measured = case
    p = predict_mainloop(_config(recorded), PROBLEM)
    assert p.instructions == measured["smsp__sass_inst_executed_op_shared_gmma.sum"]
    assert p.wavefronts == measured["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum"]
    assert p.bytes == measured["smsp__sass_data_bytes_mem_shared_op_gmma.sum"]
    assert p.conflicts == measured["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma.sum"]


def test_every_sass_instruction_as_measured():
    from smemviz.analysis.banks import wgmma_reads
    from smemviz.kernel.gemm import epilogue_reports

    by_variant = {p["variant"]: p for p in RECORD["predicted"]}
    rows = list(csv.DictReader((RESULTS / "bank_gemm_h200_sass.csv").open()))
    stsm = [r for r in rows if r["sass"].startswith("STSM")]
    gmma = [r for r in rows if r["sass"].startswith("HGMMA")]
    assert stsm and gmma
    for r in stsm:  # one STSM.16.M88.4 per warp per executed stmatrix.x4; per-instruction wavefronts
        config = _config(by_variant[int(r["variant"])])
        per_instruction = {rep.wavefronts_per_instruction for rep in epilogue_reports(config)}
        assert per_instruction == {int(r["wavefronts"]) / int(r["executed"])}, r
    for r in gmma:  # ncu puts a quarter of the warpgroup instruction's wavefronts on each warp
        config = _config(by_variant[int(r["variant"])])
        reads = wgmma_reads(config.tile_n, config.dtype, layout=config.ab_atom)
        assert reads.wavefronts_per_warp == int(r["wavefronts"]) / int(r["executed"]), r
        assert int(r["wavefronts"]) == int(r["ideal"])


def test_the_results_file_shows_the_record():
    import importlib.util

    path = RESULTS.parent / "benchmarks" / "bank_gemm_h200.py"
    spec = importlib.util.spec_from_file_location("bank_gemm_h200", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rows = list(csv.DictReader((RESULTS / "bank_gemm_h200_sass.csv").open()))
    shown = (RESULTS / "bank_gemm_h200.md").read_text()
    for line in module.markdown_tables(RECORD, rows).splitlines():
        assert line in shown, line
