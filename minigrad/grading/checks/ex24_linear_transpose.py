"""Visible tests of exercises 24: transpose rules, checked by the dot-product test, and a VJP by transposition.

A transpose rule is checked by <L t, u> = <t, L^T u> at random t and u: the
left side runs the Function's forward (NumPy), the right side the student's
rule through ``func.linear_transpose``. A wrong rule is then compared with
the typical wrong answers (the sum over the wrong axis, a repeated index
written once instead of added), so the message names what is off.
"""

import numpy as np

import minigrad as mg
import minigrad.functions as F
from minigrad import forward_functions, func
from minigrad.grading.testing import visible

DOT = ("the dot-product test: <L t, u> must equal <t, L^T u> for every t and u, where L is the Function's forward "
       "and L^T your transpose rule")
REPEATS = ("an index that is picked twice sends two cotangents back to the same row: they must be added, not "
           "written one over the other (NumPy's g[idx] = u keeps only the last)")


def _as_array(v):
    return np.asarray(getattr(v, "data", v), dtype=np.float64)


def dot_product_test(t, L, ts, u, what, diagnose=None):
    """<L(t), u> against <t, L^T u>, L^T from func.linear_transpose (the student's rule); returns L^T u.

    ``diagnose(t, gs)``, if given, first compares L^T u with the typical wrong answers, so that the first
    failure reported names the mistake.
    """
    with mg.no_grad():
        y = L(*[mg.Variable(a) for a in ts])
    gs = func.linear_transpose(L, *ts)(u)
    if diagnose is not None:
        diagnose(t, gs)
    left = float(np.sum(_as_array(y) * u))
    right = sum(float(np.sum(a * _as_array(g))) for a, g in zip(ts, gs))
    t.close(right, left, f"<t, L^T u> for {what} (it must equal <L t, u>: {DOT})")
    return gs


@visible("24.1", hint="y[i, j] = w[j] x[i]: each x[i] is copied k times, weighted, so L^T u gathers its copies: "
                      "the weighted sum of u over the axis of the copies")
def dot_product_test_of_weighted_copies(t):
    rng = np.random.default_rng(0)
    x, w, u = rng.standard_normal(3), rng.standard_normal(4), rng.standard_normal((3, 4))
    t.given(f"MyWeightedCopies(w), w = {np.round(w, 3)}, x of shape (3,), u of shape (3, 4)")

    def diagnose(t, gs):
        t.true(not np.allclose(_as_array(gs[0]), u.sum(axis=1)), "L^T u is the sum of u over the copies without "
                                                                 "the weights w: multiply each copy by its weight")

    (g,) = dot_product_test(t, lambda a: t.ns.MyWeightedCopies(w)(a), [x], u, "MyWeightedCopies(w)", diagnose)
    t.close(g, u @ w, "L^T u = sum over j of w[j] u[i, j]")


@visible("24.1", hint="with as many rows as copies, a sum over the wrong axis still has the right shape")
def a_square_u_shows_the_axis(t):
    rng = np.random.default_rng(1)
    x, w, u = rng.standard_normal(4), rng.standard_normal(4), rng.standard_normal((4, 4))
    t.given("MyWeightedCopies(w), x of shape (4,), w of shape (4,), u of shape (4, 4)")
    (g,) = func.linear_transpose(lambda a: t.ns.MyWeightedCopies(w)(a), x)(u)
    t.true(not np.allclose(_as_array(g), w @ u), "L^T u sums over the wrong axis: the copies of x[i] are the "
                                                 "row u[i, :], so the sum runs over j, the columns")
    t.close(g, u @ w, "L^T u for a square u")


@visible("24.1", hint="the rule is written with minigrad functions on Variables, so it can be differentiated")
def the_transpose_is_differentiable_in_u(t):
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal(2), rng.standard_normal(3)
    u = mg.Variable(rng.standard_normal((2, 3)))
    t.given("d/du of sum(L^T u), for MyWeightedCopies(w), x of shape (2,), u of shape (2, 3)")
    (g,) = func.linear_transpose(lambda a: t.ns.MyWeightedCopies(w)(a), x)(u)
    t.differentiable(g, u, "L^T u", "build it with minigrad's functions (F.matmul, F.sum, *) on u, never on "
                                    "u.data or with NumPy")


@visible("24.2", hint="y = x[idx] picks rows; L^T u adds each row of u to the row of x it was picked from")
def dot_product_test_of_a_gather_with_repeats(t):
    rng = np.random.default_rng(3)
    idx = np.array([2, 0, 2, 2, 1])
    x, u = rng.standard_normal((4, 3)), rng.standard_normal((5, 3))
    t.given(f"MyGather(idx), idx = {idx.tolist()} (row 2 three times, row 3 never), x (4, 3), u (5, 3)")
    written_once = np.zeros((4, 3))
    written_once[idx] = u

    def diagnose(t, gs):
        t.true(not np.allclose(_as_array(gs[0]), written_once), REPEATS)

    (g,) = dot_product_test(t, lambda a: t.ns.MyGather(idx)(a), [x], u, "MyGather(idx)", diagnose)
    expected = np.zeros((4, 3))
    np.add.at(expected, idx, u)
    t.close(g, expected, "L^T u: each row of u added to its row of x (row 3, never picked, gets 0)")


@visible("24.2", hint="the transpose is differentiable in u: a product with a constant 0/1 matrix is one way")
def the_gather_transpose_is_differentiable_in_u(t):
    idx = np.array([1, 1, 0])
    u = mg.Variable(np.arange(6.0).reshape(3, 2))
    t.given(f"d/du of sum(L^T u), MyGather(idx), idx = {idx.tolist()}, x (2, 2), u (3, 2)")
    (g,) = func.linear_transpose(lambda a: t.ns.MyGather(idx)(a), np.zeros((2, 2)))(u)
    t.differentiable(g, u, "L^T u", "build it with minigrad's functions on u (F.matmul with a constant 0/1 "
                                    "matrix adds the repeats), never on u.data or with NumPy")


class OnlyForward(mg.Function):
    """y = x^3, with a forward rule and no backward rule: mg.grad cannot differentiate it, a transpose can."""

    def forward(self, x):
        return x ** 3


def _register_only_forward():
    forward_functions.register("OnlyForward", lambda ctx, tx: 3 * ctx.inputs[0] ** 2 * tx)


def net(x, W1, W2):
    """The small network of exercise 24.3: tanh(x W1) W2."""
    return F.matmul(F.tanh(F.matmul(x, W1)), W2)


@visible("24.3", hint="J^T u = linear_transpose(f_jvp, x)(u)[0], with f_jvp from func.linearize(f, x)")
def the_vjp_of_a_small_network(t):
    rng = np.random.default_rng(4)
    x, W1, W2 = rng.standard_normal((2, 3)), rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    u = rng.standard_normal((2, 2))
    t.given("f(x) = tanh(x W1) W2, x (2, 3), W1 (3, 4), W2 (4, 2), u (2, 2)")
    got = t.ns.vjp_by_transpose(lambda a: net(a, W1, W2), x, u)
    h = np.tanh(x @ W1)
    t.close(got, ((u @ W2.T) * (1 - h ** 2)) @ W1.T, "vjp_by_transpose(f, x, u) = J^T u")


@visible("24.3", hint="a Function with a forward rule and no backward rule: only linearize and linear_transpose "
                      "can give its VJP (mg.grad and func.vjp need backward rules)")
def a_function_without_a_backward_rule(t):
    _register_only_forward()
    x, u = np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, -0.5])
    t.given(f"f(x) = sin(OnlyForward()(x)) = sin(x^3), a Function with no backward rule; x = {x}, u = {u}")
    got = t.ns.vjp_by_transpose(lambda a: F.sin(OnlyForward()(a)), x, u)
    t.close(got, np.cos(x ** 3) * 3 * x ** 2 * u, "J^T u of sin(x^3)")
