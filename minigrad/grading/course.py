"""A class's folder: who handed in which file, and grading them all, several at once."""

import concurrent.futures
import os
import time
from collections import Counter
from pathlib import Path

from minigrad.grading.assignment import default_solutions_dir, read_assignments, which_assignment
from minigrad.grading.report import points
from minigrad.grading.score import NotebookResult, Settings, grade_notebook, reference

MAX_DEPTH = 16  # folders under PATH
MAX_PER_STUDENT = 50  # notebooks graded per student; the rest are skipped with a warning


def submissions(path, assignments=(), warn=lambda line: None):
    """[(student, path)] for a notebook or a folder, sorted; ``warn`` gets a line for each file skipped.

    Every file whose name ends in .ipynb (any case) gets a row, whatever it is (a link, a FIFO:
    grade_notebook says why it scores 0); names that start with '.' (.ipynb_checkpoints) and other
    files are skipped, each with a warning, as is a folder named like a notebook (its files are still
    looked at). Links to folders are not followed.
    """
    path = Path(path)
    if not is_folder(path):
        return [(path.stem, path)]
    found = []
    for folder, dirs, files in os.walk(path):
        if len(Path(folder).relative_to(path).parts) >= MAX_DEPTH:  # (os.walk recurses: a RecursionError)
            warn(f"skipped {Path(folder).relative_to(path)}/: folders nested more than {MAX_DEPTH} deep")
            dirs.clear()
            continue
        for name in sorted(dirs):
            if name.startswith(".") or os.path.islink(os.path.join(folder, name)):
                warn(f"skipped {Path(folder, name).relative_to(path)}/: "
                     + ("a name starting with '.'" if name.startswith(".") else "a link to a folder"))
                dirs.remove(name)
            elif name.lower().endswith(".ipynb"):  # (looked into all the same: a student's folder, perhaps)
                warn(f"skipped {Path(folder, name).relative_to(path)}/: a folder, not a notebook file")
        for name in files:
            nb = Path(folder, name)
            relative = nb.relative_to(path)
            if not str(relative).isprintable():  # (a newline, or a name that is not UTF-8 on disk)
                warn(f"skipped {ascii(str(relative))}: a name that cannot be printed")
            elif name.startswith("."):
                warn(f"skipped {relative}: a name starting with '.'")
            elif not name.lower().endswith(".ipynb"):
                warn(f"skipped {relative}: not a notebook (.ipynb)")
            else:
                found.append((relative.parts[0] if len(relative.parts) > 1 else _student(nb, assignments), nb))
    found.sort(key=lambda sn: (str(sn[1].relative_to(path)).lower(), str(sn[1])))
    kept, per_student = [], Counter()
    for student, nb in found:
        per_student[student] += 1
        if per_student[student] <= MAX_PER_STUDENT:
            kept.append((student, nb))
        else:
            warn(f"skipped {nb.relative_to(path)}: {student} has more than {MAX_PER_STUDENT} notebooks")
    return kept


def _student(path, assignments):
    """Who handed in a notebook right in the folder: its file name, less the assignment's name."""
    name = which_assignment(path, assignments)
    return (path.stem.replace(name, "").strip("_- .") if name else "") or path.stem


def is_folder(path):
    return path.is_dir() and not path.is_symlink()


def grade_all(path, solutions=None, settings=None, progress=lambda line: None, jobs=1, assignment=None,
              warn=lambda line: None):
    """[(student, NotebookResult)] for every notebook under ``path``, in the order of ``submissions``.

    ``solutions``: the folder of solution notebooks (default: default_solutions_dir()), or the
    {name: Assignment} read from it. ``jobs`` notebooks are graded at once, each in a sandbox of its own.
    """
    settings = settings or Settings()
    assignments = solutions if isinstance(solutions, dict) else read_assignments(solutions or default_solutions_dir())
    found = submissions(path, assignments, warn)
    needed = {assignment} if assignment else {which_assignment(nb, assignments) for _, nb in found}
    references = {name: reference(assignments[name], settings) for name in sorted(needed - {None})}
    results = [None] * len(found)
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        pending = {pool.submit(_grade_one, nb, references, settings, assignment): k
                   for k, (_, nb) in enumerate(found)}
        for done, future in enumerate(concurrent.futures.as_completed(pending), start=1):
            k, r = pending[future], future.result()
            student, nb = found[k]
            results[k] = (student, r)
            note = f" ({' '.join(r.reasons[0].splitlines())})" if r.reasons else ""
            progress(f"[{done}/{len(found)}] {student}: {nb.name}  {points(r.score)}/"
                     f"{points(r.max_score)}  {time.monotonic() - started:.1f} s in all{note}")
    return results


def _grade_one(path, references, settings, assignment):
    """grade_notebook, and should it fail, a result that says so: one file never stops the class."""
    try:
        return grade_notebook(path, references, settings, assignment)
    except Exception as e:  # a fault of the grader's on this file: the others are graded all the same
        why = f"the grader failed on this notebook ({type(e).__name__}: {str(e)[:200]}): please report it"
        return NotebookResult(str(path), assignment, reasons=[why], zeroed=True)
