"""Layout files carry the annotations lint and the stage marks read: shape, stages, swizzle, tma."""

from __future__ import annotations

import pytest

from smemviz.analysis import lint
from smemviz.sources.layout_file import LayoutFileError, parse_layout_text

DOC = """
arch = "sm_90a"
[[smem]]
name = "a"
dtype = "bf16"
shape = [4, 128, 64]
align = 1024
swizzle = "128B"
tma = true
[[smem]]
name = "b"
size = 3000
swizzle = "128B"
stages = 2
"""


def test_annotations_reach_the_plan_and_lint():
    smem, _ = parse_layout_text(DOC, format="toml").plans()
    a, b = smem.region("a"), smem.region("b")
    assert (a.shape, a.stages, a.swizzle, a.tma, a.count) == ((4, 128, 64), 4, "128B", True, 4 * 128 * 64)
    assert (b.stages, b.swizzle) == (2, "128B")
    assert [f.rule for f in lint(smem, "sm_90a") if "b" in f.regions] == ["swizzle-stage"]


@pytest.mark.parametrize(
    "line, key, words",
    [
        ('tma = "yes"', "tma", "expected true or false"),
        ('swizzle = "96B"', "swizzle", "swizzle"),
        ("shape = [4, 0]", "shape", "int > 0"),
        ('shape = "4x8"', "shape", "expected an array"),
        ("stages = 0", "stages", "stages"),
    ],
)
def test_bad_annotations_are_refused_at_their_key(line, key, words):
    doc = f'[[smem]]\nname = "x"\ndtype = "f16"\ncount = 64\n{line}\n'
    with pytest.raises(LayoutFileError, match=words) as info:
        parse_layout_text(doc, format="toml", source="k.toml")
    assert f"smem[0].{key}" in str(info.value) and "k.toml:5" in str(info.value)
