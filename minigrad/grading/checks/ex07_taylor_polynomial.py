"""Visible tests of exercises 7: n-th derivatives and a Taylor polynomial."""

import math

import numpy as np

import minigrad.functions as F
from minigrad.grading.testing import visible


@visible("7.1", hint="each derivative is differentiated again, so each backward pass must record its own graph "
                     "(the create_graph option, lesson 6): n passes in all")
def sin_at_a_point(t):
    x0 = 0.3
    t.given(f"f = sin at x0 = {x0}, n = 4")
    s, c = math.sin(x0), math.cos(x0)
    t.close(t.ns.derivatives(F.sin, x0, 4), [s, c, -s, -c, s], "derivatives(sin, 0.3, 4)")


@visible("7.1", hint="return n + 1 numbers: f(x0) first")
def exp_at_zero(t):
    t.given("f = exp at x0 = 0, n = 3")
    t.close(t.ns.derivatives(F.exp, 0.0, 3), [1, 1, 1, 1], "derivatives(exp, 0, 3)")


@visible("7.1", hint="the second derivative of x * x is the constant 2: it no longer depends on x, so "
                     "differentiating it again finds no path to x; ask mg.grad for zeros instead of an error "
                     "(an option of mg.grad; see lesson 6)")
def a_derivative_that_no_longer_depends_on_x(t):
    t.given("f(x) = x * x at x0 = 1.5, n = 3 (f'' = 2 no longer depends on x)")
    t.close(t.ns.derivatives(lambda x: x * x, 1.5, 3), [2.25, 3, 2, 0], "derivatives(f, 1.5, 3)")


@visible("7.2", hint="the polynomial of the notebook's first cell: each derivative over its factorial, in powers "
                     "of the distance from x0")
def sin_around_zero(t):
    x = np.array([-1.0, 0.0, 0.5, 2.0])
    t.given(f"f = sin at x0 = 0, n = 5, x = {x}")
    t.close(t.ns.taylor(F.sin, 0.0, 5)(x), x - x ** 3 / 6 + x ** 5 / 120, "taylor(sin, 0, 5)(x)")


@visible("7.2", hint="the polynomial of exp around 2 has coefficients e^2 / k!")
def exp_around_two(t):
    x = np.array([1.5, 2.0, 2.5])
    t.given(f"f = exp at x0 = 2, n = 2, x = {x}")
    d = x - 2
    t.close(t.ns.taylor(F.exp, 2.0, 2)(x), np.exp(2) * (1 + d + d ** 2 / 2), "taylor(exp, 2, 2)(x)")
