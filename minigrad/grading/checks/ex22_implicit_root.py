"""Visible tests of exercise 22: the implicit rule of Kepler's equation, against closed forms and differences.

The root is found here by bisection, independently of the notebook's Newton
solver; the closed forms are the implicit function theorem's. Each first
order test seeds a gy that is not 1, and the second order differentiates the
rule itself, so a rule built on ``.data`` fails.
"""

import numpy as np

import minigrad as mg
from minigrad.grading.testing import visible

AT_THE_ROOT = ("the implicit function theorem: g(x, M, e) = x - e sin x - M = 0 gives dx/dM = -(dg/dM) / (dg/dx) "
               "= 1 / (1 - e cos x) and dx/de = -(dg/de) / (dg/dx) = sin x / (1 - e cos x), at the root x, "
               "the output (ctx.outputs), not at the input M; then multiply by gy, and divide by dg/dx")
ON_VARIABLES = ("the rule is differentiated again: build it from the output x (ctx.outputs) and the inputs with "
                "minigrad's functions, never from .data or NumPy, so that dx/dM inside it is this rule again")


def kepler_root(M, e):
    """x with x - e sin x = M (0 <= e < 1), by bisection on [M - e, M + e], where g changes sign."""
    M, e = np.broadcast_arrays(np.asarray(M, dtype=np.float64), np.asarray(e, dtype=np.float64))
    lo, hi = M - e, M + e
    for _ in range(200):
        mid = (lo + hi) / 2
        below = mid - e * np.sin(mid) - M < 0
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return (lo + hi) / 2


def slopes(M, e):
    """(dx/dM, dx/de) at the root, elementwise."""
    x = kepler_root(M, e)
    dg_dx = 1 - e * np.cos(x)
    return 1 / dg_dx, np.sin(x) / dg_dx


def gradients(t, M, e, gy):
    """The gradients of M and e through the student's Kepler, seeded with gy."""
    Mv, ev = mg.Variable(M), mg.Variable(e)
    x = t.ns.Kepler()(Mv, ev)
    return mg.grad(x, [Mv, ev], grad_outputs=gy)


@visible("22.1", hint=AT_THE_ROOT)
def gradients_with_a_gy_that_is_not_one(t):
    M, e = np.array([0.3, 1.0, 2.5, 4.0, 6.0]), np.array(0.7)
    gy = np.array([1.5, -0.5, 2.0, 0.25, -1.0])
    t.given(f"x = Kepler()(M, e), M = {M}, e = {e} (one e for every M), grad_outputs gy = {gy}")
    gM, ge = gradients(t, M, e, gy)
    dM, de = slopes(M, e)
    t.close(gM, gy * dM, "the gradient of M", gy=gy)
    t.close(ge, np.sum(gy * de), "the gradient of e (one e: the walker sums over the elements of M)", gy=gy)


@visible("22.1", hint=AT_THE_ROOT + ". Central differences of the root, found by bisection, must agree")
def against_central_differences_of_the_root(t):
    M, e = np.array([[0.5, 2.0], [3.5, 5.5]]), np.array([[0.2, 0.9], [0.5, 0.95]])
    t.given(f"x = Kepler()(M, e), M = {M.tolist()}, e = {e.tolist()} (shape (2, 2)), gy = ones")
    gM, ge = gradients(t, M, e, np.ones_like(M))
    h = 1e-6
    t.close(gM, (kepler_root(M + h, e) - kepler_root(M - h, e)) / (2 * h), "the gradient of M", rtol=1e-6)
    t.close(ge, (kepler_root(M, e + h) - kepler_root(M, e - h)) / (2 * h), "the gradient of e", rtol=1e-6)


@visible("22.1", hint=ON_VARIABLES)
def second_derivatives(t):
    M, e = np.array([0.4, 1.7, 3.0]), np.array([0.3, 0.6, 0.8])
    t.given(f"Kepler()(M, e) differentiated twice, M = {M}, e = {e}")
    t.gradcheck(lambda a, b: t.ns.Kepler()(a, b), [M, e], order=2, what="the derivatives of Kepler()(M, e)")
