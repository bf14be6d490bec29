"""The recorded GPU run of the Hopper GEMM's ordering mutations (results/ordering_h200.json,
written by ``python3 -m benchmarks.ordering_h200 --out OUT`` on the H200), replayed against
what the layout predicts: where the dropped epilogue barrier lets the C staging land on A
rows a WGMMA may still read, and when that can happen at all. Pure Python, no GPU."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from smemviz.kernel.gemm import GemmConfig, gemm_layout

RECORD = Path(__file__).resolve().parents[2] / "results" / "ordering_h200.json"
CONSUMER_ROWS = 64  # each of the two consumer warpgroups computes 64 rows of the 128-row tile


@pytest.fixture(scope="module")
def record():
    return json.loads(RECORD.read_text(encoding="utf-8"))


def _predicted_rows(config: GemmConfig) -> range:
    """The A rows of stage 0 that the second warpgroup's first C write (C staging buffer 0, its
    rows 64..127) covers, among the rows the first warpgroup's WGMMA reads (0..63)."""
    layout = gemm_layout(config)
    offsets = layout.offsets()
    assert offsets["c"] == offsets["a"]  # the C staging starts on A's stage 0
    c_row = config.epi_row_bytes
    a_row = config.tile_k * config.elem_bytes
    first, end = CONSUMER_ROWS * c_row, config.tile_m * c_row  # bytes of buffer 0 the second warpgroup writes
    rows = range(first // a_row, -(-end // a_row))
    return range(max(rows.start, 0), min(rows.stop, CONSUMER_ROWS))


def test_the_dropped_barrier_corrupts_only_the_predicted_rows_and_only_when_stage_0_is_read_last(record):
    config = GemmConfig(alias_epilogue=True, arch="sm_90a")
    stages = gemm_layout(config).stages
    assert record["alias"]["stages"] == stages and record["alias"]["ptx_differs"]
    rows = _predicted_rows(config)
    assert (rows.start, rows.stop) == (32, 64)
    for shape in record["alias"]["shapes"]:
        assert shape["clean"]["runs_wrong"] == 0, shape
        hit = shape["mutated"]["tile_rows_hit"]
        last_stage_is_0 = (shape["k_tiles"] - 1) % stages == 0
        if hit:
            assert last_stage_is_0, shape  # the race needs the last k-tile in the stage sC lies over
            assert rows.start <= hit[0] <= hit[1] < rows.stop, shape
    wrong = [s for s in record["alias"]["shapes"] if s["mutated"]["runs_wrong"]]
    assert len(wrong) >= 2 and all(s["k_tiles"] > 1 for s in wrong)


def test_the_off_by_one_empty_count_hung_and_was_killed_with_the_gpu_left_idle(record):
    hang = record["hang"]
    assert hang["control"]["returncode"] == 0 and not hang["control"]["killed"]
    assert hang["mutated"]["killed"] and hang["mutated"]["last_lines"] == ["launched"]
    assert hang["mutated"]["killed_after_s"] >= hang["hang_s"]
    assert hang["after"]["last_lines"][-1] == "finished, 0 wrong elements"


def test_racecheck_and_synccheck_reported_nothing_for_either_variant(record):
    """Recorded as seen: neither tool reports the WGMMA-read / stmatrix race (the WGMMA reads
    go through the async proxy), although the racecheck run of the mutant came out wrong."""
    runs = record["sanitizer"]["runs"]
    assert set(runs) == {f"{t} {v}" for t in ("racecheck", "synccheck") for v in ("clean", "no-epilogue-barrier")}
    for run in runs.values():
        assert run["returncode"] == 0 and not run["timed_out"]
        assert any(" 0 hazards" in s or " 0 errors" in s for s in run["summary"])
    assert runs["racecheck no-epilogue-barrier"]["result"] != ["finished, 0 wrong elements"]
