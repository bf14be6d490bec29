"""Facts read from a compiled cubin (an ELF file) without CUDA tools: registers per kernel."""

from __future__ import annotations

import struct

__all__ = ["register_counts"]

_EIFMT_SVAL = 0x04  # attribute with a 16-bit size and a value block
_EIFMT_HVAL = 0x03  # attribute with a 16-bit value
_EIFMT_BVAL = 0x02
_EIFMT_NVAL = 0x01
_EIATTR_REGCOUNT = 0x2F  # value: (kernel symbol index, registers per thread)


def _sections(cubin: bytes) -> list[tuple[str, int, int]]:
    if cubin[:4] != b"\x7fELF" or cubin[4] != 2:
        raise ValueError("not a 64-bit ELF cubin")
    shoff = struct.unpack_from("<Q", cubin, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
    names_at = headers[shstrndx][4]
    out = []
    for h in headers:
        start = names_at + h[0]
        out.append((cubin[start : cubin.index(b"\0", start)].decode(), h[4], h[5]))
    return out


def register_counts(cubin: bytes) -> tuple[int, ...]:
    """Registers per thread of each kernel in ``cubin`` (the ``EIATTR_REGCOUNT`` entries
    of its ``.nv.info`` sections), in the order they appear."""
    counts = []
    for name, offset, size in _sections(cubin):
        if not name.startswith(".nv.info"):
            continue
        p, end = offset, offset + size
        while p + 2 <= end:
            fmt, attr = cubin[p], cubin[p + 1]
            if fmt == _EIFMT_SVAL:
                length = struct.unpack_from("<H", cubin, p + 2)[0]
                if attr == _EIATTR_REGCOUNT and length >= 8:
                    counts.append(struct.unpack_from("<II", cubin, p + 4)[1])
                p += 4 + length
            elif fmt in (_EIFMT_HVAL, _EIFMT_BVAL):
                p += 4
            elif fmt == _EIFMT_NVAL:
                p += 2
            else:
                break  # an attribute format this reader does not know: stop rather than misread
    return tuple(counts)
