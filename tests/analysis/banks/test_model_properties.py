"""The model against the brute-force reference of the calibrated rules, on generated accesses."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from smemviz.analysis.banks import bank_conflicts

from .reference import reference, reference_full

LDST = [f"{op}.shared.{s}" for op in ("ld", "st") for s in ("b8", "b16", "b32", "b64", "v2.b32", "v4.b32")]
MATRIX = [f"{op}.x{n}{t}" for op in ("ldmatrix", "stmatrix") for n in (1, 2, 4) for t in ("", ".trans")]
WIDTH = {"b8": 1, "b16": 2, "b32": 4, "b64": 8, "v2.b32": 8, "v4.b32": 16}


def _width(instruction: str) -> int:
    if instruction.startswith(("ldmatrix", "stmatrix")):
        return 16
    return WIDTH[instruction.split(".shared.")[1]]


@st.composite
def accesses(draw, instructions=LDST + MATRIX):
    """An instruction and 32 aligned addresses: few distinct slots (broadcasts, merges), strides, or random."""
    instruction = draw(st.sampled_from(instructions))
    width = _width(instruction)
    kind = draw(st.sampled_from(["slots", "pattern", "stride", "random"]))
    if kind == "pattern":  # lanes assigned to slots cyclically or in blocks: the pairings that merge phases
        k = draw(st.sampled_from([1, 2, 3, 4, 8, 16]))
        spacing = max(draw(st.sampled_from([4, 16, 32, 128])), width) // width * width
        base = draw(st.integers(0, 64)) * 128
        if draw(st.booleans()):
            return instruction, [base + (lane % k) * spacing for lane in range(32)]
        return instruction, [base + (lane * k // 32) * spacing for lane in range(32)]
    if kind == "slots":
        slots = draw(st.lists(st.integers(0, 511), min_size=1, max_size=8))
        spacing = draw(st.sampled_from([width, 16, 32, 128, 144]))
        spacing = max(spacing, width) // width * width
        picks = draw(st.lists(st.integers(0, len(slots) - 1), min_size=32, max_size=32))
        return instruction, [slots[p] * spacing for p in picks]
    if kind == "stride":
        base = draw(st.integers(0, 4096)) // width * width
        stride = draw(st.integers(0, 40)) * width
        return instruction, [base + lane * stride for lane in range(32)]
    window = draw(st.sampled_from([64, 256, 1024, 65536]))
    return instruction, [draw(st.integers(0, window // width)) * width for _ in range(32)]


@st.composite
def cp_async_accesses(draw):
    """cp.async.ca.16 (the one size modelled): any destinations (lanes on one word serialise)."""
    size = 16
    spacing = draw(st.sampled_from([size, 32, 64, 128]))
    if draw(st.booleans()):
        slots = draw(st.lists(st.integers(0, 15), min_size=32, max_size=32))
    else:
        slots = draw(st.permutations(range(64)))[:32]
    return f"cp.async.ca.{size}", [s * spacing for s in slots]


@settings(max_examples=400, deadline=None)
@given(accesses())
def test_model_matches_reference(access):
    instruction, addresses = access
    got = bank_conflicts(instruction, addresses)
    assert (got.wavefronts, got.conflicts, got.l1tex_wavefronts) == reference_full(instruction, addresses)


@settings(max_examples=150, deadline=None)
@given(cp_async_accesses())
def test_cp_async_matches_reference(access):
    instruction, addresses = access
    got = bank_conflicts(instruction, addresses)
    assert (got.wavefronts, got.conflicts) == reference(instruction, addresses)


@settings(max_examples=200, deadline=None)
@given(accesses())
def test_bank_picture_is_consistent(access):
    """Every lane's words appear once, in a wavefront the count allows, in the bank their address gives."""
    instruction, addresses = access
    got = bank_conflicts(instruction, addresses)
    width = _width(instruction)
    used = 8 * int(instruction.split(".x")[1][0]) if "matrix" in instruction else 32
    words = got.lane_words
    assert {lw.lane for lw in words} == set(range(used))
    assert all(0 <= lw.wavefront < got.wavefronts for lw in words)
    assert all(lw.bank == (lw.word // 4) % 32 for lw in words)
    assert sum(lw.nbytes for lw in words) == used * width
    # one wavefront never asks one bank for two different words
    served: dict[tuple[int, int], int] = {}
    for lw in words:
        assert served.setdefault((lw.wavefront, lw.bank), lw.word) == lw.word
    assert 0 <= got.conflicts <= got.wavefronts - 1
    assert got.ideal <= got.wavefronts


@settings(max_examples=100, deadline=None)
@given(accesses(instructions=MATRIX))
def test_unused_matrix_lanes_are_ignored(access):
    instruction, addresses = access
    used = 8 * int(instruction.split(".x")[1][0])
    other = addresses[:used] + [None] * (32 - used)
    a, b = bank_conflicts(instruction, addresses), bank_conflicts(instruction, other)
    assert (a.wavefronts, a.conflicts, a.phase_wavefronts) == (b.wavefronts, b.conflicts, b.phase_wavefronts)
