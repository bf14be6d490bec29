"""An ``.ncu-rep`` read through Nsight Compute's own ``ncu_report`` beside the CSV that ``ncu -i
REPORT --page source --csv`` prints of the same report: the two must give the same SASS rows
(address, instruction, line, executed, wavefronts, ideal, excessive) for every shared-memory
instruction. Runs where ncu is installed (the GPU machine), after a profile has written both:

    python3 -m tests.analysis.ncu.ncu_rep_h200 REPORT.ncu-rep PAGE.csv --out "$OUT/ncu_rep.json"

Where the reader fails, the interface's own names (the action's methods, its metric names that
mention wavefronts or instructions) are written beside the error, to fix the reader from.
"""

from __future__ import annotations

import argparse
import json
import traceback
from pathlib import Path
from typing import Any

FIELDS = ("sass", "line", "executed", "wavefronts", "ideal", "excessive")


def _row(r: Any) -> dict[str, Any]:
    return {"sass": " ".join(r.sass.split()), **{k: getattr(r, k) for k in FIELDS[1:]}}


def _interface(path: Path) -> dict[str, Any]:
    """What the report's interface offers, for a reader that could not read it."""
    from smemviz.analysis.ncu._report import _ncu_report_module

    nr = _ncu_report_module()
    ctx = nr.load_report(str(path))
    action = ctx.range_by_idx(0).action_by_idx(0)
    names = list(action.metric_names())
    return {
        "module": getattr(nr, "__file__", None),
        "action_methods": sorted(m for m in dir(action) if not m.startswith("_")),
        "metrics": sorted(n for n in names if any(w in n for w in ("wavefront", "inst_executed", "grid_size"))),
    }


def compare(report: Path, page: Path) -> dict[str, Any]:
    from smemviz.analysis.ncu._attribute import _is_smem_row
    from smemviz.analysis.ncu._report import read_ncu_rep, read_source_csv

    out: dict[str, Any] = {"report": report.name, "page": page.name}
    try:
        rep = read_ncu_rep(report)
    except Exception as exc:  # noqa: BLE001 - recorded with the interface's names
        out["error"] = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        out["traceback"] = traceback.format_exc()
        try:
            out["interface"] = _interface(report)
        except Exception as inner:  # noqa: BLE001
            out["interface_error"] = repr(inner)
        return out
    csv = read_source_csv(page.read_text(encoding="utf-8", errors="replace"))
    by_rep = {r.address: r for r in rep.rows if _is_smem_row(r)}
    by_csv = {r.address: r for r in csv.rows if _is_smem_row(r)}
    differ = []
    for pc in sorted(set(by_rep) | set(by_csv)):
        a, b = by_rep.get(pc), by_csv.get(pc)
        if a is None or b is None or _row(a) != _row(b):
            differ.append({"address": pc, "ncu-rep": a and _row(a), "csv": b and _row(b)})
    out.update(
        kernel=rep.kernel,
        grid=rep.grid_size,
        rows_rep=len(rep.rows),
        rows_csv=len(csv.rows),
        smem_rows=len(by_csv),
        differ=differ,
        same=not differ and bool(by_csv),
    )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("page", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    res = compare(args.report, args.page)
    args.out.write_text(json.dumps(res, indent=1, default=str))
    print(
        f"{args.report.name}: "
        + (
            f"reader failed: {res['error']}"
            if "error" in res
            else f"{res['smem_rows']} shared-memory rows, {len(res['differ'])} differ from the CSV"
        )
    )
    return 0 if res.get("same") else 1


if __name__ == "__main__":
    raise SystemExit(main())
