"""Visible tests of exercises 2: elementwise rules, checked to the third derivative."""

import numpy as np

import minigrad as mg
from minigrad.grading.testing import visible

X = np.array([-1.2, 0.3, 2.0])


def _first(t, cls, x, gy=None):
    """The gradient of the student's function ``cls`` at x (with grad_outputs gy)."""
    t.given(f"x = {x}" + ("" if gy is None else f", grad_outputs = {gy}"))
    v = mg.Variable(x)
    (gx,) = mg.grad(getattr(t.ns, cls)()(v), v, grad_outputs=gy)
    return gx


def _to_third_order(t, cls, x):
    """Orders 1 to 3 of the student's function ``cls`` against central differences."""
    t.given(f"x = {x}")
    t.gradcheck(lambda v: getattr(t.ns, cls)()(v), [x], 3, f"derivatives of {cls}")


@visible("2.1", hint="y = sin x => gx = gy * my_cos(x)")
def sin_first_derivative(t):
    t.close(_first(t, "MySin", X), np.cos(X), "grad(MySin()(x), x)")


@visible("2.1", hint="y = cos x => gx = -gy * my_sin(x)")
def cos_first_derivative(t):
    t.close(_first(t, "MyCos", X), -np.sin(X), "grad(MyCos()(x), x)")


@visible("2.1", hint="sin's second derivative runs MyCos's rule, its third MySin's again: both rules must "
                     "be right, and written with my_cos(x) and my_sin(x) on the Variable x, never x.data")
def sin_to_third_order(t):
    _to_third_order(t, "MySin", X)


@visible("2.2", hint="y = tanh x => gx = gy * (1 - y * y), with (y,) = ctx.outputs")
def tanh_first_derivative(t):
    t.close(_first(t, "MyTanh", X), 1 - np.tanh(X) ** 2, "grad(MyTanh()(x), x)")


@visible("2.2", hint="the rule's result is differentiated again: write gy * (1 - y * y) with the Variable "
                     "y = ctx.outputs[0], never y.data")
def tanh_to_third_order(t):
    _to_third_order(t, "MyTanh", X)


@visible("2.3", hint="sigmoid(x) = 1 / (1 + exp(-x)) = (1 + tanh(x / 2)) / 2")
def sigmoid_values(t):
    t.given(f"x = {X}")
    t.close(t.ns.MySigmoid()(mg.Variable(X)), 1 / (1 + np.exp(-X)), "MySigmoid()(x)")


@visible("2.3", hint="y = sigmoid(x) => gx = gy * y * (1 - y), with (y,) = ctx.outputs")
def sigmoid_first_derivative(t):
    gy = np.array([2.0, -1.0, 0.5])
    t.close(_first(t, "MySigmoid", X, gy), gy * np.exp(-X) / (1 + np.exp(-X)) ** 2,
            "grad(MySigmoid()(x), x, grad_outputs=gy)", gy=gy)


@visible("2.4", hint="y = ln x => gx = gy / x")
def log_first_derivative(t):
    x = np.array([0.5, 1.0, 4.0])
    t.close(_first(t, "MyLog", x), 1 / x, "grad(MyLog()(x), x)")


@visible("2.4", hint="the rule's result is differentiated again: write gy / x with the Variable "
                     "x = ctx.inputs[0], never x.data")
def log_to_third_order(t):
    _to_third_order(t, "MyLog", np.array([0.5, 1.0, 4.0]))
