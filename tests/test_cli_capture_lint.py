"""``smemviz capture``'s verdict (exit 1 on lint errors, ``--strict``, ``--no-lint``) and
fixes spelled in the DSL's own words for plans that came from the DSL."""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from smemviz import SmemAllocation, SmemAllocator, lint
from smemviz.analysis._lint import align_fix
from smemviz.analysis.banks import advise, stmatrix_atom
from smemviz.analysis.banks._advice import allocation_line
from smemviz.cli import main

cutlass = pytest.importorskip("cutlass")
cute = pytest.importorskip("cutlass.cute")
pytestmark = pytest.mark.cutlass

KERNELS = Path(__file__).with_name("capture_lint_kernels.py")
MISALIGNED = f"{KERNELS}:misaligned"
PADDED = f"{KERNELS}:padded"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["capture", *argv])
    got = capsys.readouterr()
    return code, got.out, got.err


# -- the command line's verdict -------------------------------------------------------------------


def test_a_lint_error_exits_1_and_names_the_fix_in_the_dsls_words(capsys):
    code, out, err = run(capsys, MISALIGNED)
    assert code == 1
    assert "error[swizzle-align] sD (128B swizzle) starts at 64" in out  # the report shows it
    lines = err.splitlines()  # and stderr says why the exit is 1, one line per error (tma-align too)
    assert all(x.startswith(f"smemviz: error: {MISALIGNED}: error[") for x in lines)
    (line,) = [x for x in lines if "[swizzle-align]" in x]
    assert line.startswith(f"smemviz: error: {MISALIGNED}: error[swizzle-align]")
    assert "byte_alignment=1024" in line and "Align[..., 1024]" in line
    assert "(alignment=1024)" not in out + err


def test_no_lint_exits_0_and_still_shows_the_finding(capsys):
    code, out, err = run(capsys, MISALIGNED, "--no-lint")
    assert code == 0 and err == ""
    assert "error[swizzle-align]" in out


def test_warnings_fail_only_with_strict(capsys):
    code, out, err = run(capsys, PADDED)
    assert code == 0 and err == "" and "warning[padding-share]" in out
    code, out, err = run(capsys, PADDED, "--strict")
    assert code == 1 and "warning[padding-share]" in err
    code, _, err = run(capsys, PADDED, "--strict", "--no-lint")
    assert code == 0 and err == ""


def test_a_written_map_still_exits_1_and_shows_the_findings(capsys, tmp_path):
    target = tmp_path / "k.json"
    code, out, err = run(capsys, MISALIGNED, "--out", str(target))
    assert code == 1 and target.is_file() and json.loads(target.read_text())
    assert out.startswith("wrote ") and "error[swizzle-align]" in err
    code, out, err = run(capsys, PADDED, "--out", str(target))
    assert code == 0 and err == "" and "warning[padding-share]" in out  # shown, though no report was printed


# -- fixes in the words of what declared the region ------------------------------------------------


def _hand_written():
    s = SmemAllocator()
    s.add(SmemAllocation("flag", 128, 128))
    s.add(SmemAllocation("sA", 8192, 128, swizzle="128B"))
    s.compute_layout()
    return s.plan


@cute.struct
class Storage:
    load_mbar: cute.struct.MemRange[cutlass.Int64, 2]
    flag: cute.struct.MemRange[cutlass.Int32, 30]
    sC: cute.struct.Align[cute.struct.MemRange[cutlass.BFloat16, 128 * 64], 128]


def _struct_plan():
    from smemviz import plan_from_struct

    return plan_from_struct(Storage, swizzle={"sC": "128B"})


def test_lint_fixes_speak_the_language_of_the_plan():
    (hand,) = [f for f in lint(_hand_written()) if f.rule == "swizzle-align"]
    assert hand.fix == "align sA to 1024 (alignment=1024)"
    (struct,) = [f for f in lint(_struct_plan()) if f.rule == "swizzle-align"]
    assert struct.fix == "align sC to 1024 (Align[..., 1024] on the field)"
    assert "alignment=1024" not in struct.fix
    captured = replace(_struct_plan(), source="cute.capture")
    assert "byte_alignment=1024" in align_fix(captured, "sC", 1024)
    assert "an Int64 field or Align[..., 8]" in align_fix(_struct_plan(), "load_mbar", 8, "an Int64 field")


def test_advice_for_a_struct_field_gives_the_struct_spelling():
    plan = _struct_plan()
    adv = advise(plan, "sC", stmatrix_atom(4), layout="(128,64):(64,1)", warps=(4, 1), swizzle=None)
    assert adv.swizzle == "128B" and adv.fixes
    assert adv.allocation_line == "sC: Align[MemRange[cutlass.BFloat16, 8192], 1024]"
    assert "SmemAllocation" not in str(adv)
    captured = replace(plan, source="cute.capture")
    line = allocation_line(captured, plan.region("sC"), 1024, "128B")
    assert "byte_alignment=1024" in line and "Align[MemRange[cutlass.BFloat16, 8192], 1024]" in line
    assert allocation_line(_hand_written(), _hand_written().region("sA"), 1024, "128B").startswith(
        'SmemAllocation("sA", 8192, alignment=1024, swizzle="128B"'
    )
