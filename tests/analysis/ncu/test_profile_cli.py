"""``smemviz profile FILE.py:FUNCTION`` on the CPU, with a stand-in for ncu: the target compiles
smemviz's Hopper GEMM under capture and returns a launch that does nothing; the stand-in runs the
launch command it is given (the profiled child) and prints the recorded source page of that
configuration. What a real ncu adds, the counters, is the recorded CSV."""

from __future__ import annotations

import json
import os
import stat
import sys
import textwrap

import pytest

from smemviz.cli import main

from ...helpers import ROOT

pytest.importorskip("cutlass")
pytestmark = pytest.mark.cutlass

TARGET = textwrap.dedent(
    """\
    def gemm():
        from smemviz.kernel._compile import compile_host
        from smemviz.kernel.gemm import GemmConfig
        from smemviz.kernel.gemm._host import _fake_operands, gemm_kernel

        config = GemmConfig(arch="sm_90a", c_swizzle="none")
        _, kernel = gemm_kernel(config)
        compile_host("profile_cli", kernel, _fake_operands(config.dtype), "sm_90a")
        return lambda: open(__file__ + ".launched", "w").close()


    def not_a_launch():
        gemm()
        return 3
    """
)

FAKE_NCU = textwrap.dedent(
    """\
    #!{python}
    import pathlib, subprocess, sys
    args = sys.argv[1:]
    if "-i" in args:  # ncu -i REPORT --page source --csv --print-source cuda,sass
        assert args[args.index("--print-source") + 1] == "cuda,sass"
        sys.stdout.write(pathlib.Path({csv!r}).read_text())
        sys.exit(0)
    out = args[args.index("-o") + 1]
    assert "SourceCounters" in args and args[args.index("-c") + 1] == "1"
    assert args[args.index("-k") + 1].startswith("regex:^kernel_cutlass_kernel_smemvizkernelgemm_sm90Sm90Gemm")
    child = args[args.index("-f") + 3:]  # after -f -o REPORT: the profiled command
    done = subprocess.run(child)
    pathlib.Path(out + ".ncu-rep").write_text("report")
    sys.exit(done.returncode)
    """
)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    folder = tmp_path_factory.mktemp("profile")
    target = folder / "kernel.py"
    target.write_text(TARGET)
    ncu = folder / "ncu"
    ncu.write_text(FAKE_NCU.format(python=sys.executable, csv=str(ROOT / "results/ncu/ncu_gemm_c_none.csv")))
    ncu.chmod(ncu.stat().st_mode | stat.S_IEXEC)
    return target, ncu


def test_profile_prints_the_attribution_and_exits_0(setup, capsys, monkeypatch):
    target, ncu = setup
    monkeypatch.setenv("PYTHONPATH", str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    kept = target.with_name("page.csv")
    page = target.with_name("measured.md")
    code = main(["profile", f"{target}:gemm", "--ncu", str(ncu), "--csv", str(kept), "--json", "--out", str(page)])
    captured = capsys.readouterr()
    out = captured.out
    data = json.loads(out)  # the JSON alone on stdout: the export's line goes to stderr
    assert code == 0, out
    assert f"wrote {page}" in captured.err
    table = page.read_text()  # the captured map's report with the counts tabled
    assert "Nsight Compute, measured / predicted: 3 regions, every modelled one as predicted" in table
    assert (
        "| sC | 0-16,384 | sC | 4,096 | 65,536 / 65,536 | 16,384 / 16,384 | 49,152 / 49,152 | predicted 4-way" in table
    )
    assert target.with_name("kernel.py.launched").exists()  # the child launched once
    assert kept.read_text() == (ROOT / "results/ncu/ncu_gemm_c_none.csv").read_text()
    assert data["agrees"] and data["ctas"] == 32
    stsm = next(a for a in data["accesses"] if a["name"] == "stmatrix @ _sm90.py:385")
    assert (stsm["wavefronts"], stsm["predicted"]["wavefronts"], stsm["conflicts"]) == (65536, 65536, 49152)
    assert all(r["by"] for r in data["rows"])


def test_a_function_that_returns_no_launch_exits_2(setup, capsys):
    target, ncu = setup
    code = main(["profile", f"{target}:not_a_launch", "--ncu", str(ncu)])
    err = capsys.readouterr().err
    assert code == 2 and "must return a callable that launches the kernel once" in err


def test_no_ncu_exits_3(setup, capsys, tmp_path):
    target, _ = setup
    code = main(["profile", f"{target}:gemm", "--ncu", str(tmp_path / "no-ncu")])
    assert code == 3 and "no-ncu" in capsys.readouterr().err
