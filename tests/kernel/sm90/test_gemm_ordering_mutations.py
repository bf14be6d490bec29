"""The Hopper GEMM's test-only ordering mutations (``Sm90Gemm(layout, _test_mutation=...)``):
what the ordering check says of each from the capture (CPU), and what each does on the GPU
(``benchmarks/ordering_h200.py``; results in results/ordering_h200.md).

* ``no-epilogue-barrier``: the consumers' named barrier before the first C write over the A
  stages is dropped; the check gives ``unordered-alias`` on sC over sA; on the GPU the other
  warpgroup's stmatrix overwrites A rows a WGMMA still reads, and C comes out wrong.
* ``empty-count+1``: the empty barriers expect one arrival more than the consumer warps give;
  the check names the barrier, the phase and the wait that hangs; on the GPU the launch hangs
  and is killed.
"""

from __future__ import annotations

import importlib
import re
from argparse import Namespace

import pytest

pytest.importorskip("cutlass")

from smemviz.kernel import current_gpu  # noqa: E402
from smemviz.kernel.gemm import GemmConfig, gemm_layout  # noqa: E402

from . import ARCH  # noqa: E402

GPU = current_gpu()
needs_hopper = pytest.mark.skipif(
    GPU is None or GPU.major != 9, reason=f"needs an sm_90 GPU visible to PyTorch (here: {GPU})"
)
CONFIG = GemmConfig(alias_epilogue=True, arch=ARCH)


def _compile(mutation, capture_it=False):
    from cutlass.cutlass_dsl import CuTeDSL

    from smemviz.kernel._compile import compile_host
    from smemviz.kernel.gemm._host import _fake_operands
    from smemviz.kernel.gemm._sm90 import Sm90Gemm
    from smemviz.sources.capture import capture

    env = CuTeDSL._get_dsl().envar
    before, env.no_cache = env.no_cache, True
    try:
        kernel = Sm90Gemm(gemm_layout(CONFIG), _test_mutation=mutation)
        with capture() as cap:
            compiled = compile_host(f"gemm_mutation_{mutation}", kernel, _fake_operands(CONFIG.dtype), ARCH, key=None)
    finally:
        env.no_cache = before
    (kc,) = cap.kernels.values()
    return compiled, kc.ordering


@pytest.fixture(scope="module")
def variants():
    return {m: _compile(m) for m in (None, "no-epilogue-barrier", "empty-count+1")}


def _line(text: str) -> int:
    """The line of the Hopper GEMM's source holding ``text`` (once)."""
    sm90 = importlib.import_module("smemviz.kernel.gemm._sm90")  # smemviz.kernel.gemm is also a function's name
    with open(sm90.__file__, encoding="utf-8") as f:
        hits = [i for i, line in enumerate(f, 1) if text in line]
    assert len(hits) == 1, (text, hits)
    return hits[0]


def _counted(report):
    return [f for f in report.findings if f.severity in ("error", "warning")]


@pytest.mark.cutlass
def test_unknown_mutation_is_refused():
    from smemviz.kernel.gemm._sm90 import Sm90Gemm

    with pytest.raises(ValueError, match="unknown test mutation"):
        Sm90Gemm(gemm_layout(CONFIG), _test_mutation="drop-everything")


@pytest.mark.cutlass
def test_each_mutation_changes_the_ptx_and_off_is_the_kernel_as_shipped(variants):
    clean = variants[None][0].ptx
    assert variants["no-epilogue-barrier"][0].ptx != clean
    assert variants["empty-count+1"][0].ptx != clean
    from smemviz.kernel.gemm._host import compile_gemm

    assert compile_gemm(CONFIG).ptx == clean  # the keyword left out: the same kernel


@pytest.mark.cutlass
def test_the_kernel_as_shipped_checks_clean(variants):
    from smemviz.analysis.ordering import check_ordering

    assert not _counted(check_ordering(variants[None][1]))


@pytest.mark.cutlass
def test_dropped_epilogue_barrier_is_an_unordered_alias_of_sc_over_sa(variants):
    """One finding for the one dropped edge: sC's stmatrix against the WGMMA reading sA, naming
    the first WGMMA call site (the peeled first k-tile) and the k loop's as one more pair."""
    from smemviz.analysis.ordering import check_ordering

    found = _counted(check_ordering(variants["no-epilogue-barrier"][1]))
    assert {f.rule for f in found} == {"unordered-alias"}
    assert all(set(f.regions) == {"sA", "sC"} for f in found)
    write = f"stmatrix at _sm90.py:{_line('cute.copy(r2s, frag_out')}"
    reads = {f"wgmma_read at _sm90.py:{n}" for n in _wgmma_lines()}
    assert all(write in f.message for f in found)
    assert {m for f in found for m in re.findall(r"wgmma_read at _sm90\.py:\d+", f.message)} == reads
    assert len(found) == 1 and len(reads) == 2
    assert "and 1 more pair" in found[0].message
    assert found[0].fix.startswith("order sA's wgmma_read before sC's stmatrix")


def _wgmma_lines() -> list[int]:
    sm90 = importlib.import_module("smemviz.kernel.gemm._sm90")  # smemviz.kernel.gemm is also a function's name
    with open(sm90.__file__, encoding="utf-8") as f:
        lines = f.read().split("\n")
    return [i + 1 for i, line in enumerate(lines) if "cute.gemm(" in line]


@pytest.mark.cutlass
def test_off_by_one_empty_count_names_the_barrier_the_phase_and_the_wait(variants):
    from smemviz.analysis.ordering import check_ordering

    (finding,) = _counted(check_ordering(variants["empty-count+1"][1]))
    assert finding.rule == "mbarrier-arrive-count" and finding.regions == ("mainloop",)
    assert "stage 0's empty barrier of 'mainloop' waits phase 0" in finding.message
    assert f"_sm90.py:{_line('mainloop.producer_tail(state)')}" in finding.message
    assert "expects 9 arrivals, gets 8" in finding.message


# -- on the GPU (benchmarks/ordering_h200.py's parts, smaller) ----------------------------


@pytest.mark.gpu
@needs_hopper
def test_dropped_epilogue_barrier_gives_wrong_results_on_the_gpu():
    from benchmarks.ordering_h200 import part_alias

    (row,) = part_alias(Namespace(repeats=50, shapes=[(4096, 4096, 576)]), print)["shapes"]
    assert row["clean"]["runs_wrong"] == 0
    assert row["mutated"]["runs_wrong"] > 0  # 9 k-tiles: the last one read from stage 0, under sC
    first, last = row["mutated"]["tile_rows_hit"]
    assert 32 <= first <= last <= 63  # the A rows the other warpgroup's first C write lands on


@pytest.mark.gpu
@needs_hopper
def test_off_by_one_empty_count_hangs_and_the_gpu_is_idle_after_the_kill(tmp_path):
    from benchmarks.ordering_h200 import part_hang

    res = part_hang(Namespace(hang_s=15), tmp_path, print)
    assert res["control"]["returncode"] == 0 and not res["control"]["killed"]
    assert res["mutated"]["killed"] and res["mutated"]["last_lines"][-1] == "launched"
    assert res["after"]["returncode"] == 0 and res["after"]["last_lines"][-1].startswith("finished, 0 wrong")
