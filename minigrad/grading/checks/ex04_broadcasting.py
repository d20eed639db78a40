"""Visible tests of exercises 4: sum_to and broadcasting."""

import numpy as np

import minigrad as mg
from minigrad.grading.testing import visible


@visible("4.1", hint="sum the leading axes, and the axes where the target has 1, keeping those: the result "
                     "has the target's shape")
def sum_leading_and_unit_axes(t):
    x = np.arange(24.0).reshape(2, 3, 4)
    t.given("x = arange(24).reshape(2, 3, 4), shape = (3, 1)")
    t.close(t.ns.MySumTo((3, 1))(mg.Variable(x)), x.sum(axis=(0, 2)).reshape(3, 1), "MySumTo((3, 1))(x)")


@visible("4.1", hint="a missing leading axis is summed away")
def sum_to_a_row(t):
    x = np.arange(6.0).reshape(2, 3)
    t.given("x = arange(6).reshape(2, 3), shape = (3,)")
    t.close(t.ns.MySumTo((3,))(mg.Variable(x)), x.sum(axis=0), "MySumTo((3,))(x)")


@visible("4.2", hint="each element of x went into one element of y, so it gets that element's gy: a gradient "
                     "of x's shape, from the other Function of this notebook")
def sum_to_rule(t):
    x = np.arange(6.0).reshape(2, 3)
    gy = np.array([1.0, 2.0, 3.0])
    t.given(f"x of shape (2, 3), shape = (3,), grad_outputs = {gy}")
    v = mg.Variable(x)
    (gx,) = mg.grad(t.ns.MySumTo((3,))(v), v, grad_outputs=gy)
    t.close(gx, np.broadcast_to(gy, (2, 3)), "grad(MySumTo((3,))(x), x, grad_outputs=gy)")


@visible("4.2", hint="a gradient has its input's shape: each element of x was copied to several places of y, "
                     "and its gradient adds up the gy of all its copies")
def broadcast_to_rule_returns_the_shape_of_x(t):
    x = np.array([[1.0], [2.0]])
    gy = np.arange(6.0).reshape(2, 3)
    t.given(f"x of shape (2, 1) broadcast to (2, 3), the rule called directly with gy = {gy.tolist()}")
    (gx,) = t.rule(t.ns.MyBroadcastTo((2, 3))(mg.Variable(x)), gy)
    t.close(gx, gy.sum(axis=1, keepdims=True), "my_broadcast_to_backward(ctx, gy)")


@visible("4.2", hint="a gradient has its input's shape: each element of x was copied to several places of y, "
                     "and its gradient adds up the gy of all its copies")
def broadcast_to_rule(t):
    x = np.array([[1.0], [2.0]])
    gy = np.arange(6.0).reshape(2, 3)
    t.given(f"x of shape (2, 1) broadcast to (2, 3), grad_outputs = {gy.tolist()}")
    v = mg.Variable(x)
    (gx,) = mg.grad(t.ns.MyBroadcastTo((2, 3))(v), v, grad_outputs=gy)
    t.close(gx, gy.sum(axis=1, keepdims=True), "grad(MyBroadcastTo((2, 3))(x), x, grad_outputs=gy)")
