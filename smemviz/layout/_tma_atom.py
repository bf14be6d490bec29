"""A TMA atom's descriptor parameters, as a captured kernel builds them (or a layout file declares).

The CuTe DSL encodes a TMA descriptor (``cuTensorMapEncodeTiled``) on the host at launch, from the
global tensor and the atom's box and swizzle. Capture reads at trace time what is static of those
parameters; a global extent or stride that is a run-time value is kept as ``None`` and named, so a
check can judge the rest and say what it could not. Nothing here checks anything: the check is
``smemviz.analysis.check_tma_descriptor`` (the ``tma-descriptor`` lint rule).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["TmaAtom"]


@dataclass(frozen=True)
class TmaAtom:
    """One TMA atom: the parameters its descriptor will be encoded with, innermost dimension first.

    ``global_dims`` (elements) and ``global_strides`` (bytes, one fewer than the dimensions) hold
    ``None`` where the value is only known at run time. ``l2_promotion`` is ``None`` when the DSL
    picks it at launch; ``data_type``/``swizzle`` are ``None`` when they could not be read, and
    ``unread`` says why.
    """

    name: str  # the variable it is assigned to, or "" when the call's line does not say
    site: str | None  # "file.py:line" of the call that built it
    direction: str  # "load", "store" or "reduce"
    data_type: str | None  # check_tma_descriptor's name, e.g. "float16"
    global_dims: tuple[int | None, ...]
    global_strides: tuple[int | None, ...]
    box_dims: tuple[int, ...]
    element_strides: tuple[int, ...] | None = None
    interleave: str = "none"
    swizzle: str | None = "none"
    l2_promotion: str | None = None
    oob_fill: str = "none"
    region: str | None = None  # the SMEM region it fills or reads, when known
    unread: tuple[str, ...] = ()  # what could not be read, in words
    declared: bool = False  # written in a layout file (its global tensor undeclared), not captured

    @property
    def runtime(self) -> tuple[str, ...]:
        """The parameters whose values are only known at run time, by name (``global_dims[1]``)."""
        dims = tuple(f"global_dims[{i}]" for i, d in enumerate(self.global_dims) if d is None)
        return dims + tuple(f"global_strides[{i}]" for i, s in enumerate(self.global_strides) if s is None)

    @property
    def label(self) -> str:
        """``tma_a (kernel.py:118)``, or ``at kernel.py:118`` for an unnamed one."""
        if self.name:
            return f"{self.name} ({self.site})" if self.site else self.name
        return f"at {self.site}" if self.site else "(unnamed)"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "site": self.site,
            "direction": self.direction,
            "data_type": self.data_type,
            "global_dims": list(self.global_dims),
            "global_strides": list(self.global_strides),
            "box_dims": list(self.box_dims),
            "element_strides": None if self.element_strides is None else list(self.element_strides),
            "interleave": self.interleave,
            "swizzle": self.swizzle,
            "l2_promotion": self.l2_promotion,
            "oob_fill": self.oob_fill,
            "region": self.region,
            "unread": list(self.unread),
            **({"declared": True} if self.declared else {}),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TmaAtom:
        """The atom ``to_dict`` wrote; ValueError names the first key that holds something else."""
        es = d.get("element_strides")
        return cls(
            name=_text(d, "name", ""),
            site=_text(d, "site", None),
            direction=_text(d, "direction", "load"),
            data_type=_text(d, "data_type", None),
            global_dims=_ints(d, "global_dims", optional_items=True),
            global_strides=_ints(d, "global_strides", optional_items=True),
            box_dims=_ints(d, "box_dims"),
            element_strides=None if es is None else _ints(d, "element_strides"),
            interleave=_text(d, "interleave", "none"),
            swizzle=_text(d, "swizzle", "none"),
            l2_promotion=_text(d, "l2_promotion", None),
            oob_fill=_text(d, "oob_fill", "none"),
            region=_text(d, "region", None),
            unread=tuple(_text({"unread": u}, "unread", "") for u in _list(d, "unread")),
            declared=d.get("declared", False) is True,
        )


def _list(d: dict[str, Any], key: str) -> list[Any]:
    value = d.get(key, [])
    if not isinstance(value, list):
        raise ValueError(f"{key} must be a list, got {type(value).__name__}")
    return value


def _ints(d: dict[str, Any], key: str, optional_items: bool = False) -> tuple[Any, ...]:
    out: list[int | None] = []
    for v in _list(d, key):
        if v is None and optional_items:
            out.append(None)
        elif isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 2**64:
            raise ValueError(f"{key} holds {v!r}, not a count")
        else:
            out.append(v)
    return tuple(out)


def _text(d: dict[str, Any], key: str, default: Any) -> Any:
    value = d.get(key, default)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{key} must be a string, got {type(value).__name__}")
    return value
