"""The bank analysis of a captured kernel with nothing declared: capture reads every SMEM
copy's atom, per-thread layout, swizzle and warps, and each lane's address as compiled.

Checked on smemviz's own Hopper GEMM, traced for sm_90a on the CPU once per C staging mode:
the captured epilogue gives the same wavefronts, ideal and conflicts per access as
``epilogue_reports`` / ``predict_epilogue`` (which read the plan's declared access), and
``lint``'s bank rule, the conflict strip and the Banks tab see it. CUTLASS's Hopper
``dense_gemm`` (when its examples are fetched) is read the same way."""

from __future__ import annotations

import pytest

pytest.importorskip("cutlass")
pytestmark = pytest.mark.cutlass

from smemviz.analysis import lint  # noqa: E402
from smemviz.analysis.banks import analyse_captured, analyse_declared, analyse_plan, conflict_strip  # noqa: E402
from smemviz.kernel._compile import compile_host  # noqa: E402
from smemviz.kernel.gemm import GemmConfig, GemmProblem, predict_epilogue  # noqa: E402
from smemviz.kernel.gemm._banks import epilogue_reports  # noqa: E402
from smemviz.kernel.gemm._host import _fake_operands, gemm_kernel  # noqa: E402
from smemviz.sources.capture import capture  # noqa: E402

from . import bank_kernels  # noqa: E402
from .cutlass_examples import EXAMPLES, examples_dir, load  # noqa: E402

ARCH = "sm_90a"
# every C staging mode the Hopper GEMM builds (docs/gemm.md): "auto" is the DSL's 64B
C_MODES = ("auto", "none", "interleaved", "32B", "64B")
CONSUMER_WARPS = tuple(range(4, 12))


@pytest.fixture(scope="module", params=C_MODES)
def captured(request):
    config = GemmConfig(arch=ARCH, c_swizzle=request.param)
    _, kernel = gemm_kernel(config)
    with capture() as cap:
        compile_host(f"banks_gemm_{request.param}", kernel, _fake_operands(config.dtype), ARCH, key=None)
    (kc,) = cap.kernels.values()
    return config, kc


def _totals(x):
    return (x.instructions, x.wavefronts, x.ideal, x.conflicts, x.n_way)


def test_every_epilogue_copy_is_read_with_its_atom_layout_and_warps(captured):
    config, kc = captured
    records = kc.banks
    subtiles = config.tile_n // config.epi_tile[1]
    assert len(records) == subtiles  # one stmatrix copy per C sub-tile, none left unread
    for e, r in enumerate(records):
        assert not r.unread, r.unread
        assert (r.kind, r.instruction, r.bits, r.trans, r.matrices) == ("stmatrix", "stmatrix.x4", 128, False, 4)
        assert "stsm" in r.atom and r.view == "sC" and r.dtype == config.out_dtype
        assert r.warps == CONSUMER_WARPS
        assert r.stage == e % config.epi_stages  # sub-tile e goes to buffer e % stages
        # the per-thread tensor at warp 4's lane 0 (the first consumer thread: the sub-tile's
        # element 0) in elements from the region's start: C staging lies at its start
        tile = config.epi_tile[0] * config.epi_tile[1]
        assert r.layout.split(" o ")[1] == str(r.stage * tile)
        (access,) = r.accesses
        assert access.region == r.region and access.warps == (8, 1) and access.stage == r.stage
        assert access.swizzle == (config.c_swizzle_mode or "none")
        assert all(len(a) == 32 for a in r.addresses)


def test_each_captured_access_gives_the_predicted_report(captured):
    """Counted from the lane addresses as compiled, and through the declared access the plan
    now carries: both equal the prediction from the GEMM's own declared access, per stage."""
    config, kc = captured
    predicted = epilogue_reports(config)
    counted = analyse_captured(kc)
    assert len(counted) == len(kc.banks)
    for totals in counted:
        want = _totals(predicted[totals.copy.stage])
        assert _totals(totals) == want
        (access,) = totals.copy.accesses
        assert _totals(analyse_declared(kc.plan, access)) == want
    distinct = [item for item in analyse_plan(kc.plan)]
    assert len(distinct) == config.epi_stages and all(item.error is None for item in distinct)


@pytest.mark.parametrize("problem", [GemmProblem(1024, 1024, 256), GemmProblem(1000, 520, 64, 2)])
def test_a_launch_totals_what_predict_epilogue_says(captured, problem):
    config, kc = captured
    launch = predict_epilogue(config, problem)
    counted = analyse_captured(kc)
    per_cta = [sum(getattr(t, key) for t in counted) for key in ("instructions", "wavefronts", "ideal", "conflicts")]
    assert [launch.ctas * n for n in per_cta] == [
        launch.instructions,
        launch.wavefronts,
        launch.ideal,
        launch.conflicts,
    ]


def test_lint_the_strip_and_the_banks_tab_see_the_captured_epilogue(captured):
    config, kc = captured
    findings = lint(kc.plan, ARCH)
    bank = [f for f in findings if f.rule == "bank-conflict"]
    assert not [f for f in findings if f.rule == "bank-access"]
    conflicted = config.c_atom == "none"  # plain rows: the 4-way epilogue
    assert bool(bank) == conflicted
    if conflicted:
        assert all("stmatrix.x4" in f.message and "4-way" in f.message for f in bank)
    (segment,) = conflict_strip(kc.plan, [item.report for item in analyse_plan(kc.plan)])
    assert (segment.wavefronts > segment.ideal) == conflicted
    pytest.importorskip("ipywidgets")
    pytest.importorskip("plotly")
    from smemviz.explorer._banks import BankView

    view = BankView()
    view.show(kc.plan)
    assert view.current is not None and view.current.region == kc.banks[0].region
    assert "stmatrix.x4" in view.title and ("4-way" in view.title) == conflicted


# -- CUTLASS's Hopper dense_gemm --------------------------------------------------------------


def _dense_gemm():
    example = EXAMPLES["hopper_dense_gemm"]
    if not (examples_dir() / example.path).exists():
        pytest.skip(
            f"CUTLASS example {example.path} not found under {examples_dir()} "
            "(set SMEMVIZ_CUTLASS_EXAMPLES to a copy of CUTLASS's examples/python/CuTeDSL)"
        )
    host, args = example.build(load(example))
    with capture() as cap:
        compile_host("banks_hopper_dense_gemm", host, args, example.arch)
    (kc,) = cap.kernels.values()
    return kc


def test_cutlass_dense_gemm_epilogue_is_read_as_compiled():
    """Its epilogue stages C in ``sC``, a 64B-swizzled view laid over the 128B-swizzled A
    stages: four warps' stmatrix.x4, conflict-free in each of the four buffers."""
    kc = _dense_gemm()
    assert kc.banks and not [r for r in kc.banks if r.unread]
    assert {(r.instruction, r.view, r.region, r.warps) for r in kc.banks} == {("stmatrix.x4", "sC", "sA", (0, 1, 2, 3))}
    assert {a.swizzle for r in kc.banks for a in r.accesses} == {"64B"}  # the view's own, not the region's 128B
    counted = analyse_captured(kc)
    assert all(t.conflict_free for t in counted)
    for t in counted:
        (access,) = t.copy.accesses
        assert _totals(analyse_declared(kc.plan, access)) == _totals(t)
    assert sorted({r.stage for r in kc.banks}) == [0, 1, 2, 3]
    assert not [f for f in lint(kc.plan, "sm_90a") if f.rule in ("bank-conflict", "bank-access")]


# -- element accesses, and a pattern no view tile gives ----------------------------------------------


@pytest.fixture(scope="module")
def column():
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_tensor

    with capture() as cap:
        cute.compile(
            bank_kernels.make(), make_fake_tensor(cutlass.Int32, (32,), stride=(1,)), options="--gpu-arch=sm_90a"
        )
    (kc,) = cap.kernels.values()
    return kc


def test_element_accesses_are_read_lane_by_lane(column):
    store, load = column.banks
    assert (store.kind, store.instruction, store.view, store.warps) == ("st", "st.shared.b32", "grid", (0,))
    assert store.addresses == (tuple(128 * lane for lane in range(32)),)
    assert load.instruction == "ld.shared.b32" and load.addresses == (tuple(4 * lane for lane in range(32)),)
    counted = {t.copy.kind: t for t in analyse_captured(column)}
    assert (counted["st"].wavefronts, counted["st"].ideal, counted["st"].n_way) == (32, 1, 32)
    assert counted["ld"].conflict_free


def test_the_captured_accesses_travel_with_the_plan_json(captured, column):
    from smemviz.layout import plan_from_json

    for plan in (captured[1].plan, column.plan):
        assert plan.accesses and plan_from_json(plan.to_json()).accesses == plan.accesses


def test_a_pattern_no_view_tile_gives_is_declared_over_its_own_addresses(column):
    """A column of a row-major tile is no tile the analysis walks; the access is declared over a
    tile laid out from the lanes' addresses, and lint warns about the 32-way store."""
    for r in column.banks:
        assert not r.unread and "laid out from the addresses" in r.note
        (access,) = r.accesses
        assert _totals(analyse_declared(column.plan, access)) == _totals(
            next(t for t in analyse_captured(column) if t.copy is r)
        )
    warned = [f for f in lint(column.plan, ARCH) if f.rule == "bank-conflict"]
    assert len(warned) == 1 and "st.shared.b32" in warned[0].message and "32-way" in warned[0].message


@pytest.mark.parametrize(
    ("atom", "kind", "instruction", "why"),
    [
        ('!cute_nvgpu.atom.stsm<f16, mode = <"(8,8)">, num_matrices = 2, t>', "stmatrix", "stmatrix.x2.trans", ""),
        (
            '!cute_nvgpu.atom.ldsm<val_type = f16, mode = <"(8,8)">, sz_pattern = u16, num_matrices = 4, n>',
            "ldmatrix",
            "ldmatrix.x4",
            "",
        ),
        ("!cute_nvgpu.atom.universal_copy<f16, 128 b>", "st", "st.shared.v4.b32", ""),
        ("!cute_nvgpu.atom.simt_async_copy<f32, cache = always, 32 b>", "cp_async", None, "cp.async.ca.4 is not"),
        ("!cute_nvgpu.atom.simt_async_copy<f16, cache = always, 128 b>", "cp_async", "cp.async.ca.16", ""),
        ("!cute_nvgpu.atom.simt_async_copy<f16, cache = global, 128 b>", "cp_async", None, "cp.async.cg.16 is not"),
        ("!cute_nvgpu.atom.universal_copy<f16, 256 b>", "ld", None, "256-bit"),
        ("!cute.tiled_copy<!cute_nvgpu.atom.universal_copy<f16>, layout_copy_tv = <...>>", "st", None, "no width"),
    ],
)
def test_a_copy_atom_names_its_instruction_or_why_it_has_none(atom, kind, instruction, why):
    from smemviz.sources.capture._bank_accesses import _atom

    read = _atom(atom, kind)
    assert read.instruction == instruction
    assert why in read.why and bool(read.why) == (instruction is None)


# -- cp.async and ldmatrix (an Ampere-style kernel, compiled for sm_80) ----------------------------


def _ampere_args():
    import cutlass
    from cutlass.cute.runtime import make_fake_tensor

    a = make_fake_tensor(cutlass.Float16, (64, 64), stride=(64, 1), assumed_align=16)
    return a, make_fake_tensor(cutlass.Float32, (128,), stride=(1,))


@pytest.fixture(scope="module")
def ampere():
    with capture() as cap:
        compiled = compile_host("banks_ampere", bank_kernels.make_ampere(), _ampere_args(), "sm_80", key=None)
    (kc,) = cap.kernels.values()
    return kc, compiled


def test_cp_async_and_ldmatrix_are_read_through_their_partitions(ampere):
    """cp.async's destination (``partition_D``) and ldmatrix's source (``partition_S``) of one
    unswizzled tile of 128-byte rows: the 16-byte copies fill each row conflict-free; ldmatrix's
    eight rows of a matrix share their banks, 8-way, and lint says a swizzle removes it."""
    kc, _ = ampere
    g2s, s2r = kc.banks
    assert (g2s.kind, g2s.instruction, g2s.bits, g2s.view, g2s.warps) == (
        "cp_async",
        "cp.async.ca.16",
        128,
        "sA",
        (0, 1, 2, 3),
    )
    assert (s2r.kind, s2r.instruction, s2r.matrices, s2r.trans) == ("ldmatrix", "ldmatrix.x4", 4, False)
    assert not g2s.unread and not s2r.unread
    counted = {t.copy.kind: t for t in analyse_captured(kc)}
    assert _totals(counted["cp_async"]) == (16, 64, 64, 0, 1)
    assert _totals(counted["ldmatrix"]) == (16, 512, 64, 448, 8)
    for t in counted.values():
        (access,) = t.copy.accesses
        assert access.layout.endswith("(64,64):(64,1)") and access.warps == (4, 1)
        assert _totals(analyse_declared(kc.plan, access)) == _totals(t)
    (warned,) = [f for f in lint(kc.plan, "sm_80") if f.rule == "bank-conflict"]
    assert "ldmatrix.x4 on 'sA' is 8-way" in warned.message and "swizzle" in (warned.fix or "")


def test_capture_leaves_the_ptx_of_the_copies_unchanged(ampere, monkeypatch):
    from cutlass.cutlass_dsl import CuTeDSL

    monkeypatch.setattr(CuTeDSL._get_dsl().envar, "no_cache", True)
    plain = compile_host("banks_ampere_plain", bank_kernels.make_ampere(), _ampere_args(), "sm_80", key=None)
    with capture() as cap:
        captured = compile_host("banks_ampere_plain", bank_kernels.make_ampere(), _ampere_args(), "sm_80", key=None)
    assert cap.kernels and next(iter(cap.kernels.values())).banks  # read
    assert captured.ptx == plain.ptx
