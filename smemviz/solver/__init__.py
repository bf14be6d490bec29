"""Lifetimes and the solver that lays buffers out by them: no two buffers live
at the same step share a byte, and the peak is the smallest it can find
(proven optimal when it says so).

The room reads from the top down: steps (``live=`` read into step sets),
the problem (sections, bounds), greedy layouts, the exact search over the
compiled core (:mod:`._core`, numba when ``smemviz[fast]`` is installed, else
the same source as plain Python), and :func:`solve`, which the allocators call.
"""

from __future__ import annotations

from ._problem import Problem, align_up, packed_bound, stacked_beyond_steps, step_bound
from ._solve import (
    DEFAULT_NODE_BUDGET,
    NOTICE_AFTER_S,
    SOLVERS,
    Solution,
    SolverName,
    default_node_budget,
    solve,
    solve_problem,
)
from ._steps import MAX_STEPS, Steps, check_steps, describe_live, phase_lifetimes, read_live
from ._times import MAX_STRETCHES, Times, timeline

__all__ = [
    "Solution",
    "SolverName",
    "SOLVERS",
    "solve",
    "solve_problem",
    "Problem",
    "step_bound",
    "packed_bound",
    "stacked_beyond_steps",
    "align_up",
    "DEFAULT_NODE_BUDGET",
    "NOTICE_AFTER_S",
    "default_node_budget",
    "Steps",
    "MAX_STEPS",
    "check_steps",
    "read_live",
    "describe_live",
    "phase_lifetimes",
    "Times",
    "MAX_STRETCHES",
    "timeline",
]
