"""List, per probe kernel, the shared-memory SASS instructions cuobjdump shows.

Each probe kernel must hold exactly one: the instruction under test.
    python3 check_sass.py SASS_TXT
"""

import re
import sys

OP = re.compile(
    r"\b(LDS(?:\.[A-Z0-9]+)*|STS(?:\.[A-Z0-9]+)*|LDSM(?:\.[A-Z0-9]+)*|STSM(?:\.[A-Z0-9]+)*|LDGSTS(?:\.[A-Z0-9]+)*)\b"
)


def main() -> None:
    kernel = None
    found: dict[str, list[str]] = {}
    for line in open(sys.argv[1]):
        m = re.search(r"Function : (\S+)", line)
        if m:
            kernel = m.group(1)
            found[kernel] = []
            continue
        if kernel and "@!PT" not in line:  # predicated never-true: not executed
            for op in OP.findall(line):
                found[kernel].append(op)
    for k, ops in found.items():
        status = "ok " if len(ops) == 1 else "BAD"
        print(f"{status} {k} {' '.join(ops)}")


if __name__ == "__main__":
    main()
