"""The ``tma-descriptor`` lint rule on TMA atoms a plan carries (captured, or written by hand), and
capture's reading of the DSL's type texts into those atoms, without compiling anything."""

from __future__ import annotations

from dataclasses import replace

import pytest

from smemviz import SmemAllocation, SmemAllocator
from smemviz.analysis import lint
from smemviz.layout import plan_from_json
from smemviz.layout._tma_atom import TmaAtom
from smemviz.sources.capture._tma_atoms import atom_from_types


def _plan(*atoms: TmaAtom):
    s = SmemAllocator()
    s.add(SmemAllocation("sA", 16384, 1024, swizzle="128B"))
    s.compute_layout()
    return replace(s.plan, tma_atoms=atoms)


def _atom(**kw) -> TmaAtom:
    base = dict(
        name="tma_a",
        site="k.py:12",
        direction="load",
        data_type="float16",
        global_dims=(1024, 4096),
        global_strides=(2048,),
        box_dims=(64, 128),
        element_strides=(1, 1),
        swizzle="128B",
        region="sA",
    )
    return TmaAtom(**{**base, **kw})


def _tma(plan, arch="sm_90a"):
    return [f for f in lint(plan, arch) if f.rule == "tma-descriptor"]


def test_a_good_static_atom_gives_nothing():
    assert _tma(_plan(_atom())) == []


@pytest.mark.parametrize(
    ("change", "parameter", "words"),
    [
        ({"box_dims": (128, 128)}, "box_dims[0] = 128", "swizzle"),  # 256 B rows under a 128 B swizzle
        ({"box_dims": (64, 512)}, "box_dims[1] = 512", "1 to 256"),
        ({"global_strides": (2008,)}, "global_strides[0] = 2008", "multiple of 16"),
        ({"data_type": "16u4_align8b", "box_dims": (128, 16)}, "data_type = '16u4_align8b'", "sm_100"),
    ],
)
def test_a_broken_rule_is_an_error_naming_parameter_value_rule_and_call_site(change, parameter, words):
    found = _tma(_plan(_atom(**change)))
    errors = [f for f in found if f.severity == "error"]
    assert errors, found
    f = next(f for f in errors if parameter in f.message)
    assert words in f.message and "TMA load tma_a (k.py:12)" in f.message
    assert f.regions == ("sA",)
    assert "cuTensorMapEncodeTiled" in f.fact or "H200" in f.fact


def test_run_time_extents_are_named_and_the_rest_still_checked():
    (info,) = _tma(_plan(_atom(global_dims=(None, None), global_strides=(None,))))
    assert info.severity == "info"
    assert "global_dims[0], global_dims[1], global_strides[0] are run-time values" in info.message
    # a static box broken beside run-time extents is still an error
    found = _tma(_plan(_atom(global_dims=(None, None), global_strides=(None,), box_dims=(128, 128))))
    assert [f.severity for f in found] == ["error", "info"]


def test_an_atom_capture_could_not_read_is_an_info():
    (f,) = _tma(_plan(_atom(data_type=None, unread=("data type (f4E2M1FN, tma_format absent)",))))
    assert f.severity == "info" and "not checked" in f.message and "f4E2M1FN" in f.message


def test_the_rule_can_be_ignored_and_atoms_round_trip_through_json():
    plan = _plan(_atom(box_dims=(128, 128)))
    assert not [f for f in lint(plan, "sm_90a", ignore=("tma-descriptor",)) if f.rule == "tma-descriptor"]
    assert plan_from_json(plan.to_json()).tma_atoms == plan.tma_atoms


def test_capture_reads_static_and_run_time_values_from_the_type_texts():
    atom = atom_from_types(
        '!cute.memref<f16, gmem, align<16>, "(?,?,?):(?{i64 div=8},1,?{i64 div=8})">',
        '!cute_nvgpu.atom.non_exec_tiled_tma_load<sm_90, f16, copy_bits = 131072, tma_gbasis = <"(64,128,1):(1@1,1@0,1@2)">, tma_format = F16_RN>',
        '!cute.composed_layout<"S<3,4,3> o 0 o ((8,16),(64,1)):((64,512),(1,0))">',
        "load",
        "tma_a",
        "k.py:3",
    )
    assert atom.global_dims == (None, None, None) and atom.global_strides == (None, None)
    assert atom.box_dims == (64, 128, 1) and atom.swizzle == "128B" and atom.data_type == "float16"
    static = atom_from_types(
        '!cute.memref<bf16, gmem, "(4096,1004):(1004,1)">',
        '!x<sm_90, bf16, tma_gbasis = <"(32,64):(1@1,1@0)">, tma_format = BF16_RN>',
        '!cute.composed_layout<"S<2,4,3> o 0 o (64,32):(32,1)">',
        "store",
        "",
        None,
    )
    assert static.global_dims == (1004, 4096) and static.global_strides == (2008,)
    assert static.swizzle == "64B" and static.data_type == "bfloat16" and static.label == "(unnamed)"


def test_capture_follows_a_box_dimension_into_a_nested_global_mode():
    """The Blackwell FMHA's Q: the head and batch modes are nested, one box mode a one-mode group."""
    atom = atom_from_types(
        '!cute.memref<f16, gmem, align<16>, "(?,?{div=16},((?,?),?)):(?{div=16},1,((?{div=16},?{div=16}),?{div=16}))">',
        '!a<sm_90, f16, tma_gbasis = <"(64,128,1,1,(1)):(1@1,1@0,1@0@0@2,1@1@0@2,(1@1@2))">, tma_format = F16_RN>',
        '!cute.composed_layout<"S<3,4,3> o 0 o ((128,16),1,(4,2)):((64,1),0,(16,8192))">',
        "load",
        "tma_atom_q",
        "fmha.py:601",
    )
    assert atom.box_dims == (64, 128, 1, 1, 1) and not atom.unread and len(atom.global_strides) == 4
    with pytest.raises(ValueError, match="not one global mode"):
        atom_from_types(
            '!cute.memref<f16, gmem, "(8,8):(8,1)">', '!a<tma_gbasis = <"(8,8):(2@1,1@0)">>', "", "load", "", None
        )


LAYOUT = """
name = "declared boxes"
arch = "sm_90a"

[[smem]]
name = "sA"
dtype = "f16"
count = 16384
align = 1024
swizzle = "128B"
tma_box = [64, 128]

[[smem]]
name = "sB"
dtype = "f16"
count = 16384
align = 1024
swizzle = "64B"
tma_box = [64, 128]
"""


def test_a_layout_files_declared_box_is_checked():
    from smemviz.sources.layout_file import parse_layout_text

    smem, _ = parse_layout_text(LAYOUT, format="toml").plans()
    a, b = smem.tma_atoms
    assert (a.name, a.box_dims, a.swizzle, a.data_type, a.declared) == ("sA", (64, 128), "128B", "float16", True)
    found = _tma(smem)
    (err,) = [f for f in found if f.severity == "error"]
    # 64 f16 = 128 B rows under a 64B swizzle: box_dims[0] named, on sB
    assert err.regions == ("sB",) and "box_dims[0] = 64" in err.message and "TMA load sB (layout file)" in err.message
    infos = [f for f in found if f.severity == "info"]
    assert [f.regions for f in infos] == [("sA",), ("sB",)]
    assert all("the global tensor is not declared" in f.message for f in infos)
    assert plan_from_json(smem.to_json()).tma_atoms == smem.tma_atoms


def test_a_layout_files_box_is_read_with_its_path_in_errors():
    from smemviz.sources.layout_file import LayoutFileError, parse_layout_text

    bad = LAYOUT.replace("tma_box = [64, 128]", "tma_box = [64, 128, 1, 1, 1, 1]", 1)
    with pytest.raises(LayoutFileError, match="1 to 5 dimensions"):
        parse_layout_text(bad, format="toml")


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [("box_dims", ["64"], "not a count"), ("global_dims", "abc", "must be a list"), ("swizzle", 3, "a string")],
)
def test_a_plan_file_with_a_malformed_atom_is_refused_naming_the_key(key, value, words):
    import json

    doc = json.loads(_plan(_atom()).to_json())
    doc["tma_atoms"][0][key] = value
    with pytest.raises(ValueError, match=f"malformed layout plan: tma_atoms\\[0\\].*{words}"):
        plan_from_json(json.dumps(doc))
