"""The grader's last cell: run every test of the assignment in the kernel, write the results.

It runs after the student's cells, in the same kernel, so the tests see the
student's names. The hidden tests come from the solution notebook, through
the request; any hidden test the notebook itself registered is dropped first.
"""

import json

import numpy as np

import minigrad as mg
import minigrad.functions as F
from minigrad.grading.feedback import load_visible, notebook_names
from minigrad.grading.integrity import fingerprint
from minigrad.grading.reference import phrase, references_in_place
from minigrad.grading.testing import NEEDS, NOT_WRITTEN, Outcome, exercise_tests, forget_hidden, hidden, run
from minigrad.numerical import gradcheck, numerical_grad


def grade_here(request, result_path):
    """Run the tests named in ``request`` (JSON text) and write their outcomes to ``result_path``.

    request = {"exercises": [{"id": "N.M", "hidden": source, "reference": source}],
               "test_time_limit": seconds}

    An exercise whose own answer fails a test after an earlier one failed
    too has its failed tests run again with the reference answers to the
    earlier ones (see reference.py): a mistake costs points once.
    """
    request = json.loads(request)
    load_visible()
    forget_hidden()
    for exercise in request["exercises"]:
        if exercise["hidden"]:
            names = {"np": np, "mg": mg, "F": F, "hidden": hidden, "gradcheck": gradcheck,
                     "numerical_grad": numerical_grad, "__name__": "minigrad_hidden_tests"}
            code = compile(exercise["hidden"], f"<minigrad hidden tests of {exercise['id']}>", "exec")
            exec(code, names)
    ns = notebook_names()
    limit = request["test_time_limit"]
    results, wrong = [], []  # the earlier exercises whose answers fail a test of their own
    for exercise in request["exercises"]:
        outcomes = [run(test, ns, limit) for test in exercise_tests(exercise["id"])]
        if wrong and not all(o.passed for o in outcomes):
            outcomes = _with_references(outcomes, wrong, ns, limit)
        if not all(o.passed for o in outcomes):  # wrong even with the right earlier answers
            wrong.append(exercise)
        for outcome in outcomes:
            results.append({"exercise": exercise["id"], "name": outcome.test.name,
                            "hidden": outcome.test.hidden, "passed": outcome.passed,
                            "message": outcome.message, "with_reference": list(outcome.with_reference)})
    with open(result_path, "w", encoding="utf-8") as f:
        json.dump({"tests": results, "fingerprint": fingerprint()}, f)


def _with_references(outcomes, earlier, ns, limit):
    """The outcomes, each failed test run again with the reference answers to ``earlier`` in place.

    A test that passes then is credited; its message names the earlier
    exercises it needed (each one left out in turn: those without which it
    still passes were not needed). One that still fails keeps its own
    message, unless that only said an earlier exercise was not written: then
    the new failure, about this exercise, replaces it (with a note, unless
    it says that this exercise is not written either).
    """
    with references_in_place(earlier, ns) as swapped:
        if not swapped:
            return outcomes
        again = [run(o.test, ns, limit) if not o.passed else None for o in outcomes]
    credited = [o.test for o, a in zip(outcomes, again) if a is not None and a.passed]
    needed = list(earlier)
    for exercise in earlier if credited and len(earlier) > 1 else ():
        fewer = [e for e in needed if e is not exercise]
        with references_in_place(fewer, ns) as swapped:
            if swapped and all(run(test, ns, limit).passed for test in credited):
                needed = fewer
    ids = [e["id"] for e in needed]  # empty if the tests now pass on their own (a test that depends on luck)
    merged = []
    for first, second in zip(outcomes, again):
        if second is None:
            merged.append(first)
        elif second.passed:
            merged.append(Outcome(first.test, True, f"passed with {phrase(ids)} in place of yours", tuple(ids))
                          if ids else Outcome(first.test, True))
        elif NOT_WRITTEN in second.message:  # this exercise itself is not written either
            merged.append(second)
        elif first.message.startswith(NEEDS) or f"\n{NEEDS}" in first.message:
            merged.append(Outcome(first.test, False, f"(run with {phrase([e['id'] for e in earlier])} in "
                                                     f"place of yours)\n{second.message}"))
        else:
            merged.append(first)
    return merged
