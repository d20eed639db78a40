"""Visible tests of exercises 1: a Function's forward and its backward rule."""

import numpy as np

import minigrad as mg
from minigrad.grading.testing import visible


@visible("1.1", hint="forward receives a plain NumPy array and returns an array: square it with NumPy arithmetic")
def values_at_four_points(t):
    x = np.array([-2.0, -0.5, 0.0, 3.0])
    t.given(f"x = {x}")
    t.close(t.ns.MySquare()(mg.Variable(x)), x * x, "MySquare()(x)")


@visible("1.2", hint="the rule returns the incoming gradient gy times the derivative of the square at x, "
                     "with x the Variable taken out of ctx.inputs")
def first_derivative(t):
    x = np.array([-2.0, -0.5, 0.0, 3.0])
    gy = np.array([3.0, -1.0, 0.5, 2.0])  # not 1, so that a rule that forgets gy shows it
    t.given(f"x = {x}, grad_outputs = {gy}")
    v = mg.Variable(x)
    (gx,) = mg.grad(t.ns.MySquare()(v), v, grad_outputs=gy)
    t.close(gx, 2 * x * gy, "grad(MySquare()(x), x, grad_outputs=gy)", gy=gy)


@visible("1.2", hint="if the first derivative passes but this fails, the rule works on .data or with NumPy: "
                     "write it with minigrad operations on Variables, so that it can be differentiated again")
def second_derivative(t):
    x = np.array([-1.0, 0.5])
    t.given(f"x = {x}")
    v = mg.Variable(x)
    (gx,) = mg.grad(t.ns.MySquare()(v), v, create_graph=True)
    t.differentiable(gx, v, "grad(MySquare()(x), x, create_graph=True)",
                     "the rule must compute its result with minigrad operations on the Variables gy and "
                     "ctx.inputs, not on .data or with NumPy")
    (ggx,) = mg.grad(gx, v)
    t.close(ggx, [2.0, 2.0], "the second derivative of x^2")


@visible("1.3", hint="forward receives three NumPy arrays: the product of the first two, plus the third")
def forward_values(t):
    x0, x1, x2 = np.array([1.0, 2.0]), np.array([3.0, -1.0]), np.array([0.5, 0.5])
    t.given(f"x0 = {x0}, x1 = {x1}, x2 = {x2}")
    t.close(t.ns.MyMulAdd()(mg.Variable(x0), mg.Variable(x1), mg.Variable(x2)), x0 * x1 + x2,
            "MyMulAdd()(x0, x1, x2)")


@visible("1.3", hint="one gradient per input, in the order of the inputs, each the incoming gradient times "
                     "the partial derivative with respect to that input")
def three_gradients(t):
    xs = [np.array([1.0, 2.0]), np.array([3.0, -1.0]), np.array([0.5, 0.5])]
    gy = np.array([2.0, -0.5])  # not 1, so that a rule that forgets gy shows it
    t.given(f"x0, x1, x2 = {[x.tolist() for x in xs]}, grad_outputs = {gy}")
    vs = [mg.Variable(x) for x in xs]
    gxs = mg.grad(t.ns.MyMulAdd()(*vs), vs, grad_outputs=gy)
    t.true(len(gxs) == 3, f"expected three gradients, got {len(gxs)}")
    for name, g, want in zip(("gx0", "gx1", "gx2"), gxs, (xs[1], xs[0], np.ones(2))):
        t.close(g, want * gy, name, gy=gy)
