"""Grade one notebook: run it, run the tests, turn the outcomes into points and reasons.

Every exercise is worth its points times the fraction of its tests (visible
and hidden) that pass. A notebook that is not valid JSON, whose assignment
cannot be told, whose kernel dies or hangs, or that tampers with minigrad
scores 0, and the reason says which.
"""

import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from minigrad.grading.assignment import read_notebook_text, which_assignment
from minigrad.grading.integrity import CodeChanged, differences, fingerprint, source_digest
from minigrad.grading.runner import run_cells

MAX_NOTEBOOK_BYTES = 20_000_000

# The grading cell runs in the student's kernel. It first imports the grader, and the json module it
# writes the results with, afresh from disk: whatever the notebook patched into them is gone. (The
# rest of minigrad cannot be reloaded, as the student's Functions use it; its fingerprint is checked.)
FRESH_GRADER = (
    "import sys\n"
    "for _name in [n for n in sys.modules if n == 'json' or n.startswith(('json.', 'minigrad.grading'))]:\n"
    "    del sys.modules[_name]\n"
)


@dataclass
class Settings:
    cell_timeout: float = 30  # seconds per cell
    test_time_limit: float = 30  # seconds per test
    output_limit: int = 1_000_000  # bytes of output kept for the whole notebook
    memory_limit: int = 4 * 2**30  # bytes of data a notebook's kernel may hold (0: no limit)


@dataclass
class ExerciseResult:
    id: str
    title: str
    points: float
    score: float = 0.0
    tests: list = field(default_factory=list)  # dicts: name, hidden, passed, message


@dataclass
class NotebookResult:
    path: str
    assignment: str = None
    exercises: list = field(default_factory=list)
    reasons: list = field(default_factory=list)
    zeroed: bool = False  # the score was set to 0 for a reason (tampering, a dead kernel, ...)

    @property
    def score(self):
        return 0.0 if self.zeroed else sum(e.score for e in self.exercises)

    @property
    def max_score(self):
        return sum(e.points for e in self.exercises)


def grade_notebook(path, assignments, settings=None, pristine=None, sources=None):
    """The NotebookResult of the notebook at ``path``; never raises for the notebook's sake.

    ``pristine`` and ``sources`` are the fingerprint and the source digest of
    minigrad taken when grading began (integrity.py). Raises CodeChanged
    if minigrad's files changed on disk since: no result would be fair.
    """
    settings = settings or Settings()
    sources = sources or source_digest()
    result = NotebookResult(str(path))
    _expect_from_file_name(result, path, assignments)  # so a broken file still counts its points as lost
    try:
        size = os.path.getsize(path)
        if size > MAX_NOTEBOOK_BYTES:
            return _zero(result, f"the file is {size / 1e6:.0f} MB, more than a notebook can be "
                                 f"({MAX_NOTEBOOK_BYTES / 1e6:.0f} MB)")
        nb = read_notebook_text(Path(path).read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError) as e:
        return _zero(result, f"not a valid notebook: {e}")
    name = which_assignment(nb, path, assignments)
    if name is None:
        return _zero(result, "cannot tell which assignment this notebook answers: name it after one "
                             f"({', '.join(sorted(assignments))})")
    assignment = assignments[name]
    _expect(result, name, assignment)
    cells = [(_label(k, cell.source), cell.source) for k, cell in enumerate(nb.cells)
             if cell.cell_type == "code" and isinstance(cell.source, str) and cell.source.strip()]
    with tempfile.TemporaryDirectory(prefix="minigrad-results-") as folder:
        result_path = os.path.join(folder, "results.json")
        request = json.dumps({
            "exercises": [{"id": e.id, "hidden": e.hidden_source, "reference": e.reference_source}
                          for e in assignment.exercises],
            "test_time_limit": settings.test_time_limit,
        })
        final = FRESH_GRADER + (f"from minigrad.grading.inkernel import grade_here\n"
                                f"grade_here({request!r}, {result_path!r})")
        n_tests = 20 * len(assignment.exercises)  # (a failed test may run twice: reference.py)
        report = run_cells(cells, final, cell_timeout=settings.cell_timeout,
                           final_timeout=settings.cell_timeout + n_tests * settings.test_time_limit,
                           output_limit=settings.output_limit, memory_limit=settings.memory_limit)
        outcome = _read(result_path)
    _add_run_reasons(result, report, settings)
    if report.fatal:
        return _zero(result, report.fatal)
    if outcome is None:
        failed = [m for label, m in report.errors if label == "the grading cell"]
        return _zero(result, "the tests could not run" + (f" ({failed[0]})" if failed else ""))
    changed = differences(pristine or fingerprint(), outcome["fingerprint"])
    if changed and source_digest() != sources:
        raise CodeChanged()
    if changed:
        shown = "; ".join(changed[:3]) + (f"; and {len(changed) - 3} more" if len(changed) > 3 else "")
        return _zero(result, f"minigrad was tampered with ({shown}), so no test result can be trusted")
    _score(result, outcome["tests"])
    return result


def _expect(result, name, assignment):
    """The notebook answers ``assignment``: its exercises, each still at 0 points."""
    result.assignment = name
    result.exercises = [ExerciseResult(e.id, e.title, e.points) for e in assignment.exercises]


def _expect_from_file_name(result, path, assignments):
    """The assignment the file's name points to, before the file is read (none if it points to none)."""
    name = which_assignment(None, path, assignments)
    if name is not None:
        _expect(result, name, assignments[name])


def _label(k, source):
    """How a note names a cell: its place among all cells, and its first line (JupyterLab numbers none)."""
    first = next(line.strip() for line in source.splitlines() if line.strip())
    return f"cell {k + 1} ({first if len(first) <= 40 else first[:37] + '...'})"


def _read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _zero(result, reason):
    result.zeroed = True
    result.reasons.append(reason)
    return result


def _add_run_reasons(result, report, settings):
    for label in report.timeouts:
        result.reasons.append(f"{label} ran longer than {settings.cell_timeout:g} s and was interrupted "
                              "(an endless loop?)")
    for label, message in report.errors:
        if label != "the grading cell":
            over = message.startswith("MemoryError") and settings.memory_limit
            result.reasons.append(f"{label} raised {_tidy(message)}" + (
                f" (more than the {settings.memory_limit / 2**20:g} MB a notebook may use)" if over else ""))
    if report.output_dropped:
        result.reasons.append(f"the notebook printed more than {settings.output_limit / 1e6:g} MB; "
                              "the rest of its output was dropped")


def _tidy(message):
    """'invalid syntax (2959750420.py, line 1)' -> 'invalid syntax (line 1)'; long messages cut."""
    message = re.sub(r"\(\d+\.py, (line \d+)\)", r"(\1)", message)
    return message if len(message) <= 300 else message[:300] + "..."


def _score(result, tests):
    by_id = {e.id: e for e in result.exercises}
    for test in tests:
        exercise = by_id.get(test["exercise"])
        if exercise is not None:
            exercise.tests.append(test)
    for exercise in result.exercises:
        if exercise.tests:
            passed = sum(t["passed"] for t in exercise.tests)
            exercise.score = round(exercise.points * passed / len(exercise.tests), 4)
