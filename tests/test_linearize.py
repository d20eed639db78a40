"""func.linearize, func.linear_transpose, the transpose table, and vjp(method="transpose").

- The table walk: every Function with a transpose rule passes the dot-product
  test <L t, u> = <t, L^T u> at shapes drawn at random, in float32 and float64,
  where L t is computed by the Functions' forward passes (NumPy) and L^T u by
  the transpose rules alone; every other registered Function is refused.
- linearize's f_jvp equals func.jvp on every case of tests/cases.py, and calls
  neither f nor the forward pass of any Function that has no transpose rule.
- vjp(method="transpose") equals vjp through the backward rules on every case,
  and so do their derivatives (order 2); it transposes the graph linearize
  recorded, so its matrix products are counted: f's, the forward rules', and
  as many as the backward pass runs.
"""

import gc

import math
import weakref
import zlib

import numpy as np
import pytest

import minigrad as mg
import minigrad.functions as F
from minigrad import Function, backward_functions, func, transpose_functions
from minigrad.core import rules
from minigrad.functions.affine import Affine
from minigrad.functions.classification import SoftmaxCrossEntropyGrad
from minigrad.functions.conv import ConvolutionDataGrad, ConvolutionFilterGrad
from minigrad.functions.elementwise import TanhGrad
from minigrad.functions.linalg import MatMul
from minigrad.functions.pooling import AveragePoolingBackward, MaxPooling, MaxPoolingBackward
from minigrad.functions.reduction import MeanGrad
from minigrad.functions.shape import GetItemGrad
from cases import CASES

DTYPES = (np.float32, np.float64)
DRAWS = 4  # random shapes per Function and dtype


# ---- random instances of every linear Function: (L, the arrays L is linear in) ----
def _shape(rng, ndim=None, low=1, high=4):
    ndim = int(rng.integers(0, 4)) if ndim is None else ndim
    return tuple(int(s) for s in rng.integers(low, high + 1, ndim))


def _partner(rng, shape):
    """A shape that broadcasts with ``shape``: a suffix of it, some axes set to 1."""
    tail = shape[int(rng.integers(0, len(shape) + 1)):]
    return tuple(1 if rng.random() < 0.3 else s for s in tail)


def _axis(rng, ndim):
    """None, one axis (maybe negative) or a tuple of axes of ``ndim``."""
    if ndim == 0 or rng.random() < 0.25:
        return None
    axes = tuple(int(a) for a in rng.choice(ndim, int(rng.integers(1, ndim + 1)), replace=False))
    return axes[0] - ndim if len(axes) == 1 and rng.random() < 0.5 else axes


def _conv_geometry(rng):
    """(x shape, W shape, pad, stride, dilation) that fit together."""
    n, c, o = (int(v) for v in rng.integers(1, 3, 3))
    kh, kw = (int(v) for v in rng.integers(1, 4, 2))
    pad, stride, dilation = (tuple(int(v) for v in rng.integers(lo, hi, 2)) for lo, hi in ((0, 2), (1, 3), (1, 3)))
    h = (kh - 1) * dilation[0] + 1 + int(rng.integers(0, 4))
    w = (kw - 1) * dilation[1] + 1 + int(rng.integers(0, 4))
    return (n, c, h, w), (o, c, kh, kw), pad, stride, dilation


def _conv_out(x_shape, W_shape, pad, stride, dilation):
    return (x_shape[0], W_shape[0]) + tuple(
        (s + 2 * p - d * (k - 1) - 1) // st + 1
        for s, k, p, st, d in zip(x_shape[2:], W_shape[2:], pad, stride, dilation))


def _pool_geometry(rng):
    kernel = tuple(int(v) for v in rng.integers(1, 4, 2))
    stride = tuple(int(v) for v in rng.integers(1, 3, 2))
    pad = tuple(int(rng.integers(0, k)) for k in kernel)
    x_shape = _shape(rng, 2, 1, 2) + tuple(k + int(rng.integers(0, 4)) for k in kernel)
    return x_shape, kernel, stride, pad


def _index(rng, shape):
    """A key into an array of ``shape``: basic (slices, ints) or advanced (integer arrays, repeats)."""
    if rng.random() < 0.5:
        return tuple(slice(int(rng.integers(0, s)), None) if rng.random() < 0.6 else int(rng.integers(0, s))
                     for s in shape)
    picks = rng.integers(0, shape[0], int(rng.integers(1, 2 * shape[0] + 2)))  # repeats likely
    return (np.asarray(picks),) + tuple(slice(None) for _ in shape[1:])


def _instances():
    """{Function name: draw(rng, dtype) -> list of (L, arrays)}: one entry per way it is linear."""
    def c(rng, shape, dtype):
        return mg.Variable(rng.standard_normal(shape).astype(dtype), requires_grad=False)

    def n(rng, shape, dtype):
        return rng.standard_normal(shape).astype(dtype)

    def elementwise2(op):
        def draw(rng, dt):
            a = _shape(rng)
            b = _partner(rng, a) if rng.random() < 0.5 else a
            a, b = (b, a) if rng.random() < 0.5 else (a, b)
            return [(op, [n(rng, a, dt), n(rng, b, dt)])]
        return draw

    def scaled(op, away=False):
        def draw(rng, dt):
            a = _shape(rng)
            b = _partner(rng, a)
            k = mg.Variable(rng.choice([-1, 1], b).astype(dt) * rng.uniform(0.5, 2, b).astype(dt),
                            requires_grad=False) if away else c(rng, b, dt)
            return [(lambda t: op(t, k), [n(rng, a, dt)])] + ([(lambda t: op(k, t), [n(rng, a, dt)])]
                                                             if not away else [])
        return draw

    def unary(op):
        return lambda rng, dt: [(op, [n(rng, _shape(rng), dt)])]

    def reduce(op):
        def draw(rng, dt):
            s = _shape(rng, int(rng.integers(1, 4)))
            axis, keep = _axis(rng, len(s)), bool(rng.random() < 0.5)
            return [(lambda t: op(t, axis=axis, keepdims=keep), [n(rng, s, dt)])]
        return draw

    def cumsum(rng, dt):
        s = _shape(rng, int(rng.integers(1, 4)))
        axis = int(rng.integers(-len(s), len(s)))
        return [(lambda t: F.cumsum(t, axis=axis), [n(rng, s, dt)])]

    def reshape(rng, dt):
        s = _shape(rng)
        new = tuple(rng.permutation(list(s) + [1])) if s else (1, 1)
        return [(lambda t: F.reshape(t, new), [n(rng, s, dt)])]

    def transpose(rng, dt):
        s = _shape(rng, int(rng.integers(1, 4)))
        axes = tuple(int(a) - (len(s) if rng.random() < 0.3 else 0) for a in rng.permutation(len(s)))
        return [(lambda t: F.transpose(t, axes), [n(rng, s, dt)])]

    def broadcast_to(rng, dt):
        big = _shape(rng, int(rng.integers(1, 4)))
        return [(lambda t: F.broadcast_to(t, big), [n(rng, _partner(rng, big), dt)])]

    def sum_to(rng, dt):
        big = _shape(rng, int(rng.integers(1, 4)))
        small = _partner(rng, big)
        return [(lambda t: F.sum_to(t, small), [n(rng, big, dt)])]

    def getitem(rng, dt):
        s = _shape(rng, int(rng.integers(1, 4)))
        key = _index(rng, s)
        return [(lambda t: F.getitem(t, key), [n(rng, s, dt)])]

    def getitem_grad(rng, dt):
        s = _shape(rng, int(rng.integers(1, 4)))
        key = _index(rng, s)
        picked = np.zeros(s)[key].shape
        return [(lambda t: GetItemGrad(key, s)(t), [n(rng, picked, dt)])]

    def concatenate(rng, dt):
        s = _shape(rng, int(rng.integers(1, 4)))
        axis = int(rng.integers(0, len(s)))
        shapes = [s[:axis] + (int(rng.integers(1, 4)),) + s[axis + 1:] for _ in range(int(rng.integers(1, 4)))]
        k = c(rng, shapes[0], dt) * 0  # a constant zero among them: t enters linearly still
        return [(lambda *ts: F.concatenate(list(ts), axis=axis), [n(rng, sh, dt) for sh in shapes]),
                (lambda t: F.concatenate(t, k, axis=axis), [n(rng, shapes[0], dt)])]

    def where(rng, dt):
        a = _shape(rng)
        b = _partner(rng, a)
        cond = rng.random(a) < 0.5
        zero = c(rng, b, dt) * 0
        return [(lambda t0, t1: F.where(cond, t0, t1), [n(rng, a, dt), n(rng, b, dt)]),
                (lambda t: F.where(cond, zero, t), [n(rng, a, dt)])]

    def cast(rng, dt):
        other = np.float64 if dt == np.float32 else np.float32
        return [(lambda t: F.cast(t, other), [n(rng, _shape(rng), dt)])]

    def matmul(rng, dt):
        m, k, p = (int(v) for v in rng.integers(1, 4, 3))
        batch = _shape(rng, int(rng.integers(0, 2)))
        ta, tb = bool(rng.random() < 0.5), bool(rng.random() < 0.5)
        a = batch + ((k, m) if ta else (m, k))
        b = (p, k) if tb else (k, p)
        if rng.random() < 0.25:  # a vector operand, never transposed
            a, ta = (k,), False
        A, B = c(rng, a, dt), c(rng, b, dt)
        return [(lambda t: F.matmul(t, B, ta, tb), [n(rng, a, dt)]),
                (lambda t: F.matmul(A, t, ta, tb), [n(rng, b, dt)])]

    def affine(rng, dt):
        N, i, o = (int(v) for v in rng.integers(1, 4, 3))
        x, W = c(rng, (N, i), dt), c(rng, (i, o), dt)
        return [(lambda t, tb: F.affine(t, W, tb), [n(rng, (N, i), dt), n(rng, (o,), dt)]),
                (lambda t, tb: F.affine(x, t, tb), [n(rng, (i, o), dt), n(rng, (o,), dt)]),
                (lambda t: F.affine(t, W), [n(rng, (N, i), dt)])]

    def convolution(rng, dt):
        xs, ws, pad, stride, dil = _conv_geometry(rng)
        x, W = c(rng, xs, dt), c(rng, ws, dt)

        def conv(a, w, b=None):
            return F.convolution(a, w, b, pad, stride, dil)
        return [(lambda t, tb: conv(t, W, tb), [n(rng, xs, dt), n(rng, ws[:1], dt)]),
                (lambda t: conv(x, t), [n(rng, ws, dt)])]

    def conv_grad(which):
        """ConvolutionDataGrad(gy, W) or ConvolutionFilterGrad(x, gy): bilinear, each side moving in turn."""
        def draw(rng, dt):
            xs, ws, pad, stride, dil = _conv_geometry(rng)
            ys = _conv_out(xs, ws, pad, stride, dil)
            shapes = (ys, ws) if which is ConvolutionDataGrad else (xs, ys)
            a, b = (c(rng, s, dt) for s in shapes)
            G = which(xs if which is ConvolutionDataGrad else ws, pad, stride, dil)
            return [(lambda t: G(t, b), [n(rng, shapes[0], dt)]), (lambda t: G(a, t), [n(rng, shapes[1], dt)])]
        return draw

    def mean_grad(rng, dt):
        s = _shape(rng, int(rng.integers(1, 4)))
        axis, keep = _axis(rng, len(s)), bool(rng.random() < 0.5)
        gy = np.zeros(s).sum(axis=axis, keepdims=keep).shape
        return [(lambda t: MeanGrad(axis, keep, s)(t), [n(rng, gy, dt)])]

    def average_pooling(rng, dt):
        xs, kernel, stride, pad = _pool_geometry(rng)
        return [(lambda t: F.average_pooling(t, kernel, stride, pad), [n(rng, xs, dt)])]

    def average_pooling_backward(rng, dt):
        xs, kernel, stride, pad = _pool_geometry(rng)
        ys = F.average_pooling(np.zeros(xs), kernel, stride, pad).shape
        return [(lambda t: AveragePoolingBackward(xs, kernel, stride, pad)(t), [n(rng, ys, dt)])]

    def max_pooling_backward(rng, dt):
        xs, kernel, stride, pad = _pool_geometry(rng)
        pool = MaxPooling(kernel, stride, pad)
        ys = pool.forward(rng.permutation(math.prod(xs)).reshape(xs).astype(dt)).shape  # no ties
        return [(lambda t: MaxPoolingBackward(pool.indexes, xs)(t), [n(rng, ys, dt)])]

    def tanh_grad(rng, dt):
        s = _shape(rng)
        y = c(rng, s, dt)
        return [(lambda t: TanhGrad()(y, t), [n(rng, s, dt)])]

    def sce_grad(rng, dt):
        N, C = (int(v) for v in rng.integers(1, 4, 2))
        x, labels = c(rng, (N, C), dt), rng.integers(0, C, (N, 1))
        return [(lambda t: SoftmaxCrossEntropyGrad(labels, 1)(x, t), [n(rng, (N, 1), dt)])]

    return {
        "Add": elementwise2(F.add), "Sub": elementwise2(F.sub), "Neg": unary(F.neg),
        "Mul": scaled(F.mul), "Div": scaled(F.div, away=True),
        "Identity": unary(F.identity), "Cast": cast,
        "Sum": reduce(F.sum), "Mean": reduce(F.mean), "MeanGrad": mean_grad, "CumSum": cumsum,
        "Reshape": reshape, "Transpose": transpose, "BroadcastTo": broadcast_to, "SumTo": sum_to,
        "GetItem": getitem, "GetItemGrad": getitem_grad, "Concatenate": concatenate, "Where": where,
        "MatMul": matmul, "Affine": affine, "Convolution": convolution,
        "ConvolutionDataGrad": conv_grad(ConvolutionDataGrad),
        "ConvolutionFilterGrad": conv_grad(ConvolutionFilterGrad),
        "AveragePooling": average_pooling, "AveragePoolingBackward": average_pooling_backward,
        "MaxPoolingBackward": max_pooling_backward, "TanhGrad": tanh_grad, "SoftmaxCrossEntropyGrad": sce_grad,
    }


INSTANCES = _instances()


def library_rules(table):
    return [key for key in table.registered()
            if "." not in key and getattr(table.rules[key], "__module__", "").startswith("minigrad.")]


def test_every_transpose_rule_has_random_instances():
    assert sorted(INSTANCES) == sorted(library_rules(transpose_functions.table))


def _creators(y):
    """The names of the Functions in the graph behind Variable y."""
    names, stack, seen = set(), [y.node], set()
    while stack:
        node = stack.pop()
        f = node.creator
        if f is None or f in seen:
            continue
        seen.add(f)
        names.add(f.name)
        stack.extend(f.parents())
    return names


def _dot(a, b):
    return float(np.sum(np.asarray(a, dtype=np.float64) * np.asarray(b, dtype=np.float64)))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_dot_product_test(name, dtype):
    """<L t, u> = <t, L^T u>: L t by the forward passes, L^T u by linear_transpose and the rules alone."""
    rng = np.random.default_rng(zlib.crc32(f"{name} {np.dtype(dtype).name}".encode()))
    checked = 0
    for _ in range(DRAWS):
        for L, ts in INSTANCES[name](rng, dtype):
            with mg.no_grad():
                y = L(*[mg.Variable(t) for t in ts])
            u = rng.standard_normal(y.shape).astype(y.dtype)
            traced = L(*[mg.Variable(t) for t in ts])
            assert name in _creators(traced), f"the instance of {name} does not call {name}"
            f_t = func.linear_transpose(L, *ts)
            gs = f_t(u)
            assert len(gs) == len(ts)
            for g, t in zip(gs, ts):
                assert g.shape == t.shape and g.dtype == t.dtype, (g.shape, t.shape, g.dtype, t.dtype)
            tol = 2e-6 if np.float32 in (dtype, y.dtype) else 1e-13  # (Cast rounds float64 to float32)
            left = _dot(y.data, u)
            right = sum(_dot(t, g.data) for t, g in zip(ts, gs))
            scale = np.sqrt(sum(_dot(t, t) for t in ts) * _dot(u, u)) + 1e-30
            assert abs(left - right) <= tol * scale * 10, (name, left, right)
            checked += 1
    assert checked >= DRAWS


def test_a_wrong_transpose_rule_fails_the_dot_product_test():
    """The test can fail: a transpose of sum_to that doubles gives the wrong inner product."""
    original = transpose_functions.lookup("SumTo")
    try:
        transpose_functions.register("SumTo", lambda ctx, u: F.broadcast_to(u, ctx.inputs[0].shape) * 2)
        t = np.arange(6.0).reshape(2, 3)
        (g,) = func.linear_transpose(lambda v: F.sum_to(v, (1, 3)), t)(np.ones((1, 3)))
        assert not np.isclose(_dot(F.sum_to(mg.Variable(t), (1, 3)).data, np.ones((1, 3))), _dot(t, g.data))
    finally:
        transpose_functions.register("SumTo", original)


# ---- every other Function is refused ----
NONLINEAR = sorted(set(library_rules(backward_functions.table)) - set(library_rules(transpose_functions.table)))


def test_the_nonlinear_functions_are_the_expected_ones():
    assert NONLINEAR == sorted([
        "Abs", "Clip", "Cos", "Exp", "Log", "LogSoftmax", "LogSumExp", "Max", "MaxPooling", "Maximum", "Min",
        "Minimum", "Pow", "PowScalar", "ReLU", "Sigmoid", "Sin", "Softmax", "SoftmaxCrossEntropy", "Sqrt",
        "Square", "Tanh", "Log1p", "Expm1", "Erf", "Sign", "Floor", "Ceil", "Prod"])


@pytest.mark.parametrize("case", [c for c in CASES if c.name in NONLINEAR], ids=lambda c: c.id)
def test_a_nonlinear_function_is_refused(case):
    expected = rf"not linear in its arguments: {case.name} is applied to input \d.*{case.name} is\s+not linear"
    with np.errstate(all="ignore"), pytest.raises(TypeError, match=expected):
        func.linear_transpose(case.f, *case.inputs())


PRODUCTS = {"Mul": "Mul", "MatMul": "MatMul", "Affine": "Affine", "Convolution": "Convolution",
            "ConvolutionDataGrad": "ConvolutionDataGrad", "ConvolutionFilterGrad": "ConvolutionFilterGrad"}


@pytest.mark.parametrize("case", [c for c in CASES if c.name in PRODUCTS], ids=lambda c: c.id)
def test_a_product_of_two_arguments_is_refused(case):
    with pytest.raises(TypeError, match=rf"{case.name} multiplies its inputs 0 and 1, and both depend"):
        func.linear_transpose(case.f, *case.inputs())


@pytest.mark.parametrize("f, message", [
    (lambda a, b: F.div(a, b), "Div is not linear in its input 1"),
    (lambda a, b: TanhGrad()(a, b), "TanhGrad is not linear in its input 0"),
    (lambda a, b: a + 1.0, "Add takes input 1, a constant that is not zero"),
    (lambda a, b: F.concatenate(a, np.ones((2, 3))), "Concatenate takes input 1, a constant that is not zero"),
    (lambda a, b: mg.Variable(np.ones(3)), "output 0 of f_lin does not depend on its arguments and is not zero"),
    (lambda a, b: F.sin(F.reshape(a * 2.0, (3, 2))) + F.transpose(b), "Sin is applied to input 0"),
])
def test_what_is_not_linear_is_named(f, message):
    with np.errstate(all="ignore"), pytest.raises(TypeError, match=message):
        func.linear_transpose(f, np.ones((2, 3)), np.ones((2, 3)))


def test_a_constant_zero_output_transposes_to_zeros():
    (g,) = func.linear_transpose(lambda t: mg.Variable(np.zeros(2)), np.ones(3))(np.ones(2))
    np.testing.assert_array_equal(g.data, np.zeros(3))


# ---- linearize ----
def _nonlinear_classes():
    """Every Function class whose rule key has no transpose rule: their forward must not run in f_jvp."""
    found, stack = [], [Function]
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if cls.__module__.startswith("minigrad.") and cls.rule_key in backward_functions.table.rules \
                and cls.rule_key not in transpose_functions.table.rules:
            found.append(cls)
    return found


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_f_jvp_replays_linear_operations_only(case, monkeypatch):
    arrays = case.inputs()
    rng = np.random.default_rng(3)
    calls = []

    def f(*xs):
        calls.append(1)
        return case.f(*xs)

    y, f_jvp = func.linearize(f, *arrays)
    assert len(calls) == 1
    ts = [rng.standard_normal(a.shape) for a in arrays]
    _, expected = func.jvp(case.f, tuple(mg.Variable(a) for a in arrays), tuple(mg.Variable(t) for t in ts))

    def refuse(self, *xs):
        raise AssertionError(f"f_jvp ran the forward pass of {self.name}, which is not linear")

    for cls in _nonlinear_classes():
        monkeypatch.setattr(cls, "forward", refuse)
    got = f_jvp(*ts)
    again = f_jvp(*[2 * t for t in ts])
    monkeypatch.undo()
    assert len(calls) == 1, "f_jvp called f"
    np.testing.assert_allclose(got.data, expected.data, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(again.data, 2 * expected.data, rtol=1e-10, atol=1e-12)


def test_linearize_is_the_first_order_of_f():
    """Independent of the forward rules' own tests: J t against central differences of f."""
    def f(x, W):
        return F.sum(F.tanh(F.matmul(F.sin(x), W)) ** 2, axis=1)

    rng = np.random.default_rng(0)
    x, W, tx, tW = (rng.standard_normal(s) for s in ((2, 3), (3, 4), (2, 3), (3, 4)))
    y, f_jvp = func.linearize(f, x, W)
    h = 1e-6
    with mg.no_grad():
        numeric = (f(x + h * tx, W + h * tW).data - f(x - h * tx, W - h * tW).data) / (2 * h)
    np.testing.assert_allclose(f_jvp(tx, tW).data, numeric, rtol=1e-6)
    np.testing.assert_allclose(y.data, f(mg.Variable(x), mg.Variable(W)).data)
    np.testing.assert_allclose(f_jvp(tx, None).data + f_jvp(None, tW).data, f_jvp(tx, tW).data, rtol=1e-12)


def test_f_jvp_checks_its_tangents():
    _, f_jvp = func.linearize(F.sin, np.ones(3))
    with pytest.raises(ValueError, match=r"f_jvp: tangents\[0\] has shape \(2,\) but primals\[0\] has shape \(3,\)"):
        f_jvp(np.ones(2))
    with pytest.raises(ValueError, match=r"f_jvp: tangents has 2 entries but primals has 1; give one per primal"):
        f_jvp(np.ones(3), np.ones(3))


def test_f_jvp_is_differentiable_in_the_primals():
    """d/dx [f_jvp(t)] for f = sin: d(cos(x) t)/dx = -sin(x) t, through the constant cos(x)."""
    x = mg.Variable(np.array([0.3, 1.2]))
    t = np.array([2.0, -1.0])
    _, f_jvp = func.linearize(F.sin, x)
    (g,) = mg.grad(F.sum(f_jvp(t)), x)
    np.testing.assert_allclose(g.data, -np.sin(x.data) * t)


def test_under_no_grad_the_results_are_constants():
    x = mg.Variable(np.array([0.3, 1.2]))
    with mg.no_grad():
        y, f_jvp = func.linearize(F.sin, x)
        ty = f_jvp(np.ones(2))
        (g,) = func.linear_transpose(f_jvp, x)(np.ones(2))
    assert y.creator is None and ty.creator is None and g.creator is None
    np.testing.assert_allclose(ty.data, np.cos(x.data))
    np.testing.assert_allclose(g.data, np.cos(x.data))


def test_several_outputs_and_inputs():
    def f(a, b):
        return F.sin(a) * b, F.sum(a, axis=0)

    rng = np.random.default_rng(1)
    a, b, ua, ub = (rng.standard_normal(s) for s in ((2, 3), (3,), (2, 3), (3,)))
    (y0, y1), f_jvp = func.linearize(f, a, b)
    f_t = func.linear_transpose(f_jvp, a, b)
    ga, gb = f_t(ua, ub)
    ga2, gb2 = f_t((ua, ub))
    np.testing.assert_allclose(ga.data, np.cos(a) * b * ua + ub)
    np.testing.assert_allclose(gb.data, (np.sin(a) * ua).sum(0))
    np.testing.assert_array_equal(ga.data, ga2.data)
    np.testing.assert_array_equal(gb.data, gb2.data)


# ---- vjp by transposition = vjp by the backward rules, to order 2 ----
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_transposed_vjp_equals_the_backward_vjp(case):
    arrays = case.inputs()
    xs = [mg.Variable(a) for a in arrays]
    rng = np.random.default_rng(4)
    y, by_backward = func.vjp(case.f, *xs)
    y2, by_transpose = func.vjp(case.f, *xs, method="transpose")
    np.testing.assert_array_equal(y.data, y2.data)
    u = mg.Variable(rng.standard_normal(y.shape))
    expected, got = by_backward(u), by_transpose(u)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g.data, e.data, rtol=1e-10, atol=1e-12)
    ws = [rng.standard_normal(a.shape) for a in arrays]  # order 2: d<vjp(u), w>/dx, both ways

    def second(gs):
        s = sum(((g * w).sum() for g, w in zip(gs, ws)), start=mg.Variable(0.0))
        return mg.grad(s, xs, materialize_grads=True)

    for g, e in zip(second(got), second(expected)):
        np.testing.assert_allclose(g.data, e.data, rtol=1e-9, atol=1e-12)


def test_transposed_vjp_against_closed_forms():
    """Independent of the backward table: J^T u of x -> sin(x) W, and its derivative in x."""
    rng = np.random.default_rng(2)
    x = mg.Variable(rng.standard_normal((2, 3)))
    W = rng.standard_normal((3, 4))
    u = rng.standard_normal((2, 4))
    _, vjp_fn = func.vjp(lambda a: F.matmul(F.sin(a), W), x, method="transpose")
    (g,) = vjp_fn(u)
    np.testing.assert_allclose(g.data, np.cos(x.data) * (u @ W.T))
    (h,) = mg.grad(F.sum(g), x)
    np.testing.assert_allclose(h.data, -np.sin(x.data) * (u @ W.T))


# ---- what the transposed VJP costs: the graph linearize recorded, walked back once ----
def _products(run, monkeypatch):
    """(run's result, how many matrix products it ran: forward calls of MatMul and Affine)."""
    count = [0]
    for cls in (MatMul, Affine):
        def counting(self, *arrays, forward=cls.forward):
            count[0] += 1
            return forward(self, *arrays)
        monkeypatch.setattr(cls, "forward", counting)
    result = run()
    monkeypatch.undo()
    return result, count[0]


@pytest.mark.parametrize("depth", [1, 3])
def test_the_transposed_vjp_runs_as_many_products_as_the_backward_pass(depth, monkeypatch):
    """An MLP of ``depth`` layers, x -> tanh(affine(x, W, b)), the weights constants: the backward pass runs
    one product a layer (x's gradient), and so must the transpose of the linearization. linearize runs f's
    products and the forward rules' (tx W, once, on the placeholder that records it); linear_transpose runs
    none (it walks the recorded graph instead of calling f_jvp again, which would run one a layer)."""
    rng = np.random.default_rng(5)
    layers = [(rng.standard_normal((4, 4)), rng.standard_normal(4)) for _ in range(depth)]
    x, u = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))

    def f(h):
        for W, b in layers:
            h = F.tanh(F.affine(h, W, b))
        return h

    xv = mg.Variable(x)
    y, f_calls = _products(lambda: f(xv), monkeypatch)
    (expected,), backward = _products(lambda: mg.grad(y, xv, grad_outputs=u), monkeypatch)
    assert (f_calls, backward) == (depth, depth)
    (_, f_jvp), linearizing = _products(lambda: func.linearize(f, x), monkeypatch)
    f_t, tracing = _products(lambda: func.linear_transpose(f_jvp, x), monkeypatch)
    (got,), transposing = _products(lambda: f_t(u), monkeypatch)
    assert (linearizing, tracing, transposing) == (2 * depth, 0, backward)
    np.testing.assert_allclose(got.data, expected.data, rtol=1e-12, atol=1e-14)
    (_, vjp_fn), making = _products(lambda: func.vjp(f, x, method="transpose"), monkeypatch)
    (got,), walking = _products(lambda: vjp_fn(u), monkeypatch)
    assert (making, walking) == (2 * depth, backward), "vjp(method='transpose') runs more products than " \
        "f, the forward rules and the backward pass: does it call f_jvp again?"
    np.testing.assert_allclose(got.data, expected.data, rtol=1e-12, atol=1e-14)


def test_linear_transpose_of_f_jvp_does_not_call_it():
    """f_jvp's linear graph is walked as linearize recorded it; at other shapes than its primals' f_jvp is
    called, and says why it refuses them."""
    calls = []
    x = np.array([0.3, 1.2])
    _, f_jvp = func.linearize(F.sin, x)

    def counted(*ts):
        calls.append(1)
        return f_jvp(*ts)

    counted.linear_graph = f_jvp.linear_graph  # what linearize's f_jvp carries
    (g,) = func.linear_transpose(counted, x)(np.ones(2))
    assert calls == []
    np.testing.assert_allclose(g.data, np.cos(x))
    with pytest.raises(ValueError, match=r"f_jvp: tangents\[0\] has shape \(3,\) but primals\[0\] has shape"):
        func.linear_transpose(counted, np.ones(3))
    assert calls == [1]


def test_under_no_grad_the_linear_graph_keeps_nothing_of_f():
    """The linear graph made under no_grad() holds its constants detached: f's graph is freed at once."""
    kept = []

    def f(a):
        h = F.tanh(F.matmul(a, np.eye(2)))
        kept.append(weakref.ref(h.creator))
        return F.sin(h)

    x = np.array([[0.3, 1.2]])
    with mg.no_grad():
        _, vjp_fn = func.vjp(f, x, method="transpose")
        (g,) = vjp_fn(np.ones((1, 2)))
    gc.collect()
    assert kept[0]() is None, "the linear graph keeps f's graph alive"
    h = np.tanh(x)
    np.testing.assert_allclose(g.data, np.cos(h) * (1 - h ** 2))
    u = mg.Variable(np.ones((1, 2)))
    (g2,) = vjp_fn(u)  # grad mode on now: a graph of u alone, J^T u, whose gradient by u is J^T 1
    np.testing.assert_allclose(g2.data, g.data)
    np.testing.assert_allclose(mg.grad(F.sum(g2), u)[0].data, g.data)


def test_has_aux():
    x = np.array([0.5, 1.0])
    y, f_jvp, aux = func.linearize(lambda a: (F.sin(a), "aux"), x, has_aux=True)
    assert aux == "aux"
    np.testing.assert_allclose(f_jvp(np.ones(2)).data, np.cos(x))
    y, vjp_fn, aux = func.vjp(lambda a: (F.sin(a), 3), x, method="transpose", has_aux=True)
    assert aux == 3
    np.testing.assert_allclose(vjp_fn(np.ones(2))[0].data, np.cos(x))
    with pytest.raises(TypeError, match="linearize: with has_aux=True, f must return a pair"):
        func.linearize(F.sin, x, has_aux=True)


def test_the_refusal_is_a_type_error_and_a_value_error():
    for kind in (TypeError, ValueError, transpose_functions.NotLinearError):
        with pytest.raises(kind, match="Sin is applied to input 0"):
            func.linear_transpose(F.sin, np.ones(2))


def test_a_constant_behind_a_freed_graph():
    """A value computed before (its graph freed by a backward pass) is a constant of the linear graph."""
    x = mg.Variable(np.array([0.5, 1.0]))
    y = F.sin(x)
    F.sum(y).backward()
    _, f_jvp = func.linearize(lambda a: F.exp(y) * a, x)
    np.testing.assert_allclose(f_jvp(np.ones(2)).data, np.exp(np.sin(x.data)))
    (g,) = func.linear_transpose(lambda t: y * t, x)(np.ones(2))
    np.testing.assert_allclose(g.data, np.sin(x.data))


def test_vjp_method_is_checked():
    with pytest.raises(ValueError, match="vjp: method='transposed' is not one of 'backward'"):
        func.vjp(F.sin, np.ones(2), method="transposed")


def test_the_four_tables_share_one_contract():
    assert transpose_functions.table in rules.tables
    assert transpose_functions.table.per == "input"
