"""An assignment, read from its solution notebook: its exercises, their points and hidden tests.

The markers and metadata are nbgrader's, so an instructor who uses nbgrader can take the notebooks as
they are: a solution cell (``nbgrader.solution``) holds ``### BEGIN SOLUTION`` ... ``### END SOLUTION``
inside a function body; a test cell (``nbgrader.grade``, with ``points``) calls ``check("N.M")`` and holds
the hidden tests between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS``. Both carry
``metadata.minigrad.exercise``; a test cell also its ``title``.
"""

import itertools
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

BEGIN_SOLUTION = "### BEGIN SOLUTION"
END_SOLUTION = "### END SOLUTION"
BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"
END_HIDDEN = "### END HIDDEN TESTS"


@dataclass
class Exercise:
    id: str
    title: str
    points: float
    hidden_source: str = ""
    reference_source: str = ""  # the solution cells: what a later exercise is marked with (reference.py)


@dataclass
class Assignment:
    name: str
    path: Path
    exercises: list = field(default_factory=list)
    cells: list = field(default_factory=list)  # the solution notebook's code cells


def default_solutions_dir():
    """``./solutions`` if there is one, else the ``solutions`` folder beside the minigrad package."""
    here = Path.cwd() / "solutions"
    return here if here.is_dir() else Path(__file__).resolve().parents[2] / "solutions"


def read_assignment(path):
    """The Assignment of solution notebook ``path``."""
    path = Path(path)
    assignment = Assignment(path.stem, path)
    solutions = {}  # exercise id -> the sources of its solution cells
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type != "code":
            continue
        assignment.cells.append(cell.source)
        meta, grading = cell.metadata.get("minigrad", {}), cell.metadata.get("nbgrader", {})
        id = meta.get("exercise")
        if id and grading.get("solution"):
            solutions.setdefault(id, []).append(cell.source)
        if id and grading.get("grade"):
            points = float(grading.get("points", 0))
            assignment.exercises.append(Exercise(id, meta.get("title", id), points, hidden_block(cell.source)))
    for exercise in assignment.exercises:
        exercise.reference_source = "\n\n".join(solutions.get(exercise.id, []))
    return assignment


def read_assignments(solutions_dir):
    """{name: Assignment} for every notebook of the solutions folder; ValueError if it holds none."""
    folder = Path(solutions_dir)
    if not folder.is_dir():
        raise ValueError(f"--solutions {solutions_dir}: no such folder (it should hold the solution "
                         "notebooks, such as solutions/01_function.ipynb of the minigrad repository)")
    found = {}
    for path in sorted(folder.glob("*.ipynb")):
        try:
            found[path.stem] = read_assignment(path)
        except Exception as e:  # (OSError, or nbformat's and this reader's view of a wrong file)
            raise ValueError(f"--solutions {solutions_dir}: {path.name} is not a solution notebook "
                             f"({type(e).__name__}: {e})") from None
    if not any(a.exercises for a in found.values()):
        raise ValueError(f"--solutions {solutions_dir}: no solution notebook with graded exercises there "
                         "(cells with nbgrader points): point --solutions to minigrad's solutions/ folder")
    return found


def hidden_block(source):
    """The code between the hidden-test markers of a cell ('' when there is none)."""
    lines, hidden = iter(source.splitlines()), []
    for line in lines:
        if line.strip() == BEGIN_HIDDEN:
            hidden += itertools.takewhile(lambda inner: inner.strip() != END_HIDDEN, lines)
    return "\n".join(hidden)


def which_assignment(path, assignments):
    """The name of the assignment a file answers, from its file name (the longest name in it), or None."""
    return max((name for name in assignments if name in Path(path).stem), key=len, default=None)
