"""Exercises from solutions: ``python -m minigrad.grading.generate [SOLUTIONS] [EXERCISES]``.

Each ``### BEGIN SOLUTION`` ... ``### END SOLUTION`` block, always inside a
function, becomes ``raise NotImplementedError("Exercise N.M: write <function>")``:
the signature and the docstring above the block stay. Hidden tests and all
outputs are removed. The exercises are written, never edited by hand, so the
two folders cannot drift apart (a test regenerates them and compares).
"""

import re
import sys
from pathlib import Path

import nbformat

from minigrad.grading.assignment import (
    BEGIN_HIDDEN, BEGIN_SOLUTION, END_HIDDEN, END_SOLUTION, default_solutions_dir,
)

_DEF = re.compile(r"^(\s*)(?:async\s+)?(def|class)\s+(\w+)")


def stub_source(source, exercise, where="cell"):
    """``source`` with its solution blocks replaced by NotImplementedError and its hidden tests removed."""
    out, lines = [], source.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped == BEGIN_SOLUTION:
            indent = line[: len(line) - len(line.lstrip())]
            name = _enclosing(lines[:i], len(indent))
            if name is None:
                raise ValueError(f"{where}: {BEGIN_SOLUTION} must be inside a function body")
            out.append(f'{indent}raise NotImplementedError("Exercise {exercise}: write {name}")')
            i = _skip_to(lines, i, END_SOLUTION, where)
        elif stripped == BEGIN_HIDDEN:
            i = _skip_to(lines, i, END_HIDDEN, where)
        else:
            out.append(line)
            i += 1
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out)


def _skip_to(lines, i, marker, where):
    for j in range(i + 1, len(lines)):
        if lines[j].strip() == marker:
            return j + 1
    raise ValueError(f"{where}: {lines[i].strip()} on line {i + 1} has no {marker}")


def _enclosing(before, indent):
    """The qualified name (Class.method or function) of the def enclosing a line of this indent.

    None when the innermost enclosing block is not a def (a solution must sit in a function body).
    """
    names, kinds, limit = [], [], indent
    for line in reversed(before):
        m = _DEF.match(line)
        if m and len(m.group(1)) < limit:
            names.append(m.group(3))
            kinds.append(m.group(2))
            limit = len(m.group(1))
    if not names or kinds[0] != "def":
        return None
    return ".".join(reversed(names))


def exercise_notebook(solution):
    """The exercise notebook (a NotebookNode) generated from a solution NotebookNode."""
    nb = nbformat.from_dict(solution)
    for k, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        exercise = cell.metadata.get("minigrad", {}).get("exercise", "?")
        cell.source = stub_source(cell.source, exercise, where=f"cell {k}")
        cell.outputs = []
        cell.execution_count = None
    return nb


def generate(solutions_dir=None, exercises_dir=None):
    """Write one exercise notebook per solution notebook; return the paths written."""
    solutions_dir = Path(solutions_dir) if solutions_dir else default_solutions_dir()
    exercises_dir = Path(exercises_dir) if exercises_dir else solutions_dir.parent / "exercises"
    exercises_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for path in sorted(solutions_dir.glob("*.ipynb")):
        nb = exercise_notebook(nbformat.read(path, as_version=4))
        target = exercises_dir / path.name
        target.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
        written.append(target)
    return written


def main(argv=None):
    for path in generate(*(sys.argv[1:] if argv is None else argv)[:2]):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
