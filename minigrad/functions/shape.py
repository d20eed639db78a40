"""Shape functions: reshape, transpose, broadcast_to, sum_to, getitem.

They move numbers around without changing them, so each rule moves the
gradient back: reshape undoes reshape, transpose undoes transpose, and
broadcast_to and sum_to undo each other.
"""

import math

import numpy as np

from minigrad.families import linear
from minigrad.backward_functions import register
from minigrad.cuda import get_array_module, scatter_add
from minigrad.core.function import Function
from minigrad.core.variable import Variable


def _shape_arg(shape):
    """reshape(x, 2, 3) and reshape(x, (2, 3)) both mean the shape (2, 3)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return tuple(map(int, shape))


class Reshape(Function):
    reads_inputs = reads_outputs = False  # the rule needs only shapes

    def __init__(self, shape):
        self.shape = shape

    def forward(self, x):
        try:
            return x.reshape(self.shape)
        except ValueError as e:  # the message is built only when reshape fails
            raise ValueError(
                f"cannot reshape x of shape {x.shape} to {self.shape}; the new shape must hold the same "
                f"{x.size} elements: pass dimensions that multiply to {x.size} (one of them may be -1, "
                "inferred from the others)"
            ) from e


def reshape(x, *shape):
    """y = x with another shape and the same elements in the same order."""
    return Reshape(_shape_arg(shape))(x)


@register("Reshape")
def reshape_backward(ctx, gy):
    """Each element of y is an element of x  =>  gx = gy reshaped back to x's shape."""
    (x,) = ctx.inputs
    return reshape(gy, x.shape)


linear("Reshape")


class Transpose(Function):
    reads_inputs = reads_outputs = False  # the rule needs only shapes

    def __init__(self, axes=None):
        self.axes = axes

    def forward(self, x):
        try:
            return get_array_module(x).transpose(x, self.axes)
        except ValueError as e:  # (NumPy's AxisError is a ValueError too)
            raise ValueError(
                f"axes {self.axes} do not permute the {x.ndim} axes of x of shape {x.shape}; pass each "
                f"of 0 to {x.ndim - 1} once, e.g. {tuple(range(x.ndim))[::-1]} reverses them"
            ) from e


def transpose(x, *axes):
    """y = x with its axes permuted (reversed when no axes are given)."""
    axes = _shape_arg(axes) if axes and axes != (None,) else None
    return Transpose(axes)(x)


@register("Transpose")
def transpose_backward(ctx, gy):
    """Axis k of y is axis axes[k] of x (for a matrix, y[i, j] = x[j, i]): each y element is one x element

    =>  gx = gy with its axis k put back at axis axes[k]: gy transposed by the inverse permutation,
    argsort(axes) once negative axes count from the end (reversed again when axes is None).
    """
    axes = ctx.function.axes
    if axes is None:
        return transpose(gy)
    return transpose(gy, tuple(int(a) for a in np.argsort([a % len(axes) for a in axes])))


linear("Transpose")


def _sum_to_shape_error(x_shape, shape):
    lead = len(x_shape) - len(shape)
    return lead < 0 or any(s != 1 and s != d for s, d in zip(shape, x_shape[lead:]))


# Up to this many elements, broadcast_to fills a new array: NumPy builds a broadcast view
# in Python (about 2.4 us), a small filled array costs a tenth of that. Larger results are
# views, which take no memory: the rule of sum over 10^7 elements broadcasts a single number.
FILL_UP_TO = 4096


class BroadcastTo(Function):
    reads_inputs = reads_outputs = False  # the rule needs only shapes

    def __init__(self, shape):
        self.shape = shape

    def forward(self, x):
        try:
            return broadcast_array(x, self.shape)
        except ValueError as e:
            raise ValueError(
                f"x of shape {x.shape} cannot be repeated to shape {self.shape}: aligned from the last "
                f"axis, each axis of x must be 1 or equal the target's, and the target needs at least "
                f"{x.ndim} axes; reshape x first, with axes of length 1 where it should repeat"
            ) from e


def broadcast_array(x, shape):
    """The array x broadcast to ``shape``: a new array up to FILL_UP_TO elements, else a view."""
    xp = get_array_module(x)
    if x.ndim <= len(shape) and math.prod(shape) <= FILL_UP_TO:
        y = xp.empty(shape, x.dtype)
        y[...] = x  # (raises, as broadcast_to does, when x does not broadcast to the shape)
        return y
    return xp.broadcast_to(x, shape)


def broadcast_to(x, *shape):
    """y = x repeated along new leading axes and along its axes of length 1."""
    return BroadcastTo(_shape_arg(shape))(x)


@register("BroadcastTo")
def broadcast_to_backward(ctx, gy):
    """Each x element is copied to many y elements  =>  gx = the sum of their gradients: sum_to."""
    (x,) = ctx.inputs
    return sum_to(gy, x.shape)


linear("BroadcastTo")


class SumTo(Function):
    reads_inputs = reads_outputs = False  # the rule needs only shapes

    def __init__(self, shape):
        self.shape = shape

    def forward(self, x):
        if x.shape == self.shape:
            return x
        if _sum_to_shape_error(x.shape, self.shape):
            raise ValueError(
                f"sum_to: cannot sum an array of shape {x.shape} to shape {self.shape}; "
                "the target's dimensions must match x's trailing ones or be 1"
            )
        lead = x.ndim - len(self.shape)
        axes = tuple(range(lead)) + tuple(
            lead + i for i, s in enumerate(self.shape) if s == 1 and x.shape[lead + i] != 1
        )
        return x.sum(axis=axes, keepdims=True).reshape(self.shape)


def sum_to(x, *shape):
    """y = x summed down to ``shape``: the reverse of broadcast_to(., x.shape)."""
    return SumTo(_shape_arg(shape))(x)


@register("SumTo")
def sum_to_backward(ctx, gy):
    """Each y element is a sum of x elements, each with derivative 1  =>  gx = broadcast_to(gy)."""
    (x,) = ctx.inputs
    return broadcast_to(gy, x.shape)


linear("SumTo")


def _is_basic_index(key):
    """True for ints, slices, None and Ellipsis: no element is picked twice."""
    keys = key if isinstance(key, tuple) else (key,)
    return all(k is None or k is Ellipsis or isinstance(k, (int, slice, np.integer)) for k in keys)


def _index_key(key):
    """Variables in an index are read as integer arrays."""
    def one(k):
        if isinstance(k, Variable):
            return k.data.astype(np.intp)
        return k

    return tuple(one(k) for k in key) if isinstance(key, tuple) else one(key)


def _key_on(xp, key):
    """Index arrays moved to the device of the data they index."""
    if isinstance(key, tuple):
        return tuple(_key_on(xp, k) for k in key)
    return xp.asarray(key) if hasattr(key, "dtype") and getattr(key, "ndim", 0) > 0 else key


class GetItem(Function):
    reads_outputs = False  # the rule reads only the inputs

    def __init__(self, key):
        self.key = key

    def forward(self, x):
        return x[_key_on(get_array_module(x), self.key)]


def getitem(x, key):
    """y = x[key], with NumPy's basic and advanced indexing."""
    return GetItem(_index_key(key))(x)


@register("GetItem")
def getitem_backward(ctx, gy):
    """y = x[key]  =>  each picked element gets its gradient, added up where picked twice.

    gx = zeros of x's shape with gy scatter-added at key: GetItemGrad, whose own
    rule picks the same elements again (getitem), so it is differentiable.
    """
    (x,) = ctx.inputs
    return GetItemGrad(ctx.function.key, x.shape)(gy)


linear("GetItem")


class GetItemGrad(Function):
    """gx = zeros(shape); gx[key] += gy: the scatter-add that undoes indexing."""

    def __init__(self, key, shape):
        self.key = key
        self.shape = shape

    def forward(self, gy):
        xp = get_array_module(gy)
        gx = xp.zeros(self.shape, dtype=gy.dtype)
        if _is_basic_index(self.key):
            gx[self.key] = gy
        else:
            scatter_add(gx, _key_on(xp, self.key), gy)
        return gx


@register("GetItemGrad")
def getitem_grad_backward(ctx, ggx):
    """gx = scatter(gy) is linear in gy, and its transpose is picking again: ggy = ggx[key]."""
    return getitem(ggx, ctx.function.key)


linear("GetItemGrad")


class Concatenate(Function):
    def __init__(self, axis):
        self.axis = axis

    def forward(self, *xs):
        return get_array_module(*xs).concatenate(xs, axis=self.axis)


def concatenate(*xs, axis=-1):
    """y = the inputs joined along ``axis`` (the last by default, as nnabla).

    Takes the inputs as arguments, ``concatenate(x0, x1, axis=1)``, or as one list.
    """
    if len(xs) == 1 and isinstance(xs[0], (list, tuple)):
        xs = tuple(xs[0])
    if not xs:
        raise ValueError("concatenate: no inputs; pass at least one Variable")
    shapes = [tuple(x.shape) for x in xs]
    ndim = len(shapes[0])
    if not -ndim <= axis < ndim:
        raise ValueError(f"concatenate: axis={axis} is out of range for inputs of {ndim} dimensions")
    axis %= ndim
    rest = [s[:axis] + s[axis + 1:] for s in shapes]
    if any(len(s) != ndim or r != rest[0] for s, r in zip(shapes, rest)):
        raise ValueError(
            f"concatenate: the inputs' shapes {shapes} must agree on every axis but axis {axis}"
        )
    return Concatenate(axis)(*xs)


@register("Concatenate")
def concatenate_backward(ctx, gy):
    """y = [x0, x1, ...] along the axis  =>  each x_k is a slice of y

    =>  gx_k = gy[..., start_k:stop_k, ...]: a getitem, so differentiable.
    """
    axis = ctx.function.axis
    gxs, start = [], 0
    for x, wanted in zip(ctx.inputs, ctx.needs_input_grad):
        stop = start + x.shape[axis]
        key = (slice(None),) * axis + (slice(start, stop),)
        gxs.append(getitem(gy, key) if wanted else None)
        start = stop
    return tuple(gxs)


linear("Concatenate")


def flatten(x):
    """y = x reshaped to (N, everything else): (N, C, H, W) -> (N, C*H*W).

    A reshape, so it needs no rule of its own.
    """
    if x.ndim < 1:
        raise ValueError("flatten: x is 0-dimensional; it needs a first (batch) axis to keep")
    return reshape(x, (x.shape[0], math.prod(x.shape[1:])))  # not -1: an empty batch has no -1 to infer

