"""Visible tests of exercises 13: forward rules (tangents), checked with func.jvp to the second order.

Every test seeds a tangent that is not 1, so that a rule that forgets the
incoming tangent fails, and says so; the second order nests ``func.jvp``, so
a rule built on ``.data`` (a constant to the outer pass) fails too.

13.1's expected values come from no rule: the algebraic sigmoid
y = x / sqrt(1 + x^2) has y' = (1 + x^2)^(-3/2) and y'' = -3x (1 + x^2)^(-5/2),
evaluated as powers of m = max(|x|, 1) and q = (1 + x^2) / m^2, so that no x^2
overflows (``slope``, ``curvature``), and the first is also compared with
central differences of x / sqrt(1 + x^2) at moderate x. Far from 0 the
comparison is relative, 1e-9, with an absolute floor of 1e-300: float64 holds
the tangent, about |x|^-3, to its last digits up to |x| ~ 1e100; from
|x| ~ 1e108 on it underflows to 0, and 0 is then what a right rule gives.
The second derivative, about -3 / x^4, is tested at |x| <= 1e50 and from 1e150
on (0, and no nan where x * x is inf), not between: from |x| ~ 1e62 on a nested
jvp of (1 + x * x) ** -1.5 multiplies (1 + x^2)^(-5/2), about |x|^-5 and
underflowing first, by 2x, and loses digits a right rule cannot keep.
"""

import numpy as np

from minigrad import func
from minigrad.grading.testing import visible

X = np.array([-1.5, 0.2, 2.0])
V = np.array([2.0, -1.0, 0.5])  # the tangent of x: not 1, so a forgotten tangent shows
W = np.array([0.5, 3.0, -1.0])  # the outer tangent of the second order
C = np.array([1.0, -2.0, 0.5])  # a constant second input: it does not move
ON_VARIABLES = ("the tangent is pushed forward again by an outer func.jvp: build it with minigrad's functions "
                "on the Variables of ctx, never on .data or with NumPy")
NONE = ("an input that does not move has no tangent: the rule receives None for it, and that input adds "
        "nothing to the output's tangent")

# 13.1, the algebraic sigmoid
XS = np.array([-2.0, -0.5, 0.0, 0.3, 1.5])  # 0 among them: a tangent that divides by x is 0 / 0 there
VS = np.array([2.0, -1.0, 0.5, 3.0, -0.25])
WS = np.array([0.5, 3.0, -1.0, 2.0, 1.5])
FAR = np.array([-1e300, -1e200, -1e150, -1e50, -1e8, -3e4, 1e4, 1e8, 1e50, 1e150, 1e200, 1e300])
V_FAR = np.array([1.0, -2.0, 0.5, 3.0, -1.0, 2.0, 0.5, 3.0, -0.5, 1.5, 2.0, -1.0])
W_FAR = np.array([2.0, 1.0, -1.0, 0.5, 3.0, -0.5, 1.0, 2.0, 0.25, -1.0, 0.5, 1.5])
RTOL, FLOOR = 1e-9, 1e-300  # relative where float64 holds the value; below 1e-300 it underflows


def _scaled(x):
    """m = max(|x|, 1) and q = (1 + x^2) / m^2, in [1, 2]: 1 + x^2 = m^2 q, with no x^2 to overflow."""
    x = np.asarray(x, dtype=np.float64)
    m = np.maximum(np.abs(x), 1.0)
    return m, (1 / m) ** 2 + (x / m) ** 2


def slope(x):
    """y' = (1 + x^2)^(-3/2) = m^-3 q^(-3/2): 0 where it underflows, never inf / inf."""
    m, q = _scaled(x)
    with np.errstate(under="ignore"):
        return (1 / m) ** 3 * q ** -1.5


def curvature(x):
    """y'' = -3x (1 + x^2)^(-5/2) = -3 (x / m) m^-4 q^(-5/2)."""
    m, q = _scaled(x)
    with np.errstate(under="ignore"):
        return -3 * (x / m) * (1 / m) ** 4 * q ** -2.5


def central_slope(x, h=1e-5):
    """(y(x + h) - y(x - h)) / 2h for y = x / sqrt(1 + x^2), |x| moderate: to about 1e-10."""
    def y(a):
        return a / np.sqrt(1 + a * a)
    return (y(x + h) - y(x - h)) / (2 * h)


def _tangent(f, x, v):
    """The tangent of f at x along v, by func.jvp."""
    with np.errstate(all="ignore"):  # (x * x overflows far from 0: the value decides, not a warning)
        return func.jvp(f, (x,), (v,))[1]


def _array(got):
    """``got`` (a Variable, an array, or anything a student returned) as float64 numbers, or None."""
    try:
        return np.asarray(getattr(got, "data", got), dtype=np.float64)
    except (TypeError, ValueError):
        return None


def _equals(got, value, rtol=1e-5, atol=1e-8):
    """Does ``got`` equal ``value``, shape included?"""
    a = _array(got)
    return a is not None and a.shape == np.shape(value) and bool(np.allclose(a, value, rtol=rtol, atol=atol))


def _not_without_tangent(t, got, derivative, what):
    """``got`` is not the derivative alone, which a rule that leaves out the incoming tangent returns."""
    t.true(not _equals(got, derivative), f"{what} is the derivative itself, not the derivative times the "
                                         "incoming tangent: does the rule multiply by the tangent it receives?")


def _second(f, x, v, w):
    """d/ds [J(x + s w) v] at s = 0: func.jvp of func.jvp."""
    with np.errstate(all="ignore"):
        return func.jvp(lambda a: func.jvp(f, (a,), (v,))[1], (x,), (w,))[1]


def _sigmoid(t):
    return lambda a: t.ns.MyAlgebraicSigmoid()(a)


def _short(a):
    """Numbers such as 1e300 written short, [-1e300, 30000, 0.5], for a test's input line."""
    return "[" + ", ".join(f"{v:g}".replace("e+0", "e").replace("e+", "e") for v in np.ravel(a)) + "]"


def _of_shape(got, shape):
    """``got`` as float64 numbers, if it has ``shape``; else None (the comparison reports a wrong shape)."""
    a = _array(got)
    return a if a is not None and a.shape == shape else None


def _nan_at_zero(t, got, what):
    """``got`` is a number at x = 0, where a tangent written with a division by x is 0 / 0."""
    a = _of_shape(got, XS.shape)
    t.true(a is None or not np.isnan(a[XS == 0]).any(),
           f"{what} is nan at x = 0 (received contains inf or nan), where the slope is 1: a formula that divides "
           "by x, such as (y / x)^3, is 0 / 0 there; write the tangent without dividing by x")


def _not_cut(t, got, want, what):
    """``got`` is not 0 at every x where ``want`` is not: what the outer func.jvp gives of a tangent computed
    from .data, a constant to it."""
    a = _of_shape(got, want.shape)
    t.true(a is None or not (np.all(a == 0) and np.any(want != 0)),
           f"{what} is 0 at every x: the outer func.jvp sees no dependence of the tangent on x, as when the rule "
           "computes it from .data or with NumPy; build it with minigrad's functions on the Variables of ctx, "
           "never on .data")


def _not_lost(t, got, want, what, size):
    """``got`` is not 0 where float64 holds ``want``: what a tangent written through y gives far from 0."""
    a = _of_shape(got, want.shape)
    lost = np.zeros(want.shape, dtype=bool) if a is None else (a == 0) & (np.abs(want) > FLOOR)
    t.true(not lost.any(),
           f"{what} is 0 at x = {_short(FAR[lost])}, where it is {size}, a float64 number: a tangent written "
           "through y, as with 1 - y^2, cancels there, since y rounds to -1 or 1 (1 - y^2 is exactly 0 from "
           "|x| ~ 1e8 on, and loses digits from |x| ~ 1e3 on); write the tangent from x")


def _no_nan_where_the_square_overflows(t, got, what):
    """``got`` has no nan at the points of FAR where x * x is inf."""
    a = _of_shape(got, FAR.shape)
    nan = np.zeros(FAR.shape, dtype=bool) if a is None else np.isnan(a)
    t.true(not nan.any(),
           f"{what} is nan at x = {_short(FAR[nan])} (received contains inf or nan), where y'' is 0 to the last "
           "digit: differentiated again, a tangent that divides by a power of 1 + x * x, inf where x * x "
           "overflows, meets inf / inf there (as tx / (1 + x * x) ** 1.5 does), and sqrt(1 + x * x) ** 3 meets "
           "inf * 0; write the tangent as a product of factors whose derivatives stay numbers (a negative power "
           "of 1 + x * x is 0 there, and so is its derivative)")


@visible("13.1", hint="y = x (1 + x^2)^(-1/2) is a product: its derivative has two terms, which add up to one "
                      "power of 1 + x^2; the tangent of y is that derivative times the incoming tangent tx")
def algebraic_sigmoid_tangent(t):
    t.given(f"x = {_short(XS)}, tangent tx = {_short(VS)}")
    got = _tangent(_sigmoid(t), XS, VS)
    what = "func.jvp(MyAlgebraicSigmoid(), (x,), (tx,))[1], the tangent of y"
    _not_without_tangent(t, got, slope(XS), what)
    _nan_at_zero(t, got, what)
    t.true(not _equals(got, (1 + XS * XS) ** -0.5 * VS),
           f"{what} is (1 + x^2)^(-1/2) tx, the exponent -1/2: that is the first term of the product rule "
           "alone; the second, x d/dx (1 + x^2)^(-1/2) = -x^2 (1 + x^2)^(-3/2), adds to it")
    t.true(not _equals(got, (1 + XS * XS) ** 1.5 * VS),
           f"{what} is (1 + x^2)^(+3/2) tx, the exponent +3/2: the exponent is negative, as y stays "
           "between -1 and 1 and flattens out far from 0")
    t.close(got, slope(XS) * VS, what, rtol=RTOL, atol=1e-12)
    t.close(got, central_slope(XS) * VS, what + ", against central differences of x / sqrt(1 + x^2)",
            rtol=1e-7, atol=1e-9)


@visible("13.1", hint="far from 0 the tangent is about |x|^-3: tiny, but a float64 number up to |x| ~ 1e100, so "
                      "it must be right to a relative 1e-9 there; 0 is right only where it underflows (below "
                      "1e-300); and x * x overflows to inf from |x| ~ 1.3e154 on, where the tangent must still be "
                      "a number, never nan")
def algebraic_sigmoid_tangent_far_from_zero(t):
    t.given(f"x = {_short(FAR)}, tangent tx = {_short(V_FAR)}")
    got = _tangent(_sigmoid(t), FAR, V_FAR)
    want = slope(FAR) * V_FAR
    what = "the tangent of MyAlgebraicSigmoid()(x)"
    _not_lost(t, got, want, what, "about |x|^-3 times tx (1e-24 at 1e8)")
    t.close(got, want, what, rtol=RTOL, atol=FLOOR)


@visible("13.1", higher=ON_VARIABLES)
def algebraic_sigmoid_second_order(t):
    t.given(f"x = {_short(XS)}, inner tangent v = {_short(VS)}, outer tangent w = {_short(WS)} (jvp of jvp)")
    t.close(_tangent(_sigmoid(t), XS, VS), slope(XS) * VS, "the tangent of y along v (first order)",
            rtol=RTOL, atol=1e-12)
    got = _second(_sigmoid(t), XS, VS, WS)
    want = curvature(XS) * VS * WS
    what = "jvp of jvp of MyAlgebraicSigmoid, y''(x) v w = -3x (1 + x^2)^(-5/2) v w"
    _not_cut(t, got, want, what)
    t.close(got, want, what, rtol=RTOL, atol=1e-12, higher=True)


@visible("13.1", hint="far from 0 the second derivative -3x (1 + x^2)^(-5/2) is about -3 / x^4, a float64 number "
                      "up to |x| ~ 1e77 (0 from |x| ~ 1e81 on), compared as the tangent is; where x * x overflows, "
                      "the tangent's own derivative must still be a number, never inf / inf or inf * 0 = nan")
def algebraic_sigmoid_second_order_far_from_zero(t):
    t.given(f"x = {_short(FAR)}, inner tangent v = {_short(V_FAR)}, outer tangent w = {_short(W_FAR)} "
            "(jvp of jvp)")
    got = _second(_sigmoid(t), FAR, V_FAR, W_FAR)
    want = curvature(FAR) * V_FAR * W_FAR
    what = "jvp of jvp of MyAlgebraicSigmoid, y''(x) v w"
    _not_cut(t, got, want, what)
    _not_lost(t, got, want, what, "about 3 v w / x^4")
    _no_nan_where_the_square_overflows(t, got, what)
    t.close(got, want, what, rtol=RTOL, atol=FLOOR)


def _hypot(t):
    return lambda a, b: t.ns.MyHypot()(a, b)


@visible("13.2", hint="each input's tangent is multiplied by its own partial derivative of y, and the terms add "
                      "(the chain rule for two inputs)")
def hypot_both_inputs_move(t):
    x1, v1 = C, np.array([-1.0, 0.5, 4.0])
    t.given(f"x0 = {_short(X)}, x1 = {_short(x1)}, tangents t0 = {_short(V)}, t1 = {_short(v1)}")
    got = func.jvp(_hypot(t), (X, x1), (V, v1))[1]
    y = np.hypot(X, x1)
    what = "func.jvp(MyHypot(), (x0, x1), (t0, t1))[1]"
    _not_without_tangent(t, got, (X + x1) / y, what)
    t.close(got, (X * V + x1 * v1) / y, what)


@visible("13.2", hint=NONE)
def hypot_with_a_constant_input(t):
    t.given(f"x0 = {_short(X)} moves along t0 = {_short(V)}; x1 = {_short(C)} is a constant (its tangent is None)")
    hypot = _hypot(t)
    try:
        got = _tangent(lambda a: hypot(a, C), X, V)
    except TypeError as e:
        if "NoneType" not in str(e):
            raise
        t.true(False, f"the rule raised TypeError ({e}) on the tangent None of the constant x1: {NONE}")
        return
    t.close(got, X * V / np.hypot(X, C), "the tangent of MyHypot()(x0, c), with x1 = c constant")


@visible("13.2", hint="the first input's tangent goes with the first input's partial derivative: "
                      "only x1 moves here")
def hypot_second_input_alone(t):
    t.given(f"x0 = {_short(C)} is a constant; x1 = {_short(X)} moves along t1 = {_short(V)}")
    hypot = _hypot(t)
    got = _tangent(lambda a: hypot(C, a), X, V)
    t.close(got, X * V / np.hypot(C, X), "the tangent of MyHypot()(c, x1), with x0 = c constant")


@visible("13.2", higher=ON_VARIABLES)
def hypot_second_order(t):
    t.given(f"x0 = {_short(X)} moves along v = {_short(V)}, then along w = {_short(W)} (jvp of jvp); "
            f"x1 = {_short(C)} is a constant")
    hypot = _hypot(t)
    y = np.hypot(X, C)
    t.close(_tangent(lambda a: hypot(a, C), X, V), X / y * V, "the tangent of y along v (first order)")
    got = _second(lambda a: hypot(a, C), X, V, W)
    t.close(got, C ** 2 / y ** 3 * V * W, "jvp of jvp of MyHypot()(x0, c), d2y/dx0^2 v w", higher=True)
