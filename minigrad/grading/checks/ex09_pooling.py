"""Visible tests of exercises 9: average and max pooling."""

import numpy as np

import minigrad as mg
from minigrad.grading.testing import visible

X = np.random.default_rng(0).standard_normal((1, 2, 4, 6))


def _blocks(x, k):
    N, C, H, W = x.shape
    return x.reshape(N, C, H // k, k, W // k, k)


def _max_spread(x, gy, k):
    """The gradient of max pooling: each block's gy on its maximum, 0 elsewhere."""
    b = _blocks(x, k)
    mask = b == b.max(axis=(3, 5), keepdims=True)
    N, C, Hk, Wk = gy.shape
    return (mask * np.broadcast_to(gy.reshape(N, C, Hk, 1, Wk, 1), b.shape)).reshape(x.shape)


@visible("9.1", hint="blocks(x.shape, k) makes every block two axes of x: average over those two axes")
def avg_values(t):
    t.given("x random (seed 0) of shape (1, 2, 4, 6), k = 2")
    t.close(t.ns.MyAvgPool(2)(mg.Variable(X)), _blocks(X, 2).mean(axis=(3, 5)), "MyAvgPool(2)(x)")


@visible("9.1", hint="every element of a block gets the block's gy, divided by the k^2 elements that share it")
def avg_gradient(t):
    gy = np.arange(12.0).reshape(1, 2, 2, 3)
    t.given("x random (seed 0) of shape (1, 2, 4, 6), k = 2, grad_outputs = arange(12).reshape(1, 2, 2, 3)")
    v = mg.Variable(X)
    (gx,) = mg.grad(t.ns.MyAvgPool(2)(v), v, grad_outputs=gy)
    t.close(gx, np.repeat(np.repeat(gy, 2, axis=2), 2, axis=3) / 4, "grad(MyAvgPool(2)(x), x, gy)")


WINDOW = ("the window is k, given to the constructor (self.k, ctx.function.k): a 2 written anywhere passes "
          "k = 2 only")


def _window_of_three(t, cls, reduce, spread):
    """``cls``(3) on x of shape (1, 2, 6, 3): its values, ``reduce`` of each block, and its gradient, where
    ``spread(x, gy)`` is the gradient x gets from the blocks' gy."""
    x = np.random.default_rng(3).standard_normal((1, 2, 6, 3))
    gy = np.arange(1.0, 5.0).reshape(1, 2, 2, 1)
    t.given("x random (seed 3) of shape (1, 2, 6, 3), k = 3")
    v = mg.Variable(x)
    y = getattr(t.ns, cls)(3)(v)
    t.close(y, reduce(_blocks(x, 3), axis=(3, 5)), f"{cls}(3)(x)")
    t.given("x random (seed 3) of shape (1, 2, 6, 3), k = 3, grad_outputs = arange(1, 5).reshape(1, 2, 2, 1)")
    (gx,) = mg.grad(y, v, grad_outputs=gy)
    t.close(gx, spread(x, gy), f"grad({cls}(3)(x), x, gy)", gy=gy)


@visible("9.1", higher="the rule must be written with minigrad functions so it can be differentiated again: "
                       "gy never goes through .data")
def avg_rule_is_differentiable(t):
    t.given("x random (seed 0) of shape (1, 2, 4, 6), k = 2, f(x) = MyAvgPool(2)(x) ** 2")
    t.gradcheck(lambda v: t.ns.MyAvgPool(2)(v) ** 2, [X], 2, "derivatives of avg_pool(x)^2")


@visible("9.1", hint=WINDOW)
def avg_with_a_window_of_three(t):
    _window_of_three(t, "MyAvgPool", np.mean, lambda x, gy: np.repeat(np.repeat(gy, 3, axis=2), 3, axis=3) / 9)


@visible("9.2", hint="blocks(x.shape, k) makes every block two axes of x: take the maximum over those two axes")
def max_values(t):
    t.given("x random (seed 0) of shape (1, 2, 4, 6), k = 2")
    t.close(t.ns.MyMaxPool(2)(mg.Variable(X)), _blocks(X, 2).max(axis=(3, 5)), "MyMaxPool(2)(x)")


@visible("9.2", hint="only the maximum of each block gets the block's gy; the other elements get 0")
def max_gradient(t):
    gy = np.arange(1.0, 13.0).reshape(1, 2, 2, 3)
    t.given("x random (seed 0) of shape (1, 2, 4, 6), k = 2, grad_outputs = arange(1, 13).reshape(1, 2, 2, 3)")
    v = mg.Variable(X)
    (gx,) = mg.grad(t.ns.MyMaxPool(2)(v), v, grad_outputs=gy)
    t.close(gx, _max_spread(X, gy, 2), "grad(MyMaxPool(2)(x), x, gy)", gy=gy)


@visible("9.2", hint=WINDOW)
def max_with_a_window_of_three(t):
    _window_of_three(t, "MyMaxPool", np.max, lambda x, gy: _max_spread(x, gy, 3))


@visible("9.2", hint="think of the shape each block had before the reduction; the mask is a constant",
         higher="the rule must be written with minigrad functions so it can be differentiated again: gy never "
                "goes through .data")
def max_rule_is_differentiable(t):
    t.given("x random (seed 0) of shape (1, 2, 4, 6), k = 2, f(x) = MyMaxPool(2)(x) ** 2")
    t.gradcheck(lambda v: t.ns.MyMaxPool(2)(v) ** 2, [X], 2, "derivatives of max_pool(x)^2")
