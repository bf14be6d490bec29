"""Write the demo notebooks from the cell sources kept here.

The notebooks are generated so that their source stays reviewable as plain
Python and so that the committed ``.ipynb`` files carry no outputs, no
execution counts and no machine-specific metadata. After editing a cell here,
run ``python notebooks/build_notebooks.py`` and commit the notebooks; a test
fails when the committed files and this script disagree.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent

# what JupyterLab writes on save with the project's kernel (ipykernel's python3), so that
# running a notebook and saving it leaves the file as committed; the kernel's Python
# version, the one machine-specific field, the save hook drops (scripts/jupyter_server_config.py)
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
LANGUAGE_INFO = {
    "codemirror_mode": {"name": "ipython", "version": 3},
    "file_extension": ".py",
    "mimetype": "text/x-python",
    "name": "python",
    "nbconvert_exporter": "python",
    "pygments_lexer": "ipython3",
}


def _recorded_sweep() -> str:
    """The H200 sweep notebook 05 shows when it runs without a GPU, as compact JSON."""
    import json

    data = json.loads((HERE.parent / "results" / "gemm_sweep_h200.json").read_text(encoding="utf-8"))
    return json.dumps(data, separators=(",", ":"))


def _example_source(name: str) -> str:
    """A file of examples/, as a notebook cell writes it out (the notebook then needs no checkout)."""
    return (HERE.parent / "examples" / name).read_text(encoding="utf-8").rstrip("\n")


def md(text: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_markdown_cell(textwrap.dedent(text).strip("\n"))


def code(text: str) -> nbformat.NotebookNode:
    bad = sorted({c for c in text if ord(c) < 0x20 and c != "\n"})
    if bad:  # an escape such as "\b" slipped into a non-raw string
        raise ValueError(f"control characters {bad!r} in a code cell starting {text.strip()[:60]!r}")
    return nbformat.v4.new_code_cell(textwrap.dedent(text).strip("\n"))


def notebook(cells: list[nbformat.NotebookNode]) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": dict(KERNELSPEC), "language_info": json.loads(json.dumps(LANGUAGE_INFO))}
    # stable ids keep regenerated files byte-identical
    for i, cell in enumerate(cells):
        cell["id"] = f"cell-{i:02d}"
    nb.cells = cells
    return nb


# ---------------------------------------------------------------------------
# 01: quick start
# ---------------------------------------------------------------------------


def quickstart() -> nbformat.NotebookNode:
    return notebook(
        [
            md("""
        # smemviz quick start

        Declare what a kernel needs in shared memory (SMEM) and tensor memory
        (TMEM), compute one layout, read the report, check it against several
        GPU architectures and save it.

        Nothing here needs a GPU or the CuTe DSL: the layout is plain Python.
        """),
            code("""
        import smemviz
        from smemviz import SmemAllocation, SmemAllocator, TmemAllocation, TmemAllocator

        print("smemviz", smemviz.__version__)
        """),
            md("""
        ## 1. Declare the allocations

        A Blackwell (sm_100a) GEMM main loop keeps `STAGES` copies of a
        128×64 bf16 tile of A and of B. TMA with the 128-byte swizzle wants
        them 1024-byte aligned.

        The epilogue stages its 128×128 C tile only after the main loop is
        done with A and B, so C can reuse their bytes: an **alias group** with
        two phases, `[A, B]` then `[C]`. Allocations inside a phase coexist;
        phases take turns on the same region.
        """),
            code("""
        STAGES, TILE_M, TILE_N, TILE_K = 4, 128, 128, 64

        smem = SmemAllocator(arch="sm_100a")
        smem_a = smem.add(SmemAllocation("smem_a", dtype="bf16", count=STAGES * TILE_M * TILE_K, alignment=1024))
        smem_b = smem.add(SmemAllocation("smem_b", dtype="bf16", count=STAGES * TILE_N * TILE_K, alignment=1024))
        epi_c = SmemAllocation("epi_c", dtype="bf16", count=TILE_M * TILE_N, alignment=1024)
        smem.add_alias_group([[smem_a, smem_b], [epi_c]])
        """),
            md("""
        Two more things live in the same SMEM block:

        * **pipeline barriers**: a resource that owns a pipeline declares it
          through `pipeline_config.num_stages`; every stage costs a full and an
          empty mbarrier (16 bytes). Any object with these attributes works,
          exactly as with CUTLASS's `task_scheduling` resources;
        * the **TMEM-pointer slot**: 4 bytes where `tcgen05.alloc` writes the
          TMEM base address.
        """),
            code("""
        from dataclasses import dataclass


        @dataclass
        class Stages:
            \"\"\"The part of a pipeline config the allocator reads.\"\"\"
            num_stages: int
            barrier_ptr: object = None


        class LoadPipeline:
            \"\"\"TMA -> MMA pipeline: its barriers go into the unified SMEM block.\"\"\"
            name = "load_ab"
            pipeline_group = None

            def __init__(self, stages: int):
                self.pipeline_config = Stages(stages)

            def get_smem_requirements(self):
                return []  # its A/B buffers are declared above


        smem.add_resource(LoadPipeline(STAGES))
        tmem_slot = smem.add_tmem_ptr(SmemAllocation("tmem_ptr", size_bytes=4, alignment=4))
        """),
            md("""
        ## 2. Compute and read the report

        `compute_layout()` gives every allocation its offset; the layout must
        fit the allocator's architecture or it is refused with a message that
        names the largest allocations.
        """),
            code("""
        smem.compute_layout()
        smem.print_usage_report()
        """),
            md("""
        The result is an immutable `LayoutPlan`: every placed region with its
        offset, size, alignment, padding and alias group/phase. Reports,
        figures, exports and the kernel bridge all read this one value.
        """),
            code("""
        plan = smem.plan
        print(plan)
        for r in plan.regions:
            where = f"group {r.group + 1}, phase {r.phase + 1}" if r.aliased else "standalone"
            print(f"{r.name:<18} {r.kind:<9} offset {r.offset:>7}  size {r.size:>7}  {where}")
        print()
        print(f"data SMEM:         {plan.data_total} B")
        print(f"barrier SMEM:      {plan.barrier_bytes} B")
        print(f"unified SMEM:      {plan.unified_bytes} B")
        print(f"saved by aliasing: {plan.alias_savings} B")
        """),
            md("In a notebook the plan shows itself as a table:"),
            code("plan"),
            md("""
        ## 3. Capacity per architecture

        The same plan checked against Hopper, Blackwell datacenter and
        Blackwell GeForce parts (per-block opt-in SMEM limits).
        """),
            code("""
        for arch in ["sm_90a", "sm_100a", "sm_120"]:
            print(plan.capacity(arch).message())
        """),
            md("""
        A layout that does not fit is refused before any offset changes, and
        the error says by how much and what is largest:
        """),
            code("""
        small = SmemAllocator(arch="sm_120")
        small.add(SmemAllocation("smem_a", dtype="bf16", count=6 * TILE_M * TILE_K, alignment=1024))
        small.add(SmemAllocation("smem_b", dtype="bf16", count=6 * TILE_N * TILE_K, alignment=1024))
        try:
            small.compute_layout()
        except smemviz.CapacityError as err:
            print("CapacityError:", err)
        """),
            md("""
        ## 4. TMEM

        Blackwell keeps the accumulators in tensor memory: 128 lanes × 512
        columns of 32-bit cells per CTA. Two fp32 accumulators of `TILE_N`
        columns let the MMA fill one while the epilogue drains the other.
        `tcgen05.alloc` takes a power of two of at least 32 columns.
        """),
            code("""
        tmem = TmemAllocator(arch="sm_100a")
        for i in range(2):
            tmem.add(TmemAllocation(f"acc{i}", num_columns=TILE_N))
        tmem.compute_layout()
        tmem.print_usage_report()
        print("columns for tcgen05.alloc:", tmem.tcgen05_alloc_columns)
        """),
            md("""
        ## 5. See it

        The SMEM byte map: one bar per region at its offset, alias phases
        stacked, barriers and the TMEM-pointer slot marked, the capacity
        line of the architecture drawn across. Hover a region for its
        details.
        """),
            code("smemviz.smem_figure(plan)"),
            code("smemviz.tmem_figure(tmem)"),
            md("""
        ## 6. Explore

        The explorer puts both maps, the totals and the usage table in one
        widget. Pick another architecture to move the capacity line, or
        highlight one alias phase.
        """),
            code("""
        explorer = smemviz.explore((smem, tmem), arch="sm_100a")
        explorer
        """),
            md("""
        ## 7. Export

        `smemviz.export` picks the format from the extension: a
        self-contained HTML page (opens offline), Markdown tables for a pull
        request, the plan as JSON, or a static SVG/PNG/PDF diagram (drawn by a
        headless Chrome/Chromium). Files go to `out/` next to the notebook
        (ignored by git).
        """),
            code("""
        from pathlib import Path

        out = Path("out")
        out.mkdir(exist_ok=True)
        for name in ["quickstart.html", "quickstart.md", "quickstart_smem.json"]:
            target = plan if name.endswith(".json") else (smem, tmem)
            path = smemviz.export(target, out / name)
            print(f"wrote {path} ({path.stat().st_size:,} bytes)")

        again = smemviz.layout.plan_from_json((out / "quickstart_smem.json").read_text())
        print("the JSON reads back equal:", again == plan)
        """),
            code("""
        from smemviz import BrowserNotFoundError

        try:
            path = smemviz.export((smem, tmem), out / "quickstart.svg")
            print(f"wrote {path} ({path.stat().st_size:,} bytes)")
        except BrowserNotFoundError as err:
            print("no Chrome/Chromium here: skipping the SVG;", err)
        """),
        ]
    )


# ---------------------------------------------------------------------------
# 02: tuning a GEMM layout
# ---------------------------------------------------------------------------

GEMM_MODEL = """
from dataclasses import dataclass, replace

import smemviz
from smemviz import SmemAllocation, SmemAllocator, TmemAllocation, TmemAllocator, hardware


@dataclass(frozen=True)
class Gemm:
    \"\"\"The knobs of a TMA + tensor-core GEMM that decide its SMEM and TMEM.\"\"\"
    arch: str = "sm_100a"
    tile_m: int = 128
    tile_n: int = 256
    tile_k: int = 64
    stages: int = 4          # A/B stages of the load pipeline
    dtype: str = "bf16"      # A and B element type
    epi_dtype: str = "bf16"  # C element type
    alias_epilogue: bool = True
    acc_stages: int = 2      # TMEM accumulators (Blackwell): MMA fills one, epilogue drains the other

    @property
    def blackwell(self) -> bool:
        return hardware.get_arch(self.arch).has_tmem


@dataclass
class Stages:
    \"\"\"The part of a pipeline config the allocator reads.\"\"\"
    num_stages: int
    barrier_ptr: object = None


class MainloopAB:
    \"\"\"A and B tiles, `stages` deep, loaded by TMA (128B swizzle: 1024-byte aligned).\"\"\"
    name = "mainloop"
    pipeline_group = None

    def __init__(self, g: Gemm):
        align = hardware.SWIZZLE_128B_ALIGNMENT
        self.a = SmemAllocation("smem_a", dtype=g.dtype, count=g.stages * g.tile_m * g.tile_k, alignment=align)
        self.b = SmemAllocation("smem_b", dtype=g.dtype, count=g.stages * g.tile_n * g.tile_k, alignment=align)
        self.pipeline_config = Stages(g.stages)

    def get_smem_requirements(self):
        return [self.a, self.b]


class Epilogue:
    \"\"\"The C tile, staged in SMEM for one TMA store.\"\"\"
    name = "epilogue"

    def __init__(self, g: Gemm):
        self.c = SmemAllocation("epi_c", dtype=g.epi_dtype, count=g.tile_m * g.tile_n,
                                alignment=hardware.SWIZZLE_128B_ALIGNMENT)

    def get_smem_requirements(self):
        return [self.c]


class Accumulators:
    \"\"\"fp32 accumulators in TMEM, one tile_n-column buffer per stage, with
    an MMA -> epilogue pipeline whose barriers live in SMEM.\"\"\"
    name = "accumulators"
    pipeline_group = None

    def __init__(self, g: Gemm):
        self.buffers = [TmemAllocation(f"acc{i}", num_columns=g.tile_n) for i in range(g.acc_stages)]
        self.pipeline_config = Stages(g.acc_stages)

    def get_smem_requirements(self):
        return []

    def get_tmem_requirements(self):
        return self.buffers


def build(g: Gemm):
    \"\"\"(SMEM plan, TMEM plan or None) for one configuration.

    The allocators get no arch, so a layout that is too large is still
    computed and can be looked at; capacity is checked on the plan.
    \"\"\"
    smem = SmemAllocator()
    mainloop, epilogue = MainloopAB(g), Epilogue(g)
    smem.add_resource(mainloop)
    if g.alias_epilogue:
        smem.add_alias_group([[mainloop.a, mainloop.b], [epilogue.c]])
    else:
        smem.add_resource(epilogue)
    tmem_plan = None
    if g.blackwell:
        acc = Accumulators(g)
        smem.add_resource(acc)
        smem.add_tmem_ptr(SmemAllocation("tmem_ptr", size_bytes=hardware.TMEM_PTR_BYTES, alignment=4))
        tmem = TmemAllocator()
        tmem.add_resource(acc)
        tmem.compute_layout()
        tmem_plan = tmem.plan
    smem.compute_layout()
    # the plan remembers the target, so reports compare against it
    arch = hardware.get_arch(g.arch).name
    tmem_plan = replace(tmem_plan, arch=arch) if tmem_plan is not None else None
    return replace(smem.plan, arch=arch), tmem_plan


def fits(g: Gemm, arch: str | None = None) -> bool:
    smem_plan, tmem_plan = build(g)
    arch = arch or g.arch
    return smem_plan.fits(arch) and (tmem_plan is None or tmem_plan.fits(arch))


def max_stages(g: Gemm, arch: str | None = None, limit: int = 64) -> int:
    \"\"\"The deepest A/B pipeline that fits (0 if not even one stage does).\"\"\"
    fit = smemviz.experimental.max_fit(lambda stages: build(replace(g, stages=stages)), arch=arch or g.arch,
                          stages=range(1, limit + 1))
    return fit.best or 0
"""


def tuning_gemm() -> nbformat.NotebookNode:
    return notebook(
        [
            md("""
        # Tuning a GEMM's shared-memory layout

        A tensor-core GEMM spends nearly all of its shared memory on the
        pipelined A and B tiles; the deeper the pipeline, the better memory
        latency hides. This notebook models a realistic layout, lets you turn
        the knobs (tile shape, element type, stages, aliasing), checks each
        architecture's capacity and works out what aliasing the epilogue buys.

        The model:

        * **main loop**: `stages` × (tile_m × tile_k of A + tile_n × tile_k of B),
          1024-byte aligned for TMA's 128-byte swizzle, and a load pipeline with
          one full/empty mbarrier pair per stage;
        * **epilogue**: a tile_m × tile_n C tile staged for the TMA store,
          aliased with A/B (it is only needed after the main loop) or not;
        * **Blackwell only**: `acc_stages` fp32 accumulators of tile_n columns
          in TMEM, their MMA → epilogue pipeline barriers and the TMEM-pointer
          slot. Hopper keeps accumulators in registers.
        """),
            code(GEMM_MODEL),
            md("""
        ## The default configuration

        Blackwell, 128×256×64 bf16 tiles, 4 stages, epilogue aliased.
        """),
            code("""
        g = Gemm()
        smem_plan, tmem_plan = build(g)
        print(smemviz.analysis.text_report(smem_plan))
        print(smemviz.analysis.text_report(tmem_plan))
        stage_bytes = smem_plan.region("smem_a").size // g.stages + smem_plan.region("smem_b").size // g.stages
        print(f"one A+B stage: {stage_bytes} B of data + {hardware.BARRIER_BYTES_PER_STAGE} B of barriers")
        """),
            md("""
        ## Capacity per architecture

        The same configuration against every architecture smemviz knows.
        Parts without TMEM (Hopper, GeForce Blackwell) get the Hopper-style
        layout: no TMEM accumulators, barriers or slot.
        """),
            code("""
        print(f"{'arch':<8} {'family':<22} {'SMEM used':>10} {'limit':>8} {'use':>7}  {'TMEM cols':>9}  fits  max stages")
        for arch in hardware.ARCHS.values():
            ga = replace(g, arch=arch.name)
            s_plan, t_plan = build(ga)
            cap = s_plan.capacity(arch)
            tcols = f"{t_plan.data_total}/{arch.tmem_columns}" if t_plan else "-"
            ok = "yes" if fits(ga) else "NO"
            print(f"{arch.name:<8} {arch.family:<22} {cap.used:>10} {cap.limit:>8} {cap.percent:>6.1f}%  {tcols:>9}  {ok:<4}  {max_stages(ga)}")
        """),
            md("""
        ## What aliasing buys

        Without aliasing the C tile sits beside the A/B stages. With it, C
        reuses their bytes: the alias group is as large as its larger phase.
        The bytes saved are worth whole pipeline stages when the saving is at
        least one stage's A+B tiles plus its barriers.
        """),
            code("""
        def aliasing_gain(g: Gemm) -> None:
            aliased, _ = build(replace(g, alias_epilogue=True))
            separate, _ = build(replace(g, alias_epilogue=False))
            saved = separate.unified_bytes - aliased.unified_bytes
            without, with_alias = max_stages(replace(g, alias_epilogue=False)), max_stages(replace(g, alias_epilogue=True))
            print(f"{g.arch}, {g.tile_m}x{g.tile_n}x{g.tile_k} {g.dtype}, {g.stages} stages:")
            print(f"  aliasing the epilogue saves {saved} B (plan.alias_savings = {aliased.alias_savings} B)")
            print(f"  deepest pipeline that fits: {without} stages without aliasing, {with_alias} with it")
            print(f"  aliasing buys {with_alias - without} more stage(s)")


        aliasing_gain(Gemm())
        aliasing_gain(Gemm(arch="sm_90a", tile_n=128, dtype="f8e4m3", tile_k=128))
        """),
            md("""
        The default layout as a byte map: the alias group (A and B stages in
        phase 1, the C tile in phase 2) fills most of the block; barriers
        and the TMEM-pointer slot follow the data.
        """),
            code("smemviz.smem_figure(smem_plan)"),
            *epilogue_finds_its_place(),
            md("""
        ## Turn the knobs

        `smemviz.explore` takes a function that builds a layout and turns its
        parameters into controls: tuples become sliders, lists dropdowns,
        booleans checkboxes. Every change rebuilds the layout and redraws both
        maps in place. The `arch` selector moves the capacity line; watch the
        total cross it, and FP8 or FP4 operands make room for more stages.
        """),
            code("""
        def gemm(tile_m=128, tile_n=256, tile_k=64, stages=4, dtype="bf16",
                 alias_epilogue=True, tmem_accumulators=True):
            arch = "sm_100a" if tmem_accumulators else "sm_90a"
            return build(Gemm(arch=arch, tile_m=tile_m, tile_n=tile_n, tile_k=tile_k, stages=stages,
                              dtype=dtype, alias_epilogue=alias_epilogue))


        explorer = smemviz.explore(
            gemm,
            arch="sm_100a",
            tile_m=[64, 128, 256],
            tile_n=(32, 256, 32),
            tile_k=[32, 64, 128, 256],
            stages=(1, 16),
            dtype=["f32", "bf16", "f8e4m3", "f4e2m1"],
            alias_epilogue=True,
            tmem_accumulators=True,
        )
        explorer
        """),
            md("The explorer's current layout can be read back, and exported from its own buttons or from code:"),
            code("""
        print("controls:", explorer.values)
        print("architecture:", explorer.arch)
        print(explorer.smem_plan.capacity(explorer.arch).message())
        """),
        ]
    )


def epilogue_finds_its_place() -> list[nbformat.NotebookNode]:
    """Notebook 02's lifetime section: no alias group, just when each buffer is live."""
    return [
        md("""
        ## Let the epilogue find its own place

        Instead of spelling out the alias group, say *when* each buffer is
        live: A and B while loading and multiplying, the C tile in the
        epilogue, a small bias vector from the MMA on. The solver places
        buffers that are never live together over each other, proves the
        layout the smallest possible, and the lifetime map shows why: the
        shaded step is the one whose live buffers alone need the peak.
        """),
        code("""
        g = Gemm(arch="sm_90a", tile_n=128, stages=5)
        lifetimes = SmemAllocator(arch=g.arch, steps=("load", "mma", "epilogue"))
        lifetimes.add_resource(MainloopAB(g), live=range(0, 2))
        lifetimes.add_resource(Epilogue(g), live="epilogue")
        lifetimes.add(SmemAllocation("bias", dtype="f32", count=g.tile_n, alignment=16), live={"mma", "epilogue"})
        comparison = smemviz.experimental.compare_layouts(lifetimes)
        lifetimes.compute_layout()
        plan = lifetimes.plan
        print(smemviz.analysis.text_report(plan))
        print("live at the epilogue:", [r.name for r in plan.live_at("epilogue")])
        for label, other in comparison.items():
            print(f"{label:>12}: {other.data_total:>7} B  optimal={other.optimal}")
        """),
        code("smemviz.experimental.lifetime_figure(plan)"),
        md("The byte map of one step, and the three layouts of the same declarations side by side:"),
        code("""
        from smemviz.figures import step_figure

        step_figure(plan, "epilogue")  # what is live then; the buffers not live are shown as such, not as padding
        """),
        code("""
        from smemviz.figures import comparison_figure

        comparison_figure(comparison)
        """),
        md("""
        In the explorer, a layout solved from lifetimes gets a **Lifetimes** tab:
        the lifetime map, redrawn as the controls move; a step slider (or a
        click on a step's column of live bytes) with the byte map of what is
        live then; and "compare layouts", which lays the same declarations out
        without sharing, greedily and optimally and draws the one you pick.
        """),
        code("""
        def gemm_lifetimes(stages=5, tile_n=128):
            g = Gemm(arch="sm_90a", tile_n=tile_n, stages=stages)
            s = SmemAllocator(arch=g.arch, steps=("load", "mma", "epilogue"))
            s.add_resource(MainloopAB(g), live=range(0, 2))
            s.add_resource(Epilogue(g), live="epilogue")
            s.add(SmemAllocation("bias", dtype="f32", count=g.tile_n, alignment=16), live={"mma", "epilogue"})
            return s


        lifetime_explorer = smemviz.explore(gemm_lifetimes, stages=(1, 8), tile_n=[64, 128, 256])
        lifetime_explorer.show_lifetimes(step="epilogue")
        lifetime_explorer
        """),
        code("""
        view = lifetime_explorer.lifetimes
        print("explorer step:", view.step_control.label)
        print("live in the explorer's epilogue:", sorted(r.name for r in view.plan.live_at(view.step)))
        """),
    ]


# ---------------------------------------------------------------------------
# 03: kernels from cells
# ---------------------------------------------------------------------------


def kernels_from_cells() -> nbformat.NotebookNode:
    return notebook(
        [
            md("""
        # Kernels from notebook cells

        The allocator that computes a layout also drives the kernel: inside a
        `@cute.kernel`, `allocate()` emits the one SMEM array, `get()` hands
        out typed views at the planned offsets, pipeline barriers and the
        TMEM-pointer slot sit where the plan puts them.

        Compiling needs the CuTe DSL (`pip install "smemviz[cutlass]"`) but
        **no GPU**: every cell down to the last one runs anywhere, for Hopper
        (sm_90a) and Blackwell (sm_100a) alike. The last cell launches on a
        GPU when there is one (PyTorch with CUDA provides the buffers) and
        says so and skips when there is none.
        """),
            code(r"""
        import smemviz
        from smemviz import SmemAllocation, SmemAllocator, TmemAllocation, TmemAllocator, kernel

        gpu = kernel.current_gpu()
        print("GPU:", f"{gpu.name} ({gpu.arch})" if gpu else "none (compile only)")
        """),
            md("""
        ## Two layouts

        The same GEMM-style SMEM layout for Hopper and Blackwell: pipelined A/B
        tiles, the epilogue's C tile aliased with them, load-pipeline
        barriers; Blackwell adds the TMEM-pointer slot and two TMEM
        accumulators.
        """),
            code(r"""
        from dataclasses import dataclass


        @dataclass
        class Stages:
            num_stages: int
            barrier_ptr: object = None


        class Mainloop:
            name, pipeline_group = "mainloop", None

            def __init__(self, stages: int, tile_m: int, tile_n: int, tile_k: int):
                self.a = SmemAllocation("smem_a", dtype="bf16", count=stages * tile_m * tile_k, alignment=1024)
                self.b = SmemAllocation("smem_b", dtype="bf16", count=stages * tile_n * tile_k, alignment=1024)
                self.pipeline_config = Stages(stages)

            def get_smem_requirements(self):
                return [self.a, self.b]


        def gemm_smem(blackwell: bool, stages: int = 4, tile_m: int = 128, tile_n: int = 128, tile_k: int = 64):
            smem = SmemAllocator(arch="sm_100a" if blackwell else "sm_90a")
            mainloop = Mainloop(stages, tile_m, tile_n, tile_k)
            smem.add_resource(mainloop)
            c = SmemAllocation("epi_c", dtype="bf16", count=tile_m * tile_n, alignment=1024)
            smem.add_alias_group([[mainloop.a, mainloop.b], [c]])
            if blackwell:
                smem.add_tmem_ptr(SmemAllocation("tmem_ptr", size_bytes=4, alignment=4))
            smem.compute_layout()
            return smem


        hopper, blackwell = gemm_smem(False), gemm_smem(True)
        tmem = TmemAllocator(arch="sm_100a")
        for i in range(2):
            tmem.add(TmemAllocation(f"acc{i}", num_columns=128))
        tmem.compute_layout()
        print("Hopper SMEM:", hopper.plan.unified_bytes, "B;  Blackwell SMEM:", blackwell.plan.unified_bytes,
              "B;  TMEM:", tmem.total_tmem_columns, "columns")
        """),
            md("""
        ## What the kernel requests

        `kernel.compile_probe` compiles smemviz's probe kernel for a layout
        (it writes a distinct tag into every region, phase by phase, and
        reads SMEM back). Its launch requests exactly the plan's unified
        bytes of dynamic shared memory; the PTX declares the one array.
        """),
            code(r"""
        import re

        compiled = {}
        for arch, allocator in [("sm_90a", hopper), ("sm_100a", blackwell)]:
            k = kernel.compile_probe(allocator, arch=arch)
            compiled[arch] = k
            decl = re.search(r"^\.extern \.shared .*$", k.ptx, re.M).group(0)
            target = re.search(r"^\.target (\w+)", k.ptx, re.M).group(1)
            print(f"{arch}: compiled in {k.compile_seconds:.2f} s for PTX target {target}")
            print(f"  requests {k.dynamic_smem_bytes} B of dynamic SMEM; the plan says {allocator.plan.unified_bytes} B")
            print(f"  {decl}")
        """),
            md("""
        ## Blackwell: TMEM through the slot

        The TMEM kernel calls `tcgen05.alloc` with the allocator's column
        count, which writes the TMEM base address into the SMEM slot; it then
        touches every column of every TMEM allocation and deallocates.
        """),
            code(r"""
        tk = kernel.compile_tmem(tmem, blackwell, arch="sm_100a")
        for line in tk.ptx.splitlines():
            if re.search(r"tcgen05\.(alloc|relinquish|dealloc)", line):
                print("  ", line.strip())
        print("tcgen05.alloc columns in the PTX:", kernel.tcgen05_alloc_columns_in_ptx(tk.ptx),
              "; the allocator says", tmem.tcgen05_alloc_columns)
        try:
            kernel.compile_tmem(tmem, blackwell, arch="sm_90a")
        except ValueError as err:
            print("sm_90a:", err)
        """),
            md("""
        ## A pipelined kernel

        A staged copy through SMEM: `stages` tile buffers and one full/empty
        mbarrier pair per stage, both placed by the allocator
        (`assign_barrier_ptrs()` points the pipeline at the barrier region).
        """),
            code(r"""
        pipe_smem, pipe = kernel.pipeline_layout(stages=4, tile=256)
        print(smemviz.analysis.text_report(pipe_smem.plan))
        pk = kernel.compile_pipeline(pipe_smem, pipe, arch="sm_90a")
        print("mbarrier instructions in the PTX:", len(re.findall(r"\bmbarrier\.", pk.ptx)))
        print(f"requests {pk.dynamic_smem_bytes} B; the plan says {pipe_smem.plan.unified_bytes} B")
        """),
            md("""
        ## Your own kernel

        Any kernel can take its shared memory from an allocator. This one
        reverses 256 floats through a typed view of `tile`; each compile
        traces it again and `allocate()` emits a fresh SMEM array for it.
        """),
            code(r"""
        import cutlass
        import cutlass.cute as cute
        from cutlass.cute.runtime import make_fake_tensor

        N = 256


        class ReverseThroughSmem:
            def __init__(self):
                self.smem = SmemAllocator()
                self.tile = self.smem.add(SmemAllocation("tile", dtype="f32", count=N))
                self.smem.compute_layout()

            @cute.jit
            def __call__(self, src: cute.Tensor, dst: cute.Tensor):
                self.kernel(src, dst).launch(grid=[1, 1, 1], block=[N, 1, 1])

            @cute.kernel
            def kernel(self, src: cute.Tensor, dst: cute.Tensor):
                tidx, _, _ = cute.arch.thread_idx()
                self.smem.allocate()
                buf = self.smem.get(self.tile)
                buf[tidx] = src[tidx]
                cute.arch.sync_threads()
                dst[tidx] = buf[N - 1 - tidx]


        from pathlib import Path

        dump = Path("out") / "kernels"  # where the DSL keeps the PTX it writes
        dump.mkdir(parents=True, exist_ok=True)
        for arch in ["sm_90a", "sm_100a"]:
            fake = [make_fake_tensor(cutlass.Float32, (N,), stride=(1,)) for _ in range(2)]
            fn = cute.compile(ReverseThroughSmem(), *fake, options=f"--gpu-arch={arch} --keep-ptx --dump-dir={dump}")
            ptx = fn.artifacts.PTX
            print(arch, "->", re.search(r"^\.target (\w+)", ptx, re.M).group(1), "|",
                  re.search(r"^\.extern \.shared .*$", ptx, re.M).group(0))
        """),
            md("Keep the PTX and cubin for a closer look (written under `out/`, ignored by git):"),
            code(r"""
        for arch, k in compiled.items():
            paths = k.write(dump)
            print(arch, {kind: str(p) for kind, p in paths.items()})
        """),
            md("""
        ## On a GPU

        With a GPU this launches the probe for the layout that fits it and
        checks every byte; on a Blackwell datacenter GPU it also launches the
        TMEM kernel, and everywhere it runs the kernel written above. Without
        a GPU it says so and skips.
        """),
            code(r"""
        import shutil

        gpu = kernel.current_gpu()
        if gpu is None:
            why = ("an NVIDIA driver is here but no CUDA-enabled PyTorch for the buffers"
                   if shutil.which("nvidia-smi") else "no CUDA device is visible")
            print(f"no GPU here: skipping the launch ({why}); the kernels above compiled without one")
        else:
            import torch
            from cutlass.cute.runtime import from_dlpack

            layout = blackwell if gpu.has_tmem else hopper
            if layout.plan.fits(gpu.arch):
                result = smemviz.probe(layout)
                print(result.summary())
            else:
                print(layout.plan.capacity(gpu.arch).message(), "- probe skipped")

            src = torch.arange(N, dtype=torch.float32, device="cuda")
            dst = torch.zeros_like(src)
            fn = cute.compile(ReverseThroughSmem(), from_dlpack(src), from_dlpack(dst))
            fn(from_dlpack(src), from_dlpack(dst))
            torch.cuda.synchronize()
            print("own kernel reversed through SMEM:", bool(torch.equal(dst, src.flip(0))))

            if gpu.has_tmem:
                t = kernel.run_tmem(tmem, blackwell)
                print(f"TMEM kernel: {t.alloc_columns} columns, {t.wrong_cells} wrong cells")
            else:
                print(f"{gpu.name} has no tensor memory: the TMEM kernel was compiled above, not launched")
            print(f"launched on {gpu.name} ({gpu.arch})")
        """),
        ]
    )


# ---------------------------------------------------------------------------
# 04: layouts written against CUTLASS's own allocators
# ---------------------------------------------------------------------------


def cutlass_allocators() -> nbformat.NotebookNode:
    return notebook(
        [
            md("""
        # Reading layouts written for CUTLASS's own allocator

        The CuTe DSL ships its own declarative allocators in
        `cutlass.experimental.task_scheduling.memory`. Code written against
        them does not need to change to be inspected: `smemviz.plan_from_cutlass`
        (or `smemviz.as_plan`) reads a computed CUTLASS allocator into a
        `LayoutPlan`, and every smemviz report, check and view works on it.

        This notebook needs the CuTe DSL (`pip install "smemviz[cutlass]"`),
        but no GPU.
        """),
            code("""
        import cutlass
        import cutlass.pipeline
        from cutlass.experimental.task_scheduling import memory as ts_memory
        from cutlass.experimental.task_scheduling.enums import PipelineType
        from cutlass.experimental.task_scheduling.resources import PipelineConfig

        import smemviz
        """),
            md("""
        ## A layout declared with CUTLASS's classes

        One function declares a Blackwell GEMM layout with whichever module's
        classes it is given, so the very same declarations can go to CUTLASS
        and to smemviz. The pipeline configs are CUTLASS's own
        `PipelineConfig` objects.
        """),
            code("""
        STAGES, TILE_M, TILE_N, TILE_K = 4, 128, 256, 64


        def pipeline_config(stages: int, pipeline_type) -> PipelineConfig:
            group = cutlass.pipeline.CooperativeGroup(cutlass.pipeline.Agent.Thread, 1)
            return PipelineConfig(num_stages=stages, num_bytes=0, producer_group=group,
                                  consumer_group=group, pipeline_type=pipeline_type)


        class Resource:
            \"\"\"A minimal task-scheduling resource: a name, its SMEM and TMEM needs, a pipeline.\"\"\"
            pipeline_group = None

            def __init__(self, name, smem=(), tmem=(), pipeline=None):
                self.name, self._smem, self._tmem, self.pipeline_config = name, list(smem), list(tmem), pipeline

            def get_smem_requirements(self):
                return self._smem

            def get_tmem_requirements(self):
                return self._tmem


        def declare(mod):
            \"\"\"The same GEMM layout, built with `mod`'s allocators and allocations.\"\"\"
            a = mod.SmemAllocation("smem_a", dtype=cutlass.BFloat16, count=STAGES * TILE_M * TILE_K, alignment=1024)
            b = mod.SmemAllocation("smem_b", dtype=cutlass.BFloat16, count=STAGES * TILE_N * TILE_K, alignment=1024)
            c = mod.SmemAllocation("epi_c", dtype=cutlass.BFloat16, count=TILE_M * TILE_N, alignment=1024)
            sched = mod.SmemAllocation("sched_info", size_bytes=16 * 2, alignment=16)
            mainloop = Resource("mainloop", smem=[a, b], pipeline=pipeline_config(STAGES, PipelineType.TmaUmma))
            accum = Resource("accumulators", tmem=[mod.TmemAllocation(f"acc{i}", TILE_N) for i in range(2)],
                             pipeline=pipeline_config(2, PipelineType.UmmaAsync))
            scheduler = Resource("scheduler", smem=[sched], pipeline=pipeline_config(2, PipelineType.AsyncAsync))

            smem = mod.SmemAllocator()
            for r in (mainloop, accum, scheduler):
                smem.add_resource(r)
            smem.add_alias_group([[a, b], [c]])
            smem.add_tmem_ptr(mod.SmemAllocation("tmem_ptr", size_bytes=4, alignment=4))
            tmem = mod.TmemAllocator()
            tmem.add_resource(accum)
            smem.compute_layout()
            tmem.compute_layout()
            return smem, tmem


        cutlass_smem, cutlass_tmem = declare(ts_memory)
        print(type(cutlass_smem).__module__, type(cutlass_smem).__name__)
        print("CUTLASS says: data", cutlass_smem.total_smem_bytes, "B, barriers", cutlass_smem.barrier_smem_bytes,
              "B, TMEM", cutlass_tmem.total_tmem_columns, "columns")
        """),
            md("""
        ## Read it into a plan

        CUTLASS's allocator knows offsets and totals; the plan adds the
        region map, padding, alias phases, barrier placement and capacity.
        """),
            code("""
        plan = smemviz.plan_from_cutlass(cutlass_smem, arch="sm_100a")
        tmem_plan = smemviz.plan_from_cutlass(cutlass_tmem, arch="sm_100a")
        print(smemviz.analysis.text_report(plan))
        print(smemviz.analysis.text_report(tmem_plan))
        """),
            code("""
        for arch in ["sm_90a", "sm_100a", "sm_120"]:
            print(plan.capacity(arch).message())
        print("as_plan gives the same plan:", smemviz.as_plan(cutlass_smem) == smemviz.plan_from_cutlass(cutlass_smem))
        """),
            md("""
        Every view takes CUTLASS's allocators directly: the explorer, the
        figures and the exports.
        """),
            code("""
        smemviz.explore((cutlass_smem, cutlass_tmem), arch="sm_100a")
        """),
            code("""
        from pathlib import Path

        Path("out").mkdir(exist_ok=True)
        path = smemviz.export((cutlass_smem, cutlass_tmem), Path("out") / "cutlass_gemm.md", arch="sm_100a")
        print(path.read_text()[:600])
        """),
            md("""
        ## Same declarations, same layout

        smemviz's allocators follow CUTLASS's layout rule, so moving to them
        changes no offset. Declare the layout again with smemviz and compare
        region by region.
        """),
            code("""
        ours_smem, ours_tmem = declare(smemviz)
        ours = ours_smem.plan

        print(f"{'region':<24} {'CUTLASS':>9} {'smemviz':>9}  size")
        same = True
        for theirs_r, ours_r in zip(plan.regions, ours.regions):
            same &= (theirs_r.name, theirs_r.offset, theirs_r.size) == (ours_r.name, ours_r.offset, ours_r.size)
            print(f"{theirs_r.name:<24} {theirs_r.offset:>9} {ours_r.offset:>9}  {ours_r.size}")
        same &= len(plan.regions) == len(ours.regions) and plan.unified_bytes == ours.unified_bytes
        same &= [r.offset for r in tmem_plan.regions] == [r.offset for r in ours_tmem.plan.regions]
        print(f"unified SMEM: CUTLASS {plan.unified_bytes} B, smemviz {ours.unified_bytes} B")
        print("identical layouts:", same)
        """),
            md("""
        ## Where they differ: sub-byte types

        CUTLASS sizes a typed allocation as `count * (width // 8)`, which is
        0 bytes for 4-bit types such as FP4. smemviz sizes it exactly, and
        refuses allocations that would come out empty.
        """),
            code("""
        count = 128 * 256
        fp4_cutlass = ts_memory.SmemAllocation("sfa", dtype=cutlass.Float4E2M1FN, count=count)
        fp4_smemviz = smemviz.SmemAllocation("sfa", dtype=cutlass.Float4E2M1FN, count=count)
        print(f"{count} x fp4: CUTLASS reserves {fp4_cutlass.size_bytes} B, smemviz {fp4_smemviz.size_bytes} B")
        """),
            *struct_cells(),
        ]
    )


def struct_cells() -> list[nbformat.NotebookNode]:
    """Notebook 04's last part: a kernel's own ``@cute.struct`` storage, linted, with its occupancy."""
    return [
        md("""
        ## A kernel as it is written: its `@cute.struct` SharedStorage

        Most CuTe DSL kernels declare shared memory as a `@cute.struct`.
        Below is the storage of CUTLASS's Hopper dense GEMM example, built the
        way that example builds it at trace time: fp16 A and B tiles of
        128x128x64, 7 stages, the staged SMEM layouts from the DSL's Hopper
        helpers, the mbarriers first, the operands aligned to 1024 B. Tracing
        needs no GPU (`CUTE_DSL_ARCH` names the target).
        """),
        code("""
        import os

        os.environ.setdefault("CUTE_DSL_ARCH", "sm_90a")
        import cutlass.cute as cute
        import cutlass.utils.hopper_helpers as sm90_utils
        from cutlass.tensor_utils import LayoutEnum


        def hopper_gemm_storage(stages=7, tile=(128, 128, 64), operand_align=1024):
            \"\"\"Trace a jit function that declares the GEMM's SharedStorage; return the struct.\"\"\"
            found = {}

            @cute.jit
            def declare():
                a_layout = sm90_utils.make_smem_layout_a(LayoutEnum.ROW_MAJOR, tile, cutlass.Float16, stages)
                b_layout = sm90_utils.make_smem_layout_b(LayoutEnum.ROW_MAJOR, tile, cutlass.Float16, stages)

                @cute.struct
                class SharedStorage:
                    mainloop_pipeline_array_ptr: cute.struct.MemRange[cutlass.Int64, stages * 2]
                    sA: cute.struct.Align[cute.struct.MemRange[cutlass.Float16, cute.cosize(a_layout)], operand_align]
                    sB: cute.struct.Align[cute.struct.MemRange[cutlass.Float16, cute.cosize(b_layout)], operand_align]

                found["storage"], found["swizzle"] = SharedStorage, str(a_layout.inner)

            cute.compile(declare)
            return found["storage"], found["swizzle"]


        SharedStorage, swizzle = hopper_gemm_storage()
        print(f"the DSL says: {SharedStorage.__sizeof__()} B; offsets {SharedStorage._offsets}; A swizzle {swizzle}")
        """),
        md("""
        `plan_from_struct` reads the struct with the DSL's own offsets and
        size. The struct cannot say that A and B are 128B-swizzled (the
        `S<3,4,3>` above) in 7 stages, so that is passed by field name; the
        linter uses it. The mbarrier array is recognised by its name.
        """),
        code("""
        operands = {"sA": "128B", "sB": "128B"}
        plan = smemviz.plan_from_struct(SharedStorage, arch="sm_90a", swizzle=operands, stages={"sA": 7, "sB": 7})
        print(smemviz.analysis.text_report(plan))
        print(f"plan total equals the DSL's size: {plan.total == SharedStorage.__sizeof__()}")
        """),
        md("""
        The struct puts the 112 B of mbarriers first and pads to the
        1024-aligned operands: 912 B of padding that the allocator (which
        sorts by alignment and puts the barriers last) would not spend. A
        kernel within those bytes of the limit fits one way and not the other.
        """),
        code("""
        alloc = smemviz.SmemAllocator()
        for name in ("sA", "sB"):
            region = plan.region(name)
            alloc.add(smemviz.SmemAllocation(name, region.size, 1024, swizzle="128B", stages=7))
        alloc.add(smemviz.SmemAllocation("mainloop_pipeline_array_ptr", 112, 8))
        alloc.compute_layout()
        print(f"struct: {plan.total} B, allocator: {alloc.plan.total} B, difference {plan.total - alloc.plan.total} B")
        """),
        md("""
        ## Lint: the hardware's rules

        The layout above breaks none. Declare the operands with the 128 B
        alignment TMA alone needs and both start off their 1024 B swizzle
        atoms: the kernel would read garbage, and nothing else would say so.
        """),
        code("""
        print(f"as written: {smemviz.analysis.lint(plan).text()}")
        Loose, _ = hopper_gemm_storage(operand_align=128)
        loose = smemviz.plan_from_struct(Loose, arch="sm_90a", swizzle=operands, stages={"sA": 7, "sB": 7})
        for finding in smemviz.analysis.lint(loose):
            print(finding.line())
        """),
        md("""
        ## Occupancy

        One CTA of this GEMM fills an SM's shared memory. The occupancy says
        what a second CTA per SM would take; fewer stages get there.
        """),
        code("""
        print(smemviz.analysis.occupancy(plan).message())
        for stages in range(7, 1, -1):
            storage, _ = hopper_gemm_storage(stages=stages)
            occ = smemviz.analysis.occupancy(smemviz.plan_from_struct(storage, arch="sm_90a"), threads=384)
            print(f"{stages} stages: {storage.__sizeof__():>7} B -> {occ.ctas} CTA(s)/SM, limited by {occ.limiter}")
        """),
        code("""
        smemviz.smem_figure(plan)
        """),
    ]


# ---------------------------------------------------------------------------
# 05: tuning a real GEMM
# ---------------------------------------------------------------------------


def tuning_real_gemm() -> nbformat.NotebookNode:
    return notebook(
        [
            md("""
        # Tuning a real GEMM: layout choices measured in TFLOP/s

        `smemviz.kernel` holds a warp-specialised Hopper GEMM (TMA loads, WGMMA,
        `cutlass.pipeline` mbarriers, a TMA-store epilogue) whose shared memory is
        one smemviz layout: the A/B operand stages, the epilogue's C staging buffer
        and every mbarrier are allocations, placed by `SmemAllocator`. Change the
        layout and you change the kernel.

        This notebook needs the CuTe DSL (`pip install "smemviz[cutlass]"`). Without
        a GPU it compiles every configuration and shows what it requests; on an
        H200 (sm_90) it also launches, checks against `torch` and times them.
        Cells that need the GPU say so and skip; the last section reads the sweep
        recorded on the H200 from `results/`.
        """),
            code("""
        from pathlib import Path

        import cutlass  # noqa: F401  (the kernel is written in the CuTe DSL)

        import smemviz
        from smemviz.kernel import (
            GemmConfig, GemmProblem, SweepResult, compile_gemm, current_gpu, gemm_allocator,
            gemm_layout, gemm_runner, max_stages, sweep,
        )

        GPU = current_gpu()
        print("GPU:", GPU.name if GPU else "none here: compile-only mode")
        """),
            md("""
        ## The layout is the kernel's shared memory

        A config names the choices a kernel author tunes. With `stages=None` the
        layout takes the most operand stages that fit the architecture's 227 KiB.
        The C staging buffer is written only after the last operand stage is read,
        so it may share bytes with the operand stages: an alias group whose second
        phase starts after the mainloop.
        """),
            code("""
        layout = gemm_layout(GemmConfig(tile_n=128, alias_epilogue=True))
        layout.allocator.print_usage_report()
        for tile_n in (128, 256):
            apart = max_stages(GemmConfig(tile_n=tile_n, alias_epilogue=False))
            shared = max_stages(GemmConfig(tile_n=tile_n, alias_epilogue=True))
            print(f"tile 128x{tile_n}: {apart} stages with C staging apart, {shared} with it aliased")
        """),
            md("""
        ## Explore it, and run it from the explorer

        The sliders rebuild the layout (a stage count that does not fit shows the
        error with the numbers); "most that fit" (`stages=0`) picks the most stages that fit. **Run on GPU**
        compiles the kernel for the current controls, launches it on a 4096^3
        problem, checks it against `torch` and keeps every run in the history
        table and plot. Without a GPU it still compiles and reports the requested
        dynamic SMEM and the registers per thread, and says why it did not run.
        `c_swizzle` lays the C staging buffer out in another mode: "none" (plain
        rows) makes the epilogue's stores 4-way, and the byte map's conflict strip
        and the Banks tab show it before anything runs.
        """),
            code("""
        import ipywidgets as widgets


        def stage_slider():  # stages 2..8, and 0 read as what it means: the most that fit
            return widgets.SelectionSlider(options=[("most that fit", 0), *((str(k), k) for k in range(2, 9))],
                                           index=0, description="stages")


        ex = smemviz.explore(
            gemm_allocator, run=gemm_runner(GemmProblem(4096, 4096, 4096)),
            dtype=["f16", "bf16", "f8e4m3"], tile_n=[128, 256], cluster_m=[1, 2], stages=stage_slider(),
            alias_epilogue=True, c_swizzle=["auto", "none", "32B"],
        )
        ex.controls["tile_n"].value = 128
        ex
        """),
            code("""
        row = ex.run_panel.run()  # what the button does
        print(ex.run_panel.history[-1]["label"], "->", "ran" if row["ran"] else "compiled only:", row["reason"])
        """),
            md("""
        ## What the compiler made of it

        The launch's dynamic SMEM request is read back from the code the DSL
        generated, not computed by smemviz, and the registers come from the cubin.
        """),
            code("""
        for config in (GemmConfig(tile_n=128), GemmConfig(tile_n=128, alias_epilogue=False), GemmConfig(tile_n=256)):
            k = compile_gemm(config)
            plan = gemm_layout(config)
            print(f"{plan.config.label():32s} requests {k.dynamic_smem_bytes} B of dynamic SMEM; "
                  f"the plan says {plan.unified_bytes} B; "
                  f"{k.ptx.count('wgmma.mma_async')} wgmma, {k.ptx.count('cp.async.bulk.tensor')} TMA in the PTX")
        """),
            md("""
        ## A sweep: stages x tile x aliasing

        Every configuration is compiled once (the cache keeps it for the next
        sweep). On a GPU each is checked, then all are timed together in
        interleaved rounds; here, without one, the sweep shows what each requests.
        """),
            code("""
        configs = [
            GemmConfig(tile_n=tile_n, cluster_m=2, alias_epilogue=alias, stages=stages)
            for tile_n in (128, 256)
            for alias in (True, False)
            for stages in range(2, max_stages(GemmConfig(tile_n=tile_n, alias_epilogue=alias)) + 1)
        ]
        live = sweep(configs, GemmProblem(8192, 8192, 8192), progress=True)
        print(live.table(("label", "stages", "smem_requested", "registers", "tflops", "reason")))
        live.figure("stages")
        """),
            md("""
        ## The same GEMM on Blackwell: SMEM and TMEM from the allocators

        `GemmConfig(arch="sm_100a")` builds the Blackwell kernel's layout: the
        accumulators move from registers into tensor memory (a `TmemAllocator`
        plan, one `tile_n`-column buffer per accumulator stage), and the SMEM plan
        gains the TMEM-pointer slot that `tcgen05.alloc` writes and a second
        pipeline's mbarriers (MMA to epilogue). With two accumulator buffers the
        epilogue drains one tile while the MMA fills the next, so the C staging
        buffer cannot share the operand stages' bytes. Below: the Hopper layout
        (left) beside the Blackwell SMEM and TMEM maps (right).
        """),
            code("""
        import ipywidgets as widgets
        import plotly.graph_objects as go

        from smemviz.figures import layout_figure
        from smemviz.kernel import blackwell_gemm_allocators, gemm_plan_facts

        hopper = gemm_layout(GemmConfig(tile_n=256, alias_epilogue=False))
        blackwell = gemm_layout(GemmConfig(tile_n=256, alias_epilogue=False, acc_stages=2, arch="sm_100a"))
        for lay in (hopper, blackwell):
            tmem = f"{lay.tmem_plan.tmem_alloc_columns} TMEM columns" if lay.tmem else "accumulators in registers"
            print(f"{lay.config.label():36s} {lay.stages} stages, {lay.unified_bytes} B of SMEM, {tmem}")
        maps = [layout_figure(hopper.allocator), layout_figure(blackwell.allocator, blackwell.tmem)]
        for fig, title in zip(maps, ("Hopper sm_90a", "Blackwell sm_100a")):
            fig.update_layout(width=460, title=title)
        widgets.HBox([go.FigureWidget(fig) for fig in maps])
        """),
            md("""
        ### Compiled for sm_100a, here, and read back from the PTX

        No Blackwell GPU is needed to compile. The reader follows registers in the
        PTX back to the SMEM array and to the TMEM base left in the slot, and each
        fact is set beside the plans: every mbarrier, the slot, the
        `tcgen05.alloc`/`dealloc` column count, the accumulator columns the MMA
        writes and the epilogue reads, the operand offsets in the UMMA descriptors
        and TMA loads, and the C staging buffer the TMA stores read.
        """),
            code("""
        k = compile_gemm(blackwell.config)
        print(f"{blackwell.config.label()} for {k.arch}: the launch asks for {k.dynamic_smem_bytes} B, "
              f"the plan holds {blackwell.unified_bytes} B")
        facts = gemm_plan_facts(blackwell, k.ptx)
        for f in facts:
            print(f"{f.fact:52s} plan {f.plan[:40]:40s} PTX {f.ptx[:40]:40s} {'ok' if f.agrees else 'DIFFERS'}")
        print(f"all {len(facts)} PTX facts agree with the plans: {all(f.agrees for f in facts)}")
        """),
            md("""
        The Blackwell layout in the explorer, with its run action: on a B200-class
        GPU it launches and times the kernel; anywhere else it compiles and names
        the GPU it lacks. (This kernel has been compiled, never run: no Blackwell
        GPU has been available; see `results/gemm_sm100.md`.)
        """),
            code("""
        bw = smemviz.explore(
            blackwell_gemm_allocators, run=gemm_runner(GemmProblem(4096, 4096, 4096), arch="sm_100a"),
            dtype=["f16", "bf16"], tile_n=[128, 256], stages=stage_slider(), alias_epilogue=False, acc_stages=[1, 2],
        )
        bw_row = bw.run_panel.run()
        print(bw_row["label"], "->", "ran" if bw_row["ran"] else "compiled only:", bw_row["reason"])
        bw
        """),
            md("""
        ## What does aliasing the epilogue buy? (measured on the H200)

        The sweep below was run on an H200 by `benchmarks/gemm_sweep_h200.py` and
        is stored in `results/gemm_sweep_h200.json` (f16, 8192^3, cluster 2x1,
        random normal inputs). When this notebook runs on a GPU, `live` above holds
        a fresh measurement of the same grid.
        """),
            code(f"""
        # results/gemm_sweep_h200.json, inlined when the notebook was generated so that it runs anywhere
        RECORDED_SWEEP = {_recorded_sweep()!r}
        result = live if live.ran else SweepResult.from_json(RECORDED_SWEEP)
        print("measured on", result.gpu, "" if live.ran else "(recorded: results/gemm_sweep_h200.json)")
        print(result.table(("label", "stages", "smem_requested", "tflops", "rel_err")))
        result.figure("stages")
        """),
            code("""
        def best(rows, tile_n, alias):
            pick = [r for r in rows if r["tile_n"] == tile_n and r["alias_epilogue"] == alias and r["tflops"]]
            return max(pick, key=lambda r: r["tflops"])

        for tile_n in (128, 256):
            a, s = best(result.rows, tile_n, False), best(result.rows, tile_n, True)
            print(f"tile 128x{tile_n}: C apart best {a['tflops']:.0f} TFLOP/s at {a['stages']} stages, "
                  f"aliased best {s['tflops']:.0f} TFLOP/s at {s['stages']} stages: "
                  f"aliasing changes TFLOP/s by {100 * (s['tflops'] / a['tflops'] - 1):+.1f}%")
        """),
            md("""
        Aliasing buys a seventh stage at tile 128x128 and only 16 KiB of headroom
        at 128x256, where a fifth stage still does not fit. Whether the extra
        stage pays shows in the sweep: past three or four stages the mainloop is
        fed, and on this H200 the 8192^3 runs sit at the board's power limit, so
        the remaining differences are small. `results/gemm_h200.md` has the
        side-by-side benchmark against `torch.matmul` and CUTLASS's example.
        """),
        ]
    )


# ---------------------------------------------------------------------------
# 06: bank conflicts and swizzles
# ---------------------------------------------------------------------------


def bank_conflicts_notebook() -> nbformat.NotebookNode:
    return notebook(
        [
            md("""
        # 06 bank conflicts and swizzles

        A layout that fits is half the job: the other half is how the warps touch
        it. Shared memory has 32 banks of 4 bytes; a warp instruction is served in
        *wavefronts*, and lanes that need different words of one bank wait for
        each other. smemviz predicts the wavefronts and Nsight Compute's conflict
        count of every warp access exactly as an H200 counts them, from the
        region's real offset in the plan, the tile's CuTe layout, its swizzle and
        the instruction; says which swizzle fixes a conflict; and draws the banks.

        Everything here runs on the CPU: the H200's numbers are recorded inline.
        """),
            code("""
        from smemviz.analysis.banks import advise, analyze_access, bank_conflicts, stmatrix_atom
        from smemviz.analysis.banks import bank_report_text, conflict_strip
        from smemviz.figures import bank_conflict_figure
        from smemviz.kernel.gemm import GemmConfig, gemm_layout

        r = bank_conflicts("ld.shared.b32", [8 * lane for lane in range(32)])
        print(r.wavefronts, "wavefronts,", r.conflicts, "conflict,", f"{r.n_way}-way")
        print("bank 0 serves lanes", r.grid()[0][0], "then", r.grid()[1][0])
        """),
            md("""
        ## 1. What the H200 measured

        Probe kernels ran each case as one warp executing one instruction, with
        ncu reading the wavefronts and conflicts (`results/bank_calibration.md`:
        1,182 cases; the model is exact on the 1,004 it accepts). Some of them,
        with the numbers ncu gave; note the 16-byte broadcast (2 wavefronts for a
        load, 4 for a store), the paired 8-byte loads that share one wavefront, and
        cp.async's conflict count.
        """),
            code("""
        RECORDED = [  # (case, instruction, addresses, H200 wavefronts, H200 conflicts)
            (61, "ld.shared.b32", [1028 + 8 * i for i in range(32)], 2, 1),
            (157, "ld.shared.v4.b32", [1152] * 32, 2, 0),
            (353, "st.shared.v4.b32", [5184] * 32, 4, 0),
            (894, "ld.shared.v2.b32", [1024 + 8 * (i // 2) for i in range(32)], 1, 0),
            (897, "ld.shared.v2.b32", [1024 + 8 * (i % 16) for i in range(32)], 2, 0),
            (863, "ld.shared.v2.b32", [1024 + 128 * (i % 2) for i in range(32)], 4, 1),
            (551, "ldmatrix.x4", [1024 + 128 * (i % 8) for i in range(32)], 32, 28),
            (813, "cp.async.ca.16", [1152 + 32 * i for i in range(32)], 8, 4),
        ]
        for case, instruction, addresses, wf, conflicts in RECORDED:
            got = bank_conflicts(instruction, addresses)
            assert (got.wavefronts, got.conflicts) == (wf, conflicts), case
            print(f"case {case:4d} {instruction:17s} H200 {wf:2d} wavefronts, {conflicts:2d} conflicts; model agrees")
        """),
            md("""
        ## 2. A conflicting epilogue

        smemviz's Hopper GEMM stages C through `gemm.c_staging` (128 x 32 bf16 per
        stage, 64-byte rows), written by the eight consumer warps with
        `stmatrix.x4`. Laid out plainly, row-major, every matrix's eight rows
        sit in four banks twice: a 4-way conflict on every instruction (the
        H200 agrees: section 8).
        """),
            code("""
        plan = gemm_layout(GemmConfig(dtype="bf16")).plan
        atom, warps = stmatrix_atom(4), (8, 1)
        plain = analyze_access(plan, "gemm.c_staging", atom, layout="(128,32):(32,1)", dtype="bf16",
                               swizzle=None, warps=warps)
        print(plain.summary())
        bank_conflict_figure(plain)
        """),
            md("""
        ## 3. The advice

        The swizzle mode that removes the conflicts while the buffer stays legal
        for TMA and WGMMA, the alignment it needs, and the lines to write.
        """),
            code("""
        advice = advise(plan, "gemm.c_staging", atom, layout="(128,32):(32,1)", dtype="bf16",
                        swizzle=None, warps=warps)
        print(advice)
        """),
            md("""
        ## 4. The fixed version: the layout the kernel really uses

        The GEMM builds its C staging layout with the CuTe DSL's
        `sm90_utils.make_smem_layout_epi`; traced on the CPU it prints the text
        below (a test checks it still does). It carries the 64B swizzle the advice
        asked for: conflict-free in both epilogue stages.
        """),
            code("""
        DSL_EPI = "S<2,4,3> o 0 o ((8,16),(32,1),(1,2)):((32,256),(1,0),(0,4096))"
        fixed = [analyze_access(plan, "gemm.c_staging", atom, layout=DSL_EPI, dtype="bf16", warps=warps, stage=s)
                 for s in (0, 1)]
        for rep in fixed:
            print(rep.summary())
        bank_conflict_figure(fixed[0])
        """),
            md("""
        ## 5. The table and the strip

        One row per region and access, with the fix; the strip gives each
        region's worst access over its bytes, for the byte map.
        """),
            code("""
        print(bank_report_text([plain, fixed[0]], [advice]))
        for seg in conflict_strip(plan, [plain]):
            print(seg.region, seg.offset, seg.end, f"{seg.excess_ratio:.0f}x the ideal wavefronts")
        """),
            md("""
        ## 6. The access as part of the layout

        An allocation can say how the warps touch it: `access=` on
        `SmemAllocation` (or an `access` key in a layout file). The plan keeps
        it, so `smemviz.analysis.lint(plan)` (and `smemviz check` in CI) reports the conflict
        with its fix, and the usage report carries the table. Here the plain C
        staging buffer and its fixed twin, side by side:
        """),
            code("""
        import smemviz
        from smemviz import SmemAllocation, SmemAllocator

        EPI = {"instruction": "stmatrix.x4", "layout": "(128,32):(32,1)", "warps": (8, 1)}
        epi = SmemAllocator(arch="sm_90a")
        epi.add(SmemAllocation("c_plain", dtype="bf16", count=128 * 32, access=EPI))
        epi.add(SmemAllocation("c_sw64", dtype="bf16", count=128 * 32, alignment=512, swizzle="64B", access=EPI))
        epi.compute_layout()
        for finding in smemviz.analysis.lint(epi.plan):
            print(finding.line())
        print(smemviz.analysis.text_report(epi.plan))
        """),
            md("""
        ## 7. The explorer's Banks tab

        The explorer draws the same accesses: pick a region and an access, toggle
        the swizzle (as declared, none, 32B, 64B, 128B) and the 32-banks-by-wavefronts
        grid and its numbers follow; the byte map carries a conflict strip under
        each region with an access (green conflict-free, red the worst). Here it
        opens on the plain buffer drawn with the 64B swizzle the advice gives:
        """),
            code("""
        import smemviz

        ex = smemviz.explore(epi)
        ex.show_banks("c_plain", swizzle="64B")
        print(ex.banks.title)
        ex
        """),
            md("""
        ## 8. The GEMM itself, measured on the H200

        The GEMM's own plan states its epilogue's access, in the layout the kernel
        builds for each `c_swizzle` mode. `predict_epilogue` gives a launch's
        `stmatrix` totals and `predict_mainloop` its WGMMA operand reads; ncu
        measured both on the H200 for every mode (1024^3, summed over the launch;
        `results/bank_gemm_h200.md`). Only plain rows conflict; WGMMA reads are
        conflict-free in every canonical layout.
        """),
            code("""
        from smemviz.kernel.gemm import GemmProblem, predict_epilogue, predict_mainloop

        H200 = {  # c_swizzle: (stmatrix wavefronts, conflicts, WGMMA wavefronts, ms at 8192x8192x256), ncu
            "auto": (16384, 0, 327680, 0.0892),
            "32B": (16384, 0, 327680, 0.0927),
            "interleaved": (16384, 0, 327680, 0.1637),
            "none": (65536, 49152, 327680, 0.0968),
        }
        for mode, (wf, conflicts, gmma, ms) in H200.items():
            config = GemmConfig(dtype="bf16", c_swizzle=mode)
            epi = predict_epilogue(config, GemmProblem(1024, 1024, 1024))
            main = predict_mainloop(config, GemmProblem(1024, 1024, 1024))
            assert (epi.wavefronts, epi.conflicts, main.wavefronts) == (wf, conflicts, gmma), mode
            print(f"c_swizzle={mode:12s} {epi.wavefronts_per_instruction:4.0f} wavefronts per stmatrix.x4, "
                  f"{epi.conflicts:6d} conflicts (H200 agrees); {ms:.4f} ms on the H200")
        for finding in smemviz.analysis.lint(gemm_layout(GemmConfig(dtype="bf16", c_swizzle="none")).plan):
            print(finding.line()[:120], "...")
        """),
            md("""
        The interleaved layout stores conflict-free and is still the slowest: its
        TMA stores move 16-byte columns, four per sub-tile. Bank wavefronts are one
        cost among several; the measured times are beside them for that reason.
        """),
            md("""
        ## 9. Nsight Compute's counts on the map

        A profiled launch says the same thing in ncu's words: SASS rows with
        wavefronts, no buffer names. `smemviz.read_ncu(report, capture)` gives every
        shared-memory row back to the access capture recorded for it and its region,
        and `analyse(plan, measured=...)` draws the counts under each region's
        predicted strip, labelled with the verdict: "predicted 4-way, measured 4-way",
        or in red, "look here", where the counter and the model part ways.

        The GEMM with plain row-major C staging, captured here on the CPU; the rows
        are what ncu counted on the H200 for one launch on 1024^3 (the `STSM` of the
        epilogue and the `HGMMA` operand reads, from `results/ncu/ncu_gemm_c_none.csv`,
        inline so this runs without a GPU). On a GPU, `read_ncu` takes the CSV of
        `ncu --page source --csv` or the `.ncu-rep` itself, and `smemviz profile
        FILE.py:FUNCTION` (or the explorer's Run on GPU) does all of it in one step.
        """),
            code("""
        import dataclasses

        from smemviz import capture
        from smemviz.analysis import analyse
        from smemviz.analysis.ncu import SassRow
        from smemviz.kernel._compile import compile_host
        from smemviz.kernel.gemm._host import _fake_operands, gemm_kernel

        config = GemmConfig(c_swizzle="none", arch="sm_90a")
        layout, kernel = gemm_kernel(config)
        with capture() as cap:
            compile_host("measured_gemm", kernel, _fake_operands(config.dtype), "sm_90a", key=None)
        (captured,) = cap.kernels.values()

        H200 = [  # ncu, one launch on the H200: SASS, source line, rows alike, executed, wavefronts, ideal
            ("STSM.16.M88.4 [R3], R24", 385, 16, 256, 4096, 1024),
            ("HGMMA.64x256x16.F32 R24, gdesc[UR4], RZ, !UPT", 92, 1, 256, 5120, 5120),
            ("HGMMA.64x256x16.F32 R24, gdesc[UR4], R24", 336, 3, 256, 5120, 5120),
            ("HGMMA.64x256x16.F32 R24, gdesc[UR4], R24", 92, 1, 3840, 76800, 76800),
            ("HGMMA.64x256x16.F32 R24, gdesc[UR4], R24", 348, 1, 3840, 76800, 76800),
            ("HGMMA.64x256x16.F32 R24, gdesc[UR4], R24", 320, 2, 3840, 76800, 76800),
        ]
        rows = [
            SassRow(address=0x1000 + 16 * i, sass=sass, file="_sm90.py", line=line, executed=n,
                    space="Shared", wavefronts=wf, ideal=ideal, excessive=wf - ideal)
            for i, (sass, line, _, n, wf, ideal) in enumerate(r for r in H200 for _ in range(r[2]))
        ]
        measured = smemviz.read_ncu(rows, captured)
        print(f"{len(measured.rows)} rows, {len(measured.unattributed)} not attributed, "
              f"disagreements: {list(measured.disagreements) or 'none'}")
        gemm_measured = analyse(dataclasses.replace(layout.plan, ordering=captured.ordering), measured=measured)
        for segment in gemm_measured.measured:
            print(segment.line())
        smemviz.smem_figure(gemm_measured)
        """),
            md("""
        The same counts in the explorer: its byte map carries them, and its Banks tab
        lists them beside the access picked. `smemviz.export(plan, "gemm.html",
        measured=measured)` writes the map and the table into a page.
        """),
            code("""
        ex = smemviz.explore(gemm_measured.plan, measured=measured)
        ex.show_banks()
        ex
        """),
        ]
    )


# ---------------------------------------------------------------------------
# 07: any CuTe DSL kernel's SMEM, as compiled
# ---------------------------------------------------------------------------


def capture_kernels() -> nbformat.NotebookNode:
    return notebook(
        [
            md("""
        # Any kernel's shared memory, as compiled

        Most CuTe DSL kernels (CUTLASS's examples, quack, flash-attention's cute
        kernels) take their shared memory from the DSL's own allocator,
        `cutlass.memory.SmemAllocator` (or the deprecated `cutlass.utils` one): a
        `@cute.struct` storage, `allocate_tensor`, `allocate_array`. The compiler
        places those allocations, so there is no layout in Python to hand to
        smemviz. `capture()` watches the kernel being compiled instead: it records
        every allocation while the kernel is traced (name, dtype, layout and
        swizzle, alignment, the source line) and reads where the compiler puts
        each one. Nothing in the kernel changes; no GPU is needed.

        The kernel here is `examples/capture_kernel.py`: a Hopper-style tile
        kernel with mbarriers, swizzled A/B stages in a struct and an epilogue
        tile from `allocate_tensor`. It knows nothing about smemviz.
        """),
            code(r"""
        import sys
        from pathlib import Path

        import cutlass  # the CuTe DSL: pip install "smemviz[cutlass]"
        import smemviz
        from smemviz import capture

        Path("out").mkdir(exist_ok=True)  # the kernel's file goes there (next cell), ignored by git
        """),
            md("""
        The kernel, as `examples/capture_kernel.py` has it, written to a file
        so that its source lines are what the map shows:
        """),
            code("%%writefile out/capture_kernel.py\n" + _example_source("capture_kernel.py")),
            code(r"""
        sys.path.insert(0, "out")
        import capture_kernel
        """),
            md("""
        ## The map, the lint rules and the occupancy, in three lines

        Hover a region for its CuTe layout and the line of the kernel that
        declares it.
        """),
            code(r"""
        with capture() as cap: compiled = capture_kernel.build("sm_90a")
        smemviz.smem_figure(cap.plan).show()
        print("lint:", smemviz.analysis.lint(cap.plan).text(), "| occupancy:", smemviz.analysis.occupancy(cap.plan).message())
        """),
            md("""
        ## What was captured

        One row per allocation, as the kernel asked for it and as the compiler
        placed it. The struct's fields are named by their paths, the
        `allocate_tensor` result by the variable it is assigned to.
        """),
            code(r"""
        (kernel,) = cap.kernels.values()
        print(kernel.kernel)
        for a in kernel.allocations:
            print(f"{a.name:8} {a.how:7} offset {a.offset:7,} size {a.size:7,} align {a.alignment:5} {a.source}")
        for r in cap.plan.regions:
            print(f"  {r.name:16} {r.kind:8} {r.offset:7,} {r.swizzle or '':5} {r.layout or ''}")
        """),
            md("""
        ## The capture is the compiled kernel

        The total is the dynamic SMEM the compiled launch asks for, read from
        the host code the DSL generated (as the kernel bridge reads it).
        """),
            code(r"""
        from smemviz.kernel._compile import dynamic_smem_from_ir

        launch = dynamic_smem_from_ir(str(compiled.ir_module))
        print(f"the launch asks for {launch} B, the capture holds {cap.plan.total} B: {launch == cap.plan.total}")
        """),
            md("""
        ## In the explorer, and from the command line

        A capture goes wherever a layout goes: `smemviz.explore(cap)`,
        `smemviz.export(cap, "kernel.html")`. From a shell:
        `smemviz capture examples/capture_kernel.py:build --out kernel.html`.
        CUTLASS's own examples captured this way are in
        `results/capture_examples.md`.
        """),
            code(r"""
        Path("out").mkdir(exist_ok=True)
        smemviz.export(cap, "out/capture_kernel.json")
        print(sorted(r.name for r in smemviz.read_plans(Path("out/capture_kernel.json").read_text())[0].regions))
        """),
        ]
    )


# ---------------------------------------------------------------------------
# 08: is the sharing safe? the ordering of shared bytes
# ---------------------------------------------------------------------------


def ordering_notebook() -> nbformat.NotebookNode:
    return notebook(
        [
            md("""
        # Is the sharing safe? The ordering of shared bytes

        A layout that puts two buffers on the same bytes (an epilogue's C
        staging over the mainloop's A stages, attention's P written into the
        columns of S) is only right if the kernel orders every access of the
        one before every access of the other: an mbarrier wait, a
        `wgmma.wait_group`, a `tcgen05.commit`, a `bar.sync`. When `capture()`
        compiles a kernel it also records, per warp role, every access of shared
        memory and tensor memory and every wait and arrive (the kernel's
        *ordering model*). `check_ordering` runs the kernel's roles against each
        other on the CPU, for the trip counts that matter, and reports:

        * each alias (two regions on the same bytes) with the **edge** that
          orders them, or `unordered`;
        * each pipeline wait that never gets its arrivals (**where it hangs**);
        * what it could not read (an `info`), so that no sharing is called safe
          the check did not prove.

        `docs/ordering.md` has the rules. No GPU is needed.
        """),
            code(r"""
        import dataclasses
        import os
        import sys
        from pathlib import Path

        # no GPU here: the DSL compiles for the architecture named here, read when it is imported (Blackwell's,
        # for the FMHA below; the Hopper kernels are compiled for sm_90a by name)
        os.environ["CUTE_DSL_ARCH"] = "sm_100a"
        import cutlass  # the CuTe DSL: pip install "smemviz[cutlass]"
        import smemviz
        from smemviz import capture
        from smemviz.analysis.ordering import check_ordering
        from smemviz.figures import ordering_figure

        Path("out").mkdir(exist_ok=True)  # the kernel files below go there, ignored by git
        """),
            md("""
        ## CUTLASS's Blackwell FMHA: S, P and O in tensor memory

        CUTLASS's Blackwell fused multi-head attention keeps two query tiles in
        flight. Each has its scores S, its output O and, once softmax is done,
        its probabilities P in TMEM; P and the softmax row statistics are
        written *into* the columns of an S (P0 inside S1, P1 inside S0), so
        each in-place write must wait until the reads of that S are done.

        Its capture needs CUTLASS's examples (`examples/python/CuTeDSL` of a
        CUTLASS checkout), which are not shipped with the DSL's wheel. Where they
        are (`$SMEMVIZ_CUTLASS_EXAMPLES`, else `.cutlass_examples/` of this
        repository), the next cells compile the FMHA for `sm_100a` on the CPU
        under `capture()` (about half a minute): head dim 128, `(128, 128)`
        tiles, fake Q/K/V/O tensors. Elsewhere they read the plans captured that
        way and recorded in `notebooks/data/` (our output, with the kernel's
        ordering model); a test checks the files still equal a fresh capture.
        """),
            code(r"""
        import importlib.util
        import types

        EXAMPLES = Path(os.environ.get("SMEMVIZ_CUTLASS_EXAMPLES", "../.cutlass_examples"))
        FMHA = EXAMPLES / "cute/blackwell/kernel/attention/fmha/fmha.py"


        class NoTorch(types.ModuleType):
            # stands in for PyTorch where it is not installed: the example imports it, only its host side uses it

            def __getattr__(self, name):
                if name.startswith("__"):
                    raise AttributeError(name)
                return type(name, (), {})


        def capture_fmha():
            # CUTLASS's Blackwell FMHA compiled for sm_100a under capture(): its SMEM plan (carrying the
            # ordering model) and its TMEM plan
            import cutlass.cute as cute
            from cutlass.cute.runtime import make_fake_stream, make_fake_tensor
            from smemviz.kernel._compile import compile_host

            sys.path.insert(0, str(EXAMPLES))  # the example imports its helpers from there
            stand_in = importlib.util.find_spec("torch") is None
            if stand_in:
                sys.modules["torch"] = NoTorch("torch")
            try:
                spec = importlib.util.spec_from_file_location("cutlass_example_blackwell_fmha", FMHA)
                module = importlib.util.module_from_spec(spec)
                sys.modules[spec.name] = module
                spec.loader.exec_module(module)
            finally:
                if stand_in:
                    del sys.modules["torch"]
            mask = sys.modules["helpers.fmha_helpers"].MaskEnum.RESIDUAL_MASK
            f32, i32 = cutlass.Float32, cutlass.Int32
            kernel = module.BlackwellFusedMultiHeadAttentionForward(
                f32, f32, (128, 128), 128, False, mask, False, False, use_tma_store=True
            )

            def tensor(*shape):  # (b, s, h_k, h_r, d), the head dim contiguous
                stride = tuple(1 if i == 4 else cute.sym_int64(divisibility=8) for i in range(5))
                return make_fake_tensor(cutlass.Float16, shape, stride=stride, assumed_align=16)

            b, s_q, s_k, h_k, h_r = (cute.sym_int32(symbol=n) for n in ("b", "s_q", "s_k", "h_k", "h_r"))
            q, k, v, o = (tensor(b, s, h_k, h, 128) for s, h in ((s_q, h_r), (s_k, 1), (s_k, 1), (s_q, h_r)))
            problem = (i32(1), i32(1024), i32(1024), i32(1024), i32(8), i32(8), i32(128), i32(128))
            scale = f32(0.125)
            args = (q, k, v, o, problem, *[None] * 4, scale, scale, f32(1.0), *[None] * 5, make_fake_stream(), False)
            with capture() as cap:
                compile_host("ordering_blackwell_fmha", kernel, args, "sm_100a")
            (captured,) = cap.kernels.values()
            return captured.plan, captured.tmem_plan
        """),
            code(r"""
        if FMHA.is_file():
            fmha, fmha_tmem = capture_fmha()
            print("the FMHA, captured now from CUTLASS's examples")
        else:
            DATA = Path("data")  # next to this notebook
            fmha, _ = smemviz.read_plans((DATA / "blackwell_fmha_plan.json").read_text())
            _, fmha_tmem = smemviz.read_plans((DATA / "blackwell_fmha_tmem_plan.json").read_text())
            print("the FMHA, as captured and recorded in notebooks/data/")
        print(f"SMEM {fmha.total:,} B in {len(fmha.regions)} regions; TMEM {fmha_tmem.total} columns")
        first = {r.group: r.name for r in fmha_tmem.regions if r.group is not None and r.phase == 0}
        for r in fmha_tmem.regions:
            inside = f"inside {first[r.group]}" if r.group is not None and r.phase else ""
            print(f"{r.name:10} columns {r.offset:3}-{r.end - 1:3}  {inside:14} {r.source}")
        """),
            md("""
        The TMEM column map. The model lives in the SMEM plan (capture records
        one per kernel); handed to the TMEM plan, its TMEM aliases are drawn as
        a strip over the columns they share: hover it for the edge.
        """),
            code(r"""
        smemviz.tmem_figure(dataclasses.replace(fmha_tmem, ordering=fmha.ordering)).show()
        """),
            md("""
        What the check finds, in full: every alias it placed with its edge,
        then the errors.
        """),
            code(r"""
        fmha_report = check_ordering(fmha.ordering)
        for a in fmha_report.aliases:
            print("alias", a.line())
        errors = fmha_report.findings.errors
        print(f"{len(errors)} error(s):", ", ".join(sorted({f.rule for f in errors})))
        for f in errors:
            print(" ", f.line()[:160], "...")
        """),
            md("""
        **This is not a proof that the FMHA is safe.** The errors come from what
        capture cannot read yet (`results/ordering_capture.md`, its Blackwell
        section): the waits between the softmax, correction and MMA warps go
        through pipeline participants and handles kept in helper methods, so
        the check sees waits with no arrivals (it reports them as hangs), and
        the K/V loads use a raw mbarrier helper whose stage it does not read
        (so sK and sV look unordered). The run stops at the first hang, before
        the in-place hand-overs S1 -> P0 (`s1_p0_inplace`) and S0 -> P1
        (`s0_p1_inplace`): those are captured as accesses but not yet checked.
        The one TMEM alias that is placed, `tStS0 -> tStS_vec0`, is ordered by
        the thread itself: it reads the registers its `tcgen05.ld` filled before
        its `tcgen05.st` writes the row statistics.
        """),
            md("""
        ## smemviz's Hopper GEMM: C staged over A, checked

        smemviz's warp-specialised Hopper GEMM (`smemviz.kernel.gemm`) with
        `alias_epilogue=True` stages its epilogue's C tile over the mainloop's
        A stages. Compiled once on the CPU under `capture()`; its layout's plan
        is given the ordering model capture recorded.
        """),
            code(r"""
        from smemviz.kernel._compile import compile_host
        from smemviz.kernel.gemm import GemmConfig
        from smemviz.kernel.gemm._host import _fake_operands, gemm_kernel

        config = GemmConfig(alias_epilogue=True, arch="sm_90a")
        layout, kernel = gemm_kernel(config)
        with capture() as cap:
            compile_host("ordering_gemm", kernel, _fake_operands(config.dtype), "sm_90a", key=None)
        (captured,) = cap.kernels.values()
        gemm = dataclasses.replace(layout.plan, ordering=captured.ordering)

        gemm_report = check_ordering(gemm.ordering)
        for a in gemm_report.aliases:
            print("alias", a.line())
        print(f"{len(gemm_report.findings.errors)} error(s)")
        print(gemm_report.findings.text())
        """),
            md("""
        The pipeline diagram: the warp roles as lanes, each pipeline's full and
        empty barriers as arrows between producer and consumer, and the alias
        hanging off the edge that hands its bytes over (here the consumer's
        `wgmma.wait_group` before its `stmatrix` writes C over A).
        """),
            code(r"""
        ordering_figure(gemm).show()
        """),
            md("""
        The byte map, with the alias drawn as a strip over the shared bytes of
        sA and sC (hover it for the edge):
        """),
            code(r"""
        smemviz.smem_figure(gemm).show()
        """),
            md("""
        ## A mistake caught: a consumer that never releases

        `examples/handoff_kernel.py`: two warps hand a staged buffer to each
        other through a `cutlass.pipeline.PipelineAsync`. `build` is right;
        `build_without_release` leaves out the consumer's `consumer_release`,
        so the producer waits forever on an empty barrier once it comes round
        to a stage again. The check names the wait and its line.
        """),
            code("%%writefile out/handoff_kernel.py\n" + _example_source("handoff_kernel.py")),
            code(r"""
        sys.path.insert(0, "out")
        import handoff_kernel

        for build in (handoff_kernel.build, handoff_kernel.build_without_release):
            with capture() as cap:
                build("sm_90a")
            (kernel_capture,) = cap.kernels.values()
            found = check_ordering(kernel_capture.ordering).findings.errors
            print(f"{build.__name__}: {len(found)} error(s)")
            for f in found:
                print(" ", f.line())
        """),
            md("""
        ## From a shell, and in the explorer

        `smemviz check FILE.py:FUNCTION --arch ...` captures a kernel the same
        way and prints every finding; it exits 1 on an error
        (`docs/capture.md`):

        ```
        smemviz check examples/handoff_kernel.py:build --arch sm_90a                  # exit 0
        smemviz check examples/handoff_kernel.py:build_without_release --arch sm_90a  # exit 1: where it hangs
        ```

        In the explorer, a plan with an ordering model has an **Ordering** tab:
        the diagram, the aliases with their edges and the findings.
        """),
            code(r"""
        ex = smemviz.explore(gemm)
        ex.show_tab("Ordering")
        ex
        """),
        ]
    )


NOTEBOOKS = {
    "01_quickstart.ipynb": quickstart,
    "02_tuning_gemm_layout.ipynb": tuning_gemm,
    "03_kernels_from_cells.ipynb": kernels_from_cells,
    "04_cutlass_allocators.ipynb": cutlass_allocators,
    "05_tuning_a_real_gemm.ipynb": tuning_real_gemm,
    "06_bank_conflicts.ipynb": bank_conflicts_notebook,
    "07_capture.ipynb": capture_kernels,
    "08_ordering.ipynb": ordering_notebook,
}


def render(name: str) -> str:
    """The exact text of one notebook file."""
    return nbformat.writes(NOTEBOOKS[name](), version=4) + "\n"


def main(argv: list[str]) -> int:
    """``build_notebooks.py [OUT_DIR] [--only NAME ...]``: write every notebook, or the named ones."""
    args = argv[1:]
    only = [a for i, a in enumerate(args) if i > 0 and args[i - 1] == "--only"]
    args = [a for i, a in enumerate(args) if a != "--only" and not (i > 0 and args[i - 1] == "--only")]
    out_dir = Path(args[0]) if args else HERE
    for name in only or NOTEBOOKS:
        path = out_dir / name
        text = render(name)
        nbformat.validate(nbformat.reads(text, as_version=4))
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
