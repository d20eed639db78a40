"""Visible tests of exercises 5: matmul, the affine layer, softmax and the softmax cross entropy."""

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


X = np.array([[0.5, -1.0, 2.0], [0.0, 0.3, -0.2]])
T = [2, 0]
ROWS_APART = np.array([[1000.0, 999.0], [-1000.0, -1001.0]])  # a shift common to both rows underflows one
EACH_ROW = ("each row is shifted by its own largest logit: a shift shared by the whole batch (its largest logit) "
            "leaves a row far below it with every exp underflowing to 0, and log 0 = -inf, 0 / 0 = nan")


def _softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@visible("5.3", hint="exp(x_i) / sum_j exp(x_j), along the last axis")
def softmax_values(t):
    t.given(f"x = {X.tolist()}")
    t.close(t.ns.MySoftmax()(mg.Variable(X)), _softmax(X), "MySoftmax()(x)")


@visible("5.3", hint="dy_i/dx_j = y_i (delta_ij - y_j): the rule is a vector-Jacobian product, written with "
                     "the output y, along the last axis")
def softmax_gradient(t):
    gy = np.array([[1.0, 0.0, -1.0], [0.5, 2.0, 0.0]])
    t.given(f"x = {X.tolist()}, grad_outputs = {gy.tolist()}")
    v = mg.Variable(X)
    (gx,) = mg.grad(t.ns.MySoftmax()(v), v, grad_outputs=gy)
    y = _softmax(X)
    t.close(gx, y * (gy - (gy * y).sum(axis=-1, keepdims=True)), "grad(MySoftmax()(x), x, gy)", gy=gy)


@visible("5.3", hint="softmax(x) = softmax(x - c) for any c: exp of a large logit overflows to inf, and "
                     "inf / inf is nan; shift the logits so that the largest exponent is 0")
def softmax_of_large_logits(t):
    _softmax_at(t, np.array([[1000.0, 1000.0, -1000.0], [-1000.0, 0.0, 800.0]]))


def _softmax_at(t, x):
    """MySoftmax()(x) against the stable softmax, with NumPy's warnings off: the value decides."""
    t.given(f"x = {x.tolist()}")
    with np.errstate(all="ignore"):
        y = t.ns.MySoftmax()(mg.Variable(x))
    t.close(y, _softmax(x), "MySoftmax()(x)")


@visible("5.3", higher="the rule's result is differentiated again: build it with minigrad functions on the "
                       "Variables y and gy, never on .data")
def softmax_rule_is_differentiable(t):
    t.given(f"x = {X.tolist()}")
    t.gradcheck(lambda v: t.ns.MySoftmax()(v), [X], 2, "derivatives of softmax")


@visible("5.3", hint=EACH_ROW)
def softmax_of_rows_of_different_scales(t):
    _softmax_at(t, ROWS_APART)


@visible("5.3", hint="the softmax runs along the last axis whatever the number of axes: an axis written as a "
                     "fixed number (0, 1) is right for one number of axes only")
def softmax_along_the_last_of_three_axes(t):
    rng = np.random.default_rng(8)
    x, gy = rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 4, 3))
    t.given("x of shape (2, 4, 3), random (seed 8): a softmax over the last axis, of length 3")
    v = mg.Variable(x)
    y = t.ns.MySoftmax()(v)
    t.close(y, _softmax(x), "MySoftmax()(x)")
    t.given("x and grad_outputs gy of shape (2, 4, 3), random (seed 8)")
    (gx,) = mg.grad(y, v, grad_outputs=gy)
    s = _softmax(x)
    t.close(gx, s * (gy - (gy * s).sum(axis=-1, keepdims=True)), "grad(MySoftmax()(x), x, gy)", gy=gy)


@visible("5.4", hint="log sum_j exp(x_j) = m + log sum_j exp(x_j - m) for any m: choose m so that no exp "
                     "overflows")
def loss_of_logits_far_apart(t):
    x = np.array([[1000.0, 0.0, -5.0], [0.0, 1000.0, 999.0]])
    t.given(f"x = {x.tolist()}, t = [0, 0]")
    with np.errstate(all="ignore"):  # the value decides, not a warning
        loss = t.ns.MySoftmaxCrossEntropy([0, 0])(mg.Variable(x))
    t.close(loss, (0.0 + 1000.0 + np.log1p(np.exp(-1.0))) / 2, "the loss")


@visible("5.4", hint=EACH_ROW)
def loss_of_rows_of_different_scales(t):
    t.given(f"x = {ROWS_APART.tolist()}, t = [0, 0]")
    with np.errstate(all="ignore"):  # the value decides, not a warning
        loss = t.ns.MySoftmaxCrossEntropy([0, 0])(mg.Variable(ROWS_APART))
    t.close(loss, np.log1p(np.exp(-1.0)), "the loss")  # each row: log(e^0 + e^-1) - 0


@visible("5.4", hint="mean over the batch of -log softmax(x)[i, t_i]")
def loss_value(t):
    t.given(f"x = {X.tolist()}, t = {T}")
    expected = -np.log(_softmax(X)[np.arange(2), T]).mean()
    t.close(t.ns.MySoftmaxCrossEntropy(T)(mg.Variable(X)), expected, "MySoftmaxCrossEntropy(t)(x)")


@visible("5.4", hint="the rule multiplies the incoming gradient by dL/dx, derived in lesson 5; the loss is a "
                     "mean over the N samples")
def loss_gradient(t):
    gy = 3.0  # not 1, so that a rule that forgets gy shows it
    t.given(f"x = {X.tolist()}, t = {T}, grad_outputs = {gy}")
    v = mg.Variable(X)
    (gx,) = mg.grad(t.ns.MySoftmaxCrossEntropy(T)(v), v, grad_outputs=gy)
    t.close(gx, (_softmax(X) - np.eye(3)[T]) * gy / 2, "grad(loss, x, grad_outputs=3.0)", gy=gy)


@visible("5.4", hint="compute the softmax in the rule with minigrad functions on the Variable x (this notebook "
                     "has one), and the one-hot matrix as a constant Variable")
def the_gradient_can_be_differentiated_again(t):
    t.given(f"x = {X.tolist()}, t = {T}")
    v = mg.Variable(X)
    (gx,) = mg.grad(t.ns.MySoftmaxCrossEntropy(T)(v), v, create_graph=True)
    t.differentiable(gx, v, "grad(loss, x, create_graph=True)",
                     "the rule computed the softmax from x.data or with NumPy")
