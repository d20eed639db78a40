"""Arithmetic: + - * / ** and negation, each a Function with its rule beneath it.

The rules never care about broadcasting: when ``x0`` of shape (3, 1) meets
``x1`` of shape (4,), the rule returns gradients of the output's shape
(3, 4) and the walker sums each back to its input's shape (``sum_to``).
A rule skips an input nobody asked about (``ctx.needs_input_grad``): in
``x * 2.0`` the constant 2.0 needs no gradient.
"""

from minigrad.backward_functions import register
from minigrad.forward_functions import register as register_forward
from minigrad.forward_functions import tangent_sum
from minigrad.function import Function


class Add(Function):
    reads_inputs = reads_outputs = False  # the rule needs only shapes

    def forward(self, x0, x1):
        return x0 + x1


def add(x0, x1):
    """y = x0 + x1 (with broadcasting)."""
    return Add()(x0, x1)


@register("Add")
def add_backward(ctx, gy):
    """y = x0 + x1  =>  dy/dx0 = dy/dx1 = 1  =>  gx0 = gx1 = gy."""
    return gy, gy


@register_forward("Add")
def add_forward(ctx, tx0, tx1):
    """y = x0 + x1  =>  dy = dx0 + dx1  =>  ty = tx0 + tx1 (broadcast to y's shape by the walker)."""
    return tangent_sum(tx0, tx1)


class Sub(Function):
    reads_inputs = reads_outputs = False  # the rule needs only shapes

    def forward(self, x0, x1):
        return x0 - x1


def sub(x0, x1):
    """y = x0 - x1."""
    return Sub()(x0, x1)


@register("Sub")
def sub_backward(ctx, gy):
    """y = x0 - x1  =>  dy/dx0 = 1, dy/dx1 = -1  =>  gx0 = gy, gx1 = -gy."""
    gx1 = -gy if ctx.needs_input_grad[1] else None
    return gy, gx1


@register_forward("Sub")
def sub_forward(ctx, tx0, tx1):
    """y = x0 - x1  =>  dy = dx0 - dx1  =>  ty = tx0 - tx1."""
    return tangent_sum(tx0, None if tx1 is None else -tx1)


class Mul(Function):
    reads_outputs = False  # the rule reads only the inputs

    def forward(self, x0, x1):
        return x0 * x1


def mul(x0, x1):
    """y = x0 * x1 (elementwise)."""
    return Mul()(x0, x1)


@register("Mul")
def mul_backward(ctx, gy):
    """y = x0 * x1  =>  dy/dx0 = x1, dy/dx1 = x0  =>  gx0 = gy * x1, gx1 = gy * x0."""
    x0, x1 = ctx.inputs
    need0, need1 = ctx.needs_input_grad
    return (gy * x1 if need0 else None), (gy * x0 if need1 else None)


@register_forward("Mul")
def mul_forward(ctx, tx0, tx1):
    """y = x0 * x1  =>  dy = x1 dx0 + x0 dx1  =>  ty = tx0 * x1 + x0 * tx1."""
    x0, x1 = ctx.inputs
    return tangent_sum(None if tx0 is None else tx0 * x1, None if tx1 is None else x0 * tx1)


class Div(Function):
    reads_outputs = False  # the rule reads only the inputs

    def forward(self, x0, x1):
        return x0 / x1


def div(x0, x1):
    """y = x0 / x1 (elementwise)."""
    return Div()(x0, x1)


@register("Div")
def div_backward(ctx, gy):
    """y = x0 / x1  =>  dy/dx0 = 1 / x1, dy/dx1 = -x0 / x1^2.

    gx0 = gy / x1,  gx1 = -gy * x0 / x1^2.
    """
    x0, x1 = ctx.inputs
    need0, need1 = ctx.needs_input_grad
    gx0 = gy / x1 if need0 else None
    gx1 = -gy * x0 / (x1 * x1) if need1 else None
    return gx0, gx1


@register_forward("Div")
def div_forward(ctx, tx0, tx1):
    """y = x0 / x1  =>  dy = dx0 / x1 - x0 dx1 / x1^2 = (dx0 - (x0 / x1) dx1) / x1

    =>  ty = (tx0 - (x0 / x1) * tx1) / x1: no x1^2, which overflows (or underflows) long before y does.
    """
    x0, x1 = ctx.inputs
    return tangent_sum(tx0, None if tx1 is None else -(x0 / x1) * tx1) / x1


class Neg(Function):
    reads_inputs = reads_outputs = False  # the rule needs only shapes

    def forward(self, x):
        return -x


def neg(x):
    """y = -x."""
    return Neg()(x)


@register("Neg")
def neg_backward(ctx, gy):
    """y = -x  =>  dy/dx = -1  =>  gx = -gy."""
    return -gy


@register_forward("Neg")
def neg_forward(ctx, tx):
    """y = -x  =>  dy = -dx  =>  ty = -tx."""
    return -tx


class PowScalar(Function):
    """x ** c for a constant number c, kept as an attribute, not an input."""

    reads_outputs = False  # the rule reads only the inputs

    def __init__(self, c):
        self.c = c

    def forward(self, x):
        return x ** self.c


class Pow(Function):
    """x0 ** x1 with a Variable exponent."""

    def forward(self, x0, x1):
        return x0 ** x1


def pow(x, c):
    """y = x ** c, where c is a number or a Variable."""
    if isinstance(c, (int, float)) and not isinstance(c, bool):
        return PowScalar(c)(x)
    return Pow()(x, c)


@register("PowScalar")
def pow_scalar_backward(ctx, gy):
    """y = x^c  =>  dy/dx = c x^(c-1)  =>  gx = gy * c * x^(c-1).

    The result uses ``x ** (c - 1)`` again, so the next derivative follows
    the same rule: x^3 -> 3x^2 -> 6x -> 6x^0 -> 0, a zero still connected to x,
    which differentiates to 0 again, at x = 0 too.
    """
    (x,) = ctx.inputs
    c = ctx.function.c
    if c == 0:  # y = x^0 = 1: the derivative is 0 everywhere (x^-1 would make 0 * inf = nan at 0)
        return gy * (x * 0)
    return gy * c * x ** (c - 1)


@register_forward("PowScalar")
def pow_scalar_forward(ctx, tx):
    """y = x^c  =>  dy = c x^(c-1) dx  =>  ty = c * x^(c-1) * tx (and 0 for c = 0, as in the backward rule)."""
    (x,) = ctx.inputs
    c = ctx.function.c
    if c == 0:
        return tx * (x * 0)
    return c * x ** (c - 1) * tx


@register("Pow")
def pow_backward(ctx, gy):
    """y = x0^x1  =>  dy/dx0 = x1 x0^(x1-1), dy/dx1 = x0^x1 log(x0) = y log(x0).

    gx0 = gy * x1 * x0^(x1-1),  gx1 = gy * y * log(x0).

    gx1 needs log(x0), so it is defined for x0 > 0 only; it is computed only
    when the exponent needs a gradient.
    """
    from minigrad.functions.elementwise import log

    x0, x1 = ctx.inputs
    (y,) = ctx.outputs
    need0, need1 = ctx.needs_input_grad
    gx0 = gy * x1 * x0 ** (x1 - 1) if need0 else None
    gx1 = gy * y * log(x0) if need1 else None
    return gx0, gx1


@register_forward("Pow")
def pow_forward(ctx, tx0, tx1):
    """y = x0^x1  =>  dy = x1 x0^(x1-1) dx0 + y log(x0) dx1

    =>  ty = tx0 * x1 * x0^(x1-1) + tx1 * y * log(x0).

    Where x0 = 0, y log(x0) is 0 * (-inf): its limit, 0 (y = 0^x1 = 0 does not
    move with x1 > 0), is taken there, as torch does, by reading log(1) = 0 instead.
    """
    from minigrad.functions.elementwise import log
    from minigrad.functions.selection import where

    x0, x1 = ctx.inputs
    (y,) = ctx.outputs
    ty0 = ty1 = None
    if tx0 is not None:
        ty0 = tx0 * x1 * x0 ** (x1 - 1)
    if tx1 is not None:
        zero = x0.data == 0
        ty1 = tx1 * y * log(where(zero, 1.0, x0) if zero.any() else x0)
    return tangent_sum(ty0, ty1)


