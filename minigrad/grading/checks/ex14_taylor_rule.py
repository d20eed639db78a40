"""Visible tests of exercises 14: the Taylor rules of atan and atan2, against atan's series in closed form.

The independent answer: atan'(x) = 1 / (1 + x^2) = Im(1 / (x - i)), so the
k-th derivative is (-1)^(k-1) (k-1)! Im((x - i)^-k), and the coefficients of
atan's Taylor series at x_0 are a_0 = atan(x_0), a_k = (-1)^(k-1) Im((x_0 - i)^-k) / k.
Along a curve x(t), that series is composed with x(t) - x_0 by NumPy's
polynomial powers (``atan_of``); atan2(a, b) has the derivatives of
atan(a / b) (of -atan(b / a) where b_0 = 0), the quotient's series from
minigrad's own Div rule. The tests feed the rules lines and curves, several
points and orders; a diagnosis names the usual mistakes by what they do to
the coefficients (a sign, a factor k, the weights j, a pole at x_0 = 0).
"""

import math

import numpy as np
from numpy.polynomial import polynomial

from minigrad import taylor
from minigrad.grading.testing import visible

X = np.array([-2.0, -0.5, 0.0, 0.3, 1.5, 4.0])  # 0 among them: a rule that divides by x_0 fails there
NONZERO = X[X != 0]  # where y_2 = -x_0 / (1 + x_0^2)^2 is not 0, so that its sign shows
ORDER = 10
NOT_A_LINE = ("here x(t) is a curve, not the line x0 + t: x_2, x_3, ... are nonzero too, and the rule must use "
              "every coefficient of x, both where x' enters (its coefficient of t^(k-1) is k x_k) and in the "
              "products")
SHAPE = ("a rule returns as many coefficients as it receives, each of the value's shape: the order and the shape "
         "come from the input, never from a number written in the rule")
EQUATION = ("y = atan x means z y' = x' with z = 1 + x^2, an equation without a division: compare the "
            "coefficients of t^(k-1) on both sides (y' has k y_k there, and z y' is a Cauchy product) and solve "
            "for y_k, which needs only y_0, ..., y_(k-1)")
EQUATION_2 = ("y = atan2(a, b) means z y' = b a' - a b' with z = a^2 + b^2: compare the coefficients of t^(k-1) "
              "on both sides, each product a Cauchy product of whole series, and solve for y_k")


def _short(a):
    """Numbers written short, [-2, -0.5, 0, 0.3], for a test's input line (NumPy's [-2.  -0.5  0.  0.3] wraps badly)."""
    return "[" + ", ".join(f"{v:g}" for v in np.ravel(a)) + "]"


def atan_coefficients(x0, n):
    """a_0..a_n, the coefficients of atan's Taylor series at each element of x0: an array (n + 1,) + x0.shape."""
    x0 = np.asarray(x0, dtype=np.float64)
    k = np.arange(1, n + 1).reshape((-1,) + (1,) * x0.ndim)
    later = (-1.0) ** (k - 1) * ((x0 - 1j) ** -k).imag / k
    return np.concatenate([np.arctan(x0)[None], later])


def atan_of(x):
    """The coefficients of atan(x(t)), x(t)'s along the first axis of ``x``: atan's series at x_0 composed with
    x(t) - x_0, whose m-th power NumPy's polynomial module computes, element by element."""
    x = np.asarray(x, dtype=np.float64)
    n = len(x) - 1
    a = atan_coefficients(x[0], n)
    y = np.zeros_like(x)
    for i in np.ndindex(x.shape[1:]):
        d = x[(slice(None),) + i].copy()
        d[0] = 0.0
        column = y[(slice(None),) + i]
        column[0] = a[(0,) + i]
        for m in range(1, n + 1):
            power = polynomial.polypow(d, m)[:n + 1]
            column[:len(power)] += a[(m,) + i] * power
    return y


def _line(x0, n):
    """[x_0, 1, 0, ..., 0]: the coefficients of x(t) = x_0 + t, n + 1 of them."""
    x = np.zeros((n + 1,) + np.shape(x0))
    x[0] = x0
    if n:
        x[1] = 1.0
    return x


def _jet(f, x):
    """The coefficients y_0..y_n of f(x(t)) by taylor.jet, x(t)'s along the first axis of ``x``, stacked."""
    with np.errstate(all="ignore"):  # the values decide, not a warning (a division by 0 shows as inf or nan)
        y0, ys = taylor.jet(f, x[0], list(x[1:]))
    return np.stack([np.asarray(c, dtype=np.float64) for c in (y0, *ys)])


def _like(got, want, rtol=1e-9):
    """Does ``got`` equal ``want`` (to rtol, and 1e-12 of want's scale or 1e-12), shape included? As loose as
    the tests' comparisons, so that a right answer never takes a diagnosis meant for a wrong one."""
    got = np.asarray(got, dtype=np.float64)
    return got.shape == np.shape(want) and bool(
        np.allclose(got, want, rtol=rtol, atol=1e-12 * max(1.0, np.max(np.abs(want))), equal_nan=False))


def _first_wrong_order(got, want, rtol=1e-9):
    """The first k at which the coefficients y_k differ (at any element), or None."""
    for k in range(len(want)):
        if not _like(got[k], want[k], rtol):
            return k
    return None


def _not_derivatives(t, got, want):
    """``got`` is not k! y_k, what a rule returns that computes the derivatives instead of the coefficients."""
    factorials = np.array([math.factorial(k) for k in range(len(want))], dtype=np.float64)
    scaled = factorials.reshape((-1,) + (1,) * (np.ndim(want) - 1)) * want
    t.true(len(want) < 3 or not _like(got, scaled),
           "the rule returns the derivatives k! y_k: a Taylor rule returns the coefficients y_k, the derivatives "
           "divided by k! (taylor.derivatives multiplies by k! itself)")


def _weights_if_past_two(t, got, want):
    """Orders 0 to 2 right and a later one wrong: the first term with j >= 2 is wrong, the weight j of j y_j."""
    k = _first_wrong_order(got, want)
    t.true(k is None or k < 3,
           f"y_0, y_1 and y_2 are right and y_{k} is not: from k = 3 on, the sum over earlier coefficients has "
           "terms with j >= 2, where each y_j comes with its weight j (the coefficient of t^(j-1) in y' is "
           "j y_j): does every term carry it, on y_j and not on the other factor?")


def _atan_line(t, x0, n):
    """The coefficients of MyAtan along x(t) = x0 + t, by taylor.jet."""
    return _jet(lambda v: t.ns.MyAtan()(v), _line(x0, n))


@visible("14.1", hint="y_0 = atan(x_0), and y_1 is the slope of atan times x_1: y_1 = x_1 / (1 + x_0^2)")
def value_and_slope(t):
    t.given(f"x(t) = x0 + t, x0 = {_short(X)}, orders 0 and 1")
    got = _atan_line(t, X, 1)
    want = atan_coefficients(X, 1)
    if got.shape == want.shape:
        t.true(not _like(got[1], 1 + 0 * X), "y_1 is x_1 itself: solving k z_0 y_k = ... for y_k divides by "
                                             "z_0 = 1 + x_0^2 too, and y_1 = x_1 / (1 + x_0^2)")
        t.true(not _like(got[1], -want[1]), "y_1 has the wrong sign: atan increases, so y_1 has the sign of x_1")
    t.close(got, want, "taylor.jet(MyAtan, x0, [1]): y_0, y_1", rtol=1e-9, atol=1e-12)


@visible("14.1", hint="at k = 2 the sum over earlier coefficients has a single term, y_1 with z_1 = 2 x_0 x_1 (the "
                      "coefficient of t in 1 + x(t)^2, a Cauchy product): are y_j and z_(k-j) paired so that "
                      "their indexes add up to k?")
def the_second_coefficient(t):
    t.given(f"x(t) = x0 + t, x0 = {_short(NONZERO)}, orders 0 to 2")
    got = _atan_line(t, NONZERO, 2)
    want = atan_coefficients(NONZERO, 2)  # y_2 = -x_0 / (1 + x_0^2)^2
    if got.shape == want.shape and _like(got[:2], want[:2]):
        t.true(not _like(got[2], -want[2]), "y_2 has the wrong sign: in z y' = x' the terms of y_1, ..., y_(k-1) "
                                            "stand beside k z_0 y_k, so solving for y_k subtracts them from k x_k")
        t.true(not _like(got[2], 2 * want[2]), "y_2 is twice what it should be: the coefficient of t^(k-1) in y' "
                                               "is k y_k, so solving for y_k divides by k (and a rule returns y_k, "
                                               "not the derivative k! y_k)")
        t.true(not _like(got[2], 0 * want[2]), "y_2 is 0: at k = 2 the sum over earlier coefficients has one term, "
                                               "j = 1; does the sum run over j = 1, ..., k - 1?")
    t.close(got, want, "taylor.jet(MyAtan, x0, [1, 0]): y_0, y_1, y_2", rtol=1e-9, atol=1e-12)


@visible("14.1", hint=EQUATION)
def to_order_ten(t):
    t.given(f"x(t) = x0 + t, x0 = {_short(X)}, orders 0 to {ORDER}")
    got = _atan_line(t, X, ORDER)
    want = atan_coefficients(X, ORDER)
    if got.shape == want.shape:
        _not_derivatives(t, got, want)
        _weights_if_past_two(t, got, want)
    t.close(got, want, f"taylor.jet(MyAtan, x0, [1, 0, ...]): y_0..y_{ORDER}", rtol=1e-9, atol=1e-12)


CURVE = np.stack([X, 0.5 + 0 * X, -1.0 + X / 4, 0.75 - X / 8, 0.25 + 0 * X, -0.5 + X / 10, 0.3 + 0 * X])


@visible("14.1", hint=NOT_A_LINE)
def atan_of_a_curve(t):
    t.given(f"x(t) = x_0 + x_1 t + ... + x_6 t^6, x_0 = {_short(X)}, x_1 = 0.5, x_2 = -1 + x_0 / 4, "
            "x_3 = 0.75 - x_0 / 8, x_4 = 0.25, x_5 = -0.5 + x_0 / 10, x_6 = 0.3, orders 0 to 6")
    got = _jet(lambda v: t.ns.MyAtan()(v), CURVE)
    t.close(got, atan_of(CURVE), "taylor.jet(MyAtan, x_0, [x_1, ..., x_6]): y_0..y_6", rtol=1e-9, atol=1e-12)


@visible("14.1", hint=SHAPE)
def a_matrix_and_order_zero(t):
    x = np.array([[0.5, -2.0, 3.0], [1.0, 0.0, -0.75]])
    t.given(f"x(t) = x0 + t, x0 = {x.tolist()} (shape (2, 3)), orders 0 to 4; then order 0 alone")
    t.close(_atan_line(t, x, 4), atan_coefficients(x, 4), "taylor.jet(MyAtan, x0, [1, 0, 0, 0]): y_0..y_4",
            rtol=1e-9, atol=1e-12)
    t.close(_atan_line(t, x, 0), np.arctan(x)[None], "taylor.jet(MyAtan, x0, []): y_0", rtol=1e-12)


# atan2(a, b), the angle of the point (b, a): one point in each quadrant, one on each axis but the negative b axis
A = np.array([1.0, -0.5, 2.0, -1.0, 3.0, -2.0, 0.0])
B = np.array([2.0, 1.5, -1.0, -3.0, 0.0, 0.0, 0.5])
DA = np.array([0.5, 2.0, -1.0, 1.5, 1.0, -0.5, 2.0])
DB = np.array([-1.0, 0.5, 2.0, 1.0, 1.5, 2.0, -1.0])


def _atan2(t, a, b):
    """The coefficients of MyAtan2 of a(t) and b(t), both moving, by one taylor.jet: x = [a, b] stacked."""
    return _jet(lambda v: t.ns.MyAtan2()(v[0], v[1]), np.stack([a, b], axis=1))


def _atan2_of(a, b):
    """The coefficients of atan2(a(t), b(t)): those of atan(a / b), or where b_0 = 0 of -atan(b / a), after
    the angle y_0 itself (each differs from atan2 by a constant, a multiple of pi / 2)."""
    ab = np.stack([a, b], axis=1)
    y = np.empty(np.broadcast_shapes(a.shape, b.shape))
    on = b[0] != 0  # (each quotient's other elements, divided by 0, are not used)
    y[:, on] = atan_of(_jet(lambda v: v[0] / v[1], ab)[:, on])  # minigrad's Div rule
    y[:, ~on] = -atan_of(_jet(lambda v: v[1] / v[0], ab)[:, ~on])
    y[0] = np.arctan2(a[0], b[0])
    return y


@visible("14.2", hint="y_0 is the angle of the point (b_0, a_0) in its quadrant, and y_1 = (b_0 a_1 - a_0 b_1) / "
                      "(a_0^2 + b_0^2), both inputs moving")
def angle_and_slope_in_every_quadrant(t):
    t.given(f"a(t) = a0 + da t, b(t) = b0 + db t, a0 = {_short(A)}, b0 = {_short(B)}, da = {_short(DA)}, "
            f"db = {_short(DB)}, orders 0 and 1")
    got = _atan2(t, np.stack([A, DA]), np.stack([B, DB]))
    want = np.stack([np.arctan2(A, B), (B * DA - A * DB) / (A * A + B * B)])
    if got.shape == want.shape:
        with np.errstate(divide="ignore", invalid="ignore"):
            quotient = np.arctan(A / B)
        left = B < 0
        t.true(not (_like(got[0][~left], want[0][~left]) and _like(got[0][left], quotient[left])),
               "y_0 is off by pi where b_0 < 0: arctan(a / b) gives the angle of (b, a) in the right half-plane "
               "only; np.arctan2(a_0, b_0) gives it in every quadrant")
        t.true(not _like(got[1], -want[1]), "y_1 has the wrong sign: the angle grows as a grows where b > 0, so "
                                            "y_1 = (b_0 a_1 - a_0 b_1) / (a_0^2 + b_0^2)")
        t.true(not _like(got[1], B * DA / (A * A + B * B)), "y_1 has a's motion only: b moves too, and its term "
                                                            "-a b' belongs in z y' = b a' - a b'")
    t.close(got, want, "taylor.jet(MyAtan2, (a0, b0), [(da, db)]): y_0, y_1", rtol=1e-9, atol=1e-12)


CURVE_A = np.stack([A, DA, 0.5 + 0 * A, -0.25 * A, 0.2 + 0 * A, 0.1 * B])
CURVE_B = np.stack([B, DB, -0.4 + 0 * B, 0.3 * A, -0.1 + 0 * B, 0.5 + 0 * B])


@visible("14.2", hint=EQUATION_2)
def both_move_along_curves(t):
    t.given("a(t) = a0 + da t + 0.5 t^2 - 0.25 a0 t^3 + 0.2 t^4 + 0.1 b0 t^5, b(t) = b0 + db t - 0.4 t^2 "
            "+ 0.3 a0 t^3 - 0.1 t^4 + 0.5 t^5, with the 7 points a0, b0, da, db of the test above, orders 0 to 5")
    got = _atan2(t, CURVE_A, CURVE_B)
    want = _atan2_of(CURVE_A, CURVE_B)
    if got.shape == want.shape:
        _not_derivatives(t, got, want)
        _weights_if_past_two(t, got, want)
    t.close(got, want, "taylor.jet(MyAtan2, (a_0, b_0), [(a_1, b_1), ..., (a_5, b_5)]): y_0..y_5",
            rtol=1e-9, atol=1e-12)


@visible("14.2", hint="where b_0 = 0, a / b has no series, but atan2 is smooth there (z_0 = a_0^2 > 0): a rule "
                      "through the quotient divides by 0; derive the recurrence from z y' = b a' - a b' instead")
def on_the_a_axis(t):
    a0, b0 = np.array([2.0, -0.5, 1.0]), np.zeros(3)
    a, b = np.stack([a0, DA[:3], 0.5 + 0 * a0, 0 * a0]), np.stack([b0, DB[:3], 0 * b0, -0.3 + 0 * b0])
    t.given(f"b_0 = 0: a(t) = {_short(a0)} + {_short(DA[:3])} t + 0.5 t^2, b(t) = {_short(DB[:3])} t - 0.3 t^3, "
            "orders 0 to 3")
    got = _atan2(t, a, b)
    t.close(got, _atan2_of(a, b), "taylor.jet(MyAtan2, (a0, 0), [...]): y_0..y_3", rtol=1e-9, atol=1e-12)


@visible("14.2", hint="an input that does not move is a constant to Taylor mode: its series is [c, 0, ..., 0], and "
                      "the rule receives it like any other")
def one_input_held(t):
    c = np.array([1.5, -2.0, 0.5])
    held = _line(c, 5)
    held[1] = 0.0  # [c, 0, ..., 0]
    t.given(f"a(t) = {_short(A[:3])} + t with b = {_short(c)} held; then a = {_short(c)} held with "
            f"b(t) = {_short(B[:3])} + t; orders 0 to 5")
    got = _jet(lambda v: t.ns.MyAtan2()(v, c), _line(A[:3], 5))
    t.close(got, _atan2_of(_line(A[:3], 5), held), "taylor.jet(lambda a: MyAtan2()(a, c), a0, [1, 0, ...]): "
            "y_0..y_5", rtol=1e-9, atol=1e-12)
    got = _jet(lambda v: t.ns.MyAtan2()(c, v), _line(B[:3], 5))
    t.close(got, _atan2_of(held, _line(B[:3], 5)), "taylor.jet(lambda b: MyAtan2()(c, b), b0, [1, 0, ...]): "
            "y_0..y_5", rtol=1e-9, atol=1e-12)
