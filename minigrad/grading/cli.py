"""``minigrad-grade PATH [--json FILE]``: grade a notebook, or a folder of submissions.

Each notebook runs in a kernel of its own with a time limit per cell; then
its exercises' visible and hidden tests run. The command prints a score
table per student and per exercise (progress goes to stderr while it
works), and ``--json`` writes the results in Gradescope's results.json
format: for one notebook, the file Gradescope reads; for a folder, one such
object per submission under ``"submissions"``.

In a folder, a notebook at ``FOLDER/alice/...`` belongs to student
``alice``; a notebook right in ``FOLDER`` belongs to the student its file
name says (``alice.ipynb``, or ``alice_04_matmul_affine.ipynb``).
"""

import argparse
import json
import sys
import time
from pathlib import Path

from minigrad.grading.assignment import default_solutions_dir, read_assignments
from minigrad.grading.integrity import fingerprint
from minigrad.grading.report import exercise_table, gradescope, student_table
from minigrad.grading.score import Settings, grade_notebook


def submissions(path):
    """[(student, notebook path)] for a notebook or a folder, sorted; checkpoints skipped."""
    path = Path(path)
    if path.is_file():
        return [(path.stem, path)]
    found = []
    for nb in sorted(path.rglob("*.ipynb")):
        parts = nb.relative_to(path).parts
        if any(p.startswith(".") for p in parts):
            continue
        found.append((parts[0] if len(parts) > 1 else nb.stem, nb))
    return found


def grade_all(path, solutions_dir=None, settings=None, progress=None):
    """[(student, NotebookResult)] for every notebook under ``path``."""
    assignments = read_assignments(solutions_dir or default_solutions_dir())
    pristine = fingerprint()
    found = submissions(path)
    results = []
    for k, (student, nb) in enumerate(found, start=1):
        start = time.monotonic()
        result = grade_notebook(nb, assignments, settings, pristine)
        results.append((student, result))
        if progress is not None:
            note = f" ({result.reasons[0]})" if result.reasons else ""
            progress(f"[{k}/{len(found)}] {student}: {nb.name}  {result.score:g}/{result.max_score:g}  "
                     f"{time.monotonic() - start:.1f} s{note}")
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(prog="minigrad-grade", description=__doc__.splitlines()[0])
    parser.add_argument("path", help="a notebook, or a folder of submissions")
    parser.add_argument("--json", metavar="FILE", help="write results (Gradescope's results.json format)")
    parser.add_argument("--solutions", metavar="DIR",
                        help="the solution notebooks (default: ./solutions, else those beside minigrad)")
    parser.add_argument("--timeout", type=float, default=30, help="seconds per cell (default 30)")
    parser.add_argument("--test-timeout", type=float, default=30, help="seconds per test (default 30)")
    parser.add_argument("--output-limit", type=float, default=1.0,
                        help="megabytes of output kept per notebook (default 1)")
    args = parser.parse_args(argv)
    if not Path(args.path).exists():
        parser.error(f"{args.path}: no such file or folder")
    settings = Settings(args.timeout, args.test_timeout, int(args.output_limit * 1e6))
    found = submissions(args.path)
    print(f"Grading {len(found)} notebook{'s' * (len(found) != 1)} in {args.path}", file=sys.stderr)
    results = grade_all(args.path, args.solutions, settings,
                        progress=lambda line: print(line, file=sys.stderr, flush=True))
    print(student_table(results))
    print()
    print(exercise_table(results))
    if args.json:
        if Path(args.path).is_file() and len(results) == 1:
            data = gradescope(results[0][1])
        else:
            data = {"submissions": [{"student": s, "path": r.path, **gradescope(r)} for s, r in results]}
        Path(args.json).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
