"""Colour per buffer within a resource, and no two regions of a map sharing a
colour even at hundreds of regions (issue 23, point 8)."""

from __future__ import annotations

import colorsys

import pytest

pytest.importorskip("plotly")

from smemviz import SmemAllocation, SmemAllocator  # noqa: E402
from smemviz.figures._smem import smem_spec  # noqa: E402
from smemviz.figures._style import family_of, region_colors  # noqa: E402


def hue(color: str) -> float:
    r, g, b = (int(color[i : i + 2], 16) / 255 for i in (1, 3, 5))
    return colorsys.rgb_to_hls(r, g, b)[0]


def test_a_resources_buffers_get_different_hues():
    colors = region_colors(["gemm.a_stages", "gemm.b_stages", "gemm.c_staging"])
    hues = sorted(hue(c) for c in colors.values())
    gaps = [b - a for a, b in zip(hues, hues[1:])] + [1 - hues[-1] + hues[0]]
    assert min(gaps) > 0.05, colors  # apart on the colour wheel, not shades of one hue


def test_stages_of_one_buffer_in_a_resource_still_share_a_hue():
    assert family_of("gemm.a_stage2") == ("gemm.a", 2)
    colors = region_colors([f"gemm.a_stage{k}" for k in range(4)])
    assert len(set(colors.values())) == 4
    assert max(hue(c) for c in colors.values()) - min(hue(c) for c in colors.values()) < 0.02


@pytest.mark.parametrize(
    "names",
    [
        [f"buf{i}" for i in range(300)],  # one family, 300 stages
        [f"tile_{i}_scratch" for i in range(300)],  # 300 families
        [f"r{i}.x" for i in range(150)] + [f"w{i}" for i in range(150)],
    ],
)
def test_three_hundred_regions_get_three_hundred_colours(names):
    colors = region_colors(names)
    assert len(set(colors.values())) == len(names)


def test_the_map_labels_a_resource_buffer_by_its_own_name_when_the_full_one_does_not_fit():
    s = SmemAllocator()  # the Hopper GEMM at 5 stages (docs/gemm.md): over sm_90's capacity
    s.add(SmemAllocation("gemm.a_stages", 81920, alignment=1024))
    s.add(SmemAllocation("gemm.b_stages", 163840, alignment=1024))
    s.add(SmemAllocation("gemm.c_staging", 16384, alignment=1024))
    s.compute_layout()
    data = next(t for t in smem_spec(s.plan).traces if t["meta"] == "data")
    templates = data["texttemplate"]
    shown = dict(zip(data["text"], templates if isinstance(templates, list) else [templates] * len(data["text"])))
    assert shown["gemm.c_staging"] == "c_staging", shown
    assert len(set(data["marker"]["color"])) == 3
