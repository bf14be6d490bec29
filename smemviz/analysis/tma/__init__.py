"""TMA descriptors checked before launch: the rules of ``cuTensorMapEncodeTiled``, on the CPU.

:func:`check_tma_descriptor` takes the driver call's parameters and answers with a frozen
:class:`TmaDescriptorCheck` (``ok`` and the problems, each naming the parameter, the value and the
rule). The rules follow the CUDA driver API's documentation, corrected by the H200 driver's own
answers to the cases recorded in ``results/tma_descriptor_h200.csv``.
"""

from ._check import TmaDescriptorCheck, check_tma_descriptor
from ._descriptor import TmaDescriptor
from ._rules import TmaProblem

__all__ = ["check_tma_descriptor", "TmaDescriptorCheck", "TmaDescriptor", "TmaProblem"]
