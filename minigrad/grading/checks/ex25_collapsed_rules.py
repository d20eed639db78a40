"""Visible tests of exercises 25: collapsed second-order rules, against Taylor mode and nested reverse mode.

A collapsed step receives ``x0`` (the value), ``x1`` (the first coefficients, one per direction along
a leading axis) and ``x2`` (the second coefficients, summed over the directions). The independent
answers: ``taylor.jet`` along each direction in turn (minigrad's own Taylor rules), and the Laplacian
by nested reverse mode (``func.laplacian(f, "nested")``, through the backward rules).
"""

import numpy as np

import minigrad.functions as F
from minigrad import func, taylor
from minigrad.grading.testing import visible

RNG = np.random.default_rng(25)
X0 = np.array([0.3, -1.2, 2.0])
X1 = RNG.standard_normal((4, 3))  # four directions
X2 = RNG.standard_normal(3)
SUM = ("y2 is J x2 + sum over the directions k of Q(x1[k]): x1 has one row per direction, and the quadratic "
       "term of each row is added up, while x2 arrives already summed")
HALF = "the second Taylor coefficient is half the second derivative: (1/2) f''(x0) x1^2, not f''(x0) x1^2"


def _jets(f, x0, x1, x2):
    """(y0, y1 per direction, y2 summed) from taylor.jet along each direction, x2 shared out among them."""
    jets = [taylor.jet(f, x0, [v, x2 / len(x1)]) for v in x1]
    return jets[0][0], np.stack([j[1][0] for j in jets]), sum(j[1][1] for j in jets)


def _compare(t, got, want, call):
    if not (isinstance(got, tuple) and len(got) == 3):
        t.true(False, f"{call} should return a tuple (y0, y1, y2), got {type(got).__name__}")
        return
    for name, g, w in zip(("y0", "y1", "y2"), got, want):
        t.close(g, w, f"{name} of {call}", rtol=1e-10, atol=1e-12)


@visible("25.1", hint="y = sin x: y1 = cos(x0) x1 for each direction, y2 = cos(x0) x2 - (1/2) sin(x0) "
                      "(the sum over the directions of x1^2)")
def sin_of_one_direction(t):
    x1 = X1[:1]
    t.given(f"x0 = {X0}, x1 = {x1.tolist()} (one direction), x2 = {np.round(X2, 3)}")
    _compare(t, t.ns.sin_collapsed(X0, x1, X2), _jets(F.sin, X0, x1, X2), "sin_collapsed(x0, x1, x2)")


@visible("25.1", hint=SUM)
def sin_of_four_directions(t):
    t.given(f"x0 = {X0}, x1 of shape {X1.shape} (four directions), x2 = {np.round(X2, 3)}")
    _compare(t, t.ns.sin_collapsed(X0, X1, X2), _jets(F.sin, X0, X1, X2), "sin_collapsed(x0, x1, x2)")


@visible("25.1", hint=HALF)
def laplacian_of_a_sum_of_sines(t):
    x = np.array([0.5, 1.5, -2.0, 3.0])
    t.given(f"x = {x}: the Laplacian of sum(sin(x)) as 2 sum(y2), with x1 = the unit vectors, x2 = 0")
    y2 = t.ns.sin_collapsed(x, np.eye(4), np.zeros(4))[2]
    want = func.laplacian(lambda v: F.sum(F.sin(v)), "nested")(x).item()
    t.close(2 * np.sum(y2), want, "2 * sum(y2)", rtol=1e-10)


def _product_jets(a, b):
    """The jets of y = a b along each direction: a and b stacked as the two rows of one input."""
    f = lambda z: F.getitem(z, 0) * F.getitem(z, 1)  # noqa: E731
    return _jets(f, np.stack([a[0], b[0]]), np.stack([a[1], b[1]], axis=1), np.stack([a[2], b[2]]))


B = (np.array([1.0, 0.5, -0.7]), RNG.standard_normal((4, 3)), RNG.standard_normal(3))


@visible("25.2", hint="y = a b: y1 = a1 b0 + a0 b1 for each direction (the product rule), y2 = a2 b0 + a0 b2 "
                      "+ the sum over the directions of a1 b1")
def product_of_one_direction(t):
    a, b = (X0, X1[:1], X2), (B[0], B[1][:1], B[2])
    t.given(f"a = (a0, a1, a2) with a0 = {X0} and one direction, b with b0 = {B[0]}")
    _compare(t, t.ns.mul_collapsed(a, b), _product_jets(a, b), "mul_collapsed(a, b)")


@visible("25.2", hint=SUM + "; the cross term is a1[k] b1[k], direction by direction")
def product_of_four_directions(t):
    a = (X0, X1, X2)
    t.given(f"a and b of shape (3,), each with four directions (x1 of shape {X1.shape})")
    _compare(t, t.ns.mul_collapsed(a, B), _product_jets(a, B), "mul_collapsed(a, b)")


@visible("25.2", hint="in x * exp(x) both factors move along every direction: no term of y2 may be left out")
def laplacian_of_x_exp_x(t):
    x = np.array([0.2, -0.4, 1.1])
    t.given(f"x = {x}: the Laplacian of sum(x * exp(x)) as 2 sum(y2), exp's step written by the test")
    xs = (x, np.eye(3), np.zeros(3))
    e = np.exp(x)
    exp_step = (e, e * xs[1], e * xs[2] + 0.5 * e * np.sum(xs[1] ** 2, axis=0))
    y2 = t.ns.mul_collapsed(xs, exp_step)[2]
    want = func.laplacian(lambda v: F.sum(v * F.exp(v)), "nested")(x).item()
    t.close(2 * np.sum(y2), want, "2 * sum(y2)", rtol=1e-10)
