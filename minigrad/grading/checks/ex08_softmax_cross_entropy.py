"""Visible tests of exercises 8: softmax and the softmax cross entropy."""

import numpy as np

import minigrad as mg
from minigrad.grading.testing import visible

X = np.array([[0.5, -1.0, 2.0], [0.0, 0.3, -0.2]])
T = [2, 0]


def _softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@visible("8.1", hint="exp(x - max) / sum(exp(x - max)), along the last axis")
def softmax_values(t):
    t.given(f"x = {X.tolist()}")
    t.close(t.ns.MySoftmax()(mg.Variable(X)), _softmax(X), "MySoftmax()(x)")


@visible("8.1", hint="gx = y * (gy - sum(gy * y, axis=-1, keepdims=True))")
def softmax_gradient(t):
    gy = np.array([[1.0, 0.0, -1.0], [0.5, 2.0, 0.0]])
    t.given(f"x = {X.tolist()}, grad_outputs = {gy.tolist()}")
    v = mg.Variable(X)
    (gx,) = mg.grad(t.ns.MySoftmax()(v), v, grad_outputs=gy)
    y = _softmax(X)
    t.close(gx, y * (gy - (gy * y).sum(axis=-1, keepdims=True)), "grad(MySoftmax()(x), x, gy)", gy=gy)


@visible("8.2", hint="mean over the batch of -log softmax(x)[i, t_i]")
def loss_value(t):
    t.given(f"x = {X.tolist()}, t = {T}")
    expected = -np.log(_softmax(X)[np.arange(2), T]).mean()
    t.close(t.ns.MySoftmaxCrossEntropy(T)(mg.Variable(X)), expected, "MySoftmaxCrossEntropy(t)(x)")


@visible("8.2", hint="gx = (softmax(x) - onehot(t)) * gy / N")
def loss_gradient(t):
    gy = 3.0  # not 1, so that a rule that forgets gy shows it
    t.given(f"x = {X.tolist()}, t = {T}, grad_outputs = {gy}")
    v = mg.Variable(X)
    (gx,) = mg.grad(t.ns.MySoftmaxCrossEntropy(T)(v), v, grad_outputs=gy)
    t.close(gx, (_softmax(X) - np.eye(3)[T]) * gy / 2, "grad(loss, x, grad_outputs=3.0)", gy=gy)


@visible("8.2", hint="compute the softmax in the rule as MySoftmax()(x) on the Variable x, and the one-hot "
                     "matrix as a constant Variable")
def the_gradient_can_be_differentiated_again(t):
    t.given(f"x = {X.tolist()}, t = {T}")
    v = mg.Variable(X)
    (gx,) = mg.grad(t.ns.MySoftmaxCrossEntropy(T)(v), v, create_graph=True)
    t.differentiable(gx, v, "grad(loss, x, create_graph=True)",
                     "the rule computed the softmax from x.data or with NumPy")
