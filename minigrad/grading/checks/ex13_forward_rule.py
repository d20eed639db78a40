"""Visible tests of exercises 13: forward rules (tangents), checked with func.jvp to the second order.

Every test seeds a tangent that is not 1, so that a rule that forgets the
incoming tangent fails, and says so; the second order nests ``func.jvp``, so
a rule built on ``.data`` (a constant to the outer pass) fails too.
"""

import numpy as np

from minigrad import func
from minigrad.grading.testing import visible

X = np.array([-1.5, 0.2, 2.0])
V = np.array([2.0, -1.0, 0.5])  # the tangent of x: not 1, so a forgotten tangent shows
W = np.array([0.5, 3.0, -1.0])  # the outer tangent of the second order
C = np.array([1.0, -2.0, 0.5])  # a constant second input: it does not move
ON_VARIABLES = ("the tangent is pushed forward again by an outer func.jvp: build it with minigrad's functions "
                "on the Variables of ctx, never on .data or with NumPy")
NONE = ("an input that does not move has no tangent: the rule receives None for it, and that input adds "
        "nothing to the output's tangent")


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _tangent(f, x, v):
    """The tangent of f at x along v, by func.jvp."""
    return func.jvp(f, (x,), (v,))[1]


def _equals(got, value):
    """Does ``got`` (a Variable, an array, or anything a student returned) equal ``value``?"""
    try:
        return np.allclose(np.asarray(getattr(got, "data", got), dtype=np.float64), value)
    except (TypeError, ValueError):
        return False


def _not_without_tangent(t, got, derivative, what):
    """``got`` is not the derivative alone, which a rule that leaves out the incoming tangent returns."""
    t.true(not _equals(got, derivative), f"{what} is the derivative itself, not the derivative times the "
                                         "incoming tangent: does the rule multiply by the tangent it receives?")


def _second(f, x, v, w):
    """d/ds [J(x + s w) v] at s = 0: func.jvp of func.jvp."""
    return func.jvp(lambda a: func.jvp(f, (a,), (v,))[1], (x,), (w,))[1]


@visible("13.1", hint="the tangent of y is the derivative of log(1 + e^x), times the incoming tangent tx")
def softplus_tangent(t):
    t.given(f"x = {X}, tangent tx = {V}")
    got = _tangent(lambda a: t.ns.MySoftplus()(a), X, V)
    what = "func.jvp(MySoftplus(), (x,), (tx,))[1], the tangent of y"
    _not_without_tangent(t, got, sigmoid(X), what)
    t.close(got, sigmoid(X) * V, what)


@visible("13.1", hint="far from 0, e^x overflows while the derivative is 0 or 1 to the last digit: write the "
                      "derivative so that nothing overflows")
def softplus_tangent_at_large_inputs(t):
    x, v = np.array([-1000.0, -40.0, 40.0, 1000.0]), np.array([1.0, -2.0, 0.5, 3.0])
    t.given(f"x = {x}, tangent tx = {v}")
    with np.errstate(all="ignore"):  # the value decides, not a warning
        got = _tangent(lambda a: t.ns.MySoftplus()(a), x, v)
    t.close(got, np.exp(-np.logaddexp(0, -x)) * v, "the tangent of MySoftplus()(x)")


@visible("13.1", higher=ON_VARIABLES)
def softplus_second_order(t):
    t.given(f"x = {X}, inner tangent v = {V}, outer tangent w = {W} (jvp of jvp)")
    s = sigmoid(X)
    t.close(_tangent(lambda a: t.ns.MySoftplus()(a), X, V), s * V, "the tangent of y along v (first order)")
    got = _second(lambda a: t.ns.MySoftplus()(a), X, V, W)
    t.close(got, s * (1 - s) * V * W, "jvp of jvp of MySoftplus, softplus''(x) v w", higher=True)


@visible("13.1", hint="far from 0 the second derivative is 0 to the last digit, but a derivative written with "
                      "e^-x or e^x computes inf / inf = nan there when it is differentiated again: build the "
                      "tangent from a function that stays bounded for every x")
def softplus_second_order_at_large_inputs(t):
    x = np.array([-1000.0, -40.0, 40.0, 1000.0])
    v, w = np.array([1.0, -2.0, 0.5, 3.0]), np.array([2.0, 1.0, -1.0, 0.5])
    t.given(f"x = {x}, inner tangent v = {v}, outer tangent w = {w} (jvp of jvp)")
    with np.errstate(all="ignore"):  # the value decides, not a warning
        got = _second(lambda a: t.ns.MySoftplus()(a), x, v, w)
    s_times_1_minus_s = np.exp(-np.logaddexp(0, -x) - np.logaddexp(0, x))  # sigmoid(x) sigmoid(-x)
    t.close(got, s_times_1_minus_s * v * w, "jvp of jvp of MySoftplus, softplus''(x) v w")


def _hypot(t):
    return lambda a, b: t.ns.MyHypot()(a, b)


@visible("13.2", hint="each input's tangent is multiplied by its own partial derivative of y, and the terms add "
                      "(the chain rule for two inputs)")
def hypot_both_inputs_move(t):
    x1, v1 = C, np.array([-1.0, 0.5, 4.0])
    t.given(f"x0 = {X}, x1 = {x1}, tangents t0 = {V}, t1 = {v1}")
    got = func.jvp(_hypot(t), (X, x1), (V, v1))[1]
    y = np.hypot(X, x1)
    what = "func.jvp(MyHypot(), (x0, x1), (t0, t1))[1]"
    _not_without_tangent(t, got, (X + x1) / y, what)
    t.close(got, (X * V + x1 * v1) / y, what)


@visible("13.2", hint=NONE)
def hypot_with_a_constant_input(t):
    t.given(f"x0 = {X} moves along t0 = {V}; x1 = {C} is a constant (its tangent is None)")
    hypot = _hypot(t)
    try:
        got = _tangent(lambda a: hypot(a, C), X, V)
    except TypeError as e:
        if "NoneType" not in str(e):
            raise
        t.true(False, f"the rule raised TypeError ({e}) on the tangent None of the constant x1: {NONE}")
        return
    t.close(got, X * V / np.hypot(X, C), "the tangent of MyHypot()(x0, c), with x1 = c constant")


@visible("13.2", hint="the first input's tangent goes with the first input's partial derivative: "
                      "only x1 moves here")
def hypot_second_input_alone(t):
    t.given(f"x0 = {C} is a constant; x1 = {X} moves along t1 = {V}")
    hypot = _hypot(t)
    got = _tangent(lambda a: hypot(C, a), X, V)
    t.close(got, X * V / np.hypot(C, X), "the tangent of MyHypot()(c, x1), with x0 = c constant")


@visible("13.2", higher=ON_VARIABLES)
def hypot_second_order(t):
    t.given(f"x0 = {X} moves along v = {V}, then along w = {W} (jvp of jvp); x1 = {C} is a constant")
    hypot = _hypot(t)
    y = np.hypot(X, C)
    t.close(_tangent(lambda a: hypot(a, C), X, V), X / y * V, "the tangent of y along v (first order)")
    got = _second(lambda a: hypot(a, C), X, V, W)
    t.close(got, C ** 2 / y ** 3 * V * W, "jvp of jvp of MyHypot()(x0, c), d2y/dx0^2 v w", higher=True)
