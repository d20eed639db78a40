"""Visible tests of exercises 3: elementwise rules, checked to the third derivative.

Every first-order test passes a grad_outputs gy that is not 1, so that a rule
that forgets gy fails there, and says so.
"""

import numpy as np

import minigrad as mg
from minigrad.grading.testing import visible

X = np.array([-1.2, 0.3, 2.0])
GY = np.array([2.0, -1.0, 0.5])
ON_VARIABLES = ("the rule's result is differentiated again: build it with this notebook's functions on the "
                "Variables it receives, never on .data; ctx.inputs and ctx.outputs are lists of Variables, "
                "so take the Variable out of the list first")


def _first(t, cls, x, gy=GY):
    """The gradient of the student's function ``cls`` at x, with grad_outputs gy."""
    t.given(f"x = {x}, grad_outputs = {gy}")
    v = mg.Variable(x)
    (gx,) = mg.grad(getattr(t.ns, cls)()(v), v, grad_outputs=gy)
    return gx


def _to_third_order(t, cls, x):
    """Orders 1 to 3 of the student's function ``cls`` against central differences."""
    t.given(f"x = {x}")
    t.gradcheck(lambda v: getattr(t.ns, cls)()(v), [x], 3, f"derivatives of {cls}")


@visible("3.1", hint="the rule multiplies the incoming gradient gy by the derivative of sin at x (lesson 3)")
def sin_first_derivative(t):
    t.close(_first(t, "MySin", X), GY * np.cos(X), "grad(MySin()(x), x, grad_outputs=gy)", gy=GY)


@visible("3.1", hint="the rule multiplies the incoming gradient gy by the derivative of cos at x (lesson 3): "
                     "mind its sign")
def cos_first_derivative(t):
    t.close(_first(t, "MyCos", X), -GY * np.sin(X), "grad(MyCos()(x), x, grad_outputs=gy)", gy=GY)


@visible("3.1", hint="sin's second derivative runs MyCos's rule, its third MySin's again: both rules must be "
                     "right", higher=ON_VARIABLES)
def sin_to_third_order(t):
    _to_third_order(t, "MySin", X)


@visible("3.2", hint="the rule multiplies gy by tanh's derivative, which the output y gives without computing "
                     "tanh again (lesson 3)")
def tanh_first_derivative(t):
    t.close(_first(t, "MyTanh", X), GY * (1 - np.tanh(X) ** 2), "grad(MyTanh()(x), x, grad_outputs=gy)", gy=GY)


@visible("3.2", higher=ON_VARIABLES)
def tanh_to_third_order(t):
    _to_third_order(t, "MyTanh", X)


@visible("3.3", hint="sigmoid(x) = 1 / (1 + e^-x)")
def sigmoid_values(t):
    t.given(f"x = {X}")
    t.close(t.ns.MySigmoid()(mg.Variable(X)), 1 / (1 + np.exp(-X)), "MySigmoid()(x)")


@visible("3.3", hint="far from 0 the sigmoid is 0 or 1 to the last digit: a formula whose numerator and "
                     "denominator both overflow gives inf / inf = nan; rewrite it so that nothing overflows")
def sigmoid_of_large_inputs(t):
    x = np.array([-1000.0, -40.0, 40.0, 1000.0])
    t.given(f"x = {x}")
    with np.errstate(all="ignore"):  # the value decides, not a warning
        y = t.ns.MySigmoid()(mg.Variable(x))
    t.close(y, np.exp(-np.logaddexp(0, -x)), "MySigmoid()(x)")  # e^-log(1 + e^-x), with no overflow


@visible("3.3", hint="compute no value that overflows, even one that is thrown away: a formula with e^-x "
                     "computes e^1000 = inf at x = -1000 before dividing it away; write the sigmoid with a "
                     "function that stays bounded for every x")
def no_intermediate_overflow(t):
    x = np.array([-1000.0, 1000.0])
    t.given(f"x = {x}, with overflow made an error (np.errstate(over='raise'))")
    try:
        with np.errstate(over="raise"):
            y = t.ns.MySigmoid()(mg.Variable(x))
    except FloatingPointError as e:
        t.true(False, f"an intermediate value overflowed ({e}): the forward computed a number too large for "
                      "a float, even if it threw it away afterwards (np.where evaluates both branches for "
                      "every x, so it does not avoid it)")
        return
    t.close(y, [0.0, 1.0], "MySigmoid()(x)")


@visible("3.3", hint="the rule multiplies gy by the sigmoid's derivative, which the output y gives without "
                     "computing the sigmoid again (lesson 3)")
def sigmoid_first_derivative(t):
    t.close(_first(t, "MySigmoid", X), GY * np.exp(-X) / (1 + np.exp(-X)) ** 2,
            "grad(MySigmoid()(x), x, grad_outputs=gy)", gy=GY)


@visible("3.3", higher=ON_VARIABLES)
def sigmoid_to_third_order(t):
    _to_third_order(t, "MySigmoid", X)


@visible("3.4", hint="the rule multiplies gy by the derivative of ln at x (lesson 3)")
def log_first_derivative(t):
    x = np.array([0.5, 1.0, 4.0])
    t.close(_first(t, "MyLog", x), GY / x, "grad(MyLog()(x), x, grad_outputs=gy)", gy=GY)


@visible("3.4", higher=ON_VARIABLES)
def log_to_third_order(t):
    _to_third_order(t, "MyLog", np.array([0.5, 1.0, 4.0]))
