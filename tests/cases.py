"""One table of test cases for every registered function, shared by the cross-checks.

A case names the Function it exercises (its registry name), a minigrad
callable, the shapes of its inputs, how to draw them, and its PyTorch twin.
``tests/test_gradcheck_registry.py`` checks each case against central
differences and ``tests/test_oracle.py`` against ``torch.autograd.grad``.
A test walks ``registered()`` and fails for a function without a case.

Points are drawn away from kinks and ties, where a derivative does not
exist and central differences straddle two slopes: |x| >= 0.2 for relu and
abs, values 0.1 apart for max and pooling. ``smooth`` says whether the
function is differentiable everywhere in its domain (then third derivatives
are checked too); the piecewise-linear ones are checked to second order.
"""

from dataclasses import dataclass, field

import numpy as np

import minigrad.functions as F
from minigrad.cuda import get_array_module
from minigrad.functions.conv import ConvolutionDataGrad, ConvolutionFilterGrad
from minigrad.functions.classification import SoftmaxCrossEntropyGrad
from minigrad.functions.elementwise import TanhGrad
from minigrad.functions.reduction import MeanGrad
from minigrad.functions.pooling import AveragePoolingBackward, MaxPooling, MaxPoolingBackward
from minigrad.functions.shape import GetItemGrad


@dataclass
class Case:
    name: str  # the registry name (or the factory's name for a composite such as "mean")
    f: object  # minigrad: f(*Variables) -> Variable
    shapes: list  # the input shapes
    twin: object  # PyTorch: twin(torch, *tensors) -> tensor
    smooth: bool = True
    draw: object = None  # draw(rng, shape) -> array; standard normal when None
    draw_all: object = None  # draw_all(rng, shapes) -> arrays, for inputs drawn together
    label: str = field(default="")

    def inputs(self, seed=0):
        rng = np.random.default_rng(seed)
        if self.draw_all is not None:
            return [np.asarray(a, dtype=np.float64) for a in self.draw_all(rng, self.shapes)]
        draw = self.draw or (lambda r, s: r.standard_normal(s))
        return [np.asarray(draw(rng, s), dtype=np.float64) for s in self.shapes]

    @property
    def id(self):
        shapes = ",".join(str(s).replace(" ", "") for s in self.shapes)
        return f"{self.name}{'-' + self.label if self.label else ''}[{shapes}]"


# ---- domains ----
def positive(rng, shape):
    return rng.uniform(0.5, 2.0, shape)


def away_from_zero(rng, shape):
    return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.2, 1.5, shape)


def with_zeros(rng, shape):
    """Standard normal values, with one zero in the first column and two in the second (prod's cases)."""
    x = rng.standard_normal(shape)
    x[0, 0] = x[0, 1] = x[2, 1] = 0.0
    return x


def avoiding(*points, gap=0.1):
    """Standard normal values at least ``gap`` from each of ``points``."""
    def draw(rng, shape):
        x = rng.standard_normal(shape)
        for _ in range(100):
            close = np.any([np.abs(x - p) < gap for p in points], axis=0)
            if not close.any():
                return x
            x[close] = rng.standard_normal(int(close.sum()))
        raise RuntimeError("could not draw points away from the kinks")
    return draw


def distinct(rng, shapes):
    """Values 0.1 apart across all inputs: no ties anywhere, even after broadcasting."""
    sizes = [int(np.prod(s)) for s in shapes]
    pool = (rng.permutation(sum(sizes)) - sum(sizes) / 2) * 0.1 + rng.uniform(0, 0.01)
    arrays, start = [], 0
    for s, n in zip(shapes, sizes):
        arrays.append(pool[start:start + n].reshape(s))
        start += n
    return arrays


# ---- PyTorch twins of the gradient Functions: torch's own vector-Jacobian products ----
def vjp_twin(forward, x_shape, wrt=0, gy_at=0):
    """twin(torch, *inputs) = d<forward(...), gy>/d(forward's input ``wrt``), as a differentiable graph.

    ``gy`` is input ``gy_at``; the other inputs fill forward's other arguments, in order.
    """
    def twin(torch, *inputs):
        gy = inputs[gy_at]
        dummy = torch.zeros(x_shape, dtype=torch.float64, requires_grad=True)
        args = [a for i, a in enumerate(inputs) if i != gy_at]
        args.insert(wrt, dummy)
        return torch.autograd.grad(forward(torch, *args), dummy, gy, create_graph=True)[0]
    return twin


def conv_twin(pad, stride, dilation):
    return lambda torch, x, W, b=None: torch.nn.functional.conv2d(x, W, b, stride, pad, dilation)


def _max_pooling_case():
    """MaxPoolingBackward scatters gy to the winners of a fixed image x0 (0.1 apart: no ties)."""
    x0 = distinct(np.random.default_rng(5), [(1, 2, 5, 5)])[0]
    forward = MaxPooling((2, 2), (2, 2), (1, 1))
    forward.forward(x0)

    def twin(torch, gy):
        x = torch.tensor(x0, requires_grad=True)
        y = torch.nn.functional.max_pool2d(x, 2, 2, 1)
        return torch.autograd.grad(y, x, gy, create_graph=True)[0]
    return Case("MaxPoolingBackward", lambda gy: MaxPoolingBackward(forward.indexes, x0.shape)(gy),
                [(1, 2, 3, 3)], twin)


def _torch_pick(torch, key):
    return tuple(torch.tensor(k) if isinstance(k, np.ndarray) else k for k in key)


PICK = (np.array([0, 2, 0, 1]), slice(1, 3))  # row 0 is picked twice: its gradient adds up
COND = np.array([[True, False, True, False], [False, False, True, True], [True, True, False, True]])


def on_device_of(x, labels):
    """Integer labels on the device of Variable x, as softmax_cross_entropy puts them."""
    return get_array_module(x.data).asarray(labels)


def _sce_twin(torch, x, t):
    loss = torch.nn.functional.cross_entropy(x, torch.tensor(t).long(), reduction="none")
    return loss.unsqueeze(1)


LABELS = np.array([2, 0, 3])
LABELS_3D = np.array([[1, 0], [2, 2]])

CASES = [
    # arithmetic, with broadcasting
    Case("Add", F.add, [(3, 4), (3, 4)], lambda t, a, b: a + b),
    Case("Add", F.add, [(3, 1), (4,)], lambda t, a, b: a + b),
    Case("Add", F.add, [(2, 3), ()], lambda t, a, b: a + b),
    Case("Sub", F.sub, [(2, 1, 3), (4, 1)], lambda t, a, b: a - b),
    Case("Mul", F.mul, [(3, 4), (3, 4)], lambda t, a, b: a * b),
    Case("Mul", F.mul, [(4,), (3, 1)], lambda t, a, b: a * b),
    Case("Div", F.div, [(3, 4), (3, 4)], lambda t, a, b: a / b, draw=away_from_zero),
    Case("Div", F.div, [(3, 1), (4,)], lambda t, a, b: a / b, draw=away_from_zero),
    Case("Neg", F.neg, [(3, 4)], lambda t, a: -a),
    Case("PowScalar", lambda x: F.pow(x, 3), [(3, 4)], lambda t, a: a ** 3, label="3"),
    Case("PowScalar", lambda x: F.pow(x, 2.5), [(5,)], lambda t, a: a ** 2.5, draw=positive, label="2.5"),
    Case("PowScalar", lambda x: F.pow(x, -1.5), [(5,)], lambda t, a: a ** -1.5, draw=positive, label="-1.5"),
    Case("Pow", F.pow, [(3, 4), (3, 4)], lambda t, a, b: a ** b, draw=positive),
    Case("Pow", F.pow, [(3, 1), (4,)], lambda t, a, b: a ** b, draw=positive),
    # elementwise
    Case("Exp", F.exp, [(3, 4)], lambda t, a: t.exp(a)),
    Case("Log", F.log, [(3, 4)], lambda t, a: t.log(a), draw=positive),
    Case("Sin", F.sin, [(3, 4)], lambda t, a: t.sin(a)),
    Case("Cos", F.cos, [(3, 4)], lambda t, a: t.cos(a)),
    Case("Tanh", F.tanh, [(3, 4)], lambda t, a: t.tanh(a)),
    Case("TanhGrad", lambda y, gy: TanhGrad()(y, gy), [(3, 4), (3, 4)], lambda t, y, gy: gy * (1 - y * y)),
    Case("Cast", lambda x: F.cast(x, np.float64), [(3, 4)], lambda t, a: a.to(t.float64)),
    Case("Identity", F.identity, [(3, 4)], lambda t, a: a.clone()),
    Case("Sigmoid", F.sigmoid, [(3, 4)], lambda t, a: t.sigmoid(a)),
    Case("Sqrt", F.sqrt, [(3, 4)], lambda t, a: t.sqrt(a), draw=positive),
    Case("Square", F.square, [(3, 4)], lambda t, a: t.square(a)),
    Case("ReLU", F.relu, [(3, 4)], lambda t, a: t.relu(a), smooth=False, draw=away_from_zero),
    Case("Abs", F.abs, [(3, 4)], lambda t, a: t.abs(a), smooth=False, draw=away_from_zero),
    Case("Clip", lambda x: F.clip(x, -0.5, 0.8), [(3, 4)], lambda t, a: t.clamp(a, -0.5, 0.8),
         smooth=False, draw=avoiding(-0.5, 0.8)),
    Case("Log1p", F.log1p, [(3, 4)], lambda t, a: t.log1p(a), draw=positive),
    Case("Expm1", F.expm1, [(3, 4)], lambda t, a: t.expm1(a)),
    Case("Erf", F.erf, [(3, 4)], lambda t, a: t.erf(a)),
    # steps: a derivative of 0 away from the jumps
    Case("Sign", F.sign, [(3, 4)], lambda t, a: t.sign(a), draw=away_from_zero),
    Case("Floor", F.floor, [(3, 4)], lambda t, a: t.floor(a), draw=avoiding(*range(-4, 5))),
    Case("Ceil", F.ceil, [(3, 4)], lambda t, a: t.ceil(a), draw=avoiding(*range(-4, 5))),
    # selection
    Case("Where", lambda a, b: F.where(COND, a, b), [(3, 4), (3, 4)],
         lambda t, a, b: t.where(t.tensor(COND), a, b)),
    Case("Where", lambda a, b: F.where(COND, a, b), [(3, 1), (4,)],
         lambda t, a, b: t.where(t.tensor(COND), a, b)),
    Case("Maximum", F.maximum, [(3, 4), (3, 4)], lambda t, a, b: t.maximum(a, b), smooth=False, draw_all=distinct),
    Case("Maximum", F.maximum, [(3, 1), (4,)], lambda t, a, b: t.maximum(a, b), smooth=False, draw_all=distinct),
    Case("Minimum", F.minimum, [(2, 3), (3,)], lambda t, a, b: t.minimum(a, b), smooth=False, draw_all=distinct),
    # reductions
    Case("Sum", F.sum, [(3, 4)], lambda t, a: a.sum()),
    Case("Sum", lambda x: F.sum(x, axis=1), [(2, 3, 4)], lambda t, a: a.sum(1), label="axis1"),
    Case("Sum", lambda x: F.sum(x, axis=(0, 2), keepdims=True), [(2, 3, 4)],
         lambda t, a: a.sum((0, 2), keepdim=True), label="keepdims"),
    Case("Mean", F.mean, [(3, 4)], lambda t, a: a.mean()),
    Case("Mean", lambda x: F.mean(x, axis=1), [(2, 3, 4)], lambda t, a: a.mean(1), label="axis1"),
    Case("Mean", lambda x: F.mean(x, axis=(0, 2), keepdims=True), [(2, 3, 4)],
         lambda t, a: a.mean((0, 2), keepdim=True), label="keepdims"),
    Case("MeanGrad", lambda gy: MeanGrad(None, False, (3, 4))(gy), [()], lambda t, g: g.expand(3, 4) / 12),
    Case("MeanGrad", lambda gy: MeanGrad(1, False, (2, 3, 4))(gy), [(2, 4)],
         lambda t, g: g[:, None, :].expand(2, 3, 4) / 3, label="axis1"),
    Case("MeanGrad", lambda gy: MeanGrad((0, 2), True, (2, 3, 4))(gy), [(1, 3, 1)],
         lambda t, g: g.expand(2, 3, 4) / 8, label="keepdims"),
    Case("Max", F.max, [(3, 4)], lambda t, a: a.max(), smooth=False, draw_all=distinct),
    Case("Max", lambda x: F.max(x, axis=1), [(2, 3, 4)], lambda t, a: t.amax(a, 1),
         smooth=False, draw_all=distinct, label="axis1"),
    Case("Min", lambda x: F.min(x, axis=0, keepdims=True), [(3, 4)], lambda t, a: t.amin(a, 0, keepdim=True),
         smooth=False, draw_all=distinct),
    Case("Prod", lambda x: F.prod(x, axis=1), [(3, 4)], lambda t, a: a.prod(1)),
    Case("Prod", F.prod, [(2, 3)], lambda t, a: a.prod(), label="all"),
    Case("Prod", lambda x: F.prod(x, axis=0, keepdims=True), [(3, 4)], lambda t, a: a.prod(0, keepdim=True),
         draw=with_zeros, label="zeros"),
    Case("CumSum", lambda x: F.cumsum(x, axis=1), [(3, 4)], lambda t, a: a.cumsum(1)),
    Case("CumSum", F.cumsum, [(2, 3)], lambda t, a: a.reshape(-1).cumsum(0), label="flat"),
    Case("LogSumExp", F.logsumexp, [(3, 4)], lambda t, a: t.logsumexp(a.reshape(-1), 0)),
    Case("LogSumExp", lambda x: F.logsumexp(x, axis=1, keepdims=True), [(2, 3, 4)],
         lambda t, a: t.logsumexp(a, 1, keepdim=True), label="axis1"),
    Case("LogSumExp", lambda x: F.logsumexp(x, axis=[0, 2]), [(2, 3, 4)],
         lambda t, a: t.logsumexp(a, (0, 2)), label="axes_list"),
    # shapes
    Case("Reshape", lambda x: F.reshape(x, (4, 3)), [(3, 4)], lambda t, a: a.reshape(4, 3)),
    Case("Transpose", lambda x: F.transpose(x, (1, 2, 0)), [(2, 3, 4)], lambda t, a: a.permute(1, 2, 0)),
    Case("Transpose", lambda x: F.transpose(x, (0, -1, 1)), [(3, 3, 3)], lambda t, a: a.permute(0, 2, 1),
         label="negative"),  # (-1 is axis 2: its inverse is not argsort((0, -1, 1)))
    Case("Transpose", lambda x: F.transpose(x, -1, 0, 1), [(2, 3, 4)], lambda t, a: a.permute(2, 0, 1),
         label="negative_first"),
    Case("BroadcastTo", lambda x: F.broadcast_to(x, (2, 3, 4)), [(3, 1)],
         lambda t, a: t.broadcast_to(a, (2, 3, 4))),
    Case("SumTo", lambda x: F.sum_to(x, (3, 1)), [(2, 3, 4)], lambda t, a: a.sum(0).sum(1, keepdim=True)),
    Case("GetItem", lambda x: F.getitem(x, (slice(1, None), 2)), [(3, 4)], lambda t, a: a[1:, 2], label="basic"),
    Case("GetItem", lambda x: F.getitem(x, PICK), [(3, 4)], lambda t, a: a[_torch_pick(t, PICK)], label="repeats"),
    Case("GetItemGrad", lambda gy: GetItemGrad(PICK, (3, 4))(gy), [(4, 2)],
         vjp_twin(lambda t, a: a[_torch_pick(t, PICK)], (3, 4))),
    Case("flatten", F.flatten, [(2, 3, 2)], lambda t, a: t.flatten(a, 1)),
    Case("Concatenate", lambda a, b: F.concatenate(a, b, axis=1), [(2, 3), (2, 2)],
         lambda t, a, b: t.cat([a, b], 1)),
    Case("Concatenate", lambda a, b, c: F.concatenate([a, b, c], axis=0), [(1, 3), (2, 3), (1, 3)],
         lambda t, a, b, c: t.cat([a, b, c], 0)),
    # linear algebra and layers
    Case("diagonal", lambda x: F.diagonal(x, 1), [(3, 4)], lambda t, a: t.diagonal(a, 1)),
    Case("diagonal", lambda x: F.diagonal(x, -1, 2, 0), [(3, 2, 4)], lambda t, a: t.diagonal(a, -1, 2, 0),
         label="axes"),
    Case("trace", F.trace, [(3, 4)], lambda t, a: t.trace(a)),
    Case("MatMul", F.matmul, [(3, 4), (4, 2)], lambda t, a, b: a @ b),
    Case("MatMul", F.matmul, [(2, 3, 4), (4, 2)], lambda t, a, b: a @ b),
    Case("MatMul", F.matmul, [(4,), (4, 3)], lambda t, a, b: a @ b),
    Case("MatMul", F.matmul, [(3, 4), (4,)], lambda t, a, b: a @ b),
    Case("MatMul", lambda a, b: F.matmul(a, b, transpose_a=True), [(4, 3), (4, 2)],
         lambda t, a, b: a.T @ b, label="aT"),
    Case("MatMul", lambda a, b: F.matmul(a, b, transpose_b=True), [(3, 4), (2, 4)],
         lambda t, a, b: a @ b.T, label="bT"),
    Case("MatMul", lambda a, b: F.matmul(a, b, transpose_a=True, transpose_b=True), [(2, 4, 3), (2, 4)],
         lambda t, a, b: a.transpose(-1, -2) @ b.T, label="aTbT"),
    Case("MatMul", lambda a, b: F.matmul(a, b, transpose_b=True), [(4,), (3, 4)],
         lambda t, a, b: a @ b.T, label="vector-bT"),
    Case("affine", F.affine, [(2, 2, 3), (6, 4), (4,)], lambda t, x, W, b: x.reshape(2, -1) @ W + b),
    Case("Affine", F.affine, [(3, 5), (5, 4), (4,)], lambda t, x, W, b: x @ W + b),
    Case("Affine", F.affine, [(3, 5), (5, 2)], lambda t, x, W: x @ W, label="no-bias"),
    Case("Convolution", F.convolution, [(1, 2, 4, 4), (2, 2, 2, 2), (2,)], conv_twin(0, 1, 1)),
    Case("Convolution", lambda x, W: F.convolution(x, W, pad=1, stride=2), [(2, 1, 4, 3), (2, 1, 3, 3)],
         conv_twin(1, 2, 1), label="pad-stride"),
    Case("Convolution", lambda x, W: F.convolution(x, W, pad=(1, 0), dilation=2), [(1, 2, 4, 5), (1, 2, 2, 2)],
         conv_twin((1, 0), 1, 2), label="dilation"),
    Case("ConvolutionDataGrad", lambda gy, W: ConvolutionDataGrad((2, 1, 4, 3), (1, 1), (2, 2), (1, 1))(gy, W),
         [(2, 2, 2, 2), (2, 1, 3, 3)], vjp_twin(conv_twin(1, 2, 1), (2, 1, 4, 3))),
    Case("ConvolutionFilterGrad", lambda x, gy: ConvolutionFilterGrad((2, 1, 3, 3), (1, 1), (2, 2), (1, 1))(x, gy),
         [(2, 1, 4, 3), (2, 2, 2, 2)], vjp_twin(conv_twin(1, 2, 1), (2, 1, 3, 3), wrt=1, gy_at=1)),
    Case("MaxPooling", lambda x: F.max_pooling(x, (2, 2)), [(1, 2, 4, 4)],
         lambda t, a: t.nn.functional.max_pool2d(a, 2), smooth=False, draw_all=distinct),
    Case("MaxPooling", lambda x: F.max_pooling(x, 3, stride=2, pad=1), [(1, 1, 5, 5)],
         lambda t, a: t.nn.functional.max_pool2d(a, 3, 2, 1), smooth=False, draw_all=distinct, label="overlap"),
    _max_pooling_case(),
    Case("AveragePooling", lambda x: F.average_pooling(x, 3, stride=2, pad=1), [(1, 2, 5, 4)],
         lambda t, a: t.nn.functional.avg_pool2d(a, 3, 2, 1)),
    Case("AveragePoolingBackward", lambda gy: AveragePoolingBackward((1, 2, 5, 4), (3, 3), (2, 2), (1, 1))(gy),
         [(1, 2, 3, 2)], vjp_twin(lambda t, a: t.nn.functional.avg_pool2d(a, 3, 2, 1), (1, 2, 5, 4))),
    # classification
    Case("Softmax", F.softmax, [(3, 4)], lambda t, a: t.softmax(a, 1)),
    Case("Softmax", lambda x: F.softmax(x, axis=0), [(3, 2, 2)], lambda t, a: t.softmax(a, 0), label="axis0"),
    Case("LogSoftmax", F.log_softmax, [(3, 4)], lambda t, a: t.log_softmax(a, 1)),
    Case("SoftmaxCrossEntropy", lambda x: F.softmax_cross_entropy(x, LABELS), [(3, 4)],
         lambda t, a: _sce_twin(t, a, LABELS)),
    Case("SoftmaxCrossEntropy", lambda x: F.softmax_cross_entropy(x, LABELS_3D), [(2, 3, 2)],
         lambda t, a: _sce_twin(t, a, LABELS_3D), label="spatial"),
    Case("SoftmaxCrossEntropyGrad", lambda x, gy: SoftmaxCrossEntropyGrad(on_device_of(x, LABELS[:, None]), 1)(x, gy),
         [(3, 4), (3, 1)], lambda t, x, gy: gy * (t.softmax(x, 1) - t.nn.functional.one_hot(t.tensor(LABELS), 4))),
]
