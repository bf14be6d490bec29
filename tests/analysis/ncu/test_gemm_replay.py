"""The recorded Nsight Compute source pages of smemviz's Hopper GEMM (``results/ncu/``, one launch
on 1024x1024x1024 per C staging mode, ``benchmarks/ncu_source_h200.py``) replayed through
``read_ncu`` against a fresh CPU capture of the same configuration: every shared-memory SASS row
is attributed, and on every modelled row, access and region the prediction equals the count."""

from __future__ import annotations

import pytest

pytest.importorskip("cutlass")
pytestmark = pytest.mark.cutlass

from smemviz import read_ncu  # noqa: E402
from smemviz.kernel._compile import compile_host  # noqa: E402
from smemviz.kernel.gemm import GemmConfig, GemmProblem, predict_epilogue, predict_mainloop  # noqa: E402
from smemviz.kernel.gemm._host import _fake_operands, gemm_kernel  # noqa: E402
from smemviz.sources.capture import capture  # noqa: E402

from ...helpers import ROOT  # noqa: E402

ARCH = "sm_90a"
PROFILED = GemmProblem(1024, 1024, 1024)  # what benchmarks/ncu_source_h200.py launched
MODES = ("auto", "none", "interleaved", "32B")


@pytest.fixture(scope="module", params=MODES)
def replayed(request):
    config = GemmConfig(arch=ARCH, c_swizzle=request.param)
    _, kernel = gemm_kernel(config)
    with capture() as cap:
        compile_host(f"ncu_replay_{request.param}", kernel, _fake_operands(config.dtype), ARCH, key=None)
    (kc,) = cap.kernels.values()
    csv = ROOT / "results" / "ncu" / f"ncu_gemm_c_{request.param}.csv"
    return config, kc, read_ncu(csv, kc), read_ncu(csv, kc, ctas=predict_epilogue(config, PROFILED).ctas)


def test_every_shared_memory_row_is_attributed(replayed):
    _, _, res, _ = replayed
    assert res.rows and not res.unattributed, [(r.sass, r.reason) for r in res.unattributed]
    by_kind = {r.kind for r in res.rows}
    assert by_kind == {"stmatrix", "wgmma_read", "tma_load", "tma_store", "mbarrier"}
    for r in res.rows:
        if r.kind == "stmatrix":  # the copy's own line: by call site
            assert (r.by, r.access, r.regions) == ("call site", "stmatrix @ _sm90.py:385", ("sC",))
        elif r.kind == "wgmma_read":  # the DSL gives WGMMAs other lines (the @cute.jit line, loop lines)
            assert r.by == "instruction" and r.site != "_sm90.py:333" and r.regions == ("sA", "sB")
            assert r.access == "wgmma_read @ _sm90.py:333, _sm90.py:340"
        elif r.kind == "tma_load":
            assert r.by == "call site" and r.regions in (("sA",), ("sB",))
        elif r.kind == "tma_store":
            assert (r.by, r.regions) == ("call site", ("sC",))


def test_predicted_equals_measured_on_every_modelled_row(replayed):
    _, _, res, _ = replayed
    modelled = res.modelled
    assert {r.opcode.split(".")[0] for r in modelled} == {"STSM", "HGMMA"}
    assert len(modelled) == 16 + 8  # every stmatrix and every WGMMA of the kernel
    assert all(r.agrees for r in modelled), [r.to_dict() for r in modelled if not r.agrees]
    assert res.agrees and not res.disagreements
    assert "disagreements: none" in res.text()


def test_the_launch_totals_are_the_gemm_prediction(replayed):
    """Per access: CTAs x what capture recorded, which is predict_epilogue / predict_mainloop."""
    config, _, inferred, given = replayed
    epilogue = predict_epilogue(config, PROFILED)
    mainloop = predict_mainloop(config, PROFILED)
    assert inferred.ctas == given.ctas == epilogue.ctas == 32 and inferred.ctas_from.startswith("inferred")
    for res in (inferred, given):
        access = {t.name: t for t in res.accesses}
        stsm = access["stmatrix @ _sm90.py:385"]
        assert (stsm.executed, stsm.wavefronts, stsm.ideal, stsm.conflicts) == (
            epilogue.instructions,
            epilogue.wavefronts,
            epilogue.ideal,
            epilogue.wavefronts - epilogue.ideal,
        )
        assert stsm.predicted_instructions == epilogue.instructions and stsm.agrees
        gmma = access["wgmma_read @ _sm90.py:333, _sm90.py:340"]
        assert (gmma.executed, gmma.wavefronts, gmma.predicted_wavefronts) == (
            mainloop.instructions,
            mainloop.wavefronts,
            mainloop.wavefronts,
        )
        region = {t.name: t for t in res.regions}
        assert region["sC"].agrees and region["sC"].unmodelled_rows == len(
            [r for r in res.rows if r.kind == "tma_store"]
        )
        assert region["sA+sB"].agrees


def test_only_the_plain_row_major_staging_conflicts(replayed):
    config, _, res, _ = replayed
    stsm = next(t for t in res.accesses if t.name.startswith("stmatrix"))
    assert (stsm.conflicts > 0) == (config.c_swizzle == "none")
    if config.c_swizzle == "none":
        assert stsm.wavefronts == 4 * stsm.ideal  # 4-way: 16 wavefronts where 4 would do


def test_the_map_shows_each_region_as_measured_beside_predicted(replayed):
    """The overlay of the byte map: sA and sB (read by the WGMMAs) and sC (the stmatrix epilogue),
    each measured as predicted; the plain row-major staging's 4-way conflict is on sC, and the
    conflict-free staging's page against its capture flags sC."""
    from smemviz.analysis import analyse
    from smemviz.analysis.ncu._overlay import measured_segments

    config, kc, res, _ = replayed
    segs = measured_segments(res)
    assert sorted(s.region for s in segs) == ["sA", "sB", "sC"]
    assert not [s for s in segs if s.look_here]
    sc = next(s for s in segs if s.region == "sC")
    ways = "4-way" if config.c_swizzle == "none" else "conflict-free"
    assert sc.label == f"predicted {ways}, measured {ways}"
    assert analyse(kc.plan, ARCH, measured=res).measured == segs

    if config.c_swizzle == "none":  # the conflict-free staging's page against this capture: sC flagged
        other = read_ncu(ROOT / "results" / "ncu" / "ncu_gemm_c_auto.csv", kc)
        flagged = next(s for s in measured_segments(other) if s.region == "sC")
        assert (flagged.verdict, flagged.label) == ("disagrees", "measured conflict-free, predicted 4-way: look here")
