"""``smemviz check FILE.py:FUNCTION``: capture the kernel the function compiles and print every
finding, the ordering check's included, with the exit status layout files get."""

from pathlib import Path

import pytest

from smemviz.cli import main

pytest.importorskip("cutlass")
pytestmark = pytest.mark.cutlass

EXAMPLE = Path(__file__).parents[1] / "examples" / "handoff_kernel.py"
GOOD = f"{EXAMPLE}:build"
HANGS = f"{EXAMPLE}:build_without_release"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["check", *argv])
    got = capsys.readouterr()
    return code, got.out, got.err


def test_a_kernel_whose_ordering_holds_exits_0_with_its_capacity_and_infos(capsys):
    code, out, err = run(capsys, GOOD, "--arch", "sm_90a")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == f"{GOOD}: SMEM layout needs 288 B: fits the sm_90 per-block limit of 232,448 B (0.1%)"
    # the info on what the check could not settle is printed too: a run-time trip count
    assert any(line.startswith(f"{GOOD}: info[mbarrier-parity] loop ") for line in lines)
    assert not any("error[" in line for line in lines)
    code, _, err = run(capsys, GOOD, "--arch", "sm_90a", "--strict")  # infos never fail it
    assert code == 0 and err == ""


def test_a_dropped_release_exits_1_with_the_witness_on_stderr(capsys):
    code, out, err = run(capsys, HANGS, "--arch", "sm_90a")
    assert code == 1
    (line,) = err.splitlines()
    assert line.startswith(f"{HANGS}: error[mbarrier-parity] stage 0's empty barrier of 'handoff' waits phase 0")
    assert "handoff_kernel.py:" in line and "no consumer_release" in line
    assert "error[" not in out  # what fails the check is said once, on stderr


def test_a_bad_target_exits_2_naming_it(capsys, tmp_path):
    code, out, err = run(capsys, f"{tmp_path / 'missing.py'}:build", "--arch", "sm_90a")
    assert code == 2 and out == "" and "is not a Python file" in err
    code, _, err = run(capsys, f"{EXAMPLE}:no_such_function", "--arch", "sm_90a")
    assert code == 2 and "has no 'no_such_function'" in err
