"""check() in the notebook: what a student reads when a rule is wrong; and the tamper check."""

import numpy as np

import minigrad as mg
from minigrad import Function
from minigrad.backward_functions import _rules, register
from minigrad.grading.feedback import HIDDEN_NOTE, check_text
from minigrad.grading.integrity import differences, fingerprint
from minigrad.grading.testing import Test, run


class WrongSin(Function):
    def forward(self, x):
        return np.sin(x)


def _names_with_wrong_sin():
    """MySin with the rule gy * sin(x) (should be cos), MyCos missing."""
    return {"MySin": WrongSin}


def test_a_wrong_rule_names_the_exercise_and_shows_expected_against_received():
    register("WrongSin", lambda ctx, gy: gy * mg.functions.sin(ctx.inputs[0]))
    try:
        text = check_text("2.1", ns=_names_with_wrong_sin())
    finally:
        del _rules["WrongSin"]
    x = np.array([-1.2, 0.3, 2.0])
    assert text.startswith("Exercise 2.1: 0 of 3 visible tests passed.")
    assert "FAIL  sin first derivative" in text
    assert "input: x = [-1.2  0.3  2. ]" in text
    assert "expected: " + np.array2string(np.cos(x), precision=6, separator=", ") in text
    assert "received: " + np.array2string(np.sin(x), precision=6, separator=", ") in text
    assert "hint: y = sin x => gx = gy * my_cos(x)" in text
    assert "MyCos is not defined in the notebook" in text
    assert HIDDEN_NOTE in text
    assert "Traceback" not in text


def test_an_unwritten_exercise_says_so_without_a_traceback():
    class Stub(Function):
        def forward(self, x):
            raise NotImplementedError("Exercise 1.1: write MySquare.forward")

    text = check_text("1.1", ns={"MySquare": Stub})
    assert "not written yet (NotImplementedError: Exercise 1.1: write MySquare.forward)" in text
    assert "Traceback" not in text


def test_a_right_answer_passes_and_an_unknown_exercise_is_named():
    class MySquare(Function):
        def forward(self, x):
            return x * x

    text = check_text("1.1", ns={"MySquare": MySquare})
    assert text.startswith("Exercise 1.1: 1 of 1 visible tests passed.")
    assert "there is no such exercise" in check_text("99.9", ns={})


def test_a_test_that_runs_too_long_is_stopped():
    def endless(t):
        while True:
            try:
                pass
            except Exception:  # a student's catch-all does not swallow the time limit
                pass

    outcome = run(Test("0.1", "endless", endless, "", False), {}, time_limit=0.2)
    assert not outcome.passed and "did not finish in 0.2 s" in outcome.message


def test_the_fingerprint_names_what_was_replaced():
    pristine = fingerprint()
    original = mg.grad
    mg.grad = lambda *args, **kwargs: [mg.Variable(0.0)]
    try:
        assert differences(pristine, fingerprint()) == ["minigrad.grad was replaced"]
    finally:
        mg.grad = original
    assert differences(pristine, fingerprint()) == []
