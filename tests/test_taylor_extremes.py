"""Taylor mode at the extremes: 0, poles, infinities, overflow, underflow, and dtypes.

Every expected list is a closed form: [f, f', f'', ...] at the point, along the direction 1, written out
by hand (inf where the derivative is infinite, as 1/x's is at 0). Order 0 must also equal the forward pass
and order 1 func.jvp, at every point.
"""

import itertools
import math
import warnings

import numpy as np
import pytest

import minigrad as mg
import minigrad.functions as F
from minigrad import func, series, taylor

inf, nan = math.inf, math.nan
TWO = np.array(2.0)

# (label, f, x, [f(x), f'(x), f''(x), ...]) in closed form
CLOSED_FORMS = [
    ("x**1.5 at 0", lambda x: x ** 1.5, 0.0, [0, 0, inf, -inf]),  # 1.5 x^.5, .75 x^-.5, -.375 x^-1.5
    ("x**0.5 at 0", lambda x: x ** 0.5, 0.0, [0, inf, -inf, inf]),
    ("sqrt at 0", F.sqrt, 0.0, [0, inf, -inf, inf]),
    ("x**-1 at 0", lambda x: x ** -1, 0.0, [inf, -inf, inf, -inf, inf]),  # (-1)^k k! x^-(k+1)
    ("x**-2 at 0", lambda x: x ** -2, 0.0, [inf, -inf, inf, -inf]),
    ("x**array(2.) at 0", lambda x: x ** TWO, 0.0, [0, 0, 2, 0]),
    ("x**Variable(2.) at 0", lambda x: x ** mg.Variable(TWO), 0.0, [0, 0, 2, 0]),
    ("x**array(3.) at 0", lambda x: x ** np.array(3.0), 0.0, [0, 0, 0, 6]),
    ("x**array(1.5) at 0", lambda x: x ** np.array(1.5), 0.0, [0, 0, inf, -inf]),
    ("sin(x)**array(2.) at 0", lambda x: F.sin(x) ** TWO, 0.0, [0, 0, 2, 0, -8]),  # sin^2 = (1 - cos 2x)/2
    ("0**x at 0", lambda x: F.pow(np.array(0.0), x), 0.0, [1, 0, 0, 0]),
    ("0**x at 1", lambda x: F.pow(np.array(0.0), x), 1.0, [0, 0, 0, 0]),
    ("relu at -inf", F.relu, -inf, [0, 0, 0]),
    ("abs at -inf", F.abs, -inf, [inf, -1, 0]),
    ("clip at -inf", lambda x: F.clip(x, -1.0, 1.0), -inf, [-1, 0, 0]),
    ("x/2 at inf", lambda x: x / 2, inf, [inf, 0.5, 0, 0]),
    ("2*x at inf", lambda x: 2 * x, inf, [inf, 2, 0, 0]),
    ("x*x at inf", lambda x: x * x, inf, [inf, inf, 2, 0]),
    ("x*x at -inf", lambda x: x * x, -inf, [inf, -inf, 2, 0]),
    ("square at inf", F.square, inf, [inf, inf, 2, 0]),
    ("x**3 at 1e300", lambda x: x ** 3, 1e300, [inf, inf, 6e300, 6]),
    ("exp at 710", F.exp, 710.0, [inf, inf, inf, inf]),
    ("exp at -inf", F.exp, -inf, [0, 0, 0, 0]),
    ("2**x at -inf", lambda x: F.pow(TWO, x), -inf, [0, 0, 0, 0]),
    ("log at 0", F.log, 0.0, [-inf, inf, -inf, inf, -inf]),  # (-1)^(k+1) (k-1)! x^-k
    ("1/x at 0", lambda x: 1 / x, 0.0, [inf, -inf, inf, -inf, inf]),
    ("x**1.5 at 1e-300", lambda x: x ** 1.5, 1e-300, [0, 1.5e-150, 0.75e150, -inf]),  # x^1.5 underflows
    ("x**-0.5 at 1e300", lambda x: x ** -0.5, 1e300, [1e-150, -0.5e-450, 0.75e-750, 0]),
    ("max(log x) at 0", lambda x: F.max(F.log(x)), 0.0, [-inf, inf, -inf, inf]),
]


def closed_form_ids(case):
    return case[0]


@pytest.mark.parametrize("case", CLOSED_FORMS, ids=closed_form_ids)
def test_taylor_mode_at_the_extremes_against_closed_forms(case):
    _, f, x, expected = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the forward pass's own 1/0 and overflow
        got = [float(d) for d in taylor.derivatives(f, np.array(x), len(expected) - 1)]
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)


@pytest.mark.parametrize("case", CLOSED_FORMS, ids=closed_form_ids)
def test_order_0_is_the_forward_pass_and_order_1_is_jvp(case):
    _, f, x, _ = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        d = taylor.derivatives(f, np.array(x), 1)
        y, t = func.jvp(f, (np.array(x),), (np.array(1.0),))
    np.testing.assert_array_equal(d[0], y.data)
    np.testing.assert_array_equal(d[1], t.data)


def test_a_moving_exponent_takes_the_forward_value():
    """(x0, x1) = (-1.5, 3) moving along x1: the value is (-1.5)^3 (log x0 is nan, the value is not)."""
    def f(z):
        return F.getitem(z, 0) ** F.getitem(z, 1)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        y0, _ = taylor.jet(f, np.array([-1.5, 3.0]), [np.array([0.0, 1.0])])
        y0_x0, (y1_x0,) = taylor.jet(f, np.array([-1.5, 3.0]), [np.array([1.0, 0.0])])
    assert y0 == y0_x0 == -3.375
    assert y1_x0 == 3 * 1.5 ** 2


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_third_derivative_of_a_constant_whole_exponent_at_a_subnormal(mode):
    """x ** array(2.): 2x, 2, 0; the third is 0 x^-1 with x^-1 overflowing at 5e-324: 0, as x ** 2 gives."""
    x = np.array(5e-324)
    f = lambda v: v ** TWO  # noqa: E731
    if mode == "rev":
        v = mg.Variable(x)
        d = f(v)
        for _ in range(3):
            (d,) = mg.grad(d, v, create_graph=True)
    else:
        d = f
        for _ in range(3):
            d = (lambda g: lambda v: func.jvp(g, (v,), (np.array(1.0),))[1])(d)
        d = d(x)
    assert float(d.data) == 0.0


def _nested(f, point, seq, mode):
    """The mixed derivative d/dz[seq[-1]] ... d/dz[seq[0]] f at point, in reverse or forward mode."""
    if mode == "rev":
        zs = [mg.Variable(np.array(p)) for p in point]
        d = f(*zs)
        for i in seq:
            (d,) = mg.grad(d, zs[i], create_graph=True, allow_unused=True, materialize_grads=True)
        return float(d.data)
    g = f
    for i in seq:
        g = _jvp_along(g, i)
    return float(g(*[np.array(p) for p in point]).data)


def _jvp_along(g, i):
    """z -> the derivative of g along its argument i, by func.jvp."""
    def d(*z):
        return func.jvp(g, z, tuple(np.array(float(j == i)) for j in range(len(z))))[1]
    return d


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_mixed_third_derivatives_of_a_power_at_an_exponent_of_0(mode):
    """(a^2 + 1/4)^b at (0, 0) and a^b at (0.5, 0), every third derivative, against sympy's exact ones.
    (PyTorch masks its slope where the exponent is 0, and gives 0 for d3/da2 db of the first: it is 8.)"""
    sp = pytest.importorskip("sympy")
    a, b = sp.symbols("a b")
    programs = [(lambda u, v: (F.square(u) + 0.25) ** v, (a ** 2 + sp.Rational(1, 4)) ** b, (0.0, 0.0)),
                (lambda u, v: u ** v, a ** b, (0.5, 0.0)),
                (lambda u, v: u ** F.square(v), a ** (b ** 2), (0.5, 0.0))]
    for f, expr, point in programs:
        for seq in itertools.product([0, 1], repeat=3):
            e = expr
            for i in seq:
                e = sp.diff(e, (a, b)[i])
            want = float(e.subs({a: point[0], b: point[1]}))
            assert math.isclose(_nested(f, point, seq, mode), want, rel_tol=1e-10, abs_tol=1e-12), (expr, seq)


def test_series_in_the_dtype_the_forward_pass_promotes_to():
    """float32 x times a float64 constant is float64 in the forward pass: its series is computed in float64
    too, whichever operand comes first (float32 x * 0.1 would round the slope to 0.10000000149)."""
    c = mg.Variable(np.array(0.1))
    x = np.array(3.0, dtype=np.float32)
    for f in (lambda v: v * c, lambda v: c * v, lambda v: v / (1 / c), lambda v: F.pow(v, c * 10)):
        d = taylor.derivatives(f, x, 1)
        _, t = func.jvp(f, (x,), (np.ones((), np.float32),))
        assert d[1].dtype == t.dtype == np.float64
        np.testing.assert_allclose(d[1], t.data, rtol=1e-15)
    assert taylor.derivatives(lambda v: v * c, x, 1)[1] == 0.1


def test_a_taylor_rule_in_less_precision_than_its_output_is_an_error():
    class Twice(mg.Function):
        def forward(self, x):
            return 2 * x

    mg.backward_functions.register("Twice", lambda ctx, gy: 2 * gy)
    taylor.register("Twice", lambda ctx, x: (2 * x).astype(np.float32))
    try:
        with pytest.raises(TypeError, match=r"Taylor rule of Twice returned float32 coefficients for an "
                                            r"output of dtype float64"):
            taylor.derivatives(lambda v: Twice()(v), np.array([1.0]), 2)
        taylor.register("Twice", lambda ctx, x: (2 * x).astype(np.float64))  # wider: cast down, as forward
        d = taylor.derivatives(lambda v: Twice()(v), np.array([1.0], np.float32), 1)
        assert d[1].dtype == np.float32 and d[1][0] == 2
    finally:
        for table in (taylor.table, mg.backward_functions.table):
            table.rules.pop("Twice", None)


# (label, f of two Variables, (x0, x1), direction, [y_0, y_1]) in closed form; d/dt (x0 + a t)^(x1 + b t)
# at t = 0 is y (b log x0 + a x1 / x0) = x0^(x1-1) (b x0 log x0 + a x1), written so where y underflows
TWO_INPUTS = [
    ("x0**x1 along (1, 1) at (1e-300, 2)", lambda a, b: a ** b, (1e-300, 2.0), (1, 1),
     [0.0, 1e-300 * (1e-300 * math.log(1e-300) + 2)]),
    ("x0**x1 along (1, 1) at (5e-324, 0.5)", lambda a, b: a ** b, (5e-324, 0.5), (1, 1),
     [5e-324 ** 0.5, 5e-324 ** -0.5 * (5e-324 * math.log(5e-324) + 0.5)]),
    ("x0**x1 along (1, 1) at (0, 2)", lambda a, b: a ** b, (0.0, 2.0), (1, 1), [0.0, 0.0]),  # 0^x1 flat in x1
    ("x0**x1 along (1, 1) at (0, 1)", lambda a, b: a ** b, (0.0, 1.0), (1, 1), [0.0, 1.0]),
    ("x0**x1 along (0, 1) at (2, inf)", lambda a, b: a ** b, (2.0, inf), (0, 1), [inf, inf]),  # y log 2
    ("x0**x1 along (0, 1) at (1, inf)", lambda a, b: a ** b, (1.0, inf), (0, 1), [1.0, 0.0]),  # y log 1
    ("x0**x1 along (0, 1) at (0, -0.5)", lambda a, b: a ** b, (0.0, -0.5), (0, 1), [inf, -inf]),  # inf log 0
    ("x0**x1 along (0, 1) at (inf, 0)", lambda a, b: a ** b, (inf, 0.0), (0, 1), [1.0, inf]),  # 1 log inf
    ("x0**x1 along (1, 0) at (0.5, inf)", lambda a, b: a ** b, (0.5, inf), (1, 0), [0.0, 0.0]),  # 0 around
    ("x0*x1 at (0, inf)", lambda a, b: a * b, (0.0, inf), (1, 0), [nan, inf]),  # 0 inf is nan; dy/dx0 = x1
    ("x0*x1 at (inf, 0)", lambda a, b: a * b, (inf, 0.0), (1, 0), [nan, 0.0]),
    ("maximum tie at 3e38, float32", F.maximum, (np.float32(3e38), np.float32(3e38)), (1, 1),
     [np.float32(3e38), 1.0]),
]


@pytest.mark.parametrize("case", TWO_INPUTS, ids=closed_form_ids)
def test_taylor_mode_of_two_inputs_at_the_edges_against_closed_forms(case):
    """The multi-primal jet at points the edge sweep (tests/test_edge_sweep.py) found wrong."""
    _, f, point, direction, expected = case
    xs = tuple(np.asarray(p) for p in point)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        y0, (y1,) = taylor.jet(f, xs, tuple([np.asarray(d, x.dtype)] for d, x in zip(direction, xs)))
    assert y0.dtype == xs[0].dtype
    np.testing.assert_allclose([float(y0), float(y1)], expected, rtol=1e-12, atol=0)


@pytest.mark.parametrize("f", [F.abs, F.relu, lambda x: F.clip(x, -1.0, 1.0)], ids=["abs", "relu", "clip"])
def test_the_value_at_nan_is_nan(f):
    y0, _ = taylor.jet(f, np.array([nan, -2.0]), [np.ones(2)])
    assert np.isnan(y0[0]) and not np.isnan(y0[1])


def test_an_empty_sum_of_products_multiplies_nothing():
    # quotient's coefficient 0 sums over j = 1..0, before y_0 is set: nothing may read y there, nor
    # multiply two values (1e300 * 1e300 overflows)
    a, b = np.array([1e300, 1.0]), np.array([1e300, 2.0])
    with np.errstate(all="raise"):
        empty = series.convolve(a, b, 0, lo=1)
        y0, (y1,) = taylor.jet(lambda v: 1 / v, np.array([1e300, 2.0]), [np.array([1e300, 1.0])])
    assert empty.shape == () and empty == 0
    np.testing.assert_allclose([y0, y1], [[1e-300, 0.5], [-1e-300, -0.25]], rtol=1e-12, atol=0)
