"""The long run of the bounded fuzz test (tests/test_fuzz_bounded.py): the same seeded cases,
from a random first seed, in worker processes of --batch seconds each until --seconds have passed.

    nice -n 19 .venv/bin/python -m tests.fuzz_long --seconds 3600 > fuzz_long.log

Each worker runs under the test's memory limit and time limit per case; a finding (an exception
other than ValueError/TypeError, a long message, a hang, a worker that died) is printed with its
seed, which ``python -m tests.test_fuzz_bounded SEED 1`` runs again. Exit status 1 on a finding.
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
import time

from .test_fuzz_bounded import run_worker


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3600.0, help="how long to run (default 3600)")
    parser.add_argument("--batch", type=float, default=120.0, help="seconds per worker process (default 120)")
    parser.add_argument("--seed", type=int, default=None, help="first seed (default: random)")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**12)
    start = time.monotonic()
    counts: collections.Counter[tuple[str, str]] = collections.Counter()
    findings: list[str] = []
    print(f"first seed {seed}, {args.seconds:.0f} s in batches of {args.batch:.0f} s", flush=True)
    while time.monotonic() - start < args.seconds:
        batch = min(args.batch, args.seconds - (time.monotonic() - start))
        results, problems = run_worker(seed, max(batch, 1.0))
        counts.update((r["kind"], r["outcome"] if r["outcome"] in ("ok", "refused") else "FINDING") for r in results)
        findings += problems
        for p in problems:
            print("FINDING", p, flush=True)
        done = sum(counts.values())
        print(f"{time.monotonic() - start:7.0f} s: {done} cases, {len(findings)} findings", flush=True)
        seed += len(results) + 1  # the next worker starts after the last seed begun (a dead one's included)
    elapsed = time.monotonic() - start
    print(f"\nran {sum(counts.values())} cases in {elapsed:.0f} s; seeds up to {seed - 1}")
    for kind in sorted({k for k, _ in counts}):
        row = {o: counts[(kind, o)] for o in ("ok", "refused", "FINDING")}
        print(f"  {kind:9s} ok {row['ok']:7d}  refused {row['refused']:7d}  findings {row['FINDING']}")
    print(f"findings: {len(findings)}")
    for f in findings:
        print("  " + f)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
