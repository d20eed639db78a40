"""A student's copy of the course, as nbgrader's release: ``python -m minigrad.grading.release OUT``.

The copy holds the lessons (``notebooks/``), the exercises, generated afresh
from the solutions (so no answer a stale ``exercises/`` might hold can leak),
the package with its visible tests, the examples, ``README.md``,
``pyproject.toml`` and the Lab's workspace (``.jupyter/workspaces``, which the
README's launch command opens): what ``pip install -e .`` and the lessons need. It holds
no ``solutions/``, no hidden test and no ``tests/``. A self-learner uses the
whole repository instead, where the solutions sit beside the exercises.
"""

import argparse
import shutil
import sys
from pathlib import Path

import nbformat

import minigrad
from minigrad.grading.assignment import default_solutions_dir
from minigrad.grading.generate import exercise_notebook

FILES = ("README.md", "pyproject.toml")
WORKSPACES = ".jupyter/workspaces"  # the Lab's layout on first launch: the quickstart, the root in view
FOLDERS = {"minigrad": "*.py", "notebooks": "*.ipynb", "examples": "*.py"}


def release(out, solutions_dir=None, root=None):
    """Write the student's copy to the new folder ``out``; return the files written, relative to it."""
    out, root = Path(out), Path(root) if root else Path(minigrad.__file__).resolve().parents[1]
    solutions_dir = Path(solutions_dir) if solutions_dir else default_solutions_dir()
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"release: {out} is not empty: give a new folder, so that nothing in it is overwritten")
    solutions = sorted(solutions_dir.glob("*.ipynb"))
    if not solutions:
        raise FileNotFoundError(f"release: no solution notebooks in {solutions_dir}: give --solutions DIR")
    written = []
    for name in FILES:
        if (root / name).is_file():
            written.append(_copy(root / name, out / name))
    for folder, pattern in FOLDERS.items():
        for path in sorted((root / folder).rglob(pattern)):
            relative = path.relative_to(root)
            if not any(part.startswith(".") or part == "__pycache__" for part in relative.parts):
                written.append(_copy(path, out / relative))
    for path in sorted((root / WORKSPACES).glob("*.jupyterlab-workspace")):
        written.append(_copy(path, out / WORKSPACES / path.name))
    (out / "exercises").mkdir(parents=True, exist_ok=True)
    for path in solutions:
        nbformat.write(exercise_notebook(nbformat.read(path, as_version=4)), out / "exercises" / path.name)
        written.append(out / "exercises" / path.name)
    return [path.relative_to(out) for path in written]


def _copy(source, target):
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return target


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m minigrad.grading.release",
                                description="Write a student's copy of the course: no solutions, no hidden tests.",
                                epilog=__doc__.split("\n\n", 1)[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", help="a new (or empty) folder for the copy")
    p.add_argument("--solutions", metavar="DIR", help="the solution notebooks (default: ./solutions, else minigrad's)")
    args = p.parse_args(argv)
    try:
        written = release(args.out, args.solutions)
    except (FileExistsError, FileNotFoundError) as e:
        print(e, file=sys.stderr)
        return 1
    exercises = sum(path.parts[0] == "exercises" for path in written)
    print(f"wrote {len(written)} files to {args.out}, {exercises} of them exercises; no solutions, no hidden "
          "tests. Hand the folder (or a zip of it) to the students.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
