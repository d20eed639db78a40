"""Elementwise functions of one input: exp, log, sin, cos, tanh, cast, and identity.

Each rule multiplies the incoming gradient by the derivative, written with
minigrad functions, so it is differentiable in turn.
"""

import numpy as np

from minigrad.backward_functions import register
from minigrad.cuda import get_array_module
from minigrad.families import elementwise, linear, transposed
from minigrad.forward_functions import register as register_forward
from minigrad.forward_functions import tangent_sum
from minigrad.core.function import Function
from minigrad import series, taylor


class Exp(Function):
    reads_inputs = False  # the rule reads only the output

    def forward(self, x):
        return get_array_module(x).exp(x)


def exp(x):
    """y = e^x."""
    return Exp()(x)


@register("Exp")
def exp_backward(ctx, gy):
    """y = e^x  =>  dy/dx = e^x = y  =>  gx = gy * y (the output, already computed)."""
    (y,) = ctx.outputs
    return gy * y


elementwise("Exp")


@taylor.register("Exp")
def exp_taylor(ctx, x):
    """y = e^x  =>  y' = y x'  =>  at t^(k-1): k y_k = sum_{j=1..k} j x_j y_{k-j} (series.exp)."""
    return series.exp(x)


class Log(Function):
    reads_outputs = False  # the rule reads only the inputs

    def forward(self, x):
        return get_array_module(x).log(x)


def log(x):
    """y = ln x (natural logarithm), for x > 0."""
    return Log()(x)


@register("Log")
def log_backward(ctx, gy):
    """y = ln x  =>  dy/dx = 1/x  =>  gx = gy / x."""
    (x,) = ctx.inputs
    return gy / x


elementwise("Log")


@taylor.register("Log")
def log_taylor(ctx, x):
    """y = log x  =>  x y' = x'  =>  y_k = (x_k - (1/k) sum_{j=1..k-1} j y_j x_{k-j}) / x_0 (series.log)."""
    return series.log(x)


class Sin(Function):
    reads_outputs = False  # the rule reads only the inputs

    def forward(self, x):
        return get_array_module(x).sin(x)


def sin(x):
    """y = sin x."""
    return Sin()(x)


@register("Sin")
def sin_backward(ctx, gy):
    """y = sin x  =>  dy/dx = cos x  =>  gx = gy * cos(x)."""
    (x,) = ctx.inputs
    return gy * cos(x)


elementwise("Sin")


def sin_cos_series(x):
    """s = sin x and c = cos x together: s' = c x', c' = -s x'

    =>  k s_k = sum_{j=1..k} j x_j c_{k-j},  k c_k = -sum_{j=1..k} j x_j s_{k-j}:
    each needs the other up to k - 1, so the two are found side by side.
    """
    xp = get_array_module(x)
    s, c = xp.empty_like(x), xp.empty_like(x)
    s[0], c[0] = xp.sin(x[0]), xp.cos(x[0])
    jx = series.weighted(x)
    for k in range(1, len(x)):
        s[k] = series.chain(jx, c, k)
        c[k] = -series.chain(jx, s, k)
    return s, c


@taylor.register("Sin")
def sin_taylor(ctx, x):
    """y = sin x: the first of sin_cos_series."""
    return sin_cos_series(x)[0]


class Cos(Function):
    reads_outputs = False  # the rule reads only the inputs

    def forward(self, x):
        return get_array_module(x).cos(x)


def cos(x):
    """y = cos x."""
    return Cos()(x)


@register("Cos")
def cos_backward(ctx, gy):
    """y = cos x  =>  dy/dx = -sin x  =>  gx = -gy * sin(x)."""
    (x,) = ctx.inputs
    return -gy * sin(x)


elementwise("Cos")


@taylor.register("Cos")
def cos_taylor(ctx, x):
    """y = cos x: the second of sin_cos_series."""
    return sin_cos_series(x)[1]


class Tanh(Function):
    reads_inputs = False  # the rule reads only the output

    def forward(self, x):
        return get_array_module(x).tanh(x)


def tanh(x):
    """y = tanh x."""
    return Tanh()(x)


@register("Tanh")
def tanh_backward(ctx, gy):
    """y = tanh x  =>  dy/dx = 1 - tanh^2 x = 1 - y^2  =>  gx = gy * (1 - y^2).

    Written as ``gy * (1 - y * y)`` this makes three arrays; TanhGrad computes
    the same in one pass, and is itself differentiable.
    """
    (y,) = ctx.outputs
    return TanhGrad()(y, gy)


elementwise("Tanh")


@taylor.register("Tanh")
def tanh_taylor(ctx, x):
    """y = tanh x  =>  y' = (1 - y^2) x' = z x'  with z = 1 - y^2

    =>  k y_k = sum_{j=1..k} j x_j z_{k-j},  z_k = [k = 0] - sum_{j=0..k} y_j y_{k-j}:
    z up to k - 1 gives y_k, which gives z_k.
    """
    xp = get_array_module(x)
    y, z = xp.empty_like(x), xp.empty_like(x)
    y[0] = xp.tanh(x[0])
    z[0] = 1 - y[0] * y[0]
    jx = series.weighted(x)
    for k in range(1, len(x)):
        y[k] = series.chain(jx, z, k)
        z[k] = -series.convolve(y, y, k)
    return y


class TanhGrad(Function):
    """gx = gy * (1 - y^2): tanh's backward as one function of (y, gy)."""

    reads_outputs = False  # the rule reads only the inputs

    def forward(self, y, gy):
        xp = get_array_module(y)
        gx = xp.multiply(y, y, out=xp.empty_like(y))  # out= keeps a 0-d result an array
        xp.subtract(1, gx, out=gx)  # in place on our own array: one allocation in all
        gx *= gy
        return gx


@register("TanhGrad")
def tanh_grad_backward(ctx, ggx):
    """gx = gy (1 - y^2)  =>  d gx/dy = -2 y gy,  d gx/d gy = 1 - y^2.

    So g_y = -2 y gy ggx and g_gy = ggx (1 - y^2), which is TanhGrad(y, ggx) again.
    """
    y, gy = ctx.inputs
    need_y, need_gy = ctx.needs_input_grad
    g_y = -2 * y * gy * ggx if need_y else None
    g_gy = TanhGrad()(y, ggx) if need_gy else None
    return g_y, g_gy


@register_forward("TanhGrad")
def tanh_grad_forward(ctx, ty, tgy):
    """gx = gy (1 - y^2)  =>  d gx = -2 y gy dy + (1 - y^2) d gy  =>  t = -2 y gy ty + TanhGrad(y, tgy)."""
    y, gy = ctx.inputs
    return tangent_sum(None if ty is None else -2 * y * gy * ty, None if tgy is None else TanhGrad()(y, tgy))


@taylor.register("TanhGrad")
def tanh_grad_taylor(ctx, y, gy):
    """gx = gy (1 - y^2): two Cauchy products, the 1 added to coefficient 0 only."""
    z = -series.product(y, y)
    z[0] += 1
    return series.product(gy, z)


transposed("TanhGrad", constants=(0,))  # gy (1 - y^2) is linear in gy alone


class Cast(Function):
    reads_inputs = reads_outputs = False  # the rule needs only shapes

    def __init__(self, dtype):
        self.dtype = dtype

    def forward(self, x):
        return x.astype(self.dtype)


def cast(x, dtype):
    """y = x converted to another floating dtype (float32 <-> float64)."""
    try:
        floating = np.dtype(dtype).kind == "f"  # an integer Variable would carry no gradient
    except TypeError:  # not a dtype at all: 'float33'
        floating = False
    if not floating:
        name = getattr(dtype, "__name__", dtype)  # np.int32 -> int32
        raise TypeError(f"cast: dtype={name} is not a floating dtype; minigrad differentiates floating-point "
                        "arrays: pass np.float32 or np.float64 (x.data.astype(...) for the values)")
    return Cast(dtype)(x)


@register("Cast")
def cast_backward(ctx, gy):
    """y = x in another dtype  =>  dy/dx = 1  =>  gx = gy, back in x's dtype."""
    (x,) = ctx.inputs
    return cast(gy, x.dtype)


linear("Cast")


class Identity(Function):
    """y = x, as a new node: ``minigrad.func`` gives each argument of the function it
    differentiates one, so that its derivatives go to that argument alone."""

    reads_inputs = reads_outputs = False  # the rules need nothing

    def forward(self, x):
        return x.view()  # a new array object on the same memory: no copy


def identity(x):
    """y = x (a new node of the graph, holding the same values)."""
    return Identity()(x)


@register("Identity")
def identity_backward(ctx, gy):
    """y = x  =>  dy/dx = 1  =>  gx = gy."""
    return gy


linear("Identity")
