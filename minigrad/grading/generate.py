"""Exercises from solutions: ``python -m minigrad.grading.generate [SOLUTIONS] [EXERCISES]``.

Each ``### BEGIN SOLUTION`` ... ``### END SOLUTION`` block, always inside a function, becomes
``raise NotImplementedError("Exercise N.M: write <function>")``: the signature and the docstring above
the block stay. Hidden tests and all outputs are removed. The exercises are written, never edited by
hand, so the two folders cannot drift apart (a test regenerates them and compares).
"""

import ast
import sys
from pathlib import Path

import nbformat

from minigrad.grading.assignment import (
    BEGIN_HIDDEN, BEGIN_SOLUTION, END_HIDDEN, END_SOLUTION, default_solutions_dir,
)

_END = {BEGIN_SOLUTION: END_SOLUTION, BEGIN_HIDDEN: END_HIDDEN}
_BLOCKS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def stub_source(source, exercise, where="cell"):
    """``source`` with its solution blocks replaced by NotImplementedError and its hidden tests removed."""
    out, lines = [], iter(enumerate(source.splitlines(), start=1))
    for number, line in lines:
        marker = line.strip()
        if marker not in _END:
            out.append(line)
            continue
        if marker == BEGIN_SOLUTION:
            indent = line[: len(line) - len(line.lstrip())]
            name = _enclosing(source, number, where)
            out.append(f'{indent}raise NotImplementedError("Exercise {exercise}: write {name}")')
        if not any(after.strip() == _END[marker] for _, after in lines):  # (skips the block's lines)
            raise ValueError(f"{where}: {marker} on line {number} has no {_END[marker]}")
    return "\n".join(out).rstrip()


def _enclosing(source, number, where):
    """The qualified name (Class.method or function) of the function around line ``number``: the defs and
    classes whose line spans hold the line, outermost first (by first line); the innermost must be a def."""
    around = sorted((node for node in ast.walk(ast.parse(source)) if isinstance(node, _BLOCKS)
                     and node.lineno <= number <= node.end_lineno), key=lambda node: node.lineno)
    if not around or isinstance(around[-1], ast.ClassDef):
        raise ValueError(f"{where}: {BEGIN_SOLUTION} must be inside a function body")
    return ".".join(node.name for node in around)


def exercise_notebook(solution):
    """The exercise notebook (a NotebookNode) generated from a solution NotebookNode."""
    nb = nbformat.from_dict(solution)
    for k, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            exercise = cell.metadata.get("minigrad", {}).get("exercise", "?")
            source = stub_source(cell.source, exercise, where=f"cell {k}")
            cell.update(source=source, outputs=[], execution_count=None)
    return nb


def generate(solutions_dir=None, exercises_dir=None):
    """Write one exercise notebook per solution notebook; return the paths written."""
    solutions_dir = Path(solutions_dir) if solutions_dir else default_solutions_dir()
    exercises_dir = Path(exercises_dir) if exercises_dir else solutions_dir.parent / "exercises"
    exercises_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for path in sorted(solutions_dir.glob("*.ipynb")):
        written.append(exercises_dir / path.name)
        nbformat.write(exercise_notebook(nbformat.read(path, as_version=4)), written[-1])
    return written


if __name__ == "__main__":
    for path in generate(*sys.argv[1:3]):
        print(f"wrote {path}")
