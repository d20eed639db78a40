"""Arithmetic: + - * / ** and negation, each a Function with its rule beneath it.

The rules never care about broadcasting: when ``x0`` of shape (3, 1) meets
``x1`` of shape (4,), the rule returns gradients of the output's shape
(3, 4) and the walker sums each back to its input's shape (``sum_to``).
A rule skips an input nobody asked about (``ctx.needs_input_grad``): in
``x * 2.0`` the constant 2.0 needs no gradient.
"""

import numpy as np

from minigrad.backward_functions import register
from minigrad.families import elementwise, linear, transposed
from minigrad.forward_functions import register as register_forward
from minigrad.forward_functions import tangent_sum
from minigrad.cuda import get_array_module
from minigrad.core.function import Function
from minigrad.support.numpy_interop import data_of
from minigrad import series, taylor
from minigrad.functions.elementwise import log
from minigrad.functions.selection import where


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


@taylor.register("Add")
def add_taylor(ctx, x0, x1):
    """y = x0 + x1 is linear  =>  y_k = x0_k + x1_k, coefficient by coefficient."""
    x0, x1 = series.align(x0, x1)
    return x0 + x1


transposed("Add")


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


@taylor.register("Sub")
def sub_taylor(ctx, x0, x1):
    """y = x0 - x1 is linear  =>  y_k = x0_k - x1_k."""
    x0, x1 = series.align(x0, x1)
    return x0 - x1


transposed("Sub")


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


@taylor.register("Mul")
def mul_taylor(ctx, x0, x1):
    """y = x0 x1: collect t^k in (sum_i x0_i t^i)(sum_j x1_j t^j)  =>  y_k = sum_{j=0..k} x0_j x1_{k-j}."""
    return series.product(x0, x1)


transposed("Mul", products=(0, 1))


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

    gx0 = gy / x1,  gx1 = -gy * x0 / x1^2, written one of two ways:

    - with a constant numerator (1/x, c/x, and gy / x1 in the rules of log and
      div themselves), as -gy * x0 * x1^-2 with PowScalar: its derivative is
      -2 x1^-3, then 6 x1^-4, ..., two nodes per order, and the n-th derivative
      of 1/x is (-1)^n n! x^-(n+1) computed as such, to any order. (x1 * x1
      would be squared again at every order: x^(2^n) overflows by order 10.)
    - otherwise as -gy * ((x0 / x1) / x1), which never squares x1:
      d(x0/x1)/dx1 at x0 = 1e300, x1 = 1e160 is -1e-20, where x1^2 overflows.
      So too with a constant numerator where x1^-2 leaves the normal range
      (|x1| < 7.5e-155 or > 6.7e153 in float64): at x0 = 1e-300, x1 = 1e-300,
      x1^-2 is inf and x0 x1^-2 inf, where -x0 / x1^2 is -1e300 (and at x0 = 0
      it is 0 inf = nan, where the derivative is 0).
    """
    x0, x1 = ctx.inputs
    need0, need1 = ctx.needs_input_grad
    gx0 = gy / x1 if need0 else None
    gx1 = None
    if need1:
        if not _constant(ctx.parents()[0]) or _reciprocal_square_out_of_range(data_of(x1)):
            gx1 = -gy * (x0 / x1 / x1)
        else:
            gx1 = -gy * x0 * x1 ** -2
    return gx0, gx1


@register_forward("Div")
def div_forward(ctx, tx0, tx1):
    """y = x0 / x1  =>  dy = dx0 / x1 - x0 dx1 / x1^2 = (dx0 - (x0 / x1) dx1) / x1

    =>  ty = (tx0 - (x0 / x1) * tx1) / x1: no x1^2, which overflows (or underflows) long before y does.
    """
    x0, x1 = ctx.inputs
    return tangent_sum(tx0, None if tx1 is None else -(x0 / x1) * tx1) / x1


@taylor.register("Div")
def div_taylor(ctx, x0, x1):
    """y = x0 / x1  =>  y x1 = x0  =>  x0_k = sum_{j=0..k} x1_j y_{k-j}

    =>  y_k = (x0_k - sum_{j=1..k} x1_j y_{k-j}) / x1_0 (series.quotient).
    """
    return series.quotient(x0, x1)


transposed("Div", constants=(1,))  # x0 / x1 is linear in x0 alone


def _constant(node):
    """Whether an input's node is a constant: it neither requires grad nor carries a jvp's tangent."""
    return not node.requires_grad and not node.tangents


def _reciprocal_square_out_of_range(x):
    """Whether x^-2 overflows, or falls below the normal numbers (losing digits), for some x != 0."""
    xp = get_array_module(x)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        p = xp.abs(x[x != 0]) ** -2
    return bool((~xp.isfinite(p) | (p < xp.finfo(x.dtype).tiny)).any())


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


linear("Neg")



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
    """y = x ** c, where c is a number or a Variable.

    A number, a Python one or a NumPy scalar (np.int64(2), np.float32(0.5)),
    is a constant exponent, kept by PowScalar as a Python number: it takes x's
    dtype, as in ``x * 2``, and its rule gives exact derivatives of every order.
    """
    if isinstance(c, (int, float, np.integer, np.floating)) and not isinstance(c, (bool, np.bool_)):
        return PowScalar(c.item() if isinstance(c, np.generic) else c)(x)
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
        return gy * _zero_like(x)
    return gy * c * x ** (c - 1)


elementwise("PowScalar")


def _zero_like(x):
    """Zeros of x's shape, still a function of x, so that the next derivative is 0 and not "unreachable".

    Not x * 0, which is nan where x is infinite: a where() that always picks 0.
    """
    return where(get_array_module(x).ones(x.shape, dtype=bool), 0.0, x)


def _slope(ctx, x0, x1):
    """dy/dx0 = x1 x0^(x1-1), and 0 where x1 = 0 and either x0 = 0 (y = x0^0 = 1 is flat in x0, where
    x1 x0^(x1-1) is 0 inf) or x1 is a constant (np.array(2.)'s third derivative is 0 x0^-1, 0 inf at a
    subnormal x0 whose x0^-1 overflows; a constant 0 times anything is 0; a Variable that carries a
    jvp's tangent is not constant). Never x1 = 0 alone: where x1
    moves, d/dx1 of the slope there is x0^-1, which a mask would make 0 (as torch's does).
    Also 0 where x1 is infinite and x0^(x1-1) is 0: x0^inf for |x0| < 1 (x0^-inf for |x0| > 1) is 0
    all around x0, flat, where x1 x0^(x1-1) is inf 0.
    The base is replaced before the power is taken: a where() over a nan still sends nan back through
    the branch it did not pick.
    """
    a0, a1 = data_of(x0), data_of(x1)
    flat = ((a0 == 0) | _constant(ctx.parents()[1])) & (a1 == 0)
    infinite = get_array_module(a1).isinf(a1)
    if infinite.any():
        with np.errstate(all="ignore"):  # (the limit of an infinite exponent: x0^(x1-1) = 0 makes y flat)
            flat = flat | (infinite & (a0 ** (a1 - 1) == 0))
    if not flat.any():
        return x1 * x0 ** (x1 - 1)
    return where(flat, 0.0, x1 * where(flat, 1.0, x0) ** (x1 - 1))


@register("Pow")
def pow_backward(ctx, gy):
    """y = x0^x1  =>  dy/dx0 = x1 x0^(x1-1), dy/dx1 = x0^x1 log(x0) = y log(x0).

    gx0 = gy * x1 * x0^(x1-1),  gx1 = gy * y * log(x0).

    gx1 needs log(x0), defined for x0 > 0. At a base of 0, y = 0^x1 is 0 for
    every x1 > 0 (and 1 at x1 = 0), so dy/dx1 = 0 there (as torch): log
    reads a base of 1 instead, and y log(1) = 0. (For x1 < 0, y = inf and
    y log(0) = -inf, as torch gives.) At a base of 0 and an exponent of 0,
    x1 x0^(x1-1) is 0 * inf; y = x0^0 = 1 is flat in x0, so gx0 = 0 there.
    Both masks are constants that look at the base, so the rule stays
    differentiable to every order, and mixed derivatives at an exponent of 0
    with a nonzero base (d2y/dx0 dx1 = 1/x0 at x1 = 0) keep their value.
    The base is replaced before the power is taken, not after: a where() over
    a nan would still send nan back through the branch it did not pick.
    """
    x0, x1 = ctx.inputs
    (y,) = ctx.outputs
    need0, need1 = ctx.needs_input_grad
    base_is_0 = data_of(x0) == 0
    gx0 = gx1 = None
    if need0:
        gx0 = gy * _slope(ctx, x0, x1)
    if need1:
        flat = base_is_0 & (x1 >= 0)  # 0^x1, constant for x1 >= 0
        gx1 = gy * y * log(where(flat, 1.0, x0) if flat.any() else x0)
    return gx0, gx1


@register_forward("Pow")
def pow_forward(ctx, tx0, tx1):
    """y = x0^x1  =>  dy = x1 x0^(x1-1) dx0 + y log(x0) dx1

    =>  ty = tx0 * x1 * x0^(x1-1) + tx1 * y * log(x0), with the backward rule's limits at a base of 0, so
    that the two modes give the same derivatives there: at x1 = 0, y = x0^0 = 1 is flat in x0 (the term
    is 0, not 0 * inf = nan); for x1 >= 0, y = 0^x1 is flat in x1, and log reads 1 instead of 0 (the term
    is 0, as torch gives), while for x1 < 0, y log(0) = inf * -inf = -inf, as the backward rule gives.
    """
    x0, x1 = ctx.inputs
    (y,) = ctx.outputs
    base_is_0 = data_of(x0) == 0
    ty0 = ty1 = None
    if tx0 is not None:
        ty0 = tx0 * _slope(ctx, x0, x1)
    if tx1 is not None:
        flat = base_is_0 & (x1 >= 0)  # 0^x1, constant for x1 >= 0
        ty1 = tx1 * y * log(where(flat, 1.0, x0) if flat.any() else x0)
    return tangent_sum(ty0, ty1)


@taylor.register("PowScalar")
def pow_scalar_taylor(ctx, x):
    """y = x^c  =>  y' = c x^(c-1) x' = c y x' / x  =>  x y' = c y x'. At t^(k-1):

        sum_{i=0..k-1} x_i (k-i) y_{k-i} = c sum_{j=1..k} j x_j y_{k-j}

    =>  k x_0 y_k = c sum_{j=1..k} j x_j y_{k-j} - sum_{i=1..k-1} i y_i x_{k-i}.

    That divides by x_0. For a whole c >= 0 (x^3 at x = 0) y is a product of
    copies of x instead, by repeated squaring: exact at 0 too.
    """
    c = ctx.function.c
    if float(c).is_integer() and c >= 0:
        return _whole_power(x, int(c))
    return _power(x, c)


def _power(x, c):
    """The series of x^c by the recurrence above; c a number, or an array of x's value shape."""
    xp = get_array_module(x)
    y = xp.empty_like(x)
    y[0] = x[0] ** c
    if not xp.isfinite(y[0]).all() or not y[0].all():  # a pole, 0, or x^c out of range: divide by no x_0
        return _scaled_power(x, c)
    cjx, jy = _times_exponent(series.weighted(x), c), xp.zeros_like(x)  # jy_k = k y_k, filled as y is
    for k in range(1, len(x)):
        y[k] = (series.convolve(cjx, y, k, lo=1) - series.convolve(jy, x, k, hi=k - 1)) / (k * x[0])
        jy[k] = k * y[k]
    return y


def _times_exponent(jx, c):
    """c j x_j for every j, 0 where x_j is: an infinite exponent times a coefficient x has not (a base that
    does not move) is no term, not inf 0 = nan (2^inf has the slope inf log 2 in x1, and 0 in x0's zeros)."""
    return series.strong_zero_product(jx, c, True, False)


def _scaled_power(x, c):
    """x^c by the same recurrence on x scaled to x_0 = 1, where x_0 is 0, or x_0^c out of range:

    put t = x_0 s: x(x_0 s) = x_0 u(s) with u_k = x_k x_0^(k-1), u_0 = 1; then y = x_0^c u(s)^c, and
    with w = u^c (the recurrence, x_0 = 1)  =>  y_k = x_0^(c-k) w_k. At x_0 = 0 this is the limit
    along x's line, u = 1 + x_1 s: y_k = C(c, k) x_1^k 0^(c-k), which is 0, finite or +-inf as reverse
    mode's c (c-1) ... (c-k+1) x^(c-k) v^k (the terms of x_2, x_3, ..., a lower power of 0, are dropped).
    At x_0 = 1e-300, x^1.5's x_0^1.5 underflows, but each x_0^(1.5-k) w_k, a derivative, need not.
    """
    xp = get_array_module(x)
    u = xp.empty_like(x)
    u[0] = 1
    for k in range(1, len(x)):
        u[k] = series.strong_zero_product(x[k], x[0] ** (k - 1))
    w = xp.empty_like(x)
    w[0] = 1
    cju, jw = _times_exponent(series.weighted(u), c), xp.zeros_like(x)  # jw_k = k w_k, filled as w is
    for k in range(1, len(x)):
        w[k] = (series.convolve(cju, w, k, lo=1) - series.convolve(jw, u, k, hi=k - 1)) / k
        jw[k] = k * w[k]
    with np.errstate(divide="ignore", over="ignore"):  # (0^(c-k) is inf past c, as the derivative is)
        return xp.stack([series.strong_zero_product(x[0] ** (c - k), w[k]) for k in range(len(x))])


def _constant_power(x, c):
    """x^c for c an array that does not move: by products where c's values are whole and >= 0 (a few
    of them: np.array(2.) at x = 0 gives 0, 0, 2, 0), else by the recurrence (_power)."""
    xp = get_array_module(x)
    values = xp.unique(c)
    if len(values) > 4 or not all(float(v).is_integer() and v >= 0 for v in values.tolist()):
        return _power(x, c)
    y = None
    for v in values.tolist():
        power = _whole_power(x, int(v))
        y = power if y is None else xp.where(c == v, power, y)
    return y


def _whole_power(x, c):
    """The series of x^c for a whole c >= 0: products of x^1, x^2, x^4, ... as c's binary digits say."""
    if c == 0:
        return series.constant(get_array_module(x).ones_like(x[0]), len(x) - 1)
    y, power = None, x
    while True:
        if c & 1:
            y = power if y is None else series.product(y, power)
        c >>= 1
        if not c:
            return y
        power = series.product(power, power)


@taylor.register("Pow")
def pow_taylor(ctx, x0, x1):
    """y = x0^x1 = x0^c x0^(x1 - c) with c = x1_0, so y = P Q, a Cauchy product, with

        P = x0^c: PowScalar's recurrence with an array c (_constant_power), which needs only x0_0 != 0, so a
            negative base with a whole exponent, (-1.5)^3, has its series as it has its value;
        Q = e^z,  z = (x1 - c) log x0:  z_0 = 0 and z_k = sum_{j=1..k} x1_j L_{k-j}, L the series of log x0.

    Then Q_0 = 1 and Q = 1 exactly where the exponent does not move (a constant, a parameter: y = P), and
    each factor keeps its own range: at x0 = 1e-300 and c = 2, P_0 = x0^2 underflows to 0 but P_1 = 2e-300
    does not, where e^(x1 log x0) loses every coefficient with its value.
    - Where the base does not move (x0_k = 0 for k >= 1) or is infinite (inf + v t is inf for every t),
      L is the constant log x0_0: log's recurrence would divide by x0_0, 0/0 at 0. So at a base of 0 and
      c < 0, y_1 = P_0 z_1 = inf log 0 = -inf, and at a base of inf and c = 0, inf, as backward's
      dy/dx1 = y log(x0) gives there.
    - At a base of 0 with c >= 0 the backward rule takes 0^x1 as flat in x1 (dy/dx1 = 0, as torch), and
      so does z = 0: x0(t)^x1(t) has terms in t^m log t there, which no power series holds.

    y_0 is the forward's x0_0^x1_0: 0^0 = 1, and (-1.5)^3 where log x0 is nan.
    """
    x0, x1 = series.align(x0, x1)
    xp = get_array_module(x0)
    shape = (len(x0),) + xp.broadcast_shapes(x0.shape[1:], x1.shape[1:])
    x0, x1 = (xp.broadcast_to(x, shape).astype(xp.result_type(x0, x1)) for x in (x0, x1))
    P = _constant_power(x0, x1[0])
    flat = (x0[0] == 0) & (x1[0] >= 0)  # 0^x1: flat in x1
    if not (x1[1:].any(axis=0) & ~flat).any():
        return P  # (Q = 1)
    base_still = ~x0[1:].any(axis=0) | xp.isinf(x0[0])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        L = series.constant(xp.log(x0[0]), len(x0) - 1)
        if not base_still.all():
            L = xp.where(base_still, L, series.log(x0))
        z = xp.zeros_like(x0)
        for k in range(1, len(x0)):
            z[k] = series.convolve(x1, L, k, lo=1)
        y = series.product(P, series.exp(xp.where(flat, xp.zeros((), dtype=z.dtype), z)))
    y[0] = x0[0] ** x1[0]  # the forward's value: 0^0 = 1, and (-1.5)^3 where log x0 is nan
    return y
