"""The ordering model as data: a kernel's sync objects, accesses and per-role programs.

It sits in the model room because a plan carries it (``LayoutPlan.ordering``, in its
JSON) and capture records it; the checker that reads it is
:mod:`smemviz.analysis.ordering`, which offers these names too.
"""

from ._json import from_dict, to_dict
from ._model import *  # noqa: F403 - the model's classes are its face
from ._model import __all__ as _model_names
from ._trace import Context, LoopInfo, contexts, programs_from_trace

__all__ = [*_model_names, "to_dict", "from_dict", "Context", "LoopInfo", "contexts", "programs_from_trace"]
