"""``minigrad-grade PATH [--json FILE]``: grade a notebook, or a folder of submissions.

Each notebook runs in a kernel of its own with a time limit per cell; then
its exercises' visible and hidden tests run. The command prints a score
table per student, the points lost with the tests that failed, and a table
per exercise (progress goes to stderr while it works); ``--json`` writes the
results in Gradescope's results.json format.

In a folder, a notebook at ``FOLDER/alice/...`` belongs to student
``alice``; a notebook right in ``FOLDER`` belongs to the student its file
name says, less the assignment's name (``alice.ipynb``, or
``alice_04_matmul_affine.ipynb``).
"""

import argparse
import concurrent.futures
import json
import sys
import time
from pathlib import Path

from minigrad.grading.assignment import default_solutions_dir, read_assignments
from minigrad.grading.integrity import CodeChanged, fingerprint, source_digest
from minigrad.grading.report import (
    exercise_table, feedback_file_names, feedback_text, gradescope, lost_table, student_table,
)
from minigrad.grading.score import Settings, grade_notebook


def submissions(path, assignments=()):
    """[(student, notebook path)] for a notebook or a folder, sorted; checkpoints skipped.

    A notebook right in the folder names its student by its file name, less
    the name of an assignment in it: ``alice_04_matmul_affine.ipynb`` -> alice.
    """
    path = Path(path)
    if path.is_file():
        return [(path.stem, path)]
    found = []
    for nb in sorted(path.rglob("*.ipynb")):
        parts = nb.relative_to(path).parts
        if any(p.startswith(".") for p in parts):
            continue
        found.append((parts[0] if len(parts) > 1 else _student(nb.stem, assignments), nb))
    return found


def _student(stem, assignments):
    for name in sorted(assignments, key=len, reverse=True):
        if name in stem:
            rest = stem.replace(name, "").strip("_- .")
            return rest or stem
    return stem


def grade_all(path, solutions_dir=None, settings=None, progress=None, jobs=1):
    """[(student, NotebookResult)] for every notebook under ``path``, in the order of ``submissions``.

    ``jobs`` notebooks are graded at once, each in a process (and a kernel) of its own.
    """
    assignments = read_assignments(solutions_dir or default_solutions_dir())
    pristine, sources = fingerprint(), source_digest()
    found = submissions(path, assignments)
    results = [None] * len(found)
    with concurrent.futures.ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
        started = time.monotonic()
        pending = {pool.submit(grade_notebook, nb, assignments, settings, pristine, sources): k
                   for k, (_, nb) in enumerate(found)}
        for done, future in enumerate(concurrent.futures.as_completed(pending), start=1):
            k = pending[future]
            student, nb = found[k]
            try:
                result = future.result()
            except CodeChanged:
                pool.shutdown(cancel_futures=True)  # (the notebooks not started yet)
                raise
            results[k] = (student, result)
            if progress is not None:
                note = f" ({result.reasons[0]})" if result.reasons else ""
                progress(f"[{done}/{len(found)}] {student}: {nb.name}  {result.score:g}/{result.max_score:g}  "
                         f"{time.monotonic() - started:.1f} s in all{note}")
    return results


HELP = """\
Grade Jupyter notebooks that answer minigrad's exercises: a notebook, or a class's folder of them.

Each notebook runs in a fresh kernel of its own, cell by cell, with a time limit per cell; then the
visible tests (those check("N.M") runs in the notebook) and the hidden tests of the solution
notebooks run on what it defined. A notebook that raises, never ends, prints megabytes, is not valid
JSON or tampers with minigrad is graded all the same, with the reason.
"""

EPILOG = """\
which notebook answers which assignment:
  the assignment is read from the notebook's metadata (minigrad.assignment, which the exercise
  notebooks carry), else from its file name (04_matmul_affine.ipynb, alice_04_matmul_affine.ipynb)

who is the student:
  FOLDER/alice/04_matmul_affine.ipynb   -> alice (the first folder under PATH)
  FOLDER/alice_04_matmul_affine.ipynb   -> alice (the file name, less the assignment's name)
  a single notebook                     -> its file name

scores:
  each exercise is worth its points (nbgrader's, in the solution notebook) times the fraction of its
  tests, visible and hidden, that pass. A notebook that is not valid JSON, whose assignment cannot be
  told, whose kernel dies or hangs, or that changes minigrad's code scores 0, and the notes say why.
  A cell that raises or runs too long only costs the tests that need what it should have defined.
  A mistake costs its points once: a test of an exercise that fails after an earlier exercise failed
  runs again with the earlier exercises' reference answers (their solution cells) in place of the
  student's, and counts if it passes then; the notes say which tests passed that way.
  If minigrad's own files change on disk during a run (an upgrade, a git pull), the run stops with
  exit status 2 rather than take the kernels' new code for tampering.

output:
  stdout: the scores per student (with the exercises that lost points and notes on the run), the
          points lost with the tests that failed, and the scores per exercise (with the test that
          failed most often)
  stderr: one progress line per notebook
  --json: for a notebook, Gradescope's results.json; for a folder, {"submissions": [one such object,
          with "student" and "path", per notebook]}. Failed visible tests show their message; failed
          hidden tests show only their name, their messages are under extra_data.hidden_failures
  --feedback: one text file per notebook, DIR/student.txt (DIR/student_assignment.txt for a student
          with several notebooks, DIR/student_notebook.txt for one who answered an assignment twice;
          never two notebooks in one file), to hand back: what Gradescope would show that student

examples:
  minigrad-grade submissions/ --json results.json --jobs 8
  minigrad-grade submissions/ --feedback feedback/
  minigrad-grade alice_04_matmul_affine.ipynb --timeout 60
"""


def main(argv=None):
    parser = argparse.ArgumentParser(prog="minigrad-grade", description=HELP, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", help="a notebook, or a folder of submissions (searched recursively; "
                                     "folders whose name starts with '.' are skipped)")
    parser.add_argument("--json", metavar="FILE", help="also write the results to FILE, in Gradescope's "
                                                       "results.json format")
    parser.add_argument("--feedback", metavar="DIR",
                        help="also write one text file per notebook to DIR, to hand back to its student: "
                             "the score, and what each failed test said (hidden tests by name only)")
    parser.add_argument("--solutions", metavar="DIR",
                        help="the solution notebooks, with points and hidden tests "
                             "(default: ./solutions if there is one, else the one beside minigrad)")
    parser.add_argument("--timeout", type=float, default=30, metavar="SECONDS",
                        help="time limit per cell of a notebook; a cell that runs longer is interrupted "
                             "and the notebook goes on (default 30)")
    parser.add_argument("--test-timeout", type=float, default=30, metavar="SECONDS",
                        help="time limit per test; a test that runs longer fails (default 30)")
    parser.add_argument("--output-limit", type=float, default=1.0, metavar="MB",
                        help="megabytes of printed output kept per notebook; the rest is dropped, with "
                             "a note (default 1)")
    parser.add_argument("--memory", type=float, default=4096, metavar="MB",
                        help="memory (heap and arrays) a notebook's kernel may hold; past it the cell that "
                             "asks for more raises MemoryError and the notebook goes on; 0 for no limit "
                             "(default 4096)")
    parser.add_argument("--jobs", type=int, default=1, metavar="N",
                        help="notebooks graded at once, each in a kernel of its own (default 1; about "
                             "the number of cores for a class)")
    args = parser.parse_args(argv)
    if not Path(args.path).exists():
        parser.error(f"{args.path}: no such file or folder")
    if args.jobs < 1:
        parser.error(f"--jobs {args.jobs}: grade at least one notebook at a time")
    settings = Settings(args.timeout, args.test_timeout, int(args.output_limit * 1e6), int(args.memory * 2**20))
    found = submissions(args.path)
    print(f"Grading {len(found)} notebook{'s' * (len(found) != 1)} in {args.path}", file=sys.stderr)
    try:
        results = grade_all(args.path, args.solutions, settings,
                            progress=lambda line: print(line, file=sys.stderr, flush=True), jobs=args.jobs)
    except CodeChanged as e:
        print(f"minigrad-grade: stopped: {e}", file=sys.stderr)
        return 2
    print(student_table(results))
    print()
    print(lost_table(results))
    print()
    print(exercise_table(results))
    if args.feedback:
        folder = Path(args.feedback)
        folder.mkdir(parents=True, exist_ok=True)
        for k, name in feedback_file_names(results).items():
            (folder / name).write_text(feedback_text(*results[k]) + "\n", encoding="utf-8")
        print(f"\nFeedback for each student in {folder}/", file=sys.stderr)
    if args.json:
        if Path(args.path).is_file() and len(results) == 1:
            data = gradescope(results[0][1])
        else:
            data = {"submissions": [{"student": s, "path": r.path, **gradescope(r)} for s, r in results]}
        Path(args.json).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
