"""Visible tests of exercise 10: the gradient penalty."""

import numpy as np

import minigrad as mg
import minigrad.functions as F
from minigrad.grading.testing import visible


@visible("10.1", hint="for a linear critic x @ w every row of the gradient is w: P = (||w|| - 1)^2")
def linear_critic_value(t):
    x, w = np.array([[1.0, 2.0], [0.0, -1.0]]), np.array([3.0, 4.0])
    t.given(f"D(x) = x @ w, x = {x.tolist()}, w = {w}")
    P = t.ns.gradient_penalty(lambda u: F.matmul(u, mg.Variable(w, requires_grad=False)), mg.Variable(x))
    t.close(P, (5.0 - 1.0) ** 2, "gradient_penalty(D, x)")


@visible("10.1", hint="P is differentiated with respect to the critic's weights, through the inner gradient: "
                      "that gradient must record its graph (lesson 10)")
def linear_critic_gradient(t):
    x, w = np.array([[1.0, 2.0], [0.0, -1.0]]), np.array([3.0, 4.0])
    t.given(f"D(x) = x @ w, x = {x.tolist()}, w = {w}")
    wv = mg.Variable(w)
    P = t.ns.gradient_penalty(lambda u: F.matmul(u, wv), mg.Variable(x))
    t.differentiable(P, wv, "gradient_penalty(D, x)",
                     "the inner gradient must record its graph (lesson 6's options), and P be computed "
                     "from it with minigrad functions, never from .data, so that P can be differentiated "
                     "with respect to the critic's weights")
    (gw,) = mg.grad(P, wv)
    t.close(gw, 2 * (5.0 - 1.0) * w / 5.0, "grad(P, w)")


@visible("10.1", hint="one norm per sample: each row's norm over its features, not one norm of the whole "
                      "batch")
def per_sample_norms(t):
    x = np.array([[0.5, -1.0], [2.0, 0.1], [0.0, 0.0]])
    t.given(f"D(x) = sum(x^2, axis=1), x = {x.tolist()}; grad_x D = 2 x")
    P = t.ns.gradient_penalty(lambda u: F.sum(u * u, axis=1), mg.Variable(x))
    norms = np.linalg.norm(2 * x, axis=1)
    t.close(P, np.mean((norms - 1) ** 2), "gradient_penalty(D, x)")
