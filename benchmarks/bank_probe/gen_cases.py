"""Generate the bank-conflict calibration cases for the H200 probe.

Every case is one warp executing one shared-memory instruction once, each
lane at a byte offset from the start of the probe's 48 KiB shared array.
The families cover strides, full and partial broadcast, half- and
quarter-warp splits, swizzled tiles at bases that are not 1024-aligned,
permutations and random addresses, for every instruction the model knows.

    python benchmarks/bank_probe/gen_cases.py OUT_FILE            (round 1, seed 21)
    python benchmarks/bank_probe/gen_cases.py OUT_FILE --round2   (round 2: phase merging, seed 2121)
    python benchmarks/bank_probe/gen_cases.py OUT_FILE --round3   (round 3: cp.async.ca.4, distinct words, seed 3131)

Line format: ``case_id instruction off0 ... off31 # family``.
"""

from __future__ import annotations

import random
import sys

SMEM_BYTES = 49152
LANES = 32

LDST_WIDTH = {"u8": 1, "u16": 2, "b32": 4, "b64": 8, "v2.b32": 8, "v4.b32": 16}
MATRIX = [f"{op}.x{n}{t}" for op in ("ldmatrix", "stmatrix") for n in (1, 2, 4) for t in ("", ".trans")]
CPASYNC = {"cp.async.ca.4": 4, "cp.async.ca.8": 8, "cp.async.ca.16": 16, "cp.async.cg.16": 16}


def _fits(offs: list[int], width: int) -> bool:
    return all(0 <= o and o + width <= SMEM_BYTES for o in offs)


def _swizzle(offset: int, bits: int) -> int:
    """XOR the 16-byte chunk index (bits 4..) with the row bits above it (128B: 3 bits)."""
    return offset ^ (((offset >> 7) & ((1 << bits) - 1)) << 4)


def scalar_cases(width: int, rng: random.Random) -> list[tuple[str, list[int]]]:
    """Address sets for an access of ``width`` bytes per lane (ld/st/cp.async)."""
    out: list[tuple[str, list[int]]] = []
    for k in (0, 1, 2, 3, 4, 5, 8, 16, 32, 33):
        base = rng.choice((0, width, 128, 4096 + 64)) // width * width
        out.append((f"stride{k}x{width}B", [base + lane * k * width for lane in range(LANES)]))
    for g in (2, 4, 8, 16):
        step = rng.choice((width, 4 * width, 32 * width, 128))
        out.append((f"bcast_groups{g}", [(lane // g) * step for lane in range(LANES)]))
    out.append(("bcast_half", [0 if lane < 16 else lane * width for lane in range(LANES)]))
    out.append(("bcast_odd", [512 if lane % 2 else lane * width for lane in range(LANES)]))
    for gap in (0, 64, 128, 256 + width):
        out.append((f"half_split{gap}", [(lane % 16) * width + (lane // 16) * gap for lane in range(LANES)]))
    for gap in (0, 32, 128, 1024):
        out.append((f"quarter_split{gap}", [(lane % 8) * width + (lane // 8) * gap for lane in range(LANES)]))
    # a column of a 128B-swizzled tile of 128-byte rows, the tile at a base not 1024-aligned,
    # swizzled relative to the tile (a kernel computing offsets) and absolutely (TMA)
    for base in (128, 384, 640):
        rows = [base + lane * 128 + _swizzle(lane * 128, 3) % 128 for lane in range(LANES)]
        out.append((f"swz128_col_rel{base}", rows))
        absolute = [_swizzle(base + lane * 128, 3) for lane in range(LANES)]
        out.append((f"swz128_col_abs{base}", absolute))
    # row-major reads of a swizzled tile: lane reads element lane of row r
    for bits, base in ((3, 256), (2, 512 + 128), (1, 64 * 4)):
        offs = [_swizzle(base + (lane * width) % 128 + (lane * width) // 128 * 128, bits) for lane in range(LANES)]
        out.append((f"swz{16 << bits}_row{base}", offs))
    perm = list(range(LANES))
    rng.shuffle(perm)
    out.append(("perm_contig", [p * width for p in perm]))
    for window in (128, 512, 4096, SMEM_BYTES):
        for rep in range(2 if window == SMEM_BYTES else 1):
            hi = min(window, SMEM_BYTES - 16) // width
            out.append((f"random{window}_{rep}", [rng.randrange(hi) * width for _ in range(LANES)]))
    return [(f, o) for f, o in out if _fits(o, width) and all(x % width == 0 for x in o)]


def matrix_cases(n: int, rng: random.Random) -> list[tuple[str, list[int]]]:
    """Row addresses (16 B each) for ldmatrix/stmatrix; lanes past 8n carry addresses too, ignored."""
    out: list[tuple[str, list[int]]] = []

    def full(rows: list[int]) -> list[int]:
        tail = [rng.randrange(SMEM_BYTES // 16) * 16 for _ in range(LANES - len(rows))]
        return rows + tail

    used = 8 * n
    for s in (0, 16, 32, 48, 64, 80, 128, 144, 256, 272, 512, 1024):
        base = rng.choice((0, 16, 128, 2048 + 48))
        out.append((f"rowstride{s}", full([base + r * s for r in range(used)])))
    for width in (32, 64, 128, 256):
        # 8x8 b16 tiles of a row-major tile whose rows are ``width`` bytes: matrix j at column 16j
        rows = [(r % 8) * width + (r // 8) * 16 % width + (r // 8) * 16 // width * 8 * width for r in range(used)]
        out.append((f"tile_rows{width}", full(rows)))
    for bits, row_bytes in ((3, 128), (2, 64), (1, 32)):
        for base in (0, 128, 256 + 1024):
            # matrix j: chunk j of rows 0..7 in a swizzled tile, tile at ``base`` (swizzled relative)
            rows = []
            for r in range(used):
                row, chunk = r % 8, r // 8
                off = row * row_bytes + (chunk * 16) % row_bytes + (chunk * 16) // row_bytes * 8 * row_bytes
                rows.append(base + _swizzle(off, bits))
            out.append((f"swz{16 << bits}_rel{base}", full(rows)))
            absolute = [_swizzle(base + r % 8 * row_bytes + (r // 8) * 16 % row_bytes, bits) for r in range(used)]
            out.append((f"swz{16 << bits}_abs{base}", full(absolute)))
    if n > 1:
        out.append(("dup_matrices", full([(r % 8) * 128 for r in range(used)])))
        out.append(("dup_rows_pairs", full([(r // 2) * 16 for r in range(used)])))
        out.append(("half_same_bank", full([(r % 8) * 16 + (r // 8) * 128 for r in range(used)])))
    for window in (256, 2048, SMEM_BYTES):
        for rep in range(2):
            hi = min(window, SMEM_BYTES) // 16
            out.append((f"random{window}_{rep}", full([rng.randrange(hi) * 16 for _ in range(used)])))
    return [(f, o) for f, o in out if _fits(o, 16)]


def all_cases() -> list[tuple[str, str, list[int]]]:
    rng = random.Random(21)
    cases: list[tuple[str, str, list[int]]] = []
    for op in ("ld", "st"):
        for suffix, width in LDST_WIDTH.items():
            family_cases = scalar_cases(width, rng)
            # the byte and 64-bit scalar forms get every other case: fewer launches on the device
            for family, offs in family_cases[:: 2 if suffix in ("u8", "b64") else 1]:
                cases.append((f"{op}.shared.{suffix}", family, offs))
    for name in MATRIX:
        n = int(name.split(".x")[1][0])
        family_cases = matrix_cases(n, rng)
        # .trans moves the same rows as the plain form: every other case checks that
        for family, offs in family_cases[:: 2 if name.endswith(".trans") else 1]:
            cases.append((name, family, offs))
    for name, width in CPASYNC.items():
        for family, offs in scalar_cases(width, rng)[::2]:
            cases.append((name, family, offs))
    return cases


def merge_cases() -> list[tuple[str, str, list[int]]]:
    """Second round: when do the phases of a 64/128-bit load (and of cp.async) share a wavefront?

    The first round showed 64-bit loads served per half-warp and 128-bit loads per
    quarter-warp, except that some broadcasts merge those phases. These cases vary the
    number of distinct addresses, how lanes are assigned to them, and their spacing.
    """
    rng = random.Random(2121)
    cases: list[tuple[str, str, list[int]]] = []
    spec = {
        "ld.shared.v2.b32": 8,
        "ld.shared.b64": 8,
        "ld.shared.v4.b32": 16,
        "cp.async.ca.4": 4,
        "cp.async.ca.8": 8,
        "cp.async.ca.16": 16,
    }
    for instr, width in spec.items():
        uniques = (1, 2, 3, 4, 5, 6, 8, 16) if instr != "ld.shared.b64" else (1, 2, 4, 8)
        for u in uniques:
            for assign in ("block", "cyclic"):
                for spacing in (width, 32, 128):
                    if spacing < width:
                        continue
                    slots = [k * spacing for k in range(u)]
                    if assign == "block":
                        offs = [slots[lane * u // LANES] for lane in range(LANES)]
                    else:
                        offs = [slots[lane % u] for lane in range(LANES)]
                    cases.append((instr, f"uniq{u}_{assign}_sp{spacing}", offs))
        # one half (or quarter) broadcast, the other contiguous; both halves broadcast apart
        cases.append(
            (
                instr,
                "half0_bcast_half1_contig",
                [0 if lane < 16 else 512 + (lane - 16) * width for lane in range(LANES)],
            )
        )
        cases.append((instr, "half0_contig_half1_bcast", [lane * width if lane < 16 else 512 for lane in range(LANES)]))
        cases.append(
            (instr, "halves_bcast_apart4", [0 if lane < 16 else 4 * (width // 4) * 4 for lane in range(LANES)])
        )
        cases.append(
            (instr, "quarters_bcast_distinct", [(lane // 8) * 16 * (width // 4 or 1) for lane in range(LANES)])
        )
        cases.append((instr, "lane_pairs_same", [(lane // 2) * width for lane in range(LANES)]))
        for rep in range(6):
            window = (64, 128, 256)[rep % 3] * (width // 4 or 1)
            cases.append(
                (instr, f"random{window}_{rep}", [rng.randrange(window // width) * width for _ in range(LANES)])
            )
    return [(i, f, o) for i, f, o in cases if _fits(o, spec[i]) and all(x % spec[i] == 0 for x in o)]


def distinct_ca4_cases() -> list[tuple[str, str, list[int]]]:
    """Third round: cp.async.ca.4 with 32 distinct destination words.

    Random words in windows of 128 B to the whole array, strides, columns and rows of
    swizzled tiles, permuted blocks of lanes, and quarter-warps with a chosen number
    of lanes on one bank. Every case writes 32 different 4-byte words.
    """
    rng = random.Random(3131)
    words = SMEM_BYTES // 4
    out: list[tuple[str, list[int]]] = []
    for window in (32, 64, 128, 256, 1024, words):
        for rep in range(25):
            base = rng.randrange(0, words - window + 1)
            out.append((f"rand_w{window * 4}_{rep}", [4 * (base + w) for w in rng.sample(range(window), LANES)]))
    for k in range(1, 41):
        base = rng.randrange(0, 64)
        out.append((f"stride{k}w_b{base}", [4 * (base + lane * k) for lane in range(LANES)]))
    for k in (3, 5, 7, 9, 17, 31, 33, 63, 65, 127, 129):
        for rep in range(2):
            base = rng.randrange(0, 256)
            order = rng.sample(range(LANES), LANES)
            out.append((f"stride{k}w_perm{rep}", [4 * (base + order[lane] * k) for lane in range(LANES)]))
    for bits in (1, 2, 3):
        for rep in range(8):
            base = rng.choice((0, 128, 256, 512, 1024)) + 1024 * rng.randrange(0, 8)
            col = rng.randrange(0, 32)
            # column of a swizzled tile of 128-byte rows: lane = row
            out.append(
                (f"swz{bits}_col{col}_{rep}", [base + _swizzle(lane * 128 + col * 4, bits) for lane in range(LANES)])
            )
            # row blocks: 4 rows of 8 lanes, each lane a word of a 16-byte chunk after swizzling
            rows = rng.sample(range(16), 4)
            out.append(
                (
                    f"swz{bits}_rows_{rep}",
                    [
                        base + _swizzle(rows[lane // 8] * 128 + (lane % 8) * 16 + 4 * (rep % 4), bits)
                        for lane in range(LANES)
                    ],
                )
            )
    for block in (2, 4, 8, 16):
        for rep in range(12):
            nblocks = LANES // block
            slots = rng.sample(range(words // block), nblocks) if rep % 2 else rng.sample(range(4 * nblocks), nblocks)
            offs: list[int] = []
            for b in range(nblocks):
                inner = rng.sample(range(block), block)
                offs += [4 * (slots[b] * block + i) for i in inner]
            out.append((f"perm_block{block}_{rep}", offs))
    for rep in range(60):
        offs = []
        used: set[int] = set()
        degrees = [rng.randint(1, 8) for _ in range(4)]
        for q in range(4):
            d = degrees[q]
            banks = rng.sample(range(32), 8)
            for i in range(8):
                bank = banks[i % (8 // d if 8 // d else 1)] if d > 1 else banks[i]
                row = rng.randrange(0, words // 32)
                while row * 32 + bank in used:
                    row = rng.randrange(0, words // 32)
                used.add(row * 32 + bank)
                offs.append(4 * (row * 32 + bank))
        out.append((f"quarter_deg{'-'.join(map(str, degrees))}_{rep}", offs))
    cases = [("cp.async.ca.4", f, o) for f, o in out if _fits(o, 4) and len(set(o)) == LANES]
    return cases


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[2] == "--round3":
        first = len(all_cases()) + len(merge_cases())
        with open(sys.argv[1], "w") as fh:
            for i, (instr, family, offs) in enumerate(distinct_ca4_cases(), start=first):
                fh.write(f"{i} {instr} {' '.join(map(str, offs))} # {family}\n")
        print(f"{len(distinct_ca4_cases())} round-3 cases from id {first}")
        return
    if len(sys.argv) > 2 and sys.argv[2] == "--round2":
        first = len(all_cases())
        with open(sys.argv[1], "w") as fh:
            for i, (instr, family, offs) in enumerate(merge_cases(), start=first):
                fh.write(f"{i} {instr} {' '.join(map(str, offs))} # {family}\n")
        print(f"{len(merge_cases())} round-2 cases from id {first}")
        return
    cases = all_cases()
    with open(sys.argv[1], "w") as fh:
        for i, (instr, family, offs) in enumerate(cases):
            fh.write(f"{i} {instr} {' '.join(map(str, offs))} # {family}\n")
    print(f"{len(cases)} cases, {len({c[0] for c in cases})} instructions")


if __name__ == "__main__":
    main()
