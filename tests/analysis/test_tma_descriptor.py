"""check_tma_descriptor: each rule of cuTensorMapEncodeTiled on both sides of its edge.

The documented rules come from the CUDA driver API's description of the call; the measured ones
from the H200 driver's answers (results/tma_descriptor_h200.md). The replay of every recorded
answer is in test_tma_descriptor_replay.py.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from smemviz.analysis.tma import TmaDescriptorCheck, TmaProblem, check_tma_descriptor
from smemviz.analysis.tma._enums import DATA_TYPES, ELEMENT_BITS, SWIZZLES
from smemviz.analysis.tma._rules import DOCUMENTED, MEASURED, UNENFORCED

# a GEMM operand tile the driver encodes: fp16, 4096 x 4096, 64 x 64 box, 128B swizzle
BASE = {
    "data_type": "float16",
    "global_dims": (4096, 4096),
    "global_strides": (8192,),
    "box_dims": (64, 64),
    "swizzle": "128B",
}


def check(**changes: object) -> TmaDescriptorCheck:
    return check_tma_descriptor(**{**BASE, **changes})  # type: ignore[arg-type]


def broken(**changes: object) -> list[tuple[str, str]]:
    """(parameter, source) of each problem the changed descriptor has."""
    return [(p.parameter, p.source) for p in check(**changes).problems]


def test_a_well_formed_descriptor_is_ok_and_says_so():
    result = check()
    assert result.ok and result.problems == () and result.notes == () and result.lines() == []
    assert result.arch == "sm_90" and result.descriptor.rank == 2
    assert result.descriptor.element_strides == (1, 1)  # None means all ones, as the driver is handed
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.problems = ()  # type: ignore[misc]


def test_a_problem_names_the_parameter_the_value_and_the_rule():
    result = check(global_strides=(8200,))
    assert not result.ok and len(result) == 1
    (problem,) = result
    assert problem == TmaProblem("global_strides[0]", 8200, "each byte stride must be a multiple of 16", DOCUMENTED)
    assert str(problem) == "global_strides[0] = 8200: each byte stride must be a multiple of 16"
    assert result.lines() == [f"error: {problem}"]


def test_rank_one_to_five_and_interleave_needs_three():
    for rank in range(1, 6):
        dims = (64,) * rank
        strides = tuple(128 * 64**i for i in range(rank - 1))
        assert check(global_dims=dims, global_strides=strides, box_dims=(64,) + (2,) * (rank - 1)).ok, rank
    six = check(global_dims=(64,) * 6, global_strides=(128,) * 5, box_dims=(8,) * 6, swizzle="none")
    assert ("global_dims", DOCUMENTED) in [(p.parameter, p.source) for p in six.problems]
    assert broken(interleave="16B", swizzle="none") == [("interleave", DOCUMENTED)]
    rank3 = {"global_dims": (64, 64, 64), "global_strides": (128, 8192), "box_dims": (64, 8, 8), "swizzle": "none"}
    assert check(interleave="16B", **rank3).ok


def test_global_dims_from_one_to_two_to_the_32():
    assert check(global_dims=(1, 4096), global_strides=(16,), box_dims=(8, 64), swizzle="none").ok
    assert check(global_dims=(2**32, 4096)).ok
    assert broken(global_dims=(2**32 + 1, 4096)) == [("global_dims[0]", DOCUMENTED)]
    assert broken(global_dims=(4096, 0)) == [("global_dims[1]", DOCUMENTED)]


def test_global_strides_multiple_of_16_and_below_2_to_the_40():
    assert check(global_strides=(8192 + 16,)).ok
    assert broken(global_strides=(8192 + 8,)) == [("global_strides[0]", DOCUMENTED)]
    assert check(global_strides=(2**40 - 16,)).ok
    assert broken(global_strides=(2**40,)) == [("global_strides[0]", DOCUMENTED)]
    # interleave "32B" asks for strides that are multiples of 32
    rank3 = {"global_dims": (64, 64, 64), "box_dims": (64, 8, 8), "interleave": "32B", "swizzle": "32B"}
    assert check(global_strides=(128, 8192), **rank3).ok
    assert broken(global_strides=(144, 8192), **rank3) == [("global_strides[0]", DOCUMENTED)]


def test_box_dims_from_one_to_256_and_whole_16_byte_rows():
    assert check(box_dims=(64, 256)).ok
    assert broken(box_dims=(64, 257)) == [("box_dims[1]", DOCUMENTED)]
    assert broken(box_dims=(64, 0)) == [("box_dims[1]", DOCUMENTED)]
    assert check(box_dims=(8, 64), swizzle="none").ok  # 16 B rows
    assert broken(box_dims=(12, 64), swizzle="none") == [("box_dims[0]", DOCUMENTED)]  # 24 B rows
    # the driver asks for whole 16-byte rows under interleave too, which the documentation does not say
    rank3 = {"global_dims": (64, 64, 64), "global_strides": (128, 8192), "interleave": "16B", "swizzle": "none"}
    assert check(box_dims=(24, 8, 8), **rank3).ok  # 48 B
    assert broken(box_dims=(20, 8, 8), **rank3) == [("box_dims[0]", MEASURED)]  # 40 B


def test_the_box_inner_bytes_fit_the_swizzle_span():
    spans = {"32B": 32, "64B": 64, "128B": 128}
    for swizzle, span in spans.items():
        fits = span // 2  # fp16 elements in one span
        assert check(box_dims=(fits, 64), swizzle=swizzle).ok, swizzle
        assert broken(box_dims=(fits + 8, 64), swizzle=swizzle) == [("box_dims[0]", DOCUMENTED)], swizzle
    assert check(box_dims=(256, 64), swizzle="none").ok  # no swizzle, no span
    message = check(box_dims=(128, 64), swizzle="64B").problems[0].rule
    assert message == "the box's inner bytes (256) exceed the 64 B span of swizzle '64B'"
    # interleaved boxes are not held to the span
    rank3 = {"global_dims": (256, 64, 64), "global_strides": (512, 32768), "interleave": "16B"}
    assert check(box_dims=(128, 8, 8), swizzle="64B", **rank3).ok


def test_element_strides_from_one_to_eight():
    assert check(element_strides=(1, 8)).ok
    assert broken(element_strides=(1, 9)) == [("element_strides[1]", DOCUMENTED)]
    assert broken(element_strides=(0, 1)) == [("element_strides[0]", DOCUMENTED)]


def test_global_address_alignment_and_its_measured_ceiling():
    assert check(global_address=0).ok  # the driver encodes a null address
    assert check(global_address=0x7F00_0000_0010).ok
    assert broken(global_address=0x7F00_0000_0008) == [("global_address", DOCUMENTED)]
    rank3 = {"global_dims": (64, 64, 64), "global_strides": (128, 8192), "box_dims": (64, 8, 8)}
    assert check(global_address=32, interleave="32B", swizzle="32B", **rank3).ok
    assert broken(global_address=48, interleave="32B", swizzle="32B", **rank3) == [("global_address", DOCUMENTED)]
    assert check(global_address=2**57 - 16).ok
    assert broken(global_address=2**57) == [("global_address", MEASURED)]


def test_nan_fill_only_for_floating_point_types():
    floats = {"float16", "float32", "float64", "bfloat16", "float32_ftz", "tfloat32", "tfloat32_ftz"}
    for data_type in DATA_TYPES:
        if data_type.startswith("16u"):
            continue
        elements = 16 * 8 // ELEMENT_BITS[data_type]  # one 16-byte row
        result = check(data_type=data_type, box_dims=(elements, 8), swizzle="none", oob_fill="nan_request_zero_fma")
        assert result.ok == (data_type in floats), data_type


def test_l2_promotion_is_free():
    assert all(check(l2_promotion=size).ok for size in ("none", "64B", "128B", "256B"))


def test_hopper_refuses_what_only_blackwell_has():
    for swizzle in ("128B_atom_32B", "128B_atom_32B_flip_8B", "128B_atom_64B"):
        assert broken(swizzle=swizzle) == [("swizzle", MEASURED)], swizzle
        assert check(swizzle=swizzle, arch="sm_100a").ok, swizzle
    packed = {"data_type": "16u4_align16b", "global_dims": (256, 64), "global_strides": (256,), "box_dims": (128, 8)}
    assert broken(**packed) == [("data_type", MEASURED)]
    assert check(arch="sm_100a", **packed).ok
    assert ("arch", DOCUMENTED) in [(p.parameter, p.source) for p in check(arch="sm_80").problems]


def test_packed_types_by_the_documentation_on_blackwell():
    def packed(**changes: object) -> list[str]:
        args: dict[str, object] = {
            "data_type": "16u6_align16b",
            "global_dims": (256, 64),
            "global_strides": (256,),
            "box_dims": (128, 8),
        }
        args.update(changes)
        return [p.parameter for p in check_tma_descriptor(**args, arch="sm_100a").problems]  # type: ignore[arg-type]

    assert packed() == []
    assert packed(global_dims=(192, 64)) == ["global_dims[0]"]  # a multiple of 128 values
    assert packed(box_dims=(64, 8)) == ["box_dims[0]"]  # exactly 128 values
    assert packed(global_strides=(272,)) == ["global_strides[0]"]  # a multiple of 32 bytes
    assert packed(global_address=16) == ["global_address"]  # 32-byte aligned
    assert packed(swizzle="128B_atom_32B_flip_8B") == ["swizzle"]  # not among 16u6's swizzles
    assert packed(swizzle="128B_atom_64B") == []  # is (stores only)
    assert packed(oob_fill="nan_request_zero_fma") == ["oob_fill"]
    assert packed(data_type="16u4_align8b", global_dims=(255, 64), box_dims=(64, 8)) == ["global_dims[0]"]


def test_the_box_must_fit_shared_memory_counted_as_the_driver_counts_it():
    rank5 = {"data_type": "uint8", "global_dims": (256,) * 5, "swizzle": "none"}
    rank5["global_strides"] = (256, 256**2, 256**3, 256**4)
    assert check(box_dims=(16, 16, 16, 16, 16), element_strides=(1, 1, 1, 1, 8), **rank5).ok  # 128 KiB counted
    over = check(box_dims=(16, 16, 16, 16, 16), **rank5)  # 1 MiB
    assert [(p.parameter, p.source) for p in over.problems] == [("box_dims", MEASURED)]
    assert "1048576 B" in over.problems[0].rule and "232448 B" in over.problems[0].rule
    # a box narrower than its element stride counts as empty, so it passes
    assert check(box_dims=(16, 16, 16, 16, 4), element_strides=(1, 1, 1, 1, 8), **rank5).ok
    # the first stride counts too, though TMA ignores it without interleave
    assert check(box_dims=(64, 8, 8, 8, 8), element_strides=(8, 1, 1, 1, 1), **rank5).ok
    assert not check(box_dims=(64, 8, 8, 8, 8), **rank5).ok


def test_notes_carry_what_the_documentation_asks_and_the_driver_lets_pass():
    rank3 = {"global_dims": (64, 64, 64), "global_strides": (128, 8192), "box_dims": (64, 8, 8)}
    unpaired = check(interleave="32B", swizzle="none", **rank3)
    assert unpaired.ok and [(n.parameter, n.source) for n in unpaired.notes] == [("swizzle", UNENFORCED)]
    overlapping = check(global_strides=(4096,))  # rows of 8192 B, 4096 B apart
    assert overlapping.ok and [n.parameter for n in overlapping.notes] == ["global_strides[0]"]
    assert overlapping.lines()[0].startswith("note: global_strides[0] = 4096")
    ignored = check(element_strides=(2, 1))
    assert ignored.ok and [n.parameter for n in ignored.notes] == ["element_strides[0]"]


@pytest.mark.parametrize(
    ("changes", "error", "names"),
    [
        ({"data_type": "fp16"}, ValueError, "data_type"),
        ({"data_type": 6}, TypeError, "data_type"),
        ({"swizzle": "256B"}, ValueError, "swizzle"),
        ({"interleave": None}, TypeError, "interleave"),
        ({"l2_promotion": "512B"}, ValueError, "l2_promotion"),
        ({"oob_fill": "nan"}, ValueError, "oob_fill"),
        ({"global_dims": "4096"}, TypeError, "global_dims"),
        ({"global_dims": (4096, 4096.0)}, TypeError, "global_dims"),
        ({"global_dims": (4096, -1)}, ValueError, "global_dims"),
        ({"global_strides": ()}, ValueError, "global_strides"),
        ({"global_strides": (True,)}, TypeError, "global_strides"),
        ({"box_dims": (64,)}, ValueError, "box_dims"),
        ({"box_dims": (64, 2**32)}, ValueError, "box_dims"),
        ({"element_strides": (1,)}, ValueError, "element_strides"),
        ({"global_address": -16}, ValueError, "global_address"),
        ({"global_address": 2**64}, ValueError, "global_address"),
        ({"global_dims": (1,) * 9, "global_strides": (16,) * 8, "box_dims": (1,) * 9}, ValueError, "global_dims"),
    ],
)
def test_a_value_the_driver_cannot_be_handed_raises_naming_the_parameter(changes, error, names):
    with pytest.raises(error, match=names):
        check(**changes)


def test_names_are_read_without_regard_to_case():
    result = check(swizzle="128b", data_type="Float16", l2_promotion="128b")
    assert result.ok and result.descriptor.swizzle == "128B" and result.descriptor.data_type == "float16"
    assert set(SWIZZLES) >= {"128B_atom_32B", "128B_atom_32B_flip_8B", "128B_atom_64B"}


def test_the_module_imports_without_the_optional_packages():
    import subprocess
    import sys

    code = (
        "import sys, importlib.abc\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('plotly', 'cutlass', 'cuda', 'numpy', 'ipywidgets'):\n"
        "            raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "from smemviz.analysis.tma import check_tma_descriptor\n"
        "assert check_tma_descriptor('float16', (64, 64), (128,), (64, 8)).ok\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def _doc_blocks() -> list[tuple[str, list[str]]]:
    """The usage page's Python blocks, each with the output its comments say it prints."""
    import re

    from ..helpers import ROOT

    text = (ROOT / "docs" / "tma-descriptors.md").read_text(encoding="utf-8")
    blocks = []
    for code in re.findall(r"^```python\n(.*?)^```", text, re.S | re.M):
        expected, after_print = [], False
        for line in code.splitlines():
            if after_print and line.startswith("# "):
                expected.append(line[2:])
                continue
            after_print = "print(" in line
        blocks.append((code, expected))
    return blocks


def test_the_usage_page_runs_and_prints_what_it_says(capsys):
    blocks = _doc_blocks()
    assert len(blocks) == 2
    for code, expected in blocks:
        exec(compile(code, "docs/tma-descriptors.md", "exec"), {})
        assert capsys.readouterr().out.splitlines() == expected and expected


PARAMETERS = {"data_type", "global_dims", "global_strides", "box_dims", "element_strides", "interleave", "swizzle"}
PARAMETERS |= {"global_address", "l2_promotion", "oob_fill", "arch"}


@st.composite
def descriptors(draw: st.DrawFn) -> dict[str, object]:
    """Any call the driver could be handed: values anywhere in its C types, names from its enums."""
    rank = draw(st.integers(0, 6))
    edge = st.sampled_from([0, 1, 2, 8, 16, 24, 256, 257, 2**32, 2**32 + 1, 2**40, 2**57])
    return {
        "data_type": draw(st.sampled_from(sorted(DATA_TYPES))),
        "global_dims": draw(st.lists(st.one_of(edge, st.integers(0, 2**64 - 1)), min_size=rank, max_size=rank)),
        "global_strides": draw(
            st.lists(st.one_of(edge, st.integers(0, 2**64 - 1)), min_size=max(rank - 1, 0), max_size=max(rank - 1, 0))
        ),
        "box_dims": draw(st.lists(st.integers(0, 300), min_size=rank, max_size=rank)),
        "element_strides": draw(st.lists(st.integers(0, 10), min_size=rank, max_size=rank)),
        "interleave": draw(st.sampled_from(["none", "16B", "32B"])),
        "swizzle": draw(st.sampled_from(sorted(SWIZZLES))),
        "global_address": draw(st.one_of(edge, st.integers(0, 2**64 - 1))),
        "l2_promotion": draw(st.sampled_from(["none", "64B", "128B", "256B"])),
        "oob_fill": draw(st.sampled_from(["none", "nan_request_zero_fma"])),
        "arch": draw(st.sampled_from(["sm_90a", "sm_100a", "sm_80"])),
    }


@settings(max_examples=100, deadline=None)
@given(descriptors())
def test_any_call_the_driver_could_take_gets_an_answer_naming_real_parameters(args):
    result = check_tma_descriptor(**args)
    assert result.ok == (not result.problems)
    for item in (*result.problems, *result.notes):
        assert item.parameter.split("[")[0] in PARAMETERS and item.rule and item.source
    assert result == check_tma_descriptor(**args)
    if result.ok:  # no swizzle never breaks a descriptor that a swizzle left whole
        assert check_tma_descriptor(**{**args, "swizzle": "none"}).ok
