"""The SMEM byte each ``st.shared`` of a constant writes, read from PTX by following its address
register back to ``__dynamic_shmem__0`` (the kernel bridge's PTX reader)."""

from __future__ import annotations

import re

from smemviz.kernel._ptx import _address, _definitions


def constant_stores(ptx: str) -> dict[int, set[int]]:
    """{stored constant: SMEM offsets it is stored at}, thread-independent parts only."""
    values, _ = _definitions(ptx)
    out: dict[int, set[int]] = {}
    for reg, imm, value in re.findall(r"st\.shared(?:\.v\d)?\.[bsu]\d+\s+\[(%r\d+)(?:\+(-?\d+))?\],\s*(-?\d+);", ptx):
        v = _address(values, reg, imm or None)
        if v.base == "smem":
            out.setdefault(int(value), set()).update(v.offsets)
    return out
