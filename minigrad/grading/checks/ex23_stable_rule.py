"""Visible tests of exercise 23: log cosh x, its value and its rule right at |x| = 1000, to the second order.

Expected values are closed forms: log cosh x = |x| + log1p(e^-2|x|) - log 2, its derivative tanh x, its second
1 - tanh^2 x. The first order tests seed a gy that is not 1.
"""

import numpy as np

import minigrad as mg
from minigrad.grading.testing import visible

X = np.array([-3.0, -0.5, 0.0, 0.8, 2.5])
LARGE = np.array([-1000.0, -40.0, 40.0, 1000.0])
STABLE = ("far from 0, cosh x and e^x overflow while log cosh x is about |x| - log 2: write it as "
          "|x| + log(1 + e^(-2|x|)) - log 2, where e^(-2|x|) <= 1 never overflows")
ON_VARIABLES = ("the rule is differentiated again: build it with minigrad's functions on the Variables of ctx "
                "(F.tanh of the input), never from .data or NumPy")


def log_cosh(x):
    a = np.abs(x)
    return a + np.log1p(np.exp(-2 * a)) - np.log(2.0)


def _value(t, x):
    with np.errstate(all="ignore"):  # the value decides, not a warning
        return t.ns.MyLogCosh()(mg.Variable(x))


def _gradient(t, x, gy, create_graph=False):
    xv = mg.Variable(x)
    with np.errstate(all="ignore"):
        y = t.ns.MyLogCosh()(xv)
        return xv, mg.grad(y, xv, grad_outputs=gy, create_graph=create_graph)[0]


@visible("23.1", hint="log cosh x = log((e^x + e^-x) / 2): mind the 2, log 2 = 0.693...")
def values(t):
    t.given(f"x = {X}")
    t.close(_value(t, X), log_cosh(X), "MyLogCosh()(x)", rtol=1e-12, atol=1e-14)


@visible("23.1", hint=STABLE)
def values_far_from_zero(t):
    t.given(f"x = {LARGE}")
    t.close(_value(t, LARGE), log_cosh(LARGE), "MyLogCosh()(x)", rtol=1e-12)


@visible("23.1", hint="d/dx log cosh x = sinh x / cosh x = tanh x; then multiply by gy")
def gradient_with_a_gy_that_is_not_one(t):
    gy = np.array([2.0, -1.0, 0.5, 3.0, -0.25])
    t.given(f"x = {X}, grad_outputs gy = {gy}")
    t.close(_gradient(t, X, gy)[1], gy * np.tanh(X), "the gradient of MyLogCosh()(x)", gy=gy)


@visible("23.1", hint="the derivative is tanh x, which is -1 or 1 to the last digit there; written with e^x "
                      "and e^-x it computes inf / inf = nan: F.tanh is stable")
def gradient_far_from_zero(t):
    gy = np.array([1.0, 2.0, -1.0, 0.5])
    t.given(f"x = {LARGE}, grad_outputs gy = {gy}")
    t.close(_gradient(t, LARGE, gy)[1], gy * np.tanh(LARGE), "the gradient of MyLogCosh()(x)", gy=gy)


@visible("23.1", hint=ON_VARIABLES)
def second_derivatives(t):
    t.given(f"MyLogCosh()(x) differentiated twice, x = {X}")
    t.gradcheck(lambda a: t.ns.MyLogCosh()(a), [X], order=2, what="the derivatives of MyLogCosh()(x)")


@visible("23.1", hint="the second derivative 1 - tanh^2 x is 0 to the last digit far from 0; a rule whose own "
                      "derivative goes through e^x computes inf / inf = nan there: " + ON_VARIABLES)
def second_derivative_far_from_zero(t):
    t.given(f"d2/dx2 MyLogCosh()(x), x = {LARGE}")
    xv, g = _gradient(t, LARGE, np.ones(4), create_graph=True)
    with np.errstate(all="ignore"):  # (what the block computes is read inside it: the sandbox's copy keeps it)
        t.differentiable(g, xv, "the gradient of MyLogCosh()(x), taken with create_graph=True",
                         "a rule built from .data or NumPy")
        (second,) = mg.grad(mg.functions.sum(g), xv, allow_unused=True)
        t.close(second, 1 - np.tanh(LARGE) ** 2, "the second derivative of MyLogCosh()(x)", atol=1e-12)
