"""Bank conflicts: how one warp's shared-memory access hits the 32 banks, as the H200 counts it.

``bank_conflicts(instruction, addresses)`` is the model (pure Python, calibrated
with Nsight Compute on an H200); the access-pattern, advice and report layers
build on it.
"""

from ._instructions import INSTRUCTIONS, InstructionSpec, instruction_names
from ._model import BankConflicts, LaneWord, bank_conflicts

__all__ = ["BankConflicts", "INSTRUCTIONS", "InstructionSpec", "LaneWord", "bank_conflicts", "instruction_names"]
