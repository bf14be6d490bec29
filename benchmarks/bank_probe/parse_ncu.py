"""Join the probe's cases with ncu's per-launch counters into one CSV table.

    python3 parse_ncu.py CASES_TXT RAW_DIR OUT_CSV
RAW_DIR holds ncu_<instruction>.csv (ncu --csv --page raw) and
launch_<instruction>.txt (the probe's stdout: one line per launch, in order).
The n-th profiled kernel of a process is the n-th launch it printed.
"""

import csv
import os
import sys


def read_ncu(path: str) -> list[dict[str, str]]:
    if not os.path.exists(path):
        return []
    lines = [ln for ln in open(path, encoding="utf-8", errors="replace") if ln.startswith('"')]
    rows = list(csv.reader(lines))
    if not rows:
        return []
    header = rows[0]
    out = []
    for r in rows[1:]:
        if len(r) != len(header) or not r[0].strip().isdigit():
            continue  # the units row, or ncu's own messages
        out.append(dict(zip(header, r)))
    return out


def main() -> None:
    cases_path, raw, out_path = sys.argv[1:4]
    cases = {}
    order: dict[str, list[int]] = {}
    for line in open(cases_path):
        body, _, family = line.partition("#")
        tok = body.split()
        cid, instr, offs = int(tok[0]), tok[1], [int(x) for x in tok[2:34]]
        cases[cid] = (instr, family.strip(), offs)
        order.setdefault(instr, []).append(cid)
    metrics: list[str] = []
    table = []
    for instr in order:
        tag = instr.replace(".", "_")
        launched, bases = [], {}
        lp = os.path.join(raw, f"launch_{tag}.txt")
        if os.path.exists(lp):
            for ln in open(lp):
                t = ln.split()
                if len(t) >= 5 and t[0] == "launched":
                    launched.append(int(t[1]))
                    bases[int(t[1])] = int(t[4])
        rows = read_ncu(os.path.join(raw, f"ncu_{tag}.csv"))
        for k, row in enumerate(rows):
            if k >= len(launched):
                break
            cid = launched[k]
            vals = {}
            for key, v in row.items():
                if "__" in key:
                    vals[key] = v.replace(",", "").strip()
                    if key not in metrics:
                        metrics.append(key)
            table.append((cid, bases.get(cid, -1), vals))
    table.sort()
    with open(out_path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["case", "instruction", "family", "base"] + [f"a{i}" for i in range(32)] + metrics)
        for cid, base, vals in table:
            instr, family, offs = cases[cid]
            w.writerow([cid, instr, family, base] + offs + [vals.get(m, "") for m in metrics])
    per = {}
    for cid, _, _ in table:
        per[cases[cid][0]] = per.get(cases[cid][0], 0) + 1
    print(f"measured {len(table)} of {len(cases)} cases")
    for instr, ids in order.items():
        print(f"  {instr:20s} {per.get(instr, 0):3d}/{len(ids)}")


if __name__ == "__main__":
    main()
