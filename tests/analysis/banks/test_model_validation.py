"""Bad input to bank_conflicts: a TypeError or ValueError that names the lane, the number and the limit."""

from __future__ import annotations

import pytest

from smemviz import hardware
from smemviz.analysis.banks import bank_conflicts, instruction_names

LARGEST = max(max(a.smem_per_sm, a.smem_per_block) for a in hardware.ARCHS.values())


def test_known_numbers():
    # 32 lanes, consecutive words: one wavefront; stride 2 words: 2-way; stride 32 words: 32-way
    assert bank_conflicts("ld.shared.b32", [4 * i for i in range(32)]).wavefronts == 1
    two = bank_conflicts("ld.shared.b32", [8 * i for i in range(32)])
    assert (two.wavefronts, two.conflicts, two.ideal, two.n_way) == (2, 1, 1, 2)
    worst = bank_conflicts("st.shared.b32", [128 * i for i in range(32)])
    assert (worst.wavefronts, worst.conflicts) == (32, 31)
    # a full broadcast of a 16-byte load: two wavefronts on the H200, not one and not four
    assert bank_conflicts("ld.shared.v4.b32", [256] * 32).wavefronts == 2
    # ... and four for the same store
    assert bank_conflicts("st.shared.v4.b32", [256] * 32).wavefronts == 4


@pytest.mark.parametrize("n", [0, 31, 33])
def test_wrong_count(n):
    with pytest.raises(ValueError, match=f"takes 32 addresses, one per lane; got {n}"):
        bank_conflicts("ld.shared.b32", [0] * n)


@pytest.mark.parametrize(
    "instruction,addr,align",
    [
        ("ld.shared.v4.b32", 8, 16),
        ("ld.shared.v2.b32", 4, 8),
        ("st.shared.b32", 2, 4),
        ("ld.shared.b16", 1, 2),
        ("ldmatrix.x4", 8, 16),
        ("stmatrix.x2.trans", 24, 16),
    ],
)
def test_misaligned(instruction, addr, align):
    addresses = [0] * 32
    addresses[5] = addr
    with pytest.raises(ValueError, match=f"lane 5: .*{addr} is misaligned for {instruction}.*{align}-byte"):
        bank_conflicts(instruction, addresses)


def test_negative():
    with pytest.raises(ValueError, match="lane 3: address -16 is negative"):
        bank_conflicts("ld.shared.v4.b32", [0, 0, 0, -16] + [0] * 28)


def test_past_largest_smem():
    with pytest.raises(ValueError, match=f"lane 0: address {LARGEST}.*largest shared memory.*{LARGEST} B"):
        bank_conflicts("ld.shared.b32", [LARGEST] + [0] * 31)
    # the last word (or 16 bytes) that fit are taken, the next are not
    bank_conflicts("ld.shared.b32", [LARGEST - 4] * 32)
    bank_conflicts("ld.shared.v4.b32", [LARGEST - 16] * 32)
    with pytest.raises(ValueError, match=r"lane 9: address \d+ \(\+16 B\) is past the largest"):
        bank_conflicts("ld.shared.v4.b32", [0] * 9 + [LARGEST] + [0] * 22)


@pytest.mark.parametrize("name", ["ld.shared.b128", "ldmatrix.x8", "lds", "", "ld.global.b32"])
def test_unknown_instruction(name):
    with pytest.raises(ValueError, match="unknown instruction"):
        bank_conflicts(name, [0] * 32)


def test_uncalibrated_instructions_say_why():
    with pytest.raises(ValueError, match="cp.async.cg.16.*not modelled"):
        bank_conflicts("cp.async.cg.16", [16 * i for i in range(32)])
    with pytest.raises(ValueError, match="cp.async.ca.8.*not modelled"):
        bank_conflicts("cp.async.ca.8", [8 * i for i in range(32)])
    with pytest.raises(ValueError, match="cp.async.ca.4.*not modelled.*368 recorded patterns"):
        bank_conflicts("cp.async.ca.4", [4 * i for i in range(32)])
    with pytest.raises(ValueError, match="cp.async.ca.shared.global.4.*not modelled"):
        bank_conflicts("cp.async.ca.shared.global.4", [0] * 32)
    # 16-byte copies onto one word serialise, lane by lane, and that calibrated
    assert bank_conflicts("cp.async.ca.16", [0] * 32).wavefronts == 32


@pytest.mark.parametrize("bad", [3, None, b"ld.shared.b32"])
def test_instruction_type(bad):
    with pytest.raises(TypeError, match="instruction must be a PTX spelling"):
        bank_conflicts(bad, [0] * 32)


@pytest.mark.parametrize("value", [1.0, "4", True, None])
def test_address_type(value):
    addresses: list = [0] * 32
    addresses[7] = value
    with pytest.raises(TypeError, match="lane 7: address"):
        bank_conflicts("ld.shared.b32", addresses)


def test_addresses_type():
    with pytest.raises(TypeError, match="sequence of 32"):
        bank_conflicts("ld.shared.b32", "0" * 32)
    with pytest.raises(TypeError, match="sequence of 32"):
        bank_conflicts("ld.shared.b32", 12)


def test_numpy_integers_and_spellings():
    np = pytest.importorskip("numpy")
    a = bank_conflicts("ld.shared.v4.b32", np.arange(32) * 16)
    b = bank_conflicts("LD.SHARED.V4.F32", list(range(0, 512, 16)))
    assert (a.wavefronts, a.instruction) == (b.wavefronts, "ld.shared.v4.b32")
    assert (
        bank_conflicts("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", [16 * i for i in range(32)]).instruction
        == "ldmatrix.x4.trans"
    )
    assert "ldmatrix.x4" in instruction_names()


def test_result_is_frozen():
    r = bank_conflicts("ld.shared.b32", [0] * 32)
    with pytest.raises(AttributeError):
        r.wavefronts = 0  # type: ignore[misc]
