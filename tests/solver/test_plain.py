"""The solver's default form: plain Python, with neither numba nor numpy installed."""

from __future__ import annotations

import subprocess
import sys
import textwrap

BLOCKED = textwrap.dedent(
    """
    import sys, importlib.abc, warnings
    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCK:
                raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
    sys.meta_path.insert(0, Block())
    import smemviz
    def build():
        s = smemviz.SmemAllocator(steps=("load", "mma", "epilogue"))
        for i in range(4):
            s.add(smemviz.SmemAllocation(f"a{i}", 20480 + 1536 * i, 1024), live=range(0, 2))
        s.add(smemviz.SmemAllocation("epi", 49152, 1024), live="epilogue")
        s.add(smemviz.SmemAllocation("bias", 1040, 16), live={"load", "epilogue"})
        s.add(smemviz.SmemAllocation("scale", 3000, 128), live={"mma"})
        return s
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first, second = build(), build()
        first.compute_layout()
        second.compute_layout()
    told = [str(w.message) for w in caught if "smemviz[fast]" in str(w.message)]
    print("TOLD", len(told))
    print("NUMPY", "numpy" in sys.modules, "NUMBA", "numba" in sys.modules)
    print("OFFSETS", [r.offset for r in first.plan.regions], first.plan.optimal, first.plan.solver)
    """
)


def _run(block: tuple[str, ...]) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", f"BLOCK = {block!r}\n{BLOCKED}"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_without_numba_and_numpy_the_same_layouts_come_from_plain_python():
    plain = _run(("numba", "llvmlite", "numpy"))
    assert "TOLD 1" in plain  # said once, naming the extra, for two layouts solved
    assert "NUMPY False NUMBA False" in plain
    fast = _run(())
    assert "TOLD 0" in fast
    offsets = [line for line in plain if line.startswith("OFFSETS")]
    assert offsets and offsets == [line for line in fast if line.startswith("OFFSETS")]
    assert offsets[0].endswith("True exact")  # the search, not greedy placement alone, made this layout
