"""Cumulative sums and products: cumsum, a linear scan, and prod, a reduction by product."""

import math

import numpy as np

from minigrad.backward_functions import register
from minigrad.core.function import Function
from minigrad.cuda import get_array_module
from minigrad.families import linear
from minigrad.forward_functions import register as register_forward
from minigrad.functions.reduction import Sum, _reduced_shape
from minigrad.functions.selection import where
from minigrad.functions.shape import broadcast_to, getitem, reshape, transpose
from minigrad import series, taylor


def _one_axis(where_, axis, x):
    """``axis`` as an int (or None for all of x, flattened), with an error that names the function."""
    if axis is None:
        return None
    if isinstance(axis, bool) or not isinstance(axis, int) and not hasattr(axis, "__index__"):
        raise TypeError(f"{where_}: axis must be an int or None, got {axis!r}; for several axes, "
                        f"reshape x first")
    ndim = len(x.shape)
    if not -ndim <= int(axis) < ndim:
        raise ValueError(f"{where_}: axis {axis} is out of range for x of shape {tuple(x.shape)}")
    return int(axis) % ndim


def _axes(where_, axis, x):
    """``axis`` as _one_axis gives it, or, for a tuple or list of axes, a tuple of distinct ones, each >= 0."""
    if not isinstance(axis, (tuple, list)):
        return _one_axis(where_, axis, x)
    axes = tuple(_one_axis(where_, a, x) for a in axis)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{where_}: axis {tuple(axis)} names an axis of x of shape {tuple(x.shape)} twice")
    return axes


class CumSum(Function):
    reads_inputs = reads_outputs = False  # the rule needs only shapes

    def __init__(self, axis):
        self.axis = axis

    def forward(self, x):
        return get_array_module(x).cumsum(x, axis=self.axis)


def cumsum(x, axis=None):
    """y_i = x_0 + x_1 + ... + x_i along ``axis`` (over x flattened when None, as NumPy's)."""
    return CumSum(_one_axis("cumsum", axis, x))(x)


def _reversed(y, axis):
    """y with its elements along ``axis`` in reverse order: a getitem, so differentiable (and linear)."""
    return getitem(y, (slice(None),) * axis + (slice(None, None, -1),))


@register("CumSum")
def cumsum_backward(ctx, gy):
    """y_i = sum_{j <= i} x_j  =>  dy_i/dx_j = [j <= i]  =>  gx_j = sum_{i >= j} gy_i: the cumulative sum
    of gy taken from the end, cumsum of gy reversed, reversed again (back to x's shape when flattened)."""
    (x,) = ctx.inputs
    axis = ctx.function.axis
    gx = _reversed(cumsum(_reversed(gy, axis or 0), axis or 0), axis or 0)
    return gx if axis is not None else reshape(gx, x.shape)


linear("CumSum")


class Prod(Function):
    reads_outputs = False  # the rule reads only the input

    def __init__(self, axis, keepdims):
        self.axis = axis
        self.keepdims = keepdims

    def forward(self, x):
        return x.prod(axis=self.axis, keepdims=self.keepdims)


def prod(x, axis=None, keepdims=False):
    """y = the product of x's elements along ``axis``: an int, a tuple of them, or None (all of them)."""
    return Prod(_axes("prod", axis, x), keepdims)(x)


def products_of_the_others(x, axis):
    """o_i = prod_{j != i} x_j along ``axis`` (all of x when None), for every i, exact with zeros.

    Not y / x_i, which is 0/0 where x_i = 0: n copies of x along a new axis, copy i with its own x_i
    replaced by 1, each multiplied out by Prod. O(n^2) for n elements along the axis, and written with
    Functions (where, broadcast_to, Prod), so differentiable again: prod's rule, to every order.
    """
    if axis is None:
        return reshape(products_of_the_others(reshape(x, (-1,)), 0), x.shape)
    if isinstance(axis, tuple):  # the axes moved last and made one, then put back
        rest = [a for a in range(x.ndim) if a not in axis]
        moved = transpose(x, rest + list(axis))
        one = reshape(moved, moved.shape[:len(rest)] + (math.prod(moved.shape[len(rest):]),))
        back = [int(a) for a in np.argsort(rest + list(axis))]
        return transpose(reshape(products_of_the_others(one, len(rest)), moved.shape), back)
    shape = x.shape
    n = shape[axis]
    copies = broadcast_to(reshape(x, shape[:axis] + (1,) + shape[axis:]), shape[:axis] + (n,) + shape[axis:])
    xp = get_array_module(x)
    own = xp.eye(n, dtype=bool).reshape((n, n) + (1,) * (len(shape) - axis - 1))
    return Prod(axis + 1, False)(where(own, 1.0, copies))


@register("Prod")
def prod_backward(ctx, gy):
    """y = prod_j x_j  =>  dy/dx_i = prod_{j != i} x_j = o_i (products_of_the_others)

    =>  gx_i = gy * o_i, gy broadcast back along the axis. With one zero x_k, every gx_i is 0 but gx_k,
    the product of the others; with two zeros, all are 0: exact, where gy * y / x_i is 0/0.
    """
    (x,) = ctx.inputs
    f = ctx.function
    gy = broadcast_to(reshape(gy, _reduced_shape(x.shape, f.axis, True)), x.shape)
    return gy * products_of_the_others(x, f.axis)


@register_forward("Prod")
def prod_forward(ctx, tx):
    """y = prod_j x_j  =>  dy = sum_i o_i dx_i (the product rule, o_i the product of the others)

    =>  ty = sum(tx * o) along the axis.
    """
    (x,) = ctx.inputs
    f = ctx.function
    return Sum(f.axis, f.keepdims)(tx * products_of_the_others(x, f.axis))


@taylor.register("Prod")
def prod_taylor(ctx, x):
    """y = x_(0) x_(1) ... x_(n-1), the elements along the axis: one Cauchy product after another,
    y_k = sum_{j=0..k} p_j x_(i),k-j for each next factor x_(i) (series.product; exact with zeros)."""
    f = ctx.function
    xp = get_array_module(x)
    out = (len(x),) + _reduced_shape(x.shape[1:], f.axis, f.keepdims)
    if f.axis is None:
        factors = x.reshape(len(x), x[0].size, 1)
    else:  # the factors along the axes, first, as one axis
        axes = (f.axis,) if isinstance(f.axis, int) else f.axis
        moved = xp.moveaxis(x, [a + 1 for a in axes], list(range(1, len(axes) + 1)))
        factors = moved.reshape((len(x), math.prod(moved.shape[1:len(axes) + 1])) + moved.shape[len(axes) + 1:])
    y = series.constant(xp.ones(factors.shape[2:], dtype=x.dtype), len(x) - 1)  # (1 for no factor at all)
    for i in range(factors.shape[1]):
        y = series.product(y, factors[:, i])
    return y.reshape(out)
