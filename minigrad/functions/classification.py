"""Classification: logsumexp, softmax, log_softmax, softmax_cross_entropy.

All four meet e^x, which overflows for x around 710 in float64 (89 in
float32). The forward passes use the identity

    log sum_j e^(x_j) = m + log sum_j e^(x_j - m),   m = max_j x_j,

so the largest exponent is e^0 = 1 and nothing overflows: x = 1000 is fine.
The rules are written with softmax (and exp) again, so every order works.
"""

from minigrad.backward_functions import register
from minigrad.cuda import get_array_module
from minigrad.function import Function
from minigrad.functions.elementwise import exp
from minigrad.functions.reduction import _axes
from minigrad.functions.reduction import sum as _sum
from minigrad.functions.shape import reshape
from minigrad.variable import Variable


def _logsumexp(x, axis):
    """log sum e^x over ``axis``, keeping the axis, computed without overflow."""
    xp = get_array_module(x)
    m = x.max(axis=axis, keepdims=True)
    return m + xp.log(xp.exp(x - m).sum(axis=axis, keepdims=True))


class LogSumExp(Function):
    def __init__(self, axis=None, keepdims=False):
        self.axis = axis
        self.keepdims = keepdims

    def forward(self, x):
        y = _logsumexp(x, self.axis)
        return y if self.keepdims else y.reshape(_reduced_shape(x.shape, self.axis, False))


def _reduced_shape(shape, axis, keepdims):
    axes = _axes(axis, len(shape))
    if keepdims:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def logsumexp(x, axis=None, keepdims=False):
    """y = log sum_i e^(x_i) over ``axis`` (all elements when None)."""
    return LogSumExp(axis, keepdims)(x)


@register("LogSumExp")
def logsumexp_backward(ctx, gy):
    """y = log sum_j e^(x_j)  =>  dy/dx_i = e^(x_i) / sum_j e^(x_j) = e^(x_i - y): the softmax

    =>  gx = gy * exp(x - y), with gy and y given back the reduced axes.
    """
    (x,) = ctx.inputs
    (y,) = ctx.outputs
    shape = _reduced_shape(x.shape, ctx.function.axis, True)
    return reshape(gy, shape) * exp(x - reshape(y, shape))


class Softmax(Function):
    def __init__(self, axis):
        self.axis = axis

    def forward(self, x):
        xp = get_array_module(x)
        e = xp.exp(x - x.max(axis=self.axis, keepdims=True))
        return e / e.sum(axis=self.axis, keepdims=True)


def softmax(x, axis=1):
    """y_i = e^(x_i) / sum_j e^(x_j) along ``axis``: positive, summing to 1."""
    return Softmax(axis)(x)


@register("Softmax")
def softmax_backward(ctx, gy):
    """y_i = e^(x_i) / sum_j e^(x_j)  =>  dy_i/dx_k = y_i (delta_ik - y_k)

    =>  gx_k = sum_i gy_i y_i (delta_ik - y_k) = y_k (gy_k - sum_i gy_i y_i).
    """
    (y,) = ctx.outputs
    axis = ctx.function.axis
    return y * (gy - _sum(gy * y, axis=axis, keepdims=True))


class LogSoftmax(Function):
    def __init__(self, axis):
        self.axis = axis

    def forward(self, x):
        return x - _logsumexp(x, self.axis)


def log_softmax(x, axis=1):
    """y_i = x_i - log sum_j e^(x_j) along ``axis``: the log of softmax, without its underflow."""
    return LogSoftmax(axis)(x)


@register("LogSoftmax")
def log_softmax_backward(ctx, gy):
    """y_i = x_i - log sum_j e^(x_j)  =>  dy_i/dx_k = delta_ik - softmax_k = delta_ik - e^(y_k)

    =>  gx_k = gy_k - e^(y_k) sum_i gy_i.
    """
    (y,) = ctx.outputs
    axis = ctx.function.axis
    return gy - exp(y) * _sum(gy, axis=axis, keepdims=True)


class SoftmaxCrossEntropy(Function):
    """The loss -log softmax(x)_t per sample; the labels ``t`` are an attribute, not an input."""

    def __init__(self, t, axis):
        self.t = t
        self.axis = axis

    def forward(self, x):
        xp = get_array_module(x)
        log_p = x - _logsumexp(x, self.axis)
        return -xp.take_along_axis(log_p, self.t, axis=self.axis)


def softmax_cross_entropy(x, t, axis=1):
    """y_n = -log softmax(x_n)_(t_n): the per-sample loss, of x's shape with ``axis`` of length 1.

    ``x`` holds scores (logits), ``t`` integer labels in [0, x.shape[axis]),
    of x's shape with ``axis`` of length 1, e.g. (N, 1), or without it, e.g. (N,).
    As in nnabla, x of shape (N, C) gives a loss of shape (N, 1); average it with F.mean.
    """
    shape = tuple(x.shape)
    axis = axis % len(shape) if len(shape) else axis
    t = getattr(t, "data", t)
    xp = get_array_module(t, getattr(x, "data", x))
    t = xp.asarray(t)
    keep = shape[:axis] + (1,) + shape[axis + 1:]
    if t.shape == shape[:axis] + shape[axis + 1:]:
        t = t.reshape(keep)
    if t.shape != keep:
        raise ValueError(
            f"softmax_cross_entropy: labels t of shape {t.shape} do not fit scores x of shape "
            f"{shape}; t must have shape {keep} (or {shape[:axis] + shape[axis + 1:]}): one label per sample"
        )
    if t.dtype.kind not in "biu":
        bad = t[t != xp.floor(t)]
        if bad.size:
            raise ValueError(
                f"softmax_cross_entropy: labels must be integers (class indices), got {bad[:5].tolist()}"
            )
    t = t.astype(xp.int64)
    bad = t[(t < 0) | (t >= shape[axis])]
    if bad.size:
        raise ValueError(
            f"softmax_cross_entropy: labels {bad[:5].tolist()} are out of range for "
            f"{shape[axis]} classes; labels must lie in [0, {shape[axis] - 1}]"
        )
    return SoftmaxCrossEntropy(t, axis)(x)


@register("SoftmaxCrossEntropy")
def softmax_cross_entropy_backward(ctx, gy):
    """y = log sum_j e^(x_j) - x_t  =>  dy/dx_k = softmax_k - [k = t]

    =>  gx = gy * (softmax(x) - onehot(t)); softmax's own rule carries the next order.
    """
    (x,) = ctx.inputs
    f = ctx.function
    xp = get_array_module(x.data)
    classes = xp.arange(x.shape[f.axis]).reshape((-1,) + (1,) * (x.ndim - f.axis - 1))
    onehot = Variable((classes == f.t).astype(x.dtype), requires_grad=False)
    return gy * (softmax(x, f.axis) - onehot)
