"""Activations and other elementwise functions of one input: relu, sigmoid, abs, sqrt, square, clip.

The piecewise-linear ones (relu, abs, clip) have a kink where the slope
jumps. There the derivative does not exist, and we follow PyTorch:
relu'(0) = 0, abs'(0) = 0, and clip passes the gradient on its boundaries.
Their rules multiply ``gy`` by a mask of 0s and 1s (or signs) computed
from the input's values: a constant, not a graph, because the slope does
not change as x moves a little. So the rule is linear in ``gy`` (the next
derivative in ``gy`` is the same mask) and the second derivative in ``x``
is 0, as it should be away from the kinks.
"""

from minigrad.backward_functions import register
from minigrad.cuda import get_array_module
from minigrad.families import elementwise
from minigrad.core.function import Function
from minigrad.support.numpy_interop import data_of
from minigrad import series, taylor


def _mask(array, dtype):
    """A constant (an array, no graph) holding ``array`` in the floating ``dtype``."""
    return array.astype(dtype)


class ReLU(Function):
    reads_outputs = False  # the rule reads only the inputs

    def forward(self, x):
        return get_array_module(x).maximum(x, 0).astype(x.dtype)


def relu(x):
    """y = max(x, 0)."""
    return ReLU()(x)


@register("ReLU")
def relu_backward(ctx, gy):
    """y = max(x, 0)  =>  dy/dx = 1 for x > 0, 0 for x < 0 (and 0 at x = 0, as torch)

    =>  gx = gy * [x > 0].
    """
    (x,) = ctx.inputs
    return gy * _mask(x > 0, x.dtype)


elementwise("ReLU")


@taylor.register("ReLU")
def relu_taylor(ctx, x):
    """y = x where x_0 > 0, else 0: along the active branch y_k = x_k [x_0 > 0] (0 at x_0 = 0, as backward).

    Chosen, not multiplied by a mask of 0: at x_0 = -inf, -inf * 0 is nan, where y is 0. y_0 is the
    forward's max(x_0, 0), nan at a nan (where x_0 > 0 is false, as at a negative x_0).
    """
    xp = get_array_module(x)
    y = xp.where(x[0] > 0, x, xp.zeros((), dtype=x.dtype))
    y[0] = ctx.function.forward(x[0])
    return y


class Sigmoid(Function):
    reads_inputs = False  # the rule reads only the output

    def forward(self, x):
        # 1 / (1 + e^-x) overflows e^-x for x << 0, and 0.5 tanh(x/2) + 0.5 rounds to 0 there
        # (sigmoid(-40) = 4.2e-18 is 0.5 - 0.5 + 4.2e-18). With e = e^-|x|, which never overflows,
        # y = 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0: no sum cancels, at either end.
        xp = get_array_module(x)
        e = xp.exp(-xp.abs(x))
        d = 1 + e
        return xp.where(x >= 0, 1, e) / d


def sigmoid(x):
    """y = 1 / (1 + e^-x)."""
    return Sigmoid()(x)


@register("Sigmoid")
def sigmoid_backward(ctx, gy):
    """y = 1 / (1 + e^-x)  =>  dy/dx = e^-x / (1 + e^-x)^2 = y (1 - y)  =>  gx = gy * y * (1 - y)."""
    (y,) = ctx.outputs
    return gy * y * (1 - y)


elementwise("Sigmoid")


@taylor.register("Sigmoid")
def sigmoid_taylor(ctx, x):
    """y = 1 / (1 + e) with e = e^-x where x_0 >= 0, and y = e / (1 + e) with e = e^x where x_0 < 0:
    the forward's two forms, so e_0 = e^-|x_0| <= 1 never overflows. Then y (1 + e) = 1 (or e), a
    quotient of series (series.quotient): y_k = (a_k - sum_{j=1..k} e_j y_{k-j}) / (1 + e_0).

    Not (1 + tanh(x/2)) / 2: there 1 - tanh^2 cancels to 0 in the tail x << 0, where y and every
    derivative are about e^x (4.2e-18 at x = -40), and the quotient keeps their every digit.
    """
    xp = get_array_module(x)
    positive = x[0] >= 0
    e = series.exp(x * xp.where(positive, -1, 1).astype(x.dtype))
    numerator = xp.where(positive, series.constant(xp.ones_like(x[0]), len(x) - 1), e)
    denominator = e.copy()
    denominator[0] += 1
    return series.quotient(numerator, denominator)


class Abs(Function):
    reads_outputs = False  # the rule reads only the inputs

    def forward(self, x):
        return get_array_module(x).abs(x)


def abs(x):
    """y = |x|."""
    return Abs()(x)


@register("Abs")
def abs_backward(ctx, gy):
    """y = |x|  =>  dy/dx = sign(x), with sign(0) = 0 (torch's choice)  =>  gx = gy * sign(x)."""
    (x,) = ctx.inputs
    return gy * _mask(get_array_module(x).sign(data_of(x)), x.dtype)


elementwise("Abs")


@taylor.register("Abs")
def abs_taylor(ctx, x):
    """y = sign(x_0) x along the active branch  =>  y_k = sign(x_0) x_k (0 at x_0 = 0, as backward).

    Chosen by the sign, not multiplied by it (0 * inf is nan); where the sign is 0 (the kink) or nan
    (x_0 is nan), every coefficient is that sign, as backward's gy * sign(x) gives.
    """
    xp = get_array_module(x)
    sign = xp.sign(x[0])
    return xp.where(sign > 0, x, xp.where(sign < 0, -x, sign * xp.ones_like(x)))


class Sqrt(Function):
    reads_inputs = False  # the rule reads only the output

    def forward(self, x):
        return get_array_module(x).sqrt(x)


def sqrt(x):
    """y = sqrt(x), for x >= 0."""
    return Sqrt()(x)


@register("Sqrt")
def sqrt_backward(ctx, gy):
    """y = x^(1/2)  =>  dy/dx = 1 / (2 x^(1/2)) = 1 / (2y)  =>  gx = gy / (2 * y).

    Infinite at x = 0, as the slope of the square root is.
    """
    (y,) = ctx.outputs
    return gy / (2 * y)


elementwise("Sqrt")


@taylor.register("Sqrt")
def sqrt_taylor(ctx, x):
    """y = x^(1/2)  =>  y^2 = x  =>  x_k = sum_{j=0..k} y_j y_{k-j}

    =>  y_k = (x_k - sum_{j=1..k-1} y_j y_{k-j}) / (2 y_0): infinite at x_0 = 0, as the slope is.
    """
    xp = get_array_module(x)
    y = xp.empty_like(x)
    y[0] = xp.sqrt(x[0])
    for k in range(1, len(x)):
        y[k] = (x[k] - series.convolve(y, y, k, lo=1, hi=k - 1)) / (2 * y[0])
    return y


class Square(Function):
    reads_outputs = False  # the rule reads only the inputs

    def forward(self, x):
        return x * x


def square(x):
    """y = x^2."""
    return Square()(x)


@register("Square")
def square_backward(ctx, gy):
    """y = x^2  =>  dy/dx = 2x  =>  gx = gy * 2 * x."""
    (x,) = ctx.inputs
    return gy * 2 * x


elementwise("Square")


@taylor.register("Square")
def square_taylor(ctx, x):
    """y = x x  =>  y_k = sum_{j=0..k} x_j x_{k-j}."""
    return series.product(x, x)


class Clip(Function):
    def __init__(self, x_min, x_max):
        self.x_min = x_min
        self.x_max = x_max

    def forward(self, x):
        return get_array_module(x).clip(x, self.x_min, self.x_max).astype(x.dtype)


def clip(x, x_min, x_max):
    """y = x_min where x < x_min, x_max where x > x_max, else x (bounds are numbers)."""
    if x_min is None or x_max is None:  # np.clip takes None for no bound: clip does not
        raise TypeError(
            f"clip: x_min={x_min!r} and x_max={x_max!r} must both be numbers; for one bound only, "
            "use F.maximum(x, x_min) or F.minimum(x, x_max)"
        )
    if x_min > x_max:
        raise ValueError(f"clip: x_min={x_min} is greater than x_max={x_max}; pass x_min <= x_max")
    return Clip(x_min, x_max)(x)


@register("Clip")
def clip_backward(ctx, gy):
    """y = x between the bounds, a constant outside  =>  dy/dx = 1 inside, 0 outside

    =>  gx = gy * [x_min <= x <= x_max] (torch passes the gradient on the bounds too).
    """
    (x,) = ctx.inputs
    f = ctx.function
    inside = (x >= f.x_min) & (x <= f.x_max)
    return gy * _mask(inside, x.dtype)


elementwise("Clip")


@taylor.register("Clip")
def clip_taylor(ctx, x):
    """y = x between the bounds, a constant outside: along the active branch y_k = x_k [x_min <= x_0 <= x_max]
    for k >= 1 (the bounds pass, as backward), and y_0 = clip(x_0)."""
    f = ctx.function
    xp = get_array_module(x)
    y = xp.where((x[0] >= f.x_min) & (x[0] <= f.x_max), x, xp.zeros((), dtype=x.dtype))  # (inf * 0 is nan)
    y[0] = xp.clip(x[0], f.x_min, f.x_max)
    return y
