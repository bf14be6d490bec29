"""``plan_from_struct``: CuTe DSL ``@cute.struct`` shared storage read into a plan,
with the DSL's own offsets and sizes as the oracle."""

import json
import sys
import textwrap

import pytest
from hypothesis import given, settings

from smemviz import LayoutPlan, as_plan, plan_from_struct
from smemviz.cli import main
from smemviz.layout import plan_from_dict, plan_from_json

from ..strategies import StructSpec, struct_specs

cutlass = pytest.importorskip("cutlass")
cute = pytest.importorskip("cutlass.cute")
pytestmark = pytest.mark.cutlass

MemRange = cute.struct.MemRange
Align = cute.struct.Align


# -- structs shaped like CUTLASS's own GEMM shared storage ------------------------------------


def hopper_gemm_storage(stages: int = 7, tile_m: int = 128, tile_n: int = 128, tile_k: int = 64):
    """As the Hopper dense GEMM example declares it: mbarriers first, then A and B
    aligned to 1024 (fp16 operands)."""

    @cute.struct
    class SharedStorage:
        mainloop_pipeline_array_ptr: MemRange[cutlass.Int64, stages * 2]
        sA: Align[MemRange[cutlass.Float16, tile_m * tile_k * stages], 1024]
        sB: Align[MemRange[cutlass.Float16, tile_n * tile_k * stages], 1024]

    return SharedStorage


def blackwell_gemm_storage(ab_stages: int = 4, acc_stages: int = 2, epi_stages: int = 2):
    """As the Blackwell persistent dense GEMM example declares it: per-pipeline
    full/empty barriers, the TMEM dealloc barrier and slot, then C, A, B."""

    @cute.struct
    class SharedStorage:
        ab_full_mbar_ptr: MemRange[cutlass.Int64, ab_stages]
        ab_empty_mbar_ptr: MemRange[cutlass.Int64, ab_stages]
        acc_full_mbar_ptr: MemRange[cutlass.Int64, acc_stages]
        acc_empty_mbar_ptr: MemRange[cutlass.Int64, acc_stages]
        tmem_dealloc_mbar_ptr: cutlass.Int64
        tmem_holding_buf: cutlass.Int32
        sC: Align[MemRange[cutlass.BFloat16, 128 * 32 * epi_stages], 1024]
        sA: Align[MemRange[cutlass.BFloat16, 128 * 64 * ab_stages], 1024]
        sB: Align[MemRange[cutlass.BFloat16, 256 * 64 * ab_stages], 1024]

    return SharedStorage


def nested_storage():
    @cute.struct
    class Epilogue:
        sC: Align[MemRange[cutlass.Float32, 1000], 128]
        count: cutlass.Int16

    @cute.union
    class Scratch:
        reduce: MemRange[cutlass.Float32, 33]
        epi: Epilogue
        flag: cutlass.Boolean

    @cute.struct
    class SharedStorage:
        load_barrier: MemRange[cutlass.Int64, 3]
        tile: Align[MemRange[cutlass.Float16, 777], 256]
        x: cutlass.Int8
        scratch: Scratch
        epi: Align[Epilogue, 1024]
        fp4: MemRange[cutlass.Float4E2M1FN, 7]

    return SharedStorage


def dsl_leaf_offsets(dec, base: int = 0, prefix: str = "") -> dict[str, int]:
    """Every leaf's absolute offset, from the DSL's own ``_offsets`` alone."""
    out: dict[str, int] = {}
    for name, member in dec._annotations.items():
        if isinstance(member, cute.struct._AlignMeta):
            member = member.dtype
        offset = base + dec._offsets[name]
        if isinstance(member, cute.struct):
            out.update(dsl_leaf_offsets(member, offset, prefix + name + "."))
        else:
            out[prefix + name] = offset
    return out


def dsl_leaf_sizes(dec, prefix: str = "") -> dict[str, int]:
    out: dict[str, int] = {}
    for name, member in dec._annotations.items():
        if isinstance(member, cute.struct._AlignMeta):
            member = member.dtype
        if isinstance(member, cute.struct):
            out.update(dsl_leaf_sizes(member, prefix + name + "."))
        elif isinstance(member, cute.struct._MemRangeMeta):
            out[prefix + name] = member.size_in_bytes
        else:
            out[prefix + name] = max(1, member.width // 8)
    return out


def assert_matches_dsl(plan: LayoutPlan, dec) -> None:
    assert plan.total == dec.__sizeof__() == dec.size_in_bytes()
    assert plan.data_total == dec.__sizeof__()
    assert plan.base_alignment == dec.__alignof__()
    assert {r.name: r.offset for r in plan.regions} == dsl_leaf_offsets(dec)
    assert {r.name: r.size for r in plan.regions} == dsl_leaf_sizes(dec)
    for r in plan.regions:
        assert r.offset % r.alignment == 0, r
        assert r.padding_before >= 0
    assert list(plan.regions) == sorted(plan.regions, key=lambda r: (r.offset, r.index))


# -- the GEMM shapes ------------------------------------------------------------------------------


def test_hopper_gemm_storage_matches_the_dsl_and_the_known_total():
    S = hopper_gemm_storage()
    plan = plan_from_struct(S)
    assert_matches_dsl(plan, S)
    assert plan.total == 230_400  # 14 mbarriers padded to 1024, then 2 x 7 x 16 KiB
    bar = plan.region("mainloop_pipeline_array_ptr")
    assert (bar.kind, bar.offset, bar.size, bar.dtype, bar.count) == ("barrier", 0, 112, "i64", 14)
    a = plan.region("sA")
    assert (a.offset, a.padding_before, a.alignment, a.dtype, a.count) == (1024, 912, 1024, "f16", 7 * 128 * 64)
    assert plan.padding == 912
    assert plan.source == "cute.struct"
    assert plan.fits("sm_90a") and not plan.fits("sm_80")


def test_blackwell_gemm_storage_barriers_slot_and_operands():
    S = blackwell_gemm_storage()
    plan = plan_from_struct(S, arch="sm_100a")
    assert_matches_dsl(plan, S)
    kinds = {r.name: r.kind for r in plan.regions}
    assert [n for n, k in kinds.items() if k == "barrier"] == [
        "ab_full_mbar_ptr",
        "ab_empty_mbar_ptr",
        "acc_full_mbar_ptr",
        "acc_empty_mbar_ptr",
        "tmem_dealloc_mbar_ptr",
    ]
    assert kinds["tmem_holding_buf"] == "tmem_ptr"
    assert {kinds[n] for n in ("sA", "sB", "sC")} == {"data"}
    assert plan.region("tmem_holding_buf").offset == 104  # 13 mbarriers of 8 B, then the 4 B slot
    assert plan.arch == "sm_100"
    assert plan.capacity().fits


def test_nested_structs_unions_scalars_and_sub_byte_ranges():
    S = nested_storage()
    plan = plan_from_struct(S)
    assert_matches_dsl(plan, S)
    names = [r.name for r in plan.regions]
    assert "scratch.epi.sC" in names and "epi.count" in names
    # the union is one alias group; each member is a phase at the union's offset
    (group,) = plan.groups
    scratch = S._offsets["scratch"]
    assert group.offset == scratch and group.size == S._annotations["scratch"].__sizeof__()
    assert len(group.phase_sizes) == 3
    for r in plan.regions:
        if r.name.startswith("scratch."):
            assert r.group == 0
        else:
            assert r.group is None
    assert {r.name: r.phase for r in plan.regions if r.group == 0} == {
        "scratch.reduce": 0,
        "scratch.epi.sC": 1,
        "scratch.epi.count": 1,
        "scratch.flag": 2,
    }
    assert plan.region("fp4").size == 3  # the DSL's own 7 x 4 bits, rounded down
    # a union read on its own is one group of phases at 0
    union = plan_from_struct(S._annotations["scratch"])
    assert [(g.offset, g.size) for g in union.groups] == [(0, S._annotations["scratch"].__sizeof__())]
    assert [union.region(n).offset for n in ("reduce", "epi.sC", "flag")] == [0, 0, 0]
    assert union.region("epi.count").offset == 4000
    assert plan.region("load_barrier").kind == "barrier"
    assert plan.region("x").dtype == "i8"


def test_the_class_its_plain_class_and_an_instance_give_one_plan():
    S = blackwell_gemm_storage()
    by_decorated = plan_from_struct(S)
    assert plan_from_struct(S._cls) == by_decorated
    assert plan_from_struct(S._cls()) == by_decorated
    assert as_plan(S) == by_decorated


def test_an_instance_made_inside_a_traced_kernel(monkeypatch):
    monkeypatch.setenv("CUTE_DSL_ARCH", "sm_90a")
    from cutlass.memory import SmemAllocator as DslSmemAllocator

    S = hopper_gemm_storage(stages=2)
    seen: list[LayoutPlan] = []

    @cute.kernel
    def kernel():
        storage = DslSmemAllocator().allocate(S)
        seen.append(plan_from_struct(storage))

    @cute.jit
    def host():
        kernel().launch(grid=(1, 1, 1), block=(32, 1, 1), smem=S.size_in_bytes())

    cute.compile(host)
    assert seen and seen[0] == plan_from_struct(S)


def test_names_the_struct_cannot_say():
    S = hopper_gemm_storage()
    plan = plan_from_struct(S, swizzle={"sA": "128B", "sB": "128B"}, stages={"sA": 7, "sB": 7}, tma=["sA"])
    a = plan.region("sA")
    assert (a.swizzle, a.stages, a.tma) == ("128B", 7, True)
    assert plan.region("sB").tma is None
    back = plan_from_json(plan.to_json())
    assert back == plan


def test_explicit_barrier_and_slot_names_override_the_naming_convention():
    @cute.struct
    class Storage:
        sync_words: MemRange[cutlass.Int64, 4]
        slot: cutlass.Int32
        mbar_lookalike: MemRange[cutlass.Int64, 2]

    plan = plan_from_struct(Storage, barriers=["sync_words"], tmem_ptr="slot")
    assert {r.name: r.kind for r in plan.regions} == {
        "sync_words": "barrier",
        "slot": "tmem_ptr",
        "mbar_lookalike": "data",
    }
    default = plan_from_struct(Storage)
    assert {r.name: r.kind for r in default.regions} == {
        "sync_words": "data",
        "slot": "data",
        "mbar_lookalike": "barrier",
    }


def test_refusals_name_the_problem():
    S = hopper_gemm_storage()
    with pytest.raises(TypeError, match="expected a @cute.struct"):
        plan_from_struct(object())
    with pytest.raises(KeyError, match="no field 'sZ'"):
        plan_from_struct(S, swizzle={"sZ": "128B"})
    with pytest.raises(ValueError, match="swizzle must be one of"):
        plan_from_struct(S, swizzle={"sA": "256B"})
    with pytest.raises(ValueError, match="stages must be a positive int"):
        plan_from_struct(S, stages={"sA": 0})
    with pytest.raises(TypeError, match="collection of field names"):
        plan_from_struct(S, tma="sA")


@settings(max_examples=60)
@given(struct_specs())
def test_random_structs_match_the_dsl(spec: StructSpec):
    S = build_struct(spec, "Random")
    plan = plan_from_struct(S)
    assert_matches_dsl(plan, S)
    # outside unions no two regions share a byte
    standalone = sorted((r.offset, r.end) for r in plan.regions if r.group is None and r.size)
    for (_, end), (start, _) in zip(standalone, standalone[1:]):
        assert end <= start
    assert 0 <= plan.padding <= plan.total
    # the strict plan reader takes it back unchanged: a struct's layout is one a plan may hold
    assert plan_from_json(plan.to_json()) == plan


def build_struct(spec: StructSpec, name: str):
    annotations = {}
    for i, f in enumerate(spec.fields):
        if f.kind == "struct":
            assert f.struct is not None
            member = build_struct(f.struct, f"{name}_{i}")
        elif f.kind == "range":
            member = MemRange[getattr(cutlass, f.dtype), f.count]
        else:
            member = getattr(cutlass, f.dtype)
        if f.align is not None:
            member = Align[member, f.align]
        annotations[f"f{i}"] = member
    cls = type(name, (), {"__annotations__": annotations})
    return (cute.union if spec.union else cute.struct)(cls)


# -- wherever a plan works ---------------------------------------------------------------------------


def test_figures_exports_and_capacity_read_a_struct_plan(tmp_path):
    pytest.importorskip("plotly")
    from smemviz import export
    from smemviz.figures import smem_figure

    S = hopper_gemm_storage()
    fig = smem_figure(S, arch="sm_90a")
    assert fig.layout.title.text.startswith("SMEM layout: 230,400 B (225 KiB) of 232,448 B (227 KiB) on sm_90")
    bars = [t for t in fig.data if t.name == "mbarrier" or "barrier" in (t.name or "")]
    assert bars, [t.name for t in fig.data]
    out = export(S, tmp_path / "s.json", arch="sm_90a")
    doc = json.loads(out.read_text())
    assert doc["source"] == "cute.struct" and doc["summary"]["unified"] == 230_400
    assert plan_from_dict(doc) == plan_from_struct(S, arch="sm_90")
    md = export(S, tmp_path / "s.md", arch="sm_90a").read_text()
    assert "| mainloop_pipeline_array_ptr | mbarriers | 0 |" in md


@pytest.fixture
def storage_module(tmp_path, monkeypatch):
    (tmp_path / "my_kernel_storage.py").write_text(
        textwrap.dedent("""
        import cutlass
        import cutlass.cute as cute

        @cute.struct
        class Storage:
            mainloop_pipeline_array_ptr: cute.struct.MemRange[cutlass.Int64, 14]
            sA: cute.struct.Align[cute.struct.MemRange[cutlass.Float16, 7 * 128 * 64], 1024]
            sB: cute.struct.Align[cute.struct.MemRange[cutlass.Float16, 7 * 128 * 64], 1024]

        def make(stages=8):
            @cute.struct
            class Big:
                bars: cute.struct.MemRange[cutlass.Int64, 2 * stages]
                sA: cute.struct.Align[cute.struct.MemRange[cutlass.Float16, stages * 128 * 64], 1024]
                sB: cute.struct.Align[cute.struct.MemRange[cutlass.Float16, stages * 128 * 64], 1024]
            return Big
    """)
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CUTE_DSL_ARCH", raising=False)
    yield "my_kernel_storage"
    sys.modules.pop("my_kernel_storage", None)


def test_cli_check_and_report_a_struct(storage_module, capsys):
    assert main(["check", f"{storage_module}:Storage", "--arch", "sm_90a"]) == 0
    out = capsys.readouterr().out
    assert "needs 230,400 B: fits the sm_90" in out
    assert "1 CTA/SM" in out
    assert main(["check", f"{storage_module}:make", "--arch", "sm_90a"]) == 1  # 8 stages: over
    assert "exceeds the sm_90 per-block limit" in capsys.readouterr().err
    assert main(["report", f"{storage_module}:Storage"]) == 0
    assert "mainloop_pipeline_array_ptr [mbarrier]" in capsys.readouterr().out


def test_cli_render_a_struct(storage_module, tmp_path, capsys):
    out = tmp_path / "s.json"
    assert main(["render", f"{storage_module}:Storage", "-o", str(out)]) == 0
    assert json.loads(out.read_text())["data_total"] == 230_400


def test_cli_bad_python_targets_exit_2(storage_module, capsys):
    assert main(["check", "no_such_module_xyz:Storage", "--arch", "sm_90"]) == 2
    assert "cannot import 'no_such_module_xyz'" in capsys.readouterr().err
    assert main(["check", f"{storage_module}:Nope", "--arch", "sm_90"]) == 2
    assert "has no attribute 'Nope'" in capsys.readouterr().err


def test_the_explorer_takes_a_struct_or_a_builder_that_returns_one():
    pytest.importorskip("ipywidgets")
    from smemviz import explore

    ex = explore(hopper_gemm_storage(), arch="sm_90a")
    assert ex.smem_plan is not None and ex.smem_plan.total == 230_400
    grown = explore(lambda stages=4: hopper_gemm_storage(stages=stages), arch="sm_90a", stages=(2, 8))
    assert grown.smem_plan is not None
    assert grown.smem_plan.total == plan_from_struct(hopper_gemm_storage(stages=4)).total
