"""Declared plans: the edge each shared byte needs, stated before the kernel is written.

An author who lets ``epi_c`` reuse ``b_stages``' bytes declares who last touches
``b_stages`` (UMMA reads it) and who first writes ``epi_c`` (TMA, stmatrix); the edge
table says what must sit between them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ._edges import needed_edge
from ._model import ACCESS_KINDS

__all__ = ["AliasNeed", "needed_edges"]

_WORDS = {
    "tma_load": "TMA writes",
    "tma_store": "a TMA store reads",
    "wgmma_read": "WGMMA reads",
    "umma_read": "UMMA reads",
    "umma_write_acc": "UMMA writes (accumulator)",
    "ld": "ld reads",
    "st": "st writes",
    "ldmatrix": "ldmatrix reads",
    "stmatrix": "stmatrix writes",
    "cp_async": "cp.async writes",
    "tcgen05_ld": "tcgen05.ld reads",
    "tcgen05_st": "tcgen05.st writes",
    "tcgen05_cp": "tcgen05.cp writes",
    "tmem_dealloc": "tcgen05.dealloc frees",
}


@dataclass(frozen=True)
class AliasNeed:
    """What one alias of a declared plan needs."""

    earlier: str
    earlier_kind: str
    later: str
    later_kind: str
    edge: str

    def line(self) -> str:
        return (
            f"{_WORDS[self.earlier_kind]} {self.earlier} -> {_WORDS[self.later_kind]} {self.later} over it: "
            f"needs {self.edge}"
        )


def needed_edges(pairs: Iterable[tuple[str, str, str, str]]) -> tuple[AliasNeed, ...]:
    """For each (earlier region, its last access kind, later region, its first write
    kind), the edge that must order them."""
    out = []
    known = set(ACCESS_KINDS) | {"tmem_dealloc"}
    for earlier, e_kind, later, l_kind in pairs:
        for kind in (e_kind, l_kind):
            if kind not in known:
                raise ValueError(f"unknown access kind {kind!r}; one of {', '.join(sorted(known))}")
        out.append(AliasNeed(earlier, e_kind, later, l_kind, needed_edge(e_kind, l_kind)))
    return tuple(out)
