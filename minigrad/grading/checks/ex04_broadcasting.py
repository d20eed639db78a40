"""Visible tests of exercises 4: sum_to and broadcasting."""

import numpy as np

import minigrad as mg
from minigrad.grading.testing import visible


@visible("4.1", hint="sum the leading axes, and the axes where the target has 1, keeping those: the result "
                     "has the target's shape. Shapes line up from the right, as in NumPy's broadcasting: the "
                     "target's axes face x's last axes")
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
    t.close(gx, np.broadcast_to(gy, (2, 3)), "grad(MySumTo((3,))(x), x, grad_outputs=gy)", gy=gy)


@visible("4.2", hint="the gradient of sum_to(x) ** 2 depends on x through gy, so the second derivative goes "
                     "through the rule of sum_to: build its result from gy the Variable, with this notebook's "
                     "Functions, never from its .data")
def second_order_through_sum_to(t):
    x = np.array([[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]])
    t.given(f"x = {x.tolist()}, f(x) = sum_to(x, (3,)) ** 2 (the second derivative of sum(f) is 2 for each "
            "pair of elements in one column)")
    t.gradcheck(lambda v: t.ns.MySumTo((3,))(v) ** 2, [x], 2, "derivatives of sum_to(x, (3,)) ** 2")


COPIES = ("a gradient has its input's shape: each element of x was copied to several places of y, and its "
          "gradient adds up the gy of all its copies")

@visible("4.2", hint=COPIES)
def broadcast_to_rule_returns_the_shape_of_x(t):
    x = np.array([[1.0], [2.0]])
    gy = np.arange(6.0).reshape(2, 3)
    t.given(f"x of shape (2, 1) broadcast to (2, 3), the rule called directly with gy = {gy.tolist()}")
    (gx,) = t.rule(t.ns.MyBroadcastTo((2, 3))(mg.Variable(x)), gy)
    t.close(gx, gy.sum(axis=1, keepdims=True), "my_broadcast_to_backward(ctx, gy)")


@visible("4.2", hint=COPIES)
def broadcast_to_rule(t):
    x = np.array([[1.0], [2.0]])
    gy = np.arange(6.0).reshape(2, 3)
    t.given(f"x of shape (2, 1) broadcast to (2, 3), grad_outputs = {gy.tolist()}")
    v = mg.Variable(x)
    (gx,) = mg.grad(t.ns.MyBroadcastTo((2, 3))(v), v, grad_outputs=gy)
    t.close(gx, gy.sum(axis=1, keepdims=True), "grad(MyBroadcastTo((2, 3))(x), x, grad_outputs=gy)")


@visible("4.2", hint="the axes to add up come from the shapes of x and gy, none written as a number: x may lack "
                     "leading axes and have length 1 where gy does not")
def broadcast_to_rule_for_leading_and_unit_axes(t):
    x = np.array([[1.0, -2.0, 0.5]])
    gy = np.arange(24.0).reshape(2, 4, 3)
    t.given("x of shape (1, 3) broadcast to (2, 4, 3), the rule called directly with gy = "
            "arange(24).reshape(2, 4, 3)")
    (gx,) = t.rule(t.ns.MyBroadcastTo((2, 4, 3))(mg.Variable(x)), gy)
    t.close(gx, gy.sum(axis=(0, 1)).reshape(1, 3), "my_broadcast_to_backward(ctx, gy)")
