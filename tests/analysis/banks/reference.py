"""A brute-force, lane-by-lane, byte-by-byte reference of the calibrated bank rules.

Written apart from the model (no shared helpers) so that the property tests
compare two readings of the rules in docs/bank-conflicts.md.
"""

from __future__ import annotations


def _width(instruction: str) -> int:
    if instruction.startswith(("ldmatrix", "stmatrix")):
        return 16
    if instruction.startswith("cp.async"):
        return int(instruction.rsplit(".", 1)[1])
    suffix = instruction.split(".shared.", 1)[1]
    return {"b8": 1, "b16": 2, "b32": 4, "b64": 8, "v2.b32": 8, "v4.b32": 16}[suffix]


def _lanes_used(instruction: str) -> int:
    if instruction.startswith(("ldmatrix", "stmatrix")):
        return 8 * int(instruction.split(".x", 1)[1][0])
    return 32


def _phase_size(instruction: str, width: int) -> int:
    if instruction.startswith(("ldmatrix", "stmatrix", "cp.async")):
        return 8
    return {1: 32, 2: 32, 4: 32, 8: 16, 16: 8}[width]


def _wavefronts(addresses: list[int], lanes: list[int], width: int, serial: bool) -> int:
    best = 0
    for bank in range(32):
        words: set[int] = set()
        writes: set[tuple[int, int]] = set()
        for lane in lanes:
            for byte in range(addresses[lane], addresses[lane] + width):
                word = byte // 4
                if word % 32 == bank:
                    words.add(word)
                    writes.add((lane, word))
        best = max(best, len(writes) if serial else len(words))
    return best


def _pairs(addresses: list[int], lanes: list[int]) -> int:
    if all(addresses[lane] == addresses[lane ^ 1] for lane in lanes):
        return 1
    if all(addresses[lane] == addresses[lane ^ 2] for lane in lanes):
        return 2
    return 0


def reference(instruction: str, addresses: list[int]) -> tuple[int, int]:
    """(wavefronts, conflicts) of one warp executing ``instruction`` at ``addresses``."""
    wavefronts, conflicts, _ = reference_full(instruction, addresses)
    return wavefronts, conflicts


def reference_full(instruction: str, addresses: list[int]) -> tuple[int, int, int | None]:
    """(ncu's per-instruction wavefronts, ncu's conflicts, the L1TEX unit's wavefronts)."""
    width = _width(instruction)
    used = _lanes_used(instruction)
    phase = _phase_size(instruction, width)
    serial = instruction.startswith("cp.async")
    mergeable = instruction.startswith("ld.shared") and width > 4
    unit = 2 * phase if mergeable else phase
    # per instruction (ncu's SASS count): a unit whose lanes pair up and that fits one wavefront is one
    wavefronts = 0
    for start in range(0, used, unit):
        lanes = list(range(start, start + unit))
        if mergeable and _pairs(addresses, lanes) and _wavefronts(addresses, lanes, width, serial) == 1:
            wavefronts += 1
            continue
        wavefronts += sum(_wavefronts(addresses, lanes[k : k + phase], width, serial) for k in range(0, unit, phase))
    if serial:
        return wavefronts, wavefronts - max(1, 32 * width // 128), None
    # the L1TEX unit: when every lane of the warp pairs up, each unit is one phase, conflicts and all
    if mergeable and _pairs(addresses, list(range(32))):
        served = [_wavefronts(addresses, list(range(s, s + unit)), width, serial) for s in range(0, 32, unit)]
    else:
        served = [_wavefronts(addresses, list(range(s, s + phase)), width, serial) for s in range(0, used, phase)]
    l1tex = sum(served)
    return wavefronts, l1tex - len(served), l1tex
