"""Special elementwise functions: log1p, expm1 (the stable forms of log(1 + x) and e^x - 1) and erf.

log(1 + x) at x = 1e-20 is log(1.0) = 0, since 1 + 1e-20 rounds to 1; log1p keeps x's digits
(1e-20). e^x - 1 at x = 1e-20 is 0 for the same reason, and expm1 gives 1e-20. Their rules are written
with the same stable forms wherever the derivative would cancel.
"""

import math

from minigrad.backward_functions import register
from minigrad.core.function import Function
from minigrad.cuda import erf as erf_array
from minigrad.cuda import get_array_module
from minigrad.families import elementwise
from minigrad.functions.elementwise import exp
from minigrad import series, taylor


class Log1p(Function):
    reads_outputs = False  # the rule reads only the input

    def forward(self, x):
        return get_array_module(x).log1p(x)


def log1p(x):
    """y = log(1 + x), exact for small x (log(1 + 1e-20) is 0 in floating point; log1p(1e-20) is 1e-20)."""
    return Log1p()(x)


@register("Log1p")
def log1p_backward(ctx, gy):
    """y = log(1 + x)  =>  dy/dx = 1 / (1 + x)  =>  gx = gy / (1 + x) (1 + x has no cancellation: no log)."""
    (x,) = ctx.inputs
    return gy / (1 + x)


elementwise("Log1p")


@taylor.register("Log1p")
def log1p_taylor(ctx, x):
    """y = log(u) with u = 1 + x: u_0 = 1 + x_0, u_k = x_k  =>  y_k from log's recurrence (series.log),
    y_k = (u_k - (1/k) sum_{j=1..k-1} j y_j u_{k-j}) / u_0, and y_0 = log1p(x_0), every digit kept."""
    u = x.copy()
    u[0] = 1 + x[0]
    y = series.log(u)
    y[0] = get_array_module(x).log1p(x[0])
    return y


class Expm1(Function):
    reads_outputs = False  # the rule reads only the input

    def forward(self, x):
        return get_array_module(x).expm1(x)


def expm1(x):
    """y = e^x - 1, exact for small x (e^1e-20 - 1 is 0 in floating point; expm1(1e-20) is 1e-20)."""
    return Expm1()(x)


@register("Expm1")
def expm1_backward(ctx, gy):
    """y = e^x - 1  =>  dy/dx = e^x  =>  gx = gy * e^x (no difference: nothing cancels)."""
    (x,) = ctx.inputs
    return gy * exp(x)


elementwise("Expm1")


@taylor.register("Expm1")
def expm1_taylor(ctx, x):
    """y = e^x - 1  =>  y' = e^x x'  =>  y_k = (e^x)_k for k >= 1 (series.exp), and y_0 = expm1(x_0)."""
    y = series.exp(x)
    y[0] = get_array_module(x).expm1(x[0])
    return y


class Erf(Function):
    reads_outputs = False  # the rule reads only the input

    def forward(self, x):
        return erf_array(x)


def erf(x):
    """y = erf(x) = (2 / sqrt(pi)) int_0^x e^(-s^2) ds."""
    return Erf()(x)


TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


@register("Erf")
def erf_backward(ctx, gy):
    """y = (2 / sqrt(pi)) int_0^x e^(-s^2) ds  =>  dy/dx = (2 / sqrt(pi)) e^(-x^2)

    =>  gx = gy * (2 / sqrt(pi)) * e^(-x^2) (underflows to 0 past |x| = 27, as the slope does).
    """
    (x,) = ctx.inputs
    return gy * TWO_OVER_SQRT_PI * exp(-(x * x))


elementwise("Erf")


@taylor.register("Erf")
def erf_taylor(ctx, x):
    """y' = z x' with z = (2 / sqrt(pi)) e^(-x^2), a series of x alone (series.exp of -x x)

    =>  k y_k = sum_{j=1..k} j x_j z_{k-j} (series.chain), from y_0 = erf(x_0).
    """
    xp = get_array_module(x)
    z = series.exp(-series.product(x, x)) * TWO_OVER_SQRT_PI
    y = xp.empty_like(z)
    y[0] = erf_array(x[0])
    jx = series.weighted(x)
    for k in range(1, len(x)):
        y[k] = series.chain(jx, z, k)
    return y
