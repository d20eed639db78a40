"""Visible tests of exercises 15: central differences, and a check of a rule that catches a wrong one.

The functions here are fed to the student's code, which is asked to find
their derivatives; the expected values are closed forms.
"""

import numpy as np

import minigrad as mg
import minigrad.functions as F
from minigrad.backward_functions import register
from minigrad.grading.testing import visible


def _coupled(x):
    """f(x) = sum(x^3) * sum(cos x): each partial derivative depends on every element of x."""
    return float(np.sum(x ** 3) * np.sum(np.cos(x)))


def _coupled_gradient(x):
    return 3 * x ** 2 * np.sum(np.cos(x)) - np.sum(x ** 3) * np.sin(x)


X = np.array([[0.3, -1.2, 2.0], [0.7, 1.5, -0.4]])


@visible("15.1", hint="one partial derivative per element, whatever x's shape: the result has x's shape")
def a_function_of_a_matrix(t):
    t.given(f"f(x) = sum(x^3) * sum(cos x), x = {X.tolist()} (shape (2, 3))")
    t.close(t.ns.numerical_gradient(_coupled, X.copy()), _coupled_gradient(X), "numerical_gradient(f, x)",
            rtol=1e-7, atol=1e-9)


@visible("15.1", hint="move one element at a time: every call of f must see x with a single element moved, "
                      "and x must come back as it was")
def one_element_moved_at_a_time(t):
    t.given(f"f(x) = sum(x^3) * sum(cos x), x = {X.tolist()}; f records every point it is called at")
    x = X.copy()
    calls = []

    def f(a):
        calls.append(np.array(a, dtype=np.float64, copy=True))
        return _coupled(a)

    g = t.ns.numerical_gradient(f, x)
    moved = [int(np.sum(c != X)) for c in calls if np.shape(c) == X.shape]
    t.true(len(moved) == len(calls), "f was called with an array of another shape than x: pass f the whole x")
    t.true(all(n <= 1 for n in moved), f"f was called at points where {max(moved, default=0)} elements of x had "
                                       "moved: put each element back after its two evaluations")
    t.true(np.array_equal(x, X), "numerical_gradient changed the x it was given: put each element back")
    t.close(g, _coupled_gradient(X), "numerical_gradient(f, x)", rtol=1e-7, atol=1e-9)


@visible("15.1", hint="a one-sided difference has an error of order h; the symmetric one cancels it, "
                      "leaving order h^2 (lesson 15)")
def error_of_order_h_squared(t):
    x = np.array([1.0, -2.0, 0.5])
    t.given(f"f(x) = sum(x^3), x = {x}, h = 1e-3 (a large step, so that the order of the error shows)")
    t.close(t.ns.numerical_gradient(lambda a: float(np.sum(a ** 3)), x, h=1e-3), 3 * x ** 2,
            "numerical_gradient(f, x, h=1e-3)", rtol=1e-5)


@visible("15.1", hint="near 1e10 a float has about 6 digits after the point, so x + 1e-6 is x itself or its "
                      "neighbour: scale the step with the size of the element (lesson 15)")
def large_values(t):
    x = np.array([1e10, 3e12, 2.0])
    t.given(f"f(x) = sum(log x), x = {x}")
    t.close(t.ns.numerical_gradient(lambda a: float(np.sum(np.log(a))), x), 1 / x,
            "numerical_gradient(f, x)", rtol=1e-6, atol=0)


@visible("15.1", hint="a step proportional to |x| is 0 where an element is 0, and a difference over a step of "
                      "0 is 0 / 0 = nan: the step needs a floor, so that it is never 0")
def elements_at_zero(t):
    x = np.array([[0.0, 1.5], [-2.0, 0.0]])
    t.given(f"f(x) = sum(x^3) * sum(cos x), x = {x.tolist()}")
    with np.errstate(all="ignore"):  # the value decides, not a warning
        g = t.ns.numerical_gradient(_coupled, x.copy())
    t.close(g, _coupled_gradient(x), "numerical_gradient(f, x)", rtol=1e-7, atol=1e-9)


PASSED, RAISED = "returned the worst error", "raised AssertionError"


def _passes(t, fn, x, what, why):
    """check_rule(fn, x) must accept a right rule: no AssertionError, and an error of at most tol."""
    try:
        error = t.ns.check_rule(fn, x)
    except AssertionError as e:
        t.true(False, f"check_rule refused {what}, a right rule: {why}\n(AssertionError: {str(e)[:200]})")
        t.equal(RAISED, PASSED, f"what check_rule did with {what}")
        return
    t.true(error is not False and np.ndim(error) == 0 and 0 <= float(error) <= 1e-6,
           f"check_rule({what}) should return the largest error, a number no more than tol = 1e-6; "
           f"got {error!r:.100}")
    t.equal(PASSED, PASSED, f"what check_rule did with {what}")
    refuses_a_wrong_rule(t, fn, x, what)


class WrongInput(mg.Function):
    """The identity, with a wrong rule: 1% too much gradient, plus 1e-3 (wrong at any x, large or small)."""

    def forward(self, x):
        return x


register("WrongInput", lambda ctx, gy: gy * 1.01 + 1e-3)


def refuses_a_wrong_rule(t, fn, x, what):
    """check_rule must refuse ``fn`` at the same ``x`` once a wrong rule is on its path: a check_rule that
    accepts every rule would pass every test of a right one."""
    try:
        t.ns.check_rule(lambda v: fn(WrongInput()(v)), x)
    except AssertionError:
        t.equal(RAISED, RAISED, f"what check_rule did with {what} after a wrong rule")
        return
    t.equal(PASSED, RAISED, f"what check_rule did with {what} after a wrong rule (1% too much gradient, plus 1e-3)")


@visible("15.2", hint="compare minigrad's gradient with numerical_gradient on the same scalar function")
def a_right_rule_passes(t):
    x = np.array([[0.3, -1.2, 2.0], [0.7, 1.5, -0.4]])
    t.given(f"fn = F.tanh, x = {x.tolist()}")
    _passes(t, F.tanh, x, "F.tanh", "compare minigrad's gradient with central differences of the same function")


@visible("15.2", hint="the gradient of exp near 20 is about 5e8: an absolute difference of 1e-6 is below the "
                      "rounding of such numbers; compare errors relative to the size of the values")
def large_gradients_pass(t):
    x = np.array([18.0, 20.0, 22.0])
    t.given(f"fn = F.exp, x = {x} (gradients near 5e8)")
    _passes(t, F.exp, x, "F.exp at x near 20", "an error relative to the size of the values, not absolute")


@visible("15.2", hint="near a zero of the gradient an error relative to the values divides by almost 0: "
                      "give the denominator a floor, so that small values are compared absolutely")
def gradients_near_zero_pass(t):
    x = np.array([1e-7, -2e-7, 0.0])
    t.given(f"fn(x) = x^3, x = {x} (gradients near 1e-14, central differences add h^2)")
    _passes(t, lambda v: v ** 3, x, "x^3 near 0", "near zero, compare absolutely (a floor for the denominator)")


@visible("15.2", hint="a rule that forgets gy is right when gy is ones: project the output on a random direction "
                      "(seeded), not on ones, and raise AssertionError when the gradients differ (lesson 15)")
def a_rule_that_forgets_gy_is_caught(t):
    x = np.array([0.5, -1.0, 2.0])
    t.given(f"fn = CubeWithoutGy() (its rule returns 3 x^2, without gy), x = {x}")
    try:
        result = t.ns.check_rule(lambda v: t.ns.CubeWithoutGy()(v), x)
    except AssertionError as e:
        t.true(len(str(e)) > 0, "the AssertionError should say which element is wrong, and both values")
        t.equal(RAISED, RAISED, "what check_rule did with CubeWithoutGy")
        return
    if result is False:
        t.true(False, "check_rule returned False for a wrong rule: raise AssertionError instead, so that a "
                      "failed check cannot go unnoticed")
    t.true(False, "check_rule passed CubeWithoutGy, whose rule forgets gy: the output was projected on ones "
                  "(where gy = 1 hides the bug), or the gradients were not compared")
    t.equal(PASSED, RAISED, "what check_rule did with CubeWithoutGy")


@visible("15.2", hint="the output of fn need not have x's shape: the direction that projects it has the "
                      "output's shape")
def an_output_of_another_shape(t):
    x = np.array([[0.3, -1.2, 2.0], [0.7, 1.5, -0.4]])
    t.given(f"fn(x) = sum(x * x, axis=1) (output shape (2,)), x = {x.tolist()}")
    _passes(t, lambda v: F.sum(v * v, axis=1), x, "sum(x * x, axis=1)", "project the output, of shape (2,)")


@visible("15.2", hint="the random direction comes from a generator made from the seed argument: the same seed "
                      "gives the same check (a failure can be run again), and another seed another direction")
def the_seed_decides_the_direction(t):
    x = np.array([0.5, -1.0, 2.0])
    t.given(f"fn = CubeWithoutGy(), x = {x}, tol = 1e9 (so that check_rule returns its worst error), "
            "seeds 1, 1 and 2")
    errors = []
    for seed in (1, 1, 2):
        try:
            errors.append(float(t.ns.check_rule(lambda v: t.ns.CubeWithoutGy()(v), x, tol=1e9, seed=seed)))
        except AssertionError as e:
            t.true(False, f"check_rule raised with tol = 1e9 (AssertionError: {str(e)[:200]}): compare the "
                          "worst error with the tol it is given")
            return
    t.true(errors[0] == errors[1], f"check_rule gave two worst errors, {errors[0]:.6g} and {errors[1]:.6g}, "
                                   "for the same seed 1: draw the direction from a generator made from the seed")
    t.true(errors[0] != errors[2], f"check_rule gave the same worst error, {errors[0]:.6g}, for seeds 1 and 2: "
                                   "is the direction drawn with the seed argument?")
    t.equal(["the same" if errors[0] == errors[1] else "different",
             "different" if errors[0] != errors[2] else "the same"], ["the same", "different"],
            "check_rule's worst errors for seeds 1 and 1, and for seeds 1 and 2")
