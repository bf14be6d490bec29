"""How fast the bank model is: 10,000 warp accesses must take at most 1 s on the 2-core machine.

    PYTHONPATH=. python -m benchmarks.bench_banks
Prints the time for 10,000 accesses (a mix of every modelled instruction and of
strides, broadcasts, swizzled tiles and random addresses) and its ratio to the 1 s target.
"""

from __future__ import annotations

import random
import time

from smemviz.analysis.banks import bank_conflicts

N = 10_000


def workload(n: int = N) -> list[tuple[str, list[int]]]:
    rng = random.Random(21)
    kinds = [
        ("ld.shared.b32", 4),
        ("ld.shared.v2.b32", 8),
        ("ld.shared.v4.b32", 16),
        ("st.shared.b32", 4),
        ("st.shared.v4.b32", 16),
        ("ldmatrix.x4", 16),
        ("stmatrix.x4", 16),
        ("ld.shared.b16", 2),
    ]
    out = []
    for i in range(n):
        name, width = kinds[i % len(kinds)]
        pattern = i % 4
        if pattern == 0:
            stride = rng.choice((1, 2, 4, 8, 33)) * width
            out.append((name, [lane * stride for lane in range(32)]))
        elif pattern == 1:
            out.append((name, [(lane // 4) * width * 8 for lane in range(32)]))
        elif pattern == 2:  # rows of a 128B-swizzled tile
            out.append(
                (
                    name,
                    [
                        (r * 128) + (((r % 8) ^ (lane % 8)) * 16) % 128 // width * width
                        for lane, r in ((lane, lane // 4 if width < 16 else lane) for lane in range(32))
                    ],
                )
            )
        else:
            out.append((name, [rng.randrange(4096 // width) * width for _ in range(32)]))
    return out


def main() -> None:
    accesses = workload()
    bank_conflicts(*accesses[0])  # warm up
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for name, addrs in accesses:
            bank_conflicts(name, addrs)
        best = min(best, time.perf_counter() - t0)
    print(f"{N} warp accesses: {best:.3f} s (best of 3), {best / N * 1e6:.1f} us each; {best:.2f}x the 1 s target")


if __name__ == "__main__":
    main()
