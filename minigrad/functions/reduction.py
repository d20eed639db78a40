"""Reductions: sum, mean, max, min."""

from minigrad.backward_functions import register
from minigrad.function import Function
from minigrad.functions.shape import broadcast_to, reshape
from minigrad.variable import Variable


def _axes(axis, ndim):
    """``axis`` as a tuple of non-negative ints (all axes for None)."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, int):
        axis = (axis,)
    return tuple(a % ndim for a in axis) if ndim else tuple(axis)


class Sum(Function):
    def __init__(self, axis=None, keepdims=False):
        self.axis = axis
        self.keepdims = keepdims

    def forward(self, x):
        return x.sum(axis=self.axis, keepdims=self.keepdims)


def sum(x, axis=None, keepdims=False):
    """y = the sum of x's elements over ``axis`` (all of them when None)."""
    if isinstance(axis, list):
        axis = tuple(axis)
    return Sum(axis, keepdims)(x)


@register("Sum")
def sum_backward(ctx, gy):
    """y = sum_i x_i  =>  dy/dx_i = 1  =>  gx = gy copied to every summed position.

    Without keepdims the summed axes are gone from gy; put them back as axes
    of length 1, then broadcast to x's shape.
    """
    (x,) = ctx.inputs
    f = ctx.function
    if not f.keepdims and gy.ndim:  # (a 0-d gy, the sum of everything, broadcasts as it is)
        axes = _axes(f.axis, x.ndim)
        shape = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
        gy = reshape(gy, shape)
    return broadcast_to(gy, x.shape)


def mean(x, axis=None, keepdims=False):
    """y = the mean of x's elements over ``axis``: their sum divided by their count.

    Built from ``sum`` and a constant factor, so it needs no rule of its own:
    dy/dx_i = 1/n  =>  gx = gy / n, copied to every averaged position.
    """
    if isinstance(axis, list):
        axis = tuple(axis)
    y = sum(x, axis=axis, keepdims=keepdims)
    count = x.size // y.size if y.size else 1
    return y * (1.0 / count)


class Max(Function):
    def __init__(self, axis=None, keepdims=False):
        self.axis = axis
        self.keepdims = keepdims

    def forward(self, x):
        return x.max(axis=self.axis, keepdims=self.keepdims)


def max(x, axis=None, keepdims=False):
    """y = the largest of x's elements over ``axis`` (all of them when None)."""
    if isinstance(axis, list):
        axis = tuple(axis)
    return Max(axis, keepdims)(x)


class Min(Function):
    def __init__(self, axis=None, keepdims=False):
        self.axis = axis
        self.keepdims = keepdims

    def forward(self, x):
        return x.min(axis=self.axis, keepdims=self.keepdims)


def min(x, axis=None, keepdims=False):
    """y = the smallest of x's elements over ``axis`` (all of them when None)."""
    if isinstance(axis, list):
        axis = tuple(axis)
    return Min(axis, keepdims)(x)


def _extremum_backward(ctx, gy):
    """y = max_i x_i  =>  dy/dx_i = 1 for the winner, 0 for the others.

    With ties (k elements equal to the max) torch splits the gradient evenly,
    1/k each, so that the shares still add up to 1. The winners' mask is a
    constant computed from the values:

        gx = broadcast(gy) * [x == y] / (number of winners).
    """
    (x,) = ctx.inputs
    (y,) = ctx.outputs
    f = ctx.function
    axes = _axes(f.axis, x.ndim)
    shape = tuple(1 if i in axes else s for i, s in enumerate(x.shape))  # y with keepdims
    winners = x.data == y.data.reshape(shape)
    count = winners.sum(axis=f.axis, keepdims=True)
    share = Variable((winners / count).astype(x.dtype), requires_grad=False)
    return broadcast_to(reshape(gy, shape), x.shape) * share


@register("Max")
def max_backward(ctx, gy):
    """y = max_i x_i: the gradient goes to the winners, split evenly among ties."""
    return _extremum_backward(ctx, gy)


@register("Min")
def min_backward(ctx, gy):
    """y = min_i x_i: the same rule as max, the winners being the smallest elements."""
    return _extremum_backward(ctx, gy)
