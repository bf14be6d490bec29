"""The code on docs/bank-conflicts.md runs and prints what the page says."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[3] / "docs" / "bank-conflicts.md"


def test_first_example_runs_and_matches_its_comments():
    text = PAGE.read_text(encoding="utf-8")
    block = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    out = io.StringIO()
    scope: dict = {}
    with contextlib.redirect_stdout(out):
        exec(compile(block, str(PAGE), "exec"), scope)
    r, rep = scope["r"], scope["rep"]
    assert (r.wavefronts, r.conflicts, r.ideal, r.n_way) == (2, 1, 1, 2) and r.grid()[1][0] == (16,)
    assert "16 instructions, 256 wavefronts (ideal 64), 192 conflicts; 4-way" in rep.summary()
    printed = out.getvalue()
    for line in re.findall(r"^#   (layout|allocation): +(.*)$", block, re.M):
        assert line[1].split("(")[0] in printed
    assert 'SmemAllocation("epi_c", 8192, alignment=512, swizzle="64B", dtype=\'bf16\')' in printed
