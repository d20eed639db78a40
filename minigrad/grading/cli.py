"""``minigrad-grade PATH``: grade a notebook, or a folder of submissions, each in a sandbox.

Nothing heavy is imported before the arguments are read, so ``--help``
answers at once.
"""

import argparse
import importlib.util
import os
import sys
from pathlib import Path

HELP = """\
Grade Jupyter notebooks that answer minigrad's exercises: a notebook, or a class's folder of them.

Each notebook runs in a sandbox of its own (bubblewrap: no network, no view of other submissions or of
the solutions, limits on memory, processes and time), cell by cell; then the visible tests (those
check("N.M") runs in the notebook) and the hidden tests of the solution notebooks run on what it
defined. What the student's code returns leaves the sandbox as data; the grader compares it with the
answers of the solution notebooks, run outside, and decides every point. A notebook that raises, never
ends, prints megabytes, is not valid JSON or attacks the grader is graded all the same, with the reason.
"""

EPILOG = """\
which notebook answers which assignment:
  the file name says (05_matmul_affine.ipynb, alice_05_matmul_affine.ipynb), or --assignment NAME

who is the student:
  FOLDER/alice/05_matmul_affine.ipynb   -> alice (the first folder under PATH)
  FOLDER/alice_05_matmul_affine.ipynb   -> alice (the file name, less the assignment's name)
  a single notebook                     -> its file name
  every file under FOLDER gets a row (a file that is not a notebook, a link, a FIFO: 0, with the
  reason), except names starting with '.' and files not ending in .ipynb, which get a warning line

scores:
  each exercise is worth its points (nbgrader's, in the solution notebook) times the fraction of its
  tests, visible and hidden, that pass. Points are shown with at most two decimals (3.33, 0.67).
  A cell that raises or runs too long only costs the tests that need what it should have defined;
  a test that runs too long costs only itself. A mistake costs its points once: a failed test of an
  exercise that builds on a failed earlier one (3.2 on 3.1) runs again with the earlier exercise's
  reference answer in place of the student's, and counts if it passes then.

output:
  stdout: first the sandbox in use; then the scores per student (with the exercises that lost points
          and notes on the run), the points lost with the tests that failed, and the scores per
          exercise (with the test that failed most often)
  stderr: one progress line per notebook, and a warning per file skipped
  --json: for a notebook, Gradescope's results.json; for a folder, {"submissions": [one such object,
          with "student" and "path", per notebook]}. Failed visible tests show their message; failed
          hidden tests show only their name
  --csv:  one row per student, one column per exercise, and the total (Canvas, spreadsheets)
  --feedback: one text file per notebook, DIR/student.txt (DIR/student_assignment.txt for a student
          with several notebooks), to hand back: what Gradescope would show that student

examples:
  minigrad-grade submissions/ --json results.json --csv scores.csv --jobs 8
  minigrad-grade submissions/ --feedback feedback/
  minigrad-grade alice_05_matmul_affine.ipynb --timeout 60
  minigrad-grade --gradescope-autograder autograder.zip 05_matmul_affine
"""


def parser():
    p = argparse.ArgumentParser(prog="minigrad-grade", description=HELP, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("path", nargs="?", help="a notebook, or a folder of submissions (searched recursively)")
    p.add_argument("--json", metavar="FILE", help="also write the results to FILE, in Gradescope's "
                                                  "results.json format")
    p.add_argument("--csv", metavar="FILE", help="also write FILE: one row per student, one column per exercise")
    p.add_argument("--feedback", metavar="DIR",
                   help="also write one text file per notebook to DIR, to hand back to its student: "
                        "the score, and what each failed test said (hidden tests by name only)")
    p.add_argument("--solutions", metavar="DIR",
                   help="the solution notebooks, with points and hidden tests "
                        "(default: ./solutions if there is one, else the one beside minigrad)")
    p.add_argument("--assignment", metavar="NAME", help="grade every notebook as this assignment "
                                                        "(default: the assignment its file name says)")
    p.add_argument("--timeout", type=float, default=30, metavar="SECONDS",
                   help="time limit per cell of a notebook; a cell that runs longer is interrupted "
                        "and the notebook goes on (default 30)")
    p.add_argument("--test-timeout", type=float, default=30, metavar="SECONDS",
                   help="time limit per test; a test that runs longer fails (default 30)")
    p.add_argument("--notebook-timeout", type=float, default=120, metavar="SECONDS",
                   help="time limit for all the cells of a notebook; the cells past it are not run, "
                        "the tests still are, each with its own limit (default 120)")
    p.add_argument("--output-limit", type=float, default=1.0, metavar="MB",
                   help="megabytes a notebook may print before a note says it printed too much (default 1)")
    p.add_argument("--memory", type=float, default=4096, metavar="MB",
                   help="memory a notebook's processes may hold; past it the cell that asks for more raises "
                        "MemoryError and the notebook goes on; 0 for no limit (default 4096)")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="notebooks graded at once, each in a sandbox of its own (default 1; about the "
                        "number of cores for a class)")
    p.add_argument("--no-sandbox", action="store_true",
                   help="grade where no sandbox can be made (macOS, Windows, a container without user "
                        "namespaces): the students' code then runs as you, and can read what you can")
    p.add_argument("--gradescope-autograder", metavar="OUT.zip",
                   help="write Gradescope's autograder zip for the assignment named by PATH (e.g. "
                        "05_matmul_affine) to OUT.zip, and grade nothing")
    return p


def main(argv=None):
    p = parser()
    args = p.parse_args(argv)
    if args.path is None:
        p.error("give a notebook or a folder to grade (or an assignment, with --gradescope-autograder)")
    if args.jobs < 1:
        p.error(f"--jobs {args.jobs}: grade at least one notebook at a time")
    if importlib.util.find_spec("IPython") is None:
        p.error("the grader runs notebooks in IPython, which is not installed: "
                "python -m pip install 'minigrad-autodiff[grade]' (or the dev extra)")
    from minigrad.grading import course, report
    from minigrad.grading.assignment import default_solutions_dir, read_assignments
    from minigrad.grading.sandbox import why_no_sandbox
    from minigrad.grading.score import ReferenceFailed, Settings

    try:
        assignments = read_assignments(args.solutions or default_solutions_dir())
    except ValueError as e:
        p.error(str(e) if args.solutions else f"{e} (none was found beside minigrad: give --solutions DIR)")
    if args.gradescope_autograder:
        if args.path not in assignments:
            p.error(f"--gradescope-autograder: no assignment {args.path!r} (one of {', '.join(assignments)})")
        from minigrad.grading.gradescope import write_autograder

        write_autograder(args.gradescope_autograder, assignments[args.path])
        print(f"wrote {args.gradescope_autograder}: upload it as the autograder of {args.path}")
        return 0
    if not os.path.lexists(args.path):
        p.error(f"{args.path}: no such file or folder")
    if args.assignment and args.assignment not in assignments:
        p.error(f"--assignment {args.assignment}: no such assignment (one of {', '.join(assignments)})")
    why = why_no_sandbox()
    if why is not None and not args.no_sandbox:
        print(f"minigrad-grade: no sandbox can be made here ({why}). Grading without one lets the "
              "students' code read and change what you can: give --no-sandbox to grade anyway.")
        return 3
    if args.no_sandbox:
        because = "" if why is None else f": {why}"
        sandbox = f"none (--no-sandbox){because}"
        print(f"Sandbox: NONE (--no-sandbox): the students' code runs as you{because}")
    else:
        sandbox = "bubblewrap"
        print("Sandbox: bubblewrap (each notebook alone: no network, read-only system, no other files)")
    settings = Settings(args.timeout, args.test_timeout, int(args.output_limit * 1e6), int(args.memory * 2**20),
                        args.notebook_timeout, not args.no_sandbox)
    print(f"Grading {args.path}", file=sys.stderr)
    try:
        results = course.grade_all(args.path, assignments, settings, jobs=args.jobs, assignment=args.assignment,
                                   progress=lambda line: print(line, file=sys.stderr, flush=True),
                                   warn=lambda line: print(f"warning: {line}", file=sys.stderr))
    except ReferenceFailed as e:
        print(f"minigrad-grade: {e}", file=sys.stderr)
        return 2
    report.write(results, args, sandbox, single=not course.is_folder(Path(args.path)))
    return 0
