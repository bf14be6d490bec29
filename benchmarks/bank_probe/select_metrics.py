"""Pick, from ``ncu --query-metrics``, the shared-memory counters this probe records.

A metric name ncu does not know stops the whole profile, so the list is the
intersection of what the device offers with the families the probe wants;
without a readable query it falls back to the names known to exist.
    python3 select_metrics.py QUERY_TXT    -> comma-separated metrics with .sum
"""

import re
import sys

WANTED = re.compile(
    r"^(smsp__sass_inst_executed_op_(shared_ld|shared_st|ldsm|stsm|ldgsts)"
    r"|smsp__inst_executed_op_(ldsm|stsm|ldgsts)"
    r"|smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_(ld|st|ldsm|stsm|ldgsts)"
    r"|smsp__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_(ld|st|ldsm|stsm|ldgsts)"
    r"|l1tex__data_pipe_lsu_wavefronts_mem_shared_op_(ld|st|ldsm|stsm|ldgsts)"
    r"|l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_(ld|st|ldsm|stsm|ldgsts)"
    r"|l1tex__data_pipe_lsu_wavefronts_mem_shared"
    r"|l1tex__data_bank_conflicts_pipe_lsu_mem_shared)$"
)
FALLBACK = [
    "smsp__sass_inst_executed_op_shared_ld",
    "smsp__sass_inst_executed_op_shared_st",
    "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld",
    "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st",
]


def main() -> None:
    names = []
    try:
        for line in open(sys.argv[1]):
            field = line.strip().split(" ")[0] if line.strip() else ""
            if WANTED.match(field) and field not in names:
                names.append(field)
    except OSError:
        pass
    if not names:
        names = FALLBACK
    print(",".join(n + ".sum" for n in sorted(names)))


if __name__ == "__main__":
    main()
