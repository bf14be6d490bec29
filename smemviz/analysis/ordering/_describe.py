"""Words for the run's nodes: who ran an operation, and where."""

from __future__ import annotations

from ...layout.ordering import _model as m
from ._run import Run

__all__ = ["who", "site_of", "role_text"]


def role_text(run: Run, role: int) -> str:
    if role < 0:
        return "the prologue"
    r = run.model.programs[role].role
    return f"{r.warp_text()} ({r.name!r})"


def site_of(run: Run, node: int) -> m.CallSite | None:
    op = run.node_op[node]
    return op.event.site if op is not None else None


def who(run: Run, node: int) -> str:
    """e.g. "warp 4 ('mma') at fmha.py:310"."""
    site = site_of(run, node)
    where = f" at {site}" if site is not None else ""
    return f"{role_text(run, run.node_role[node])}{where}"
