"""Graded exercises: feedback in the notebook and the grading command.

In a notebook: ``from minigrad.grading import check`` and ``check("N.M")``.
For a class: ``minigrad-grade PATH`` (see ``minigrad.grading.cli``).
"""

from minigrad.grading.feedback import check
from minigrad.grading.testing import hidden, visible

__all__ = ["check", "hidden", "visible"]
