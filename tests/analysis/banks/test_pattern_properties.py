"""The warps' instructions cover a tile's bytes exactly once, whatever the swizzle and the arrangement."""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from smemviz import SmemAllocation, SmemAllocator
from smemviz.analysis.banks import analyze_access, ldmatrix_atom, stmatrix_atom, vector_atom
from smemviz.analysis.banks._patterns import tile_addresses


@st.composite
def tiles(draw):
    rows = 16 * draw(st.integers(1, 4))
    cols = draw(st.sampled_from([16, 32, 64, 128]))  # bf16: 32..256-byte rows
    mode = draw(st.sampled_from([None, "32B", "64B", "128B"]))
    width = {None: 0, "32B": 32, "64B": 64, "128B": 128}[mode]
    if mode is not None and (2 * cols) % width:
        mode = None
    atom_kind = draw(st.sampled_from(["ldmatrix", "stmatrix", "v4", "v2"]))
    warps = draw(st.sampled_from([(1, 1), (2, 1), (1, 2), (4, 1)]))
    k_major = draw(st.booleans())
    return rows, cols, mode, atom_kind, warps, k_major


@settings(max_examples=60, deadline=None)
@given(tiles())
def test_instructions_cover_the_tile_once(tile):
    rows, cols, mode, atom_kind, warps, k_major = tile
    size = rows * cols * 2
    s = SmemAllocator()
    s.add(SmemAllocation("t", size, alignment=1024, dtype="bf16", count=rows * cols))
    s.compute_layout()
    plan = s.plan
    layout = f"({rows},{cols}):({cols},1)" if k_major else f"({cols},{rows}):(1,{cols})"
    atom = {
        "ldmatrix": ldmatrix_atom(4),
        "stmatrix": stmatrix_atom(4),
        "v4": vector_atom("ld.shared.v4.b32", 2, (8, 4)),
        "v2": vector_atom("st.shared.v2.b32", 2, (16, 2)),
    }[atom_kind]
    assume(cols % atom.cols == 0 and rows % atom.rows == 0)
    rep = analyze_access(plan, "t", atom, layout=layout, swizzle=mode, warps=warps)
    # recompute every instruction's addresses and check the bytes they move
    from smemviz.analysis.banks import parse_cute_layout, parse_swizzle

    lay, swz = parse_cute_layout(layout), parse_swizzle(mode)
    seen: list[int] = []
    width = 16 if atom_kind in ("ldmatrix", "stmatrix", "v4") else 8
    for ti in range(rows // atom.rows):
        for tj in range(cols // atom.cols):
            coords = [None if c is None else (ti * atom.rows + c[0], tj * atom.cols + c[1]) for c in atom.lane_coords]
            for a in tile_addresses(lay, 2, 0, swz, coords):
                assert a is not None
                seen.extend(range(a, a + width))
    assert sorted(seen) == list(range(size))
    assert rep.instructions == (rows // atom.rows) * (cols // atom.cols)
    assert rep.ideal <= rep.wavefronts
