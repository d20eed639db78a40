"""Classification: logsumexp, softmax, log_softmax, softmax_cross_entropy.

All four meet e^x, which overflows for x around 710 in float64 (89 in
float32). The forward passes use the identity

    log sum_j e^(x_j) = m + log sum_j e^(x_j - m),   m = max_j x_j,

so the largest exponent is e^0 = 1 and nothing overflows: x = 1000 is fine.
The rules are written with softmax (and exp) again, so every order works.
"""

import numpy as np

from minigrad.backward_functions import register
from minigrad.families import transposed
from minigrad.cuda import get_array_module
from minigrad.forward_functions import register as register_forward
from minigrad.forward_functions import tangent_sum
from minigrad.core.function import Function
from minigrad.functions.elementwise import exp
from minigrad.functions.reduction import _axis_arg, _reduced_shape
from minigrad.functions.reduction import sum as _sum
from minigrad.functions.shape import reshape
from minigrad.support.numpy_interop import data_of
from minigrad import series, taylor


def _log_normalizer(x, axis):
    """(m, z, s) with z = x - m and s = log sum e^z over ``axis`` (kept), m the largest x of each row.

    Then log sum e^x = m + s, and log softmax = z - s, computed without adding
    m back: m + s would round s away when m is large (1e300 + 0.69 is 1e300).
    A row whose largest value is inf or nan is shifted by 0 instead, so that
    inf - inf makes no nan: a row holding +inf sums to inf, a row of -inf to
    e^-inf = 0, whose log is -inf, as they should.
    """
    xp = get_array_module(x)
    m = _shift(x, axis)
    z = x - m
    with np.errstate(divide="ignore"):  # log 0 = -inf for a row of -inf: the right answer, no warning
        s = xp.log(xp.exp(z).sum(axis=axis, keepdims=True))
    return m, z, s


def _row_max(x, axis):
    """The largest x of each row, keeping the axis; 0 for rows of no elements (an axis of length 0),
    whose log sum e^x is log 0 = -inf and whose softmax is empty."""
    if x.size == 0:
        return get_array_module(x).zeros(_reduced_shape(x.shape, axis, True), dtype=x.dtype)
    return x.max(axis=axis, keepdims=True)


def _shift(x, axis):
    """m, the largest x of each row (kept), or 0 where that is inf or nan (see _log_normalizer)."""
    xp = get_array_module(x)
    m = _row_max(x, axis)
    return xp.where(xp.isfinite(m), m, 0)


def _logsumexp(x, axis):
    """log sum e^x over ``axis``, keeping the axis, computed without overflow."""
    m, _, s = _log_normalizer(x, axis)
    return m + s


class LogSumExp(Function):
    def __init__(self, axis=None, keepdims=False):
        self.axis = axis
        self.keepdims = keepdims

    def forward(self, x):
        y = _logsumexp(x, self.axis)
        return y if self.keepdims else y.reshape(_reduced_shape(x.shape, self.axis, False))


def logsumexp(x, axis=None, keepdims=False):
    """y = log sum_i e^(x_i) over ``axis`` (all elements when None)."""
    return LogSumExp(_axis_arg(axis), keepdims)(x)


@register("LogSumExp")
def logsumexp_backward(ctx, gy):
    """y = log sum_j e^(x_j)  =>  dy/dx_i = e^(x_i) / sum_j e^(x_j) = e^(x_i - y): the softmax

    =>  gx = gy * softmax(x), with gy given back the reduced axes (softmax_weights: not e^(x - y)).
    """
    (x,) = ctx.inputs
    shape = _reduced_shape(x.shape, ctx.function.axis, True)
    return reshape(gy, shape) * softmax_weights(x, ctx.function.axis)


@register_forward("LogSumExp")
def logsumexp_forward(ctx, tx):
    """y = log sum_j e^(x_j)  =>  dy = sum_i e^(x_i - y) dx_i  =>  ty = sum(softmax(x) * tx) over ``axis``.

    The weights are softmax(x), each at most 1: no e^x that could overflow.
    """
    (x,) = ctx.inputs
    f = ctx.function
    return _sum(softmax_weights(x, f.axis) * tx, axis=f.axis, keepdims=f.keepdims)


def softmax_weights(x, axis):
    """softmax(x) along ``axis`` (kept) as a graph of x: e^((x - m) - logsumexp(x - m)), m the constant
    shift of _log_normalizer. Not e^(x - y) with y = logsumexp(x): y = m + s has lost s where m is large
    (1e300 + log 4 is 1e300), and every weight would be e^0 = 1. A row holding +inf gives [nan, 0, ...]
    (inf - inf where x is inf, e^-inf elsewhere), a row of -inf nan, as e^(x - y) did.
    """
    z = x - _shift(data_of(x), axis)
    return exp(z - LogSumExp(axis, True)(z))


def log_normalizer_series(x, axis):
    """(z, s): z = x - m and s = log sum_j e^(z_j) along ``axis`` (kept, length 1), as series: the series
    of exp, a sum, and log. As in the forward, m = max of the values x_0 is taken out first, so nothing
    overflows; m is a constant, so only coefficient 0 of z moves. (m is 0 for a row whose max is inf or
    -inf, as in the forward, so that s_0 is inf or -inf, not inf - inf = NaN.)

    Then log sum e^x = m + s, and log softmax = z - s without adding m back, which would round s away
    where m is large (1e300 + log 4 is 1e300): z - s, not x - (m + s).
    """
    z = x.copy()
    z[0] -= _shift(x[0], axis)
    total = series.each(lambda ek: ek.sum(axis=axis, keepdims=True), series.exp(z))
    return z, series.log(total)


def logsumexp_series(x, axis):
    """l = log sum_j e^(x_j) along ``axis``, kept as an axis of length 1: m + s, m added to l_0 alone."""
    _, s = log_normalizer_series(x, axis)
    s[0] += _shift(x[0], axis)
    return s


@taylor.register("LogSumExp")
def logsumexp_taylor(ctx, x):
    """y = log sum_i e^(x_i): logsumexp_series, without the reduced axes unless keepdims."""
    f = ctx.function
    y = logsumexp_series(x, f.axis)
    return y if f.keepdims else y.reshape((len(x),) + _reduced_shape(x.shape[1:], f.axis, False))


class Softmax(Function):
    reads_inputs = False  # the rule reads only the output

    def __init__(self, axis):
        self.axis = axis

    def forward(self, x):
        xp = get_array_module(x)
        e = xp.exp(x - _row_max(x, self.axis))
        return e / e.sum(axis=self.axis, keepdims=True)


def softmax(x, axis=1):
    """y_i = e^(x_i) / sum_j e^(x_j) along ``axis`` (an int or a list of ints): positive, summing to 1."""
    return Softmax(_axis_arg(axis))(x)


@register("Softmax")
def softmax_backward(ctx, gy):
    """y_i = e^(x_i) / sum_j e^(x_j)  =>  dy_i/dx_k = y_i (delta_ik - y_k)

    =>  gx_k = sum_i gy_i y_i (delta_ik - y_k) = y_k (gy_k - sum_i gy_i y_i).
    """
    (y,) = ctx.outputs
    axis = ctx.function.axis
    return y * (gy - _sum(gy * y, axis=axis, keepdims=True))


@register_forward("Softmax")
def softmax_forward(ctx, tx):
    """y_i = e^(x_i) / sum_j e^(x_j)  =>  dy_i = y_i (dx_i - sum_k y_k dx_k)

    =>  ty = y * (tx - sum(y * tx)) along ``axis``.
    """
    (y,) = ctx.outputs
    axis = ctx.function.axis
    return y * (tx - _sum(y * tx, axis=axis, keepdims=True))


def softmax_series(x, axis):
    """y = e^(x - logsumexp(x)) = e^(z - s) along ``axis`` (log_normalizer_series).

    A row whose value holds a nan (from x, or inf / inf where x holds +inf) is nan throughout, every
    coefficient, as Softmax's forward pass gives it: its sum is nan, and so is each share of it.
    """
    y = series.exp(log_softmax_series(x, axis))
    xp = get_array_module(y)
    undefined = xp.isnan(y[0]).any(axis=axis, keepdims=True)
    return xp.where(undefined, xp.nan, y) if undefined.any() else y


def log_softmax_series(x, axis):
    """y = x - logsumexp(x) = z - s along ``axis`` (log_normalizer_series)."""
    z, s = log_normalizer_series(x, axis)
    return z - s


@taylor.register("Softmax")
def softmax_taylor(ctx, x):
    """y_i = e^(x_i) / sum_j e^(x_j) = e^(x_i - logsumexp(x))  =>  softmax_series."""
    return softmax_series(x, ctx.function.axis)


class LogSoftmax(Function):
    reads_inputs = False  # the rule reads only the output

    def __init__(self, axis):
        self.axis = axis

    def forward(self, x):
        _, z, s = _log_normalizer(x, self.axis)
        z -= s  # in place on our own array
        return z


def log_softmax(x, axis=1):
    """y_i = x_i - log sum_j e^(x_j) along ``axis`` (an int or a list of ints): the log of softmax,
    without its underflow."""
    return LogSoftmax(_axis_arg(axis))(x)


@register("LogSoftmax")
def log_softmax_backward(ctx, gy):
    """y_i = x_i - log sum_j e^(x_j)  =>  dy_i/dx_k = delta_ik - softmax_k = delta_ik - e^(y_k)

    =>  gx_k = gy_k - e^(y_k) sum_i gy_i.
    """
    (y,) = ctx.outputs
    axis = ctx.function.axis
    return gy - exp(y) * _sum(gy, axis=axis, keepdims=True)


@register_forward("LogSoftmax")
def log_softmax_forward(ctx, tx):
    """y_i = x_i - log sum_j e^(x_j)  =>  dy_i = dx_i - sum_k softmax_k dx_k

    =>  ty = tx - sum(exp(y) * tx) along ``axis`` (exp(y) = softmax, at most 1: it never overflows).
    """
    (y,) = ctx.outputs
    axis = ctx.function.axis
    return tx - _sum(exp(y) * tx, axis=axis, keepdims=True)


@taylor.register("LogSoftmax")
def log_softmax_taylor(ctx, x):
    """y = x - logsumexp(x) along the axis  =>  y_k = x_k - (logsumexp_series)_k (log_softmax_series)."""
    return log_softmax_series(x, ctx.function.axis)


class SoftmaxCrossEntropy(Function):
    """The loss -log softmax(x)_t per sample; the labels ``t`` are an attribute, not an input.

    The forward keeps log softmax(x) for the rule, which needs softmax(x)
    again: exp(log_p) is one pass, recomputing it from x is six.
    """

    reads_outputs = False  # the rule reads only the inputs

    def __init__(self, t, axis):
        self.t = t
        self.axis = axis
        self.log_p = None

    def forward(self, x):
        xp = get_array_module(x)
        _, z, s = _log_normalizer(x, self.axis)
        z -= s  # log p = x - logsumexp(x), in place
        self.log_p = z
        if x.ndim == 2 and self.axis == 1:  # (N, C): plain indexing is faster than take_along_axis
            return -self.log_p[xp.arange(x.shape[0]), self.t[:, 0]][:, None]
        return -xp.take_along_axis(self.log_p, self.t, axis=self.axis)


def softmax_cross_entropy(x, t, axis=1):
    """y_n = -log softmax(x_n)_(t_n): the per-sample loss, of x's shape with ``axis`` of length 1.

    ``x`` holds scores (logits), ``t`` integer labels in [0, x.shape[axis]),
    of x's shape with ``axis`` of length 1, e.g. (N, 1), or without it, e.g. (N,).
    As in nnabla, x of shape (N, C) gives a loss of shape (N, 1); average it with F.mean.
    """
    shape = tuple(x.shape)
    if not -len(shape) <= axis < len(shape):  # (axis % ndim would quietly pick another axis)
        fix = "a 1-d x has one, pass axis=0" if len(shape) == 1 else f"pass 0 to {len(shape) - 1} (1 for (N, C) scores)"
        raise ValueError(f"softmax_cross_entropy: axis={axis} is out of range for x of shape {shape}; "
                         f"axis is the axis of the classes: {fix}")
    axis %= len(shape)
    t = data_of(t)
    xp = get_array_module(t, x)
    t = xp.asarray(t)
    keep = shape[:axis] + (1,) + shape[axis + 1:]
    if t.shape == shape[:axis] + shape[axis + 1:]:
        t = t.reshape(keep)
    if t.shape != keep:
        raise ValueError(
            f"softmax_cross_entropy: labels t of shape {t.shape} do not fit scores x of shape "
            f"{shape}; t must have shape {keep} (or {shape[:axis] + shape[axis + 1:]}): one label per sample"
        )
    if t.dtype.kind not in "biuf":
        raise TypeError(f"softmax_cross_entropy: labels t of dtype {t.dtype} must be integers (class indices) "
                        f"in [0, {shape[axis] - 1}], e.g. np.array([2, 0, 1])")
    if t.dtype.kind == "f":
        bad = t[t != xp.floor(t)]
        if bad.size:
            raise ValueError(
                f"softmax_cross_entropy: labels must be integers (class indices), got {bad[:5].tolist()}"
            )
    t = t.astype(xp.int64, copy=False)
    # read as unsigned, a negative label is huge: one max finds labels out of range at either end
    if t.size and t.view(xp.uint64).max() >= shape[axis]:
        bad = t[(t < 0) | (t >= shape[axis])]
        raise ValueError(
            f"softmax_cross_entropy: labels {bad[:5].tolist()} are out of range for "
            f"{shape[axis]} classes; labels must lie in [0, {shape[axis] - 1}]"
        )
    return SoftmaxCrossEntropy(t, axis)(x)


@register("SoftmaxCrossEntropy")
def softmax_cross_entropy_backward(ctx, gy):
    """y = log sum_j e^(x_j) - x_t  =>  dy/dx_k = softmax_k - [k = t]

    =>  gx = gy * (softmax(x) - onehot(t)), computed in one pass by SoftmaxCrossEntropyGrad.
    """
    (x,) = ctx.inputs
    f = ctx.function
    return SoftmaxCrossEntropyGrad(f.t, f.axis, f.log_p)(x, gy)


@register_forward("SoftmaxCrossEntropy")
def softmax_cross_entropy_forward(ctx, tx):
    """y = log sum_j e^(x_j) - x_t  =>  dy = sum_k (softmax_k - [k = t]) dx_k

    =>  ty = sum((softmax(x) - onehot(t)) * tx) along ``axis``: SoftmaxCrossEntropyGrad(x, tx), summed.
    """
    (x,) = ctx.inputs
    f = ctx.function
    return _sum(SoftmaxCrossEntropyGrad(f.t, f.axis, f.log_p)(x, tx), axis=f.axis, keepdims=True)


@taylor.register("SoftmaxCrossEntropy")
def softmax_cross_entropy_taylor(ctx, x):
    """y = logsumexp(x) - x_t = -(log softmax x)_t along the axis  =>  y_k = -(log_softmax_series)_k at the label."""
    f = ctx.function
    xp = get_array_module(x)
    return -series.each(lambda pk: xp.take_along_axis(pk, f.t, axis=f.axis), log_softmax_series(x, f.axis))


class SoftmaxCrossEntropyGrad(Function):
    """gx = gy * (softmax(x) - onehot(t)) as one function of (x, gy), itself differentiable.

    ``log_p``, when given, is log softmax(x) as the forward computed it.
    """

    reads_outputs = False  # the rule reads only the inputs

    def __init__(self, t, axis, log_p=None):
        self.t = t
        self.axis = axis
        self.log_p = log_p

    def forward(self, x, gy):
        xp = get_array_module(x)
        log_p = self.log_p
        if log_p is None:
            _, z, s = _log_normalizer(x, self.axis)
            log_p = z - s
        p = xp.exp(log_p)
        p -= _onehot(self.t, x.shape, self.axis, xp)  # in place on our own array
        p *= gy
        return p


def _onehot(t, shape, axis, xp):
    """A boolean array of ``shape``: True where the index along ``axis`` equals the label t."""
    classes = xp.arange(shape[axis]).reshape((-1,) + (1,) * (len(shape) - axis - 1))
    return classes == t


@register("SoftmaxCrossEntropyGrad")
def softmax_cross_entropy_grad_backward(ctx, ggx):
    """gx = gy (p - onehot), p = softmax(x)  =>  d gx_k/d gy = p_k - onehot_k,
    d gx_k/d x_j = gy p_k (delta_kj - p_j).

    So g_gy = ggx (p - onehot) (summed back to gy's shape by the walker) and,
    with u = ggx gy, g_x = p (u - sum_k u_k p_k): softmax's own rule applied to u.
    """
    x, gy = ctx.inputs
    f = ctx.function
    need_x, need_gy = ctx.needs_input_grad
    p = softmax(x, f.axis)
    g_x = g_gy = None
    if need_x:
        u = ggx * gy
        g_x = p * (u - _sum(u * p, axis=f.axis, keepdims=True))
    if need_gy:
        onehot = _onehot(f.t, x.shape, f.axis, get_array_module(x)).astype(x.dtype)
        g_gy = ggx * (p - onehot)
    return g_x, g_gy


@register_forward("SoftmaxCrossEntropyGrad")
def softmax_cross_entropy_grad_forward(ctx, tx, tgy):
    """gx = gy (p - onehot), p = softmax(x)  =>  d gx = d gy (p - onehot) + gy dp, dp = p (dx - sum_j p_j dx_j)

    =>  t = SoftmaxCrossEntropyGrad(x, tgy) + gy * p * (tx - sum(p * tx)).
    """
    x, gy = ctx.inputs
    f = ctx.function
    t_gy = t_x = None
    if tgy is not None:
        t_gy = SoftmaxCrossEntropyGrad(f.t, f.axis, f.log_p)(x, tgy)
    if tx is not None:
        p = softmax(x, f.axis)
        t_x = gy * p * (tx - _sum(p * tx, axis=f.axis, keepdims=True))
    return tangent_sum(t_gy, t_x)


@taylor.register("SoftmaxCrossEntropyGrad")
def softmax_cross_entropy_grad_taylor(ctx, x, gy):
    """gx = gy (p - onehot), p = softmax(x)  =>  a Cauchy product of gy's series and p's, one-hot off p_0."""
    f = ctx.function
    p = softmax_series(x, f.axis)
    p[0] -= _onehot(f.t, x.shape[1:], f.axis, get_array_module(x))
    return series.product(gy, p)


transposed("SoftmaxCrossEntropyGrad", constants=(0,))  # linear in gy alone
