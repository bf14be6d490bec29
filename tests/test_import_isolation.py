"""The core imports and works with plotly, ipywidgets and cutlass all unavailable."""

from __future__ import annotations

import subprocess
import sys
import textwrap

BLOCKER = textwrap.dedent(
    """
    import sys, importlib.abc
    BLOCKED = ("plotly", "ipywidgets", "cutlass", "kaleido", "anywidget", "IPython", "numpy")
    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
    sys.meta_path.insert(0, Block())
    """
)


def run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", BLOCKER + textwrap.dedent(code)], capture_output=True, text=True, timeout=60
    )


def test_core_works_without_heavy_dependencies():
    proc = run(
        """
        import smemviz
        from smemviz import *
        s = SmemAllocator(arch="sm_90a")
        a = s.add(SmemAllocation("a", dtype="bf16", count=1024, alignment=1024))
        s.add_alias_group([[a], [SmemAllocation("b", 512)]])
        s.compute_layout()
        s.print_usage_report()
        assert s.plan.to_json()
        t = TmemAllocator(); t.add(TmemAllocation("acc", 128)); t.compute_layout()
        assert t.tcgen05_alloc_columns == 128
        heavy = [m for m in sys.modules if m.split(".")[0] in ("plotly", "ipywidgets", "cutlass")]
        assert not heavy, heavy
        print("CORE-OK")
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert "CORE-OK" in proc.stdout and "SMEM Usage Report" in proc.stdout


def test_trace_time_calls_explain_the_missing_dsl():
    proc = run(
        """
        import smemviz
        s = smemviz.SmemAllocator()
        s.add(smemviz.SmemAllocation("a", 64))
        s.compute_layout()
        try:
            s.allocate()
        except smemviz.DslUnavailableError as exc:
            print("MSG:", exc)
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert "MSG: this needs the CuTe DSL: pip install 'smemviz[cutlass]'" in proc.stdout


def test_views_without_their_extras_say_which_extra_to_install():
    proc = run(
        """
        import smemviz
        s = smemviz.SmemAllocator(); s.add(smemviz.SmemAllocation("a", 64)); s.compute_layout()
        import smemviz.kernel
        for call in (lambda: smemviz.smem_figure(s), lambda: smemviz.explore(s),
                     lambda: smemviz.kernel.compile_probe(s, arch="sm_90a")):
            try:
                call()
            except ImportError as exc:
                print("MSG:", exc)
        """
    )
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.startswith("MSG:")]
    assert len(lines) == 3, proc.stdout
    assert "pip install 'smemviz[viz]'" in lines[0]
    assert "smemviz.explore needs ipywidgets: pip install 'smemviz[viz]'" in lines[1]
    assert "smemviz[cutlass]" in lines[2]
