"""Reductions: sum."""

from minigrad.backward_functions import register
from minigrad.function import Function
from minigrad.functions.shape import broadcast_to, reshape


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
    if not f.keepdims:
        axes = _axes(f.axis, x.ndim)
        shape = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
        gy = reshape(gy, shape)
    return broadcast_to(gy, x.shape)
