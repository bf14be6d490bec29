"""The demo notebooks: committed clean, generated from their script, and executed top
to bottom on a CPU-only machine, in the environment Binder builds, with the right
results shown."""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import smemviz
from smemviz import hardware
from smemviz.kernel.gemm import GemmConfig, gemm_layout

from .binder_env import binder_environment, execute_in_binder
from .helpers import NOTEBOOK_DIR, NOTEBOOKS

CELL_TIMEOUT_S = 300

# the README's first command opens this one
REQUIRED = ["01_quickstart.ipynb", "02_tuning_gemm_layout.ipynb", "04_cutlass_allocators.ipynb"]


def _sources(name: str) -> str:
    cells = json.loads((NOTEBOOK_DIR / name).read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells)


def _needs_cutlass(name: str) -> bool:
    return re.search(r"^\s*(import cutlass|from cutlass)", _sources(name), re.M) is not None


def _param(name: str):
    marks = [pytest.mark.notebook]
    if _needs_cutlass(name):
        marks.append(pytest.mark.cutlass)
    return pytest.param(name, marks=marks, id=name.removesuffix(".ipynb"))


# -- running ------------------------------------------------------------------


def error_outputs(nb) -> list[str]:
    """Every error output as 'cell N: Name: value'."""
    found = []
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                found.append(f"cell {i}: {out.get('ename')}: {out.get('evalue')}")
    return found


def shown_text(nb) -> str:
    """What a reader sees as text: stdout and the plain-text results."""
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream" and out.get("name") == "stdout":
                parts.append(out["text"])
            elif "data" in out and "text/plain" in out["data"]:
                parts.append(out["data"]["text/plain"])
    return "\n".join(parts)


def mime_types(nb) -> set[str]:
    return {mime for cell in nb.cells for out in cell.get("outputs", []) for mime in out.get("data", {})}


# -- what each notebook must show -----------------------------------------------


def _quickstart_expected_total() -> int:
    """The quick start's layout, declared again here with the public API."""
    stages, m, n, k = 4, 128, 128, 64
    smem = smemviz.SmemAllocator(arch="sm_100a")
    a = smem.add(smemviz.SmemAllocation("a", dtype="bf16", count=stages * m * k, alignment=1024))
    b = smem.add(smemviz.SmemAllocation("b", dtype="bf16", count=stages * n * k, alignment=1024))
    smem.add_alias_group([[a, b], [smemviz.SmemAllocation("c", dtype="bf16", count=m * n, alignment=1024)]])

    class Pipe:
        name, pipeline_group = "p", None
        pipeline_config = type("Cfg", (), {"num_stages": stages, "barrier_ptr": None})()

        def get_smem_requirements(self):
            return []

    smem.add_resource(Pipe())
    smem.add_tmem_ptr(smemviz.SmemAllocation("slot", size_bytes=4, alignment=4))
    smem.compute_layout()
    return smem.unified_smem_bytes


def check_quickstart(text: str, nb) -> None:
    total = _quickstart_expected_total()
    assert f"unified SMEM:      {total} B" in text
    # A + B side by side (2 x 64 KiB) reuse with C (32 KiB): 32 KiB saved
    assert f"saved by aliasing: {128 * 128 * 2} B" in text
    assert f"exceeds the sm_120 per-block limit of {hardware.get_arch('sm_120').smem_per_block:,} B" in text
    assert "CapacityError: SMEM layout needs" in text
    assert "columns for tcgen05.alloc: 256" in text
    assert "reads back equal: True" in text
    assert "text/html" in mime_types(nb), "the plan's HTML table is not shown"
    assert "application/vnd.plotly.v1+json" in mime_types(nb), "no figure is shown"
    assert "application/vnd.jupyter.widget-view+json" in mime_types(nb), "the explorer is not shown"
    for name in ("quickstart.html", "quickstart.md", "quickstart_smem.json"):
        assert re.search(rf"wrote \S*{re.escape(name)} \([\d,]+ bytes\)", text), f"{name} not written"
    assert re.search(r"wrote \S*quickstart\.svg", text) or "no Chrome/Chromium here: skipping the SVG" in text


def _gemm_max_stages(
    smem_limit: int,
    tile_m: int,
    tile_n: int,
    tile_k: int,
    elem_bytes: int,
    c_bytes: int,
    aliased: bool,
    blackwell: bool,
) -> int:
    """The deepest A/B pipeline of notebook 02's model, by arithmetic alone."""
    best = 0
    for stages in range(1, 65):
        ab = stages * (tile_m + tile_n) * tile_k * elem_bytes  # both 1024-aligned, multiples of 1024
        data = max(ab, c_bytes) if aliased else ab + c_bytes
        barriers = stages * hardware.BARRIER_BYTES_PER_STAGE
        if blackwell:
            data += hardware.TMEM_PTR_BYTES
            barriers += 2 * hardware.BARRIER_BYTES_PER_STAGE  # two accumulator stages
        if -(-data // 8) * 8 + barriers > smem_limit:
            break
        best = stages
    return best


def check_tuning(text: str, nb) -> None:
    limit = hardware.get_arch("sm_100").smem_per_block
    c_bytes = 128 * 256 * 2
    without = _gemm_max_stages(limit, 128, 256, 64, 2, c_bytes, aliased=False, blackwell=True)
    with_alias = _gemm_max_stages(limit, 128, 256, 64, 2, c_bytes, aliased=True, blackwell=True)
    assert with_alias > without, "the default configuration is meant to show a stage bought by aliasing"
    assert f"deepest pipeline that fits: {without} stages without aliasing, {with_alias} with it" in text
    assert f"aliasing buys {with_alias - without} more stage(s)" in text
    assert f"aliasing the epilogue saves {c_bytes} B" in text
    # the per-architecture table has a row for every architecture smemviz knows
    for arch in hardware.ARCHS:
        assert re.search(rf"^{arch}\s", text, re.M), f"no capacity row for {arch}"
    assert "TMEM layout needs 512 columns" in text
    assert "application/vnd.jupyter.widget-view+json" in mime_types(nb), "the explorer is not shown"
    assert "application/vnd.plotly.v1+json" in mime_types(nb), "no figure is shown"
    # the explorer built the default configuration from its controls
    assert "controls: {'tile_m': 128, 'tile_n': 256, 'tile_k': 64, 'stages': 4" in text
    # lifetimes: the C tile and bias find room over the 5 operand stages, proven smallest
    operands = 2 * 5 * 128 * 64 * 2
    assert f"{'optimal':>12}: {operands + 512:>7} B  optimal=True" in text
    assert "Lifetimes over 3 steps" in text and "optimal (proven)" in text
    assert "live at the epilogue: ['epi_c', 'bias'" in text or "live at the epilogue: ['bias', 'epi_c'" in text
    # the explorer's Lifetimes tab, opened at the epilogue
    assert (
        "explorer step: epilogue" in text
        and "live in the explorer's epilogue: ['bias', 'epi_c', 'mainloop.barriers']" in text
    )


def check_kernels(text: str, nb) -> None:
    # the compiled kernels request exactly the planned SMEM, for both targets
    for arch in ("sm_90a", "sm_100a"):
        assert f"{arch}: compiled in" in text and f"for PTX target {arch}" in text
    requested = re.findall(r"requests (\d+) B of dynamic SMEM; the plan says (\d+) B", text)
    assert len(requested) == 2 and all(a == b for a, b in requested), requested
    assert re.search(r"tcgen05\.alloc columns in the PTX: \[256\] ; the allocator says 256", text)
    assert "sm_90a: the TMEM kernel uses tcgen05 instructions" in text
    barriers = re.search(r"mbarrier instructions in the PTX: (\d+)", text)
    assert barriers and int(barriers.group(1)) > 0
    assert text.count(".extern .shared .align 1024 .b8") >= 4
    launched = "launched on" in text
    assert launched or "no GPU here: skipping the launch" in text
    if launched:
        assert "own kernel reversed through SMEM: True" in text
        assert "SMEM probe PASS" in text or "probe skipped" in text


def check_cutlass(text: str, nb) -> None:
    assert "cutlass.experimental.task_scheduling.memory SmemAllocator" in text
    assert "identical layouts: True" in text
    assert "as_plan gives the same plan: True" in text
    assert f"CUTLASS reserves 0 B, smemviz {128 * 256 // 2} B" in text
    assert "application/vnd.jupyter.widget-view+json" in mime_types(nb), "the explorer is not shown"
    assert "| smem_a |" in text, "the Markdown export is not shown"
    # a kernel's own @cute.struct, read with the DSL's offsets, linted, with its occupancy
    assert "the DSL says: 230400 B" in text and "plan total equals the DSL's size: True" in text
    assert "mainloop_pipeline_array_ptr [mbarrier]" in text
    assert re.search(r"struct: 230400 B, allocator: (\d+) B, difference (\d+) B", text)
    assert "as written: no findings" in text
    assert "[swizzle-align] sB (128B swizzle)" in text
    assert "sm_90: 1 CTA/SM (limited by shared memory); 2 CTAs/SM need <= 115,712 B per CTA" in text
    assert re.search(r"3 stages: +\d+ B -> 2 CTA\(s\)/SM", text)


def check_real_gemm(text: str, nb) -> None:
    # aliasing's stage counts, from the pure layout
    assert "tile 128x128: 6 stages with C staging apart, 7 with it aliased" in text
    assert "tile 128x256: 4 stages with C staging apart, 4 with it aliased" in text
    # the compiled kernels request exactly the planned SMEM
    requested = re.findall(r"requests (\d+) B of dynamic SMEM; the plan says (\d+) B", text)
    assert len(requested) == 3 and all(a == b for a, b in requested), requested
    assert "application/vnd.jupyter.widget-view+json" in mime_types(nb), "the explorer is not shown"
    assert "application/vnd.plotly.v1+json" in mime_types(nb), "no sweep figure is shown"
    ran = "GPU: none here" not in text
    if not ran:  # compile-only: the run action and the sweep say why they did not run
        assert "compiled only: no CUDA GPU is visible" in text or "compiled only: PyTorch is not installed" in text
        assert "(recorded: results/gemm_sweep_h200.json)" in text
    # the measured answer, from the recorded H200 sweep or a live one
    answers = re.findall(
        r"tile 128x(\d+): C apart best (\d+) TFLOP/s .* aliasing changes TFLOP/s by ([+-]\d+\.\d)%", text
    )
    assert [a[0] for a in answers] == ["128", "256"], answers
    assert "measured on NVIDIA H200" in text or ran
    # Blackwell: both plans shown, compiled for sm_100a, the PTX read against the plans
    blackwell = gemm_layout(GemmConfig(tile_n=256, alias_epilogue=False, acc_stages=2, arch="sm_100a"))
    assert f"{blackwell.unified_bytes} B of SMEM, 512 TMEM columns" in text
    assert f"the launch asks for {blackwell.unified_bytes} B, the plan holds {blackwell.unified_bytes} B" in text
    assert "all 11 PTX facts agree with the plans: True" in text
    assert re.search(r"tcgen05\.mma accumulators \(TMEM columns\)\s+plan 0, 256\s+PTX 0, 256\s+ok", text)
    assert re.search(r"acc2 -> (ran|compiled only: .*(sm_100a|no CUDA GPU|PyTorch is not installed))", text)


def check_bank_conflicts(text: str, nb) -> None:
    assert text.count("model agrees") == 8
    assert "gemm.c_staging: stmatrix.x4 over (128,32):(32,1) bf16 at" in text
    assert "16 instructions, 256 wavefronts (ideal 64), 192 conflicts; 4-way" in text
    assert "a 64B swizzle, with the region on a 512-byte boundary" in text and "K_SW64" in text
    assert text.count("16 instructions, 64 wavefronts (ideal 64), 0 conflicts; conflict-free") >= 2
    assert "4x the ideal wavefronts" in text
    # the access declared on the allocation: lint names the conflict and its fix; the report has the table
    assert "warning[bank-conflict] stmatrix.x4 on 'c_plain' is 4-way: 256 wavefronts where 64 would do" in text
    assert "bank-conflict] stmatrix.x4 on 'c_sw64'" not in text
    assert re.search(r"c_sw64 +stmatrix\.x4 +64B +8x1 +16 +64 +64 +0 +1 \(conflict-free\)", text)
    # the explorer's Banks tab, opened on the plain buffer with the 64B swizzle toggled on
    assert "c_plain: stmatrix.x4: 4 wavefronts (ideal 4), 0 conflicts; conflict-free (worst of 16 instructions)" in text
    # Nsight Compute's counts of the captured GEMM on its map, the H200's rows inline
    assert "24 rows, 0 not attributed, disagreements: none" in text
    assert "sC (sC): predicted 4-way, measured 4-way; wavefronts 65,536 / 65,536, ideal 16,384 / 16,384" in text
    assert text.count("predicted conflict-free, measured conflict-free; wavefronts 327,680 / 327,680") == 2


def check_capture(text: str, nb) -> None:
    # the three lines: a map, the lint verdict and the occupancy of the captured kernel
    assert "application/vnd.plotly.v1+json" in mime_types(nb), "no map is shown"
    # no error: the demo's element stores and loads, 4-way under their swizzles (capture reads each
    # lane's address), and that the ordering check could not read all of this kernel
    lint_line = re.search(r"lint: (.*?) \| occupancy: sm_90: 1 CTA/SM \(limited by shared memory\)", text, re.S)
    assert lint_line, text
    *warnings, info = lint_line.group(1).splitlines()
    assert warnings and all(
        re.match(r"warning\[bank-conflict\] (st|ld)\.shared\.b16 on 's[ABC]' is 4-way", w) for w in warnings
    )
    assert re.fullmatch(r"info\[unordered-alias\] ordering not fully read: \d+ thing\(s\) .*", info)
    assert re.search(r"storage +struct +offset +0 size 132,096 align +1024 capture_kernel\.py:\d+", text)
    assert re.search(r"sC +tensor +offset +132,096 size +32,768 align +1024 capture_kernel\.py:\d+", text)
    assert re.search(r"sA +data +1,024 128B +S<3,4,3> o 0 o \(128,64,4\):\(64,1,8192\)", text)
    assert "the launch asks for 164864 B, the capture holds 164864 B: True" in text
    assert "['load_empty_mbar', 'load_full_mbar', 'sA', 'sB', 'sC']" in text


def check_ordering(text: str, nb) -> None:
    # the FMHA's TMEM plan, captured where CUTLASS's examples are, else read from notebooks/data:
    # S0/S1, P1 inside S0, P0 inside S1, the row statistics, O0/O1
    assert re.search(
        r"the FMHA, (captured now from CUTLASS's examples|as captured and recorded in notebooks/data/)", text
    )
    for name, first, last, inside in (
        ("tStS0", 0, 127, ""),
        ("tStS_vec0", 0, 1, "inside tStS0"),
        ("tOrP1", 32, 95, "inside tStS0"),
        ("tStS1", 128, 255, ""),
        ("tStS_vec1", 128, 129, "inside tStS1"),
        ("tOrP0", 160, 223, "inside tStS1"),
        ("tOtO0", 256, 383, ""),
        ("tOtO1", 384, 511, ""),
    ):
        assert re.search(rf"{name} +columns +{first}- *{last} +{inside} *fmha\.py:\d+", text), name
    fmha = re.search(r"TMEM 512 columns\n(?:.*\n)*?(\d+) error\(s\): .*\n((?:  error\[.*\n)+)", text)
    assert fmha, text
    # the one TMEM alias placed, with its edge; the errors shown, never a claim of safety
    assert re.search(
        r"alias tStS0 \(tcgen05_ld at fmha\.py:\d+\) -> tStS_vec0 \(tcgen05_st at fmha\.py:\d+\): "
        r"the registers of tcgen05\.ld read at fmha\.py:\d+",
        text,
    )
    assert int(fmha.group(1)) == fmha.group(2).count("  error[") > 0
    # smemviz's Hopper GEMM: C over A, ordered by the consumer's wgmma.wait_group; no error
    assert re.search(
        r"alias sA \(wgmma_read at _sm90\.py:\d+\) -> sC \(stmatrix at _sm90\.py:\d+\): "
        r"wgmma wait_group\(1\) at _sm90\.py:\d+\n0 error\(s\)",
        text,
    )
    # the mutation: the right kernel checks clean, the one without consumer_release hangs where it waits
    assert "build: 0 error(s)" in text
    assert re.search(
        r"build_without_release: 1 error\(s\)\n  error\[mbarrier-parity\] stage 0's empty barrier of "
        r"'handoff' waits phase 0 \(warp 0 \('warp 0'\) at handoff_kernel\.py:\d+.*so it hangs",
        text,
    )
    # the diagram and both maps, and the explorer on its Ordering tab
    figures = [
        o for c in nb.cells for o in c.get("outputs", []) if "application/vnd.plotly.v1+json" in o.get("data", {})
    ]
    assert len(figures) == 3, len(figures)
    assert "application/vnd.jupyter.widget-view+json" in mime_types(nb), "the explorer is not shown"


CHECKS: dict[str, Callable[[str, object], None]] = {
    "01_quickstart.ipynb": check_quickstart,
    "02_tuning_gemm_layout.ipynb": check_tuning,
    "03_kernels_from_cells.ipynb": check_kernels,
    "04_cutlass_allocators.ipynb": check_cutlass,
    "05_tuning_a_real_gemm.ipynb": check_real_gemm,
    "06_bank_conflicts.ipynb": check_bank_conflicts,
    "07_capture.ipynb": check_capture,
    "08_ordering.ipynb": check_ordering,
}


def check_executed(name: str, nb) -> None:
    """No cell raised, and the notebook showed what it is about."""
    errors = error_outputs(nb)
    assert not errors, f"{name} raised: " + "; ".join(errors)
    CHECKS[name](shown_text(nb), nb)


# -- tests ------------------------------------------------------------------------


def test_every_notebook_is_known():
    assert set(REQUIRED) <= set(NOTEBOOKS)
    assert set(NOTEBOOKS) <= set(CHECKS), f"notebooks without a check: {set(NOTEBOOKS) - set(CHECKS)}"


@pytest.fixture(scope="session")
def binder(tmp_path_factory):
    """Binder's environment, built once for the run (see tests/binder_env.py)."""
    return binder_environment(tmp_path_factory)


@pytest.mark.slow
@pytest.mark.parametrize("name", [_param(n) for n in NOTEBOOKS])
def test_notebook_runs_top_to_bottom_in_binders_environment(name, tmp_path, tmp_path_factory, binder):
    """Each notebook, executed once, with the kernel of the environment Binder builds from
    binder/ alone: it shows what it should, and Binder's environment runs it."""
    # the data some notebooks read lies next to them, as it does in Binder's checkout
    shutil.copytree(NOTEBOOK_DIR / "data", tmp_path / "data")
    nb, kernel = execute_in_binder(
        binder, NOTEBOOK_DIR / name, tmp_path, tmp_path_factory.mktemp("runner"), CELL_TIMEOUT_S
    )
    check_executed(name, nb)
    # whatever a notebook writes goes under out/, which git ignores
    assert {p.name for p in tmp_path.iterdir()} <= {"out", "data"}, sorted(p.name for p in tmp_path.iterdir())
    prefix = re.search(r"KERNEL-PREFIX (.+)", kernel).group(1).strip()
    module = re.search(r"SMEMVIZ-FILE (.+)", kernel).group(1).strip()
    assert Path(prefix).resolve() == binder.venv.resolve(), f"{name} ran in {prefix}, not the binder venv"
    # installed from binder/requirements.txt, not imported from a source tree
    assert "site-packages" in module and str(binder.repo) not in module, module


_ABSOLUTE_PATH = re.compile(r"(?<![\w.~])/(?:home|work|tmp|root|Users|usr|opt|mnt|var)/")


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_committed_notebook_is_clean(name):
    raw = (NOTEBOOK_DIR / name).read_text(encoding="utf-8")
    nb = json.loads(raw)
    assert nb["metadata"].get("kernelspec", {}).get("name") == "python3"
    assert set(nb["metadata"]) <= {"kernelspec", "language_info"}, nb["metadata"].keys()
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [], f"{name} cell {i} has outputs"
            assert cell["execution_count"] is None, f"{name} cell {i} has an execution count"
        assert not cell.get("metadata"), f"{name} cell {i} has metadata {cell['metadata']}"
    assert not _ABSOLUTE_PATH.search(raw), f"{name} holds an absolute path: {_ABSOLUTE_PATH.search(raw)[0]}"
    assert (NOTEBOOK_DIR / name).stat().st_size < 100_000


def test_notebooks_match_their_generator():
    pytest.importorskip("nbformat")
    sys.path.insert(0, str(NOTEBOOK_DIR))
    try:
        import build_notebooks
    finally:
        sys.path.remove(str(NOTEBOOK_DIR))
    assert sorted(build_notebooks.NOTEBOOKS) == NOTEBOOKS
    for name in NOTEBOOKS:
        committed = (NOTEBOOK_DIR / name).read_text(encoding="utf-8")
        assert committed == build_notebooks.render(name), (
            f"{name} differs from notebooks/build_notebooks.py; run `python notebooks/build_notebooks.py`"
        )


def test_notebook_outputs_are_ignored_by_git():
    ignore = (NOTEBOOK_DIR / ".gitignore").read_text(encoding="utf-8").split()
    assert "out/" in ignore
