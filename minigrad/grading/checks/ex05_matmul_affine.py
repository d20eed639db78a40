"""Visible tests of exercises 5: matmul and the affine layer."""

import numpy as np

import minigrad as mg
from minigrad.grading.testing import visible


def _inputs(seed, *shapes):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


@visible("5.1", hint="gx has x's shape and gW has W's: each is a product of gy with the other input, one of "
                     "the two transposed; the shapes say which")
def matmul_gradients(t):
    x, W, gy = _inputs(0, (2, 3), (3, 4), (2, 4))
    t.given("x (2, 3), W (3, 4), grad_outputs gy (2, 4), random (seed 0)")
    vx, vW = mg.Variable(x), mg.Variable(W)
    gx, gW = mg.grad(t.ns.MyMatMul()(vx, vW), [vx, vW], grad_outputs=gy)
    t.close(gx, gy @ W.T, "gx")
    t.close(gW, x.T @ gy, "gW")


ON_VARIABLES = ("the rule's results are differentiated again: build them with minigrad functions on the "
                "Variables gy and ctx.inputs, never on .data")


@visible("5.1", higher=ON_VARIABLES)
def matmul_gradient_is_differentiable(t):
    x, W = _inputs(4, (2, 3), (3, 4))
    t.given("x (2, 3), W (3, 4), random (seed 4)")
    t.gradcheck(lambda a, b: t.ns.MyMatMul()(a, b) ** 2, [x, W], 2, "derivatives of (x W)^2")


@visible("5.2", hint="forward: the rows of x times W, with b added to every row (broadcasting)")
def forward_values(t):
    x, W, b = _inputs(1, (3, 2), (2, 4), (4,))
    t.given("x (3, 2), W (2, 4), b (4,), random (seed 1)")
    t.close(t.ns.MyAffine()(mg.Variable(x), mg.Variable(W), mg.Variable(b)), x @ W + b, "MyAffine()(x, W, b)")


@visible("5.2", hint="each gradient has its input's shape: gx and gW as in 5.1, and b, added to every row, "
                     "collects gy from every row")
def affine_gradients(t):
    x, W, b, gy = _inputs(2, (3, 2), (2, 4), (4,), (3, 4))
    t.given("x (3, 2), W (2, 4), b (4,), grad_outputs gy (3, 4), random (seed 2)")
    vs = [mg.Variable(a) for a in (x, W, b)]
    gx, gW, gb = mg.grad(t.ns.MyAffine()(*vs), vs, grad_outputs=gy)
    t.close(gx, gy @ W.T, "gx")
    t.close(gW, x.T @ gy, "gW")
    t.close(gb, gy.sum(axis=0), "gb")


@visible("5.2", hint="b was broadcast over the batch, so its gradient sums gy over the batch axis; take every size "
                     "from the inputs, none written in the rule")
def the_rule_sums_gb_over_the_batch(t):
    x, W, b, gy = _inputs(3, (5, 2), (2, 3), (3,), (5, 3))  # other sizes than above: nothing hard-coded
    t.given("x (5, 2), W (2, 3), b (3,), the rule called directly with gy (5, 3), random (seed 3)")
    gxs = t.rule(t.ns.MyAffine()(*[mg.Variable(a) for a in (x, W, b)]), gy)
    t.true(len(gxs) == 3, f"the rule should return three gradients (gx, gW, gb), got {len(gxs)}")
    t.close(gxs[2], gy.sum(axis=0), "gb returned by the rule")


@visible("5.2", higher=ON_VARIABLES)
def affine_gradient_is_differentiable(t):
    x, W, b = _inputs(6, (3, 2), (2, 4), (4,))
    t.given("x (3, 2), W (2, 4), b (4,), random (seed 6)")
    t.gradcheck(lambda *vs: t.ns.MyAffine()(*vs) ** 2, [x, W, b], 2, "derivatives of (x W + b)^2")
