"""``minigrad-grade PATH``: grade a notebook, or a folder of submissions, each in a sandbox.

Nothing heavy is imported before the arguments are read, so ``--help``
answers at once. The README's "Exercises and grading" says more.
"""

import argparse
import importlib.util
import os
import sys
from pathlib import Path

HELP = """\
Grade Jupyter notebooks that answer minigrad's exercises: one notebook, or a class's folder of them, each
in a sandbox of its own (bubblewrap: no network, no other files, limits on memory and time).
"""

EPILOG = """\
which notebook answers which assignment: its file name says (alice_05_matrix_calculus.ipynb), or --assignment
who is the student: FOLDER/alice/05_matrix_calculus.ipynb or FOLDER/alice_05_matrix_calculus.ipynb -> alice.
  In a flat folder, the file name before the assignment's name, less Canvas's ids (alice_12345_67890_
  05_matrix_calculus.ipynb, alice_LATE_12345_67890_...); with nothing before it, what follows it; the " (1)"
  of a second download and the "-1" of a resubmission are dropped (alice_05_matrix_calculus (1).ipynb ->
  alice). Every entry named *.ipynb gets a row (one that cannot be graded, a folder too, scores 0, with
  the reason); a name starting with '.', or another file, gets a warning
scores: an exercise's points times the fraction of its tests, visible and hidden, that pass. A mistake
  costs its points once: a failed test of 3.2, which builds on 3.1, counts if it passes with 3.1's answer
output: the scores per student, the points lost with the tests that failed, and the scores per exercise;
  progress and warnings on stderr. Feedback and --json show a failed hidden test by its name only.
  --csv: one row per student and assignment: student, assignment, points, max_points, then one column
  per exercise (empty where that assignment has none); of two notebooks for one assignment, the best
Gradescope: the zip's run_autograder grades /autograder/submission with /autograder/venv/bin/python. To
  try it here: unzip it into DIR/source, put a notebook in DIR/submission, and run
  AUTOGRADER_ROOT=DIR AUTOGRADER_PYTHON=$(which python) bash DIR/source/run_autograder
  (AUTOGRADER_PYTHON: a Python with minigrad and its grade extra); it writes DIR/results/results.json

examples:
  minigrad-grade submissions/ --json results.json --csv scores.csv --jobs 8
  minigrad-grade submissions/ --feedback feedback/
  minigrad-grade --gradescope-autograder autograder.zip 05_matrix_calculus
"""


def parser():
    p = argparse.ArgumentParser(prog="minigrad-grade", description=HELP, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("path", nargs="?", help="a notebook, or a folder of submissions (searched recursively)")
    p.add_argument("--json", metavar="FILE", help="write the results in Gradescope's results.json format "
                                                  '({"submissions": [...]} for a folder)')
    p.add_argument("--csv", metavar="FILE",
                   help="write one row per student and assignment: points, maximum, one column per exercise")
    p.add_argument("--feedback", metavar="DIR", help="write one text file per notebook, to hand back")
    p.add_argument("--solutions", metavar="DIR", help="the solution notebooks (default: ./solutions, else minigrad's)")
    p.add_argument("--assignment", metavar="NAME", help="grade every notebook as this assignment")
    p.add_argument("--timeout", type=float, default=30, metavar="SECONDS",
                   help="time limit per cell; the notebook goes on past it (default %(default)g)")
    p.add_argument("--test-timeout", type=float, default=30, metavar="SECONDS",
                   help="time limit per test (default %(default)g)")
    p.add_argument("--notebook-timeout", type=float, default=120, metavar="SECONDS",
                   help="time limit for all the cells of a notebook; the tests still run (default %(default)g)")
    p.add_argument("--output-limit", type=float, default=1.0, metavar="MB",
                   help="what a notebook may print before a note says it printed too much (default %(default)g)")
    p.add_argument("--memory", type=float, default=4096, metavar="MB",
                   help="memory a notebook's processes may hold; past it a cell raises MemoryError; 0: no limit "
                        "(default %(default)g)")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="notebooks graded at once (default 1; for a class, about the number of cores)")
    p.add_argument("--no-sandbox", action="store_true",
                   help="grade where no sandbox can be made (macOS, Windows): the students' code runs as you "
                        "(as an unprivileged user, where you are root)")
    p.add_argument("--gradescope-autograder", metavar="OUT.zip",
                   help="write Gradescope's autograder for the assignment PATH names, and grade nothing")
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
    from minigrad.grading.gradescope import write_autograder
    from minigrad.grading.sandbox import why_no_sandbox
    from minigrad.grading.score import ReferenceFailed, Settings

    try:
        assignments = read_assignments(args.solutions or default_solutions_dir())
    except ValueError as e:
        p.error(str(e) if args.solutions else f"{e} (none was found beside minigrad: give --solutions DIR)")
    if args.gradescope_autograder:
        if args.path not in assignments:
            p.error(f"--gradescope-autograder: no assignment {args.path!r} (one of {', '.join(assignments)})")
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
    because = "" if why is None else f": {why}"
    if args.no_sandbox:
        from minigrad.grading.sandbox import drops_privileges, readable_without_privileges

        solutions = args.solutions or default_solutions_dir()
        if drops_privileges() and readable_without_privileges(solutions):
            print(f"minigrad-grade: without a sandbox, the students' code could read the solutions in {solutions}: "
                  f"make them root's alone (chmod -R go-rwx {solutions}), or grade in a sandbox.")
            return 3
        who = "an unprivileged user of its own (the grader is root)" if drops_privileges() else "you"
        sandbox = f"none (--no-sandbox, as {who}){because}"
        print(f"Sandbox: NONE (--no-sandbox): the students' code runs as {who}{because}")
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
