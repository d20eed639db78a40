"""An assignment, read from its solution notebook: its exercises, their points and hidden tests.

The solution notebooks carry nbgrader's markers and metadata, so an
instructor who uses nbgrader can take them as they are:

- a solution cell (``nbgrader.solution``) holds ``### BEGIN SOLUTION`` ...
  ``### END SOLUTION`` inside a function body;
- a test cell (``nbgrader.grade``, with ``points``) calls ``check("N.M")`` and
  holds the hidden tests between ``### BEGIN HIDDEN TESTS`` and
  ``### END HIDDEN TESTS``.

Both carry ``metadata.minigrad.exercise = "N.M"``; a test cell also carries
the exercise's ``title``. An exercise's solution cells are its reference
answer, with which later exercises are marked when the student's is wrong
(see reference.py).
"""

import json
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

    @property
    def points(self):
        return sum(e.points for e in self.exercises)


def default_solutions_dir():
    """``./solutions`` if there is one, else the ``solutions`` folder beside the minigrad package."""
    here = Path.cwd() / "solutions"
    if here.is_dir():
        return here
    return Path(__file__).resolve().parents[2] / "solutions"


def read_assignment(path):
    """The Assignment of solution notebook ``path``."""
    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    assignment = Assignment(path.stem, path)
    solutions = {}  # exercise id -> the sources of its solution cells
    for cell in nb.cells:
        meta = cell.metadata.get("minigrad", {})
        grading = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code" or "exercise" not in meta:
            continue
        if grading.get("solution"):
            solutions.setdefault(meta["exercise"], []).append(cell.source)
        if not grading.get("grade"):
            continue
        assignment.exercises.append(Exercise(
            id=meta["exercise"], title=meta.get("title", meta["exercise"]),
            points=float(grading.get("points", 0)), hidden_source=hidden_block(cell.source),
        ))
    for exercise in assignment.exercises:
        exercise.reference_source = "\n\n".join(solutions.get(exercise.id, []))
    return assignment


def read_assignments(solutions_dir):
    """{name: Assignment} for every notebook of the solutions folder."""
    return {p.stem: read_assignment(p) for p in sorted(Path(solutions_dir).glob("*.ipynb"))}


def hidden_block(source):
    """The code between the hidden-test markers of a cell ('' when there is none)."""
    lines, inside = [], False
    for line in source.splitlines():
        if line.strip() == BEGIN_HIDDEN:
            inside = True
        elif line.strip() == END_HIDDEN:
            inside = False
        elif inside:
            lines.append(line)
    return "\n".join(lines)


def which_assignment(nb, path, assignments):
    """The name of the assignment a submission answers: from its metadata, else from its file name."""
    name = nb.get("metadata", {}).get("minigrad", {}).get("assignment") if isinstance(nb, dict) else None
    if name in assignments:
        return name
    stem = Path(path).stem
    if stem in assignments:
        return stem
    for known in sorted(assignments, key=len, reverse=True):
        if known in stem:
            return known
    return None


def read_notebook_text(text):
    """Parse a notebook from its text: nbformat 4, JSON errors raised as ValueError with a position."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"not valid JSON (line {e.lineno}, column {e.colno}: {e.msg})") from None
    if not isinstance(data, dict) or "cells" not in data:
        raise ValueError("valid JSON but not a notebook (no list of cells)")
    try:
        return nbformat.reads(json.dumps(data), as_version=4)
    except Exception as e:  # nbformat's own errors: a notebook too broken to read
        raise ValueError(f"not a readable notebook ({type(e).__name__}: {e})") from None
