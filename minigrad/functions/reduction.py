"""Reductions: sum, mean, max, min."""

import math

import numpy as np

from minigrad.families import linear
from minigrad.backward_functions import register
from minigrad.cuda import get_array_module
from minigrad.forward_functions import register as register_forward
from minigrad.core.function import Function
from minigrad.functions.shape import broadcast_array, broadcast_to, reshape
from minigrad.support.numpy_interop import data_of
from minigrad import series, taylor


def _axes(axis, ndim):
    """``axis`` as a tuple of non-negative ints (all axes for None)."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, int):
        axis = (axis,)
    return tuple(a % ndim for a in axis) if ndim else tuple(axis)


def _reduced_shape(shape, axis, keepdims):
    """The shape of a reduction of ``shape`` over ``axis``: its axes kept as length 1, or dropped."""
    axes = _axes(axis, len(shape))
    if keepdims:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axes)


class _Reduction(Function):
    """A function of x over ``axis`` (all axes when None); ``keepdims`` keeps them, of length 1."""

    def __init__(self, axis=None, keepdims=False):
        self.axis = axis
        self.keepdims = keepdims


class Sum(_Reduction):
    reads_inputs = reads_outputs = False  # the rule needs only shapes

    def forward(self, x):
        return x.sum(axis=self.axis, keepdims=self.keepdims)


def _axis_arg(axis):
    """axis=[0, 2] means axis=(0, 2); a NumPy integer (axis=np.argmax(...)) is an int."""
    if isinstance(axis, (list, tuple)):
        return tuple(int(a) if isinstance(a, np.integer) else a for a in axis)
    return int(axis) if isinstance(axis, np.integer) else axis


def sum(x, axis=None, keepdims=False):
    """y = the sum of x's elements over ``axis`` (all of them when None)."""
    return Sum(_axis_arg(axis), keepdims)(x)


@register("Sum")
def sum_backward(ctx, gy):
    """y = sum_i x_i  =>  dy/dx_i = 1  =>  gx = gy copied to every summed position.

    Without keepdims the summed axes are gone from gy; put them back as axes
    of length 1, then broadcast to x's shape.
    """
    (x,) = ctx.inputs
    f = ctx.function
    if not f.keepdims and gy.ndim:  # (a 0-d gy, the sum of everything, broadcasts as it is)
        gy = reshape(gy, _reduced_shape(x.shape, f.axis, True))
    return broadcast_to(gy, x.shape)


linear("Sum")


class Mean(Sum):
    """y = sum(x) / n: Sum's attributes, its own forward."""

    def forward(self, x):
        y = x.sum(axis=self.axis, keepdims=self.keepdims)
        scale = y.size / x.size if x.size else float("nan")  # no elements: NaN, as NumPy
        return y * y.dtype.type(scale)  # (a scale of y's dtype: float32 stays float32)


def mean(x, axis=None, keepdims=False):
    """y = the mean of x's elements over ``axis``: their sum divided by their count n."""
    return Mean(_axis_arg(axis), keepdims)(x)


@register("Mean")
def mean_backward(ctx, gy):
    """y = (1/n) sum_i x_i  =>  dy/dx_i = 1/n  =>  gx = gy / n, copied to every averaged position.

    That is sum's rule given gy / n; MeanGrad does both steps in one pass.
    """
    (x,) = ctx.inputs
    f = ctx.function
    return MeanGrad(f.axis, f.keepdims, x.shape)(gy)


linear("Mean")


class MeanGrad(Function):
    """gx = gy / n at each of the n positions that were averaged: mean's rule as one function of gy.

    Its own rule is mean again. Spreading gy / n over n positions and
    averaging n positions are adjoint: d gx_i / d gy_k = 1/n when position i
    was averaged into y_k, else 0, so ggy_k = (1/n) sum_i ggx_i over those
    positions, the mean of ggx with mean's ``axis`` and ``keepdims``.
    """

    reads_inputs = reads_outputs = False  # the rule needs only shapes

    def __init__(self, axis, keepdims, x_shape):
        self.axis = axis
        self.keepdims = keepdims
        self.x_shape = x_shape

    def forward(self, gy):
        if not self.keepdims and gy.ndim:  # put the averaged axes back, of length 1
            gy = gy.reshape(_reduced_shape(self.x_shape, self.axis, True))
        size = math.prod(self.x_shape)
        scale = gy.size / size if size else 0.0  # 1/n, as in Mean.forward
        xp = get_array_module(gy)
        scaled = xp.multiply(gy, scale, out=xp.empty(gy.shape, gy.dtype))  # (an array, of gy's dtype)
        return broadcast_array(scaled, self.x_shape)


@register("MeanGrad")
def mean_grad_backward(ctx, ggx):
    """gx = gy / n spread over the averaged positions  =>  ggy = the mean of ggx over them."""
    f = ctx.function
    return Mean(f.axis, f.keepdims)(ggx)


linear("MeanGrad")


class Max(_Reduction):
    def forward(self, x):
        return x.max(axis=self.axis, keepdims=self.keepdims)


def max(x, axis=None, keepdims=False):
    """y = the largest of x's elements over ``axis`` (all of them when None)."""
    return Max(_axis_arg(axis), keepdims)(x)


class Min(_Reduction):
    def forward(self, x):
        return x.min(axis=self.axis, keepdims=self.keepdims)


def min(x, axis=None, keepdims=False):
    """y = the smallest of x's elements over ``axis`` (all of them when None)."""
    return Min(_axis_arg(axis), keepdims)(x)


def _extremum_backward(ctx, gy):
    """y = max_i x_i  =>  dy/dx_i = 1 for the winner, 0 for the others.

    With ties (k elements equal to the max) torch's amax (and max over all
    elements) splits the gradient evenly, 1/k each, so that the shares still
    add up to 1. The winners' mask is a constant computed from the values:

        gx = broadcast(gy) * [x == y] / (number of winners).
    """
    (x,) = ctx.inputs
    shape, share = _winners_share(ctx)
    return broadcast_to(reshape(gy, shape), x.shape) * share


def _winners_share(ctx):
    """(y's shape with keepdims, each x element's share of y: 1/k for each of k winners, else 0)."""
    (x,) = ctx.inputs
    (y,) = ctx.outputs
    f = ctx.function
    shape = _reduced_shape(x.shape, f.axis, True)  # y with keepdims
    winners = data_of(x) == data_of(y).reshape(shape)
    count = winners.sum(axis=f.axis, keepdims=True)
    return shape, (winners / count).astype(x.dtype)


def _extremum_forward(ctx, tx):
    """y = max_i x_i  =>  dy = sum_i share_i dx_i (1 for the winner, 1/k each for k ties)

    =>  ty = sum(tx * share) over ``axis``: the tangent of the winners, averaged on a tie.
    """
    f = ctx.function
    _, share = _winners_share(ctx)
    return Sum(f.axis, f.keepdims)(tx * share)


@register("Max")
def max_backward(ctx, gy):
    """y = max_i x_i over ``axis``  =>  dy/dx_i = 1 for the winner, 0 for the others (1/k each for k ties)

    =>  gx = broadcast(gy) * [x == y] / k: the gradient goes to the winners (see _extremum_backward).
    """
    return _extremum_backward(ctx, gy)


@register_forward("Max")
def max_forward(ctx, tx):
    """y = max_i x_i  =>  dy = dx of the winner (the mean of the winners' on a tie)  =>  ty = sum(tx * share)."""
    return _extremum_forward(ctx, tx)


@register("Min")
def min_backward(ctx, gy):
    """y = min_i x_i over ``axis``  =>  dy/dx_i = 1 for the smallest, 0 for the others (1/k each for k ties)

    =>  gx = broadcast(gy) * [x == y] / k: the same rule as max (see _extremum_backward).
    """
    return _extremum_backward(ctx, gy)


@register_forward("Min")
def min_forward(ctx, tx):
    """y = min_i x_i  =>  dy = dx of the smallest (the mean of the smallest on a tie)  =>  ty = sum(tx * share)."""
    return _extremum_forward(ctx, tx)


def _extremum_taylor(ctx, x):
    """y = the winner of x_0 along ``axis``; near x_0 it stays the winner, so y_k is its x_k.

    With k tied winners each gets a share 1/k, as in backward: y_k = sum_i share_i x_k,i, where a loser's
    share 0 is no term at all (an infinite x_k of a loser makes no nan).
    """
    f = ctx.function
    y0 = f.forward(x[0])
    winners = x[0] == y0.reshape(_reduced_shape(x[0].shape, f.axis, True))
    share = (winners / winners.sum(axis=f.axis, keepdims=True)).astype(x.dtype)
    y = series.each(lambda xk: series.strong_zero_product(xk, share).sum(axis=f.axis, keepdims=f.keepdims), x)
    y[0] = y0
    return y


@taylor.register("Max")
def max_taylor(ctx, x):
    """y = max_i x_i  =>  y_k = the largest x_0's coefficient x_k (shared on ties; _extremum_taylor)."""
    return _extremum_taylor(ctx, x)


@taylor.register("Min")
def min_taylor(ctx, x):
    """y = min_i x_i  =>  y_k = the smallest x_0's coefficient x_k (shared on ties; _extremum_taylor)."""
    return _extremum_taylor(ctx, x)
