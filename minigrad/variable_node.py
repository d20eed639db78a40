"""Where VariableNode used to live, kept for code that imports it from here.

A VariableNode and its Variable each make the other, so both now live in
variable.py; what the graph frees (``ReleasedArray``, ``RELEASE_FROM_BYTES``)
lives in memory.py.
"""

from minigrad.memory import RELEASE_FROM_BYTES, ReleasedArray, ReleasingRef, release_unread
from minigrad.variable import UnrecordedNode, VariableNode

__all__ = ["VariableNode", "UnrecordedNode", "ReleasedArray", "ReleasingRef", "release_unread", "RELEASE_FROM_BYTES"]
