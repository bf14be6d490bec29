"""TMA atoms as capture records them, and the ``tma-descriptor`` lint rule on them: smemviz's
Hopper GEMM (traced for sm_90a on the CPU) passes with its run-time extents named; a small kernel
whose global rows are 2,008 B apart fails, naming ``global_strides[0]``; recording changes no PTX."""

from __future__ import annotations

import pytest

pytest.importorskip("cutlass")
pytestmark = pytest.mark.cutlass

import cutlass  # noqa: E402
import cutlass.cute as cute  # noqa: E402
from cutlass.cute.nvgpu import cpasync  # noqa: E402
from cutlass.memory import SmemAllocator  # noqa: E402

from smemviz.analysis import lint  # noqa: E402
from smemviz.kernel._compile import compile_host  # noqa: E402
from smemviz.kernel.gemm import GemmConfig  # noqa: E402
from smemviz.kernel.gemm._host import _fake_operands, gemm_kernel  # noqa: E402
from smemviz.layout import plan_from_json  # noqa: E402
from smemviz.sources.capture import capture  # noqa: E402

ARCH = "sm_90a"


def _tile_loader(tile_rows: int):
    """A host function that builds one TMA load of a (tile_rows, 64) fp16 tile, 128B-swizzled."""

    @cute.kernel
    def kernel(tma: cute.CopyAtom, g: cute.Tensor, layout: cute.ComposedLayout):
        smem = SmemAllocator()
        smem.allocate_tensor(cutlass.Float16, layout, 1024)
        cpasync.prefetch_descriptor(tma)

    @cute.jit
    def host(a: cute.Tensor):
        kind = cute.nvgpu.warpgroup.SmemLayoutAtomKind.K_SW128
        atom = cute.nvgpu.warpgroup.make_smem_layout_atom(kind, cutlass.Float16)
        layout = cute.tile_to_shape(atom, (tile_rows, 64), order=(0, 1))
        tma_a, g = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), a, layout, (tile_rows, 64))
        kernel(tma_a, g, layout).launch(grid=(1, 1, 1), block=(32, 1, 1))

    return host


def _rows(cols: int):
    return cute.runtime.make_fake_tensor(cutlass.Float16, (4096, cols), stride=(cols, 1), assumed_align=16)


def _captured(name: str, host, args):
    with capture(arch=ARCH) as cap:
        compiled = compile_host(name, host, args, ARCH)
    (kc,) = cap.kernels.values()
    return kc, compiled


@pytest.fixture(scope="module")
def gemm():
    config = GemmConfig(arch=ARCH)
    _, kernel = gemm_kernel(config)
    kc, _ = _captured("tma_atoms_gemm", kernel, _fake_operands(config.dtype))
    return kc


@pytest.fixture(scope="module")
def bad():
    return _captured("tma_atoms_bad_stride", _tile_loader(128), (_rows(1004),))


def test_the_gemm_records_its_three_atoms_as_built(gemm):
    a, b, c = gemm.plan.tma_atoms
    assert [t.direction for t in (a, b, c)] == ["load", "load", "store"]
    assert [t.name for t in (a, b, c)] == ["tma_a", "tma_b", "tma_c"]
    # the regions their copies fill and read, from the kernel's ordering model
    assert [t.region for t in (a, b, c)] == ["sA", "sB", "sC"]
    assert all(t.site and t.site.startswith("_sm90.py:") for t in (a, b, c))
    assert a.box_dims == (64, 128, 1) and a.swizzle == "128B" and a.data_type == "float16"
    assert b.box_dims[0] == 64 and b.swizzle == "128B"
    assert c.swizzle in ("none", "32B", "64B", "128B") and c.data_type == "float16"
    # M, N, K, L and the leading dimensions are symbolic: run-time, and named so
    assert a.runtime == ("global_dims[0]", "global_dims[1]", "global_dims[2]", "global_strides[0]", "global_strides[1]")


def test_the_gemm_passes_with_its_run_time_extents_named(gemm):
    found = [f for f in lint(gemm.plan, ARCH) if f.rule == "tma-descriptor"]
    assert [f.severity for f in found] == ["info"] * 3
    assert [f.regions for f in found] == [("sA",), ("sB",), ("sC",)]  # marked on those regions
    assert all("global_dims[0]" in f.message and "run-time values, not checked" in f.message for f in found)
    assert "box [64, 128, 1], swizzle 128B and data type float16 were, and pass" in found[0].message


def test_a_row_stride_off_16_bytes_fails_naming_the_parameter(bad):
    kc, _ = bad
    (atom,) = kc.plan.tma_atoms
    assert atom.global_dims == (1004, 4096) and atom.global_strides == (2008,) and not atom.runtime
    (f,) = [f for f in lint(kc.plan, ARCH) if f.rule == "tma-descriptor"]
    assert f.severity == "error"
    assert "TMA load tma_a (test_tma_atoms.py:" in f.message  # the call site
    assert "global_strides[0] = 2008: each byte stride must be a multiple of 16" in f.message
    assert "pad the global tensor" in f.fix and "cuTensorMapEncodeTiled" in f.fact


def test_a_good_static_stride_passes():
    kc, _ = _captured("tma_atoms_good_stride", _tile_loader(128), (_rows(1024),))
    (atom,) = kc.plan.tma_atoms
    assert atom.global_strides == (2048,)
    assert not [f for f in lint(kc.plan, ARCH) if f.rule == "tma-descriptor"]


def test_the_atoms_travel_in_the_plans_json(gemm, bad):
    for plan in (gemm.plan, bad[0].plan):
        assert plan_from_json(plan.to_json()).tma_atoms == plan.tma_atoms


def test_recording_changes_no_ptx(bad, monkeypatch):
    from cutlass.cutlass_dsl import CuTeDSL

    monkeypatch.setattr(CuTeDSL._get_dsl().envar, "no_cache", True)
    plain = compile_host("tma_atoms_bad_stride_plain", _tile_loader(128), (_rows(1004),), ARCH)
    assert plain.ptx == bad[1].ptx and "prefetch.tensormap" in plain.ptx
