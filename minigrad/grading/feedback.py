"""``check("N.M")``: run an exercise's visible tests inside the notebook and say what went wrong.

Each failure shows the input, the expected value against the received one,
and a hint. Only the visible tests run here; the grader also runs hidden
ones, so passing here is necessary, not sufficient.
"""

import importlib
import os
import pkgutil
import sys
import textwrap

from minigrad.grading import checks
from minigrad.grading.testing import _tests, exercise_order, exercise_tests, run
from minigrad.grading.verdict import NOT_WRITTEN

GRADING = "MINIGRAD_GRADING"  # set in the processes the grader runs notebooks in (worker.py)

WIDTH = 88  # characters of a line of check()'s report: JupyterLab shows about 90 without wrapping

HIDDEN_NOTE = ("Only the visible tests run here; the grader also runs hidden tests.\n"  # (two lines that fit)
               "Passing here does not guarantee full marks.")


def load_visible():
    """Import every module of ``minigrad.grading.checks``, registering the visible tests: the modules."""
    found = pkgutil.iter_modules(checks.__path__)
    return [importlib.import_module(f"{checks.__name__}.{info.name}") for info in found]


def notebook_names():
    """The names defined in the running notebook (IPython's user namespace, else __main__'s)."""
    shell = sys.modules["IPython"].get_ipython() if "IPython" in sys.modules else None
    return shell.user_ns if shell is not None else vars(sys.modules["__main__"])


def check(exercise, ns=None, time_limit=30):
    """Run the tests of exercise ``exercise`` ("N.M") on the notebook's names; print a report.

    Hidden tests registered in this session (an instructor's solution
    notebook) run too; a student's notebook has none.
    """
    if os.environ.get(GRADING):  # the grader runs every test once, after the notebook, with its own limits
        print(f"Exercise {exercise}: tested by the grader after the notebook has run.")
        return
    print(check_text(exercise, ns, time_limit))


def check_text(exercise, ns=None, time_limit=30):
    """The report ``check`` prints, as a string."""
    load_visible()
    exercise = str(exercise)
    tests = exercise_tests(exercise)
    if not tests:
        known = ", ".join(sorted(_tests, key=exercise_order)) or "none"
        return f"Exercise {exercise}: there is no such exercise (exercises with tests: {known})."
    ns = notebook_names() if ns is None else ns
    outcomes = [run(t, ns, time_limit) for t in tests]
    visible = [o for o in outcomes if not o.test.hidden]
    hidden = [o for o in outcomes if o.test.hidden]
    lines = [f"Exercise {exercise}: {_count(visible)} visible tests passed"
             + (f", {_count(hidden)} hidden tests passed." if hidden else ".")]
    for o in outcomes:
        kind = "hidden " if o.test.hidden else ""
        lines.append(f"  {'PASS' if o.passed else 'FAIL'}  {kind}{o.test.name}")
        if not o.passed:
            lines.extend("        " + line for line in o.message.splitlines())
    if any(not o.passed and NOT_WRITTEN not in o.message for o in outcomes):
        lines += _earlier_failures(exercise, ns, time_limit)
    if not hidden:
        lines.append(HIDDEN_NOTE)
    return "\n".join(fit("\n".join(lines)))


def fit(text, width=WIDTH):
    """The lines of ``text``, each cut at a space to ``width`` characters (JupyterLab would cut mid-number).

    A continued line keeps its indent, plus two spaces; a word longer than the width stays whole.
    """
    lines = []
    for line in text.splitlines():
        indent = line[: len(line) - len(line.lstrip())]
        lines += textwrap.wrap(line, width, subsequent_indent=indent + "  ", break_long_words=False,
                               break_on_hyphens=False, drop_whitespace=True) or [""]
    return lines


def _earlier_failures(exercise, ns, time_limit):
    """A note naming the earlier exercises this one builds on (``checks.BUILDS_ON``) that fail a visible
    test: the grader would mark this one with their reference answers, but the student fixes them first."""
    failing = [e for e in checks.BUILDS_ON.get(exercise, ())
               if not all(run(t, ns, time_limit).passed for t in exercise_tests(e, include_hidden=False))]
    if not failing:
        return []
    if len(failing) == 1:
        said = f"exercise {failing[0]} fails its own visible tests, and this exercise may build on it: fix it"
    else:
        names = ", ".join(failing[:-1]) + f" and {failing[-1]}"
        said = f"exercises {names} fail their own visible tests, and this exercise may build on them: fix them"
    return [f"Note: {said} first. (The grader marks this exercise with the reference answer in place of "
            "a wrong earlier one, so a mistake costs its points once.)"]


def _count(outcomes):
    return f"{sum(o.passed for o in outcomes)} of {len(outcomes)}"
