"""Analyses: functions of a computed :class:`~smemviz.LayoutPlan`.

Each answers one question about a layout (which hardware rules it breaks, how
many CTAs fit on an SM, what changed between two layouts, the largest
configuration that fits) and returns a frozen result that reports, figures,
the explorer and the command line render.
"""

from ._analysed import Analysed, analyse, as_analysed
from ._diff import PlanDiff, RegionChange
from ._diff import diff_plans as diff
from ._lint import Finding, Findings, lint
from ._max_fit import MaxFit, max_fit
from ._occupancy import Occupancy, occupancy, plan_occupancy
from ._report import html_report, markdown_report, text_report
from .ordering import OrderingReport, check_ordering, needed_edges, plan_needs
from .tma import TmaDescriptorCheck, TmaProblem, check_tma_descriptor

__all__ = [
    "analyse",
    "Analysed",
    "as_analysed",
    "lint",
    "Finding",
    "Findings",
    "occupancy",
    "Occupancy",
    "plan_occupancy",
    "diff",
    "PlanDiff",
    "RegionChange",
    "max_fit",
    "MaxFit",
    "text_report",
    "html_report",
    "markdown_report",
    "check_tma_descriptor",
    "check_ordering",
    "OrderingReport",
    "needed_edges",
    "plan_needs",
    "TmaDescriptorCheck",
    "TmaProblem",
]
