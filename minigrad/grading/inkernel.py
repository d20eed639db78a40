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
from minigrad.grading.testing import forget_hidden, hidden, run, exercise_tests
from minigrad.numerical import gradcheck, numerical_grad


def grade_here(request, result_path):
    """Run the tests named in ``request`` (JSON text) and write their outcomes to ``result_path``.

    request = {"exercises": [{"id": "N.M", "hidden": source}], "test_time_limit": seconds}
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
    results = []
    for exercise in request["exercises"]:
        for test in exercise_tests(exercise["id"]):
            outcome = run(test, ns, request["test_time_limit"])
            results.append({"exercise": exercise["id"], "name": test.name, "hidden": test.hidden,
                            "passed": outcome.passed, "message": outcome.message})
    with open(result_path, "w", encoding="utf-8") as f:
        json.dump({"tests": results, "fingerprint": fingerprint()}, f)
