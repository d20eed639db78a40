"""Exercises from solutions: ``python -m minigrad.grading.generate [SOLUTIONS] [EXERCISES] [--force]``.

Each ``### BEGIN SOLUTION`` ... ``### END SOLUTION`` block, always inside a function, becomes
``raise NotImplementedError("Exercise N.M: write <function>")``: the signature and the docstring above
the block stay. Hidden tests and all outputs are removed. The exercises are written, never edited by
hand, so the two folders cannot drift apart (a test regenerates them and compares).

An exercise notebook whose cells differ from what its solution generates may hold a student's
answers: it is never overwritten unless ``--force`` says so (outputs and metadata do not count).
"""

import argparse
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


class WouldOverwrite(FileExistsError):
    """Exercise notebooks hold cells their solutions do not generate: a student's work, maybe."""

    def __init__(self, paths):
        self.paths = paths
        names = "\n".join(f"  {path}" for path in paths)
        super().__init__(f"these exercise notebooks differ from what their solutions generate (a student's "
                         f"answers?), so nothing was written:\n{names}\nGive --force to overwrite them (what "
                         "differs is lost), or write the exercises to another folder: "
                         "python -m minigrad.grading.generate SOLUTIONS OTHER_FOLDER")


def cells_of(nb):
    """What a student writes in a notebook: each cell's type and source (not outputs, not metadata)."""
    return [(cell.cell_type, cell.source.rstrip()) for cell in nb.cells]


def generate(solutions_dir=None, exercises_dir=None, force=False):
    """Write one exercise notebook per solution notebook; return the paths written.

    Raises WouldOverwrite, and writes nothing, where an existing exercise's cells differ from what its
    solution generates, unless ``force``.
    """
    solutions_dir = Path(solutions_dir) if solutions_dir else default_solutions_dir()
    exercises_dir = Path(exercises_dir) if exercises_dir else solutions_dir.parent / "exercises"
    notebooks = {exercises_dir / path.name: exercise_notebook(nbformat.read(path, as_version=4))
                 for path in sorted(solutions_dir.glob("*.ipynb"))}
    edited = [path for path, nb in notebooks.items()
              if path.exists() and cells_of(nbformat.read(path, as_version=4)) != cells_of(nb)]
    if edited and not force:
        raise WouldOverwrite(edited)
    exercises_dir.mkdir(parents=True, exist_ok=True)
    for path, nb in notebooks.items():
        nbformat.write(nb, path)
    return list(notebooks)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m minigrad.grading.generate",
                                description="Write the exercise notebooks from the solution notebooks.",
                                epilog=__doc__.split("\n\n", 1)[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("solutions", nargs="?", help="the solution notebooks (default: ./solutions, else minigrad's)")
    p.add_argument("exercises", nargs="?", help="where to write the exercises (default: exercises/ beside SOLUTIONS)")
    p.add_argument("--force", action="store_true",
                   help="overwrite exercise notebooks whose cells differ from what their solutions generate")
    args = p.parse_args(argv)
    try:
        written = generate(args.solutions, args.exercises, force=args.force)
    except WouldOverwrite as e:
        print(f"python -m minigrad.grading.generate: {e}", file=sys.stderr)
        return 1
    for path in written:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
