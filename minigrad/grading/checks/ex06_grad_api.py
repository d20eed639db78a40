"""Visible tests of exercises 6: vector-Jacobian products, Hessian-vector products, Jacobians."""

import numpy as np

import minigrad as mg
import minigrad.functions as F
from minigrad.grading.testing import visible

X = np.array([0.5, -1.0, 2.0])


@visible("6.1", hint="J^T v is one backward pass that weights each output's gradient by v, never the "
                     "Jacobian itself; the function returns an array, not a Variable")
def elementwise_cube(t):
    v = np.array([1.0, 2.0, -1.0])
    t.given(f"f(x) = x^3, x = {X}, v = {v}")
    t.close(t.ns.vjp(lambda u: u ** 3, X, v), 3 * X ** 2 * v, "vjp(f, x, v)")


@visible("6.2", hint="H v is the gradient of (the gradient . v): two backward passes, the first recording a "
                     "graph that the second differentiates (lesson 6's options)")
def sum_of_fourth_powers(t):
    v = np.array([1.0, 0.0, -2.0])
    t.given(f"f(x) = sum(x^4), x = {X}, v = {v}; the Hessian is diag(12 x^2)")
    t.close(t.ns.hvp(lambda u: F.sum(u ** 4), X, v), 12 * X ** 2 * v, "hvp(f, x, v)")


@visible("6.2", hint="the Hessian of sum(sin(x0 x1)) has off-diagonal terms: keep the whole graph")
def mixed_second_derivatives(t):
    x, v = np.array([0.3, 0.7]), np.array([1.0, -2.0])
    t.given(f"f(x) = sin(x0 * x1), x = {x}, v = {v}")
    a, b = x
    s, c = np.sin(a * b), np.cos(a * b)
    H = np.array([[-b * b * s, c - a * b * s], [c - a * b * s, -a * a * s]])
    t.close(t.ns.hvp(lambda u: F.sin(u[0] * u[1]), x, v), H @ v, "hvp(f, x, v)")


@visible("6.3", hint="each row of J is a vector-Jacobian product with a unit vector: one backward pass per "
                     "output, in the order of the outputs")
def square_map(t):
    t.given(f"f(x) = x * sum(x), x = {X}; J = diag(sum(x)) + x 1^T")
    J = np.diag(np.full(3, X.sum())) + X[:, None]
    t.close(t.ns.jacobian(lambda u: u * F.sum(u), X), J, "jacobian(f, x)")


@visible("6.3", hint="J has one row per output and one column per input: f maps n numbers to m, and m need not "
                     "be n, so the number of rows comes from f's output, not from x")
def fewer_outputs_than_inputs(t):
    A = np.array([[1.0, -0.5, 2.0], [0.3, 1.0, 0.0]])
    t.given(f"f(x) = tanh(A @ x), A = {A.tolist()} (2 outputs), x = {X} (3 inputs): J has shape (2, 3)")
    got = t.ns.jacobian(lambda u: F.tanh(F.matmul(mg.Variable(A, requires_grad=False), u)), X)
    t.close(got, (1 - np.tanh(A @ X) ** 2)[:, None] * A, "jacobian(f, x)")
