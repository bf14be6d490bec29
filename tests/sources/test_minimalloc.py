"""MiniMalloc's CSV format read into an allocator, its time values taken as they are."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from smemviz.solver import Times, timeline
from smemviz.sources._minimalloc import MiniMallocFormatError, parse_minimalloc, read_minimalloc

from ..helpers import ROOT
from ..solver.test_solve import brute_force_peak, overlaps

SMALL = Path(__file__).parent / "data" / "minimalloc_small.csv"
CHALLENGING = sorted((ROOT / ".minimalloc").glob("*.csv"))  # github.com/google/minimalloc, never committed


def test_a_small_file_is_laid_out_at_its_optimum():
    s = read_minimalloc(SMALL)
    rows = parse_minimalloc(SMALL.read_text())
    s.compute_layout()
    plan = s.plan
    assert sorted(r.name for r in plan.regions) == sorted(b.id for b in rows)
    # the plan's steps are the stretches between start and end points, named by their first time value
    assert plan.steps == ("1000000", "1100000", "1200000", "1250000", "1400000", "1450000", "1500000")
    offsets = {r.name: r.offset for r in plan.regions}
    sizes = [b.size for b in rows]
    lives = [set(range(b.lower, b.upper)) for b in rows]  # 600,000 time values: checked from scratch
    assert overlaps([offsets[b.id] for b in rows], sizes, lives) == []
    _, stretches, _ = timeline([Times(((b.lower, b.upper),)) for b in rows])  # the same conflicts, 7 stretches
    assert plan.optimal and plan.data_total == brute_force_peak(sizes, [1] * len(rows), stretches)


def test_header_aliases_and_an_inclusive_end_read_as_minimalloc_reads_them():
    text = "buffer,begin,end,size,alignment,hint\na,10,19,64,16,-1\nb,20,29,64,16,-1\nc,19,20,32,32,3\n"
    rows = parse_minimalloc(text)
    assert [(b.id, b.lower, b.upper, b.alignment) for b in rows] == [
        ("a", 10, 20, 16),
        ("b", 20, 30, 16),
        ("c", 19, 21, 32),
    ]
    s = read_minimalloc(io.StringIO(text))
    s.compute_layout(fit=96)
    assert s.plan.data_total == 96  # c meets a and b, which never meet each other: 64 + 32


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", "empty"),
        ("id,lower,size\n0,1,2\n", "lacks 'upper'"),
        ("id,lower,upper,size,size\n", "column 'size' named twice"),
        ("id,lower,upper,size,gaps\n0,1,5,8,2-3\n", "gaps are not read"),
        ("id,lower,upper,size,colour\n", "unknown column 'colour'"),
        ("id,lower,upper,size\n0,1,5\n", "line 2: 3 fields, the header names 4"),
        ("id,lower,upper,size\n0,1,5,x8\n", "line 2, column 'size': expected an integer"),
        ("id,lower,upper,size\n0,1,5,1" + "0" * 30 + "\n", "at most 19 digits"),
        ("id,lower,upper,size\n0,1,5,8\n0,2,6,8\n", "line 3: id '0' again \\(first on line 2\\)"),
        ("id,lower,upper,size\n0,5,5,8\n", "upper 5 must be above lower 5"),
        ("id,lower,upper,size\n0,-1,5,8\n", "outside 0..2\\*\\*62"),
        ("id,lower,upper,size\n0,1,5,-8\n", "size -8 is negative"),
        ("id,lower,upper,size,alignment\n0,1,5,8,24\n", "alignment 24 is not a positive power of two"),
        ("id,lower,upper,size\n,1,5,8\n", "line 2: empty id"),
    ],
)
def test_malformed_files_are_refused_naming_the_line_and_column(text, match):
    with pytest.raises(MiniMallocFormatError, match=match):
        parse_minimalloc(text, "bad.csv")


@pytest.mark.slow
@pytest.mark.skipif(not CHALLENGING, reason="MiniMalloc's challenging CSVs not in .minimalloc/")
@pytest.mark.parametrize("path", CHALLENGING, ids=lambda p: p.name)
def test_minimallocs_challenging_files_fit_their_capacity(path):
    capacity = int(path.name.split(".")[1])
    s = read_minimalloc(path)
    s.compute_layout(fit=capacity)
    assert s.plan.data_total <= capacity
    rows = parse_minimalloc(path.read_text())
    offsets = {r.name: r.offset for r in s.plan.regions}
    for a in rows:  # no two buffers live at a common time share a byte
        for b in rows:
            if a.id < b.id and a.lower < b.upper and b.lower < a.upper:
                assert offsets[a.id] + a.size <= offsets[b.id] or offsets[b.id] + b.size <= offsets[a.id]
