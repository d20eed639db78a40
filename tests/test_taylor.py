"""Taylor mode (minigrad.taylor): its table, every rule, and the numbers Taylor mode must reach.

Each rule is checked against nested reverse mode (grad of grad of ... with
create_graph, through the backward rules: another code path entirely), the
closed forms against independent formulas, and lower orders against central
differences.
"""

import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.functions as F
from minigrad import backward_functions, families, forward_functions, taylor
from minigrad.cuda import as_numpy
from minigrad import Function
from minigrad.functions.elementwise import Tanh as LibraryTanh
from minigrad.functions.elementwise import tanh_taylor
from cases import CASES

# Functions with a backward rule but no Taylor rule, each with the reason. None today: every
# Function of minigrad is analytic along its active branch (or linear, or bilinear).
NO_TAYLOR_RULE = {}


@pytest.fixture(autouse=True)
def _taylor_table_as_it_was():
    """Taylor rules a test registers for its own functions are gone after it."""
    rules = dict(taylor.table.rules)
    yield
    taylor.table.rules.clear()
    taylor.table.rules.update(rules)


def library_rules(table_registered, lookup):
    return {name for name in table_registered() if lookup(name).__module__.startswith("minigrad.")}


def test_the_tables_walk_together():
    backward = library_rules(backward_functions.registered, backward_functions.lookup)
    forward_in_taylor = library_rules(taylor.registered, taylor.lookup)
    missing = sorted(backward - forward_in_taylor - set(NO_TAYLOR_RULE))
    assert not missing, f"functions with a backward rule but no Taylor rule (nor a reason in NO_TAYLOR_RULE): {missing}"
    assert not forward_in_taylor - backward, "a Taylor rule for a name that is no Function with a backward rule"
    assert not set(NO_TAYLOR_RULE) & forward_in_taylor, "NO_TAYLOR_RULE lists a function that has a rule now"


def test_each_rule_sits_in_its_functions_file_with_a_docstring():
    for name in library_rules(taylor.registered, taylor.lookup):
        rule = taylor.lookup(name)
        backward = backward_functions.lookup(name)
        if rule is families.linear_taylor:  # declared once for the family, beside the backward rule
            assert forward_functions.lookup(name) is families.linear_forward, name
            continue
        assert rule.__module__ == backward.__module__, name
        assert rule.__doc__ and "=" in rule.__doc__, f"the Taylor rule of {name} should derive its recurrence"


# ---- every case of tests/cases.py against nested reverse mode, along a random direction ----
def flat(case):
    """case.f as a function of one vector, the inputs' elements one after another."""
    shapes = case.shapes
    sizes = [math.prod(s) for s in shapes]

    def f(z):
        xs, start = [], 0
        for shape, size in zip(shapes, sizes):
            xs.append(F.reshape(F.getitem(z, slice(start, start + size)), shape))
            start += size
        return case.f(*[x + 0.0 for x in xs]) + 0.0  # intermediates that add's rule does not read

    return f


def nested_reverse(f, z, v, w, n):
    """[d^k/dt^k <w, f(z + t v)> at t = 0 for k = 0..n], by grad of grad with create_graph."""
    t = mg.Variable(np.zeros(()))
    d = F.sum(f(z + t * v) * w)
    values = [d.item()]
    for _ in range(n):
        (d,) = mg.grad(d, t, create_graph=True, materialize_grads=True)
        values.append(d.item())
    return values


@pytest.mark.usefixtures("device")
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_rule_against_nested_reverse_mode(case, monkeypatch):
    monkeypatch.setattr("minigrad.core.function.RELEASE_FROM_BYTES", 0)  # free every array no backward rule reads
    rng = np.random.default_rng(1)
    z = np.concatenate([x.ravel() for x in case.inputs()])
    v = rng.standard_normal(z.shape)
    f = flat(case)
    y = f(mg.Variable(z))
    w = rng.standard_normal(y.shape)
    n = 4 if case.smooth else 2
    expected = nested_reverse(f, mg.Variable(z, requires_grad=False), mg.Variable(v, requires_grad=False),
                              mg.Variable(w, requires_grad=False), n)
    got = [float(np.sum(as_numpy(d) * w)) for d in taylor.derivatives(f, z, n, direction=v)]
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)


# ---- the numbers Taylor mode must reach ----
def tanh_polynomials(n):
    """P_0 = t, P_{k+1} = P_k' (1 - t^2): d^k/dx^k tanh x = P_k(tanh x)."""
    P = np.polynomial.Polynomial
    ps = [P([0.0, 1.0])]
    for _ in range(n):
        ps.append(ps[-1].deriv() * P([1.0, 0.0, -1.0]))
    return ps


def test_tanh_to_order_100_against_its_polynomials():
    x = np.linspace(-3, 3, 1000)
    t = np.tanh(x)
    got = taylor.derivatives(F.tanh, x, 100)
    assert len(got) == 101
    for k, p in enumerate(tanh_polynomials(100)):
        expected = p(t)
        # P_k's coefficients reach 1e167 with alternating signs: evaluating it in float64 loses digits
        # to cancellation, in proportion to the magnitude of its terms, sum_i |c_i| |t|^i
        terms = np.polynomial.Polynomial(np.abs(p.coef))(np.abs(t))
        assert np.all(np.abs(got[k] - expected) <= 1e-9 * terms), k
        if k <= 20:  # where the terms cancel little, relative to the largest value too
            assert np.abs(got[k] - expected).max() <= 1e-9 * np.abs(expected).max(), k


def test_tanh_to_order_30_against_exact_polynomials():
    """The same polynomials with integer coefficients, evaluated exactly at a few points (fractions)."""
    from fractions import Fraction

    x = np.array([-3.0, -1.0, -0.2, 0.1, 0.7, 2.5])
    got = taylor.derivatives(F.tanh, x, 30)
    p = [0, 1]  # P_0 = t, integer coefficients, lowest first
    for k in range(31):
        exact = []
        for t in np.tanh(x):
            value = Fraction(0)
            for c in reversed(p):
                value = value * Fraction(t) + c
            exact.append(float(value))
        # relative to the order's magnitude: near a zero of P_k a pointwise ratio means nothing
        assert np.abs(got[k] - exact).max() <= 1e-12 * np.abs(exact).max(), k
        dp = [i * c for i, c in enumerate(p)][1:]  # P' then P' (1 - t^2)
        p = [a - b for a, b in zip(dp + [0, 0], [0, 0] + dp)]


def test_sin_to_order_100():
    x = np.linspace(-3, 3, 1000)
    got = taylor.derivatives(F.sin, x, 100)
    for k in range(101):
        np.testing.assert_allclose(got[k], np.sin(x + k * np.pi / 2), rtol=0, atol=1e-12)


def test_reciprocal_to_order_50():
    x = np.linspace(0.5, 3.0, 1000)
    got = taylor.derivatives(lambda v: 1 / v, x, 50)
    for k in range(51):
        np.testing.assert_allclose(got[k], (-1) ** k * math.factorial(k) / x ** (k + 1), rtol=1e-12)


def test_sigmoid_in_its_tails():
    """d sigma = s s-, d2 sigma = s s- (s- - s), d3 sigma = s s- (1 - 6 s s-), with s = sigma(x) and
    s- = sigma(-x) = 1 - s: products of numbers in (0, 1), computed without cancellation, so these are
    exact to rounding in both tails. (Through tanh(x/2), the factor 1 - tanh^2 cancels: at x = -40 the
    derivatives, about 4.2e-18, came out as 0, and at x = -30 with a relative error of 2e-4.)"""
    x = np.array([-700.0, -40.0, -30.0, -3.0, 0.0, 2.0, 30.0, 40.0, 700.0])
    s = 1 / (1 + np.exp(-x))
    sm = 1 / (1 + np.exp(x))
    exact = [s, s * sm, s * sm * (sm - s), s * sm * (1 - 6 * s * sm)]
    got = taylor.derivatives(F.sigmoid, x, 3)
    for k in range(4):
        np.testing.assert_allclose(got[k], exact[k], rtol=1e-12, atol=0, err_msg=f"order {k}")


def test_pow_with_an_exponent_that_does_not_move():
    """x^c with c a Variable held still: the k-th derivative is c (c-1) ... (c-k+1) x^(c-k), also at a
    negative base with a whole exponent, where the value exists ((-1.5)^3). Through e^(c log x) every
    coefficient was NaN there, while the forward rule gave the slope."""
    x = np.array([-1.5, -1.5, -2.0, 2.0, 0.7])
    c = np.array([2.0, 3.0, -1.0, 0.5, -2.5])
    got = taylor.derivatives(lambda v: v ** mg.Variable(c), x, 5)
    for k in range(6):
        exact = math.prod(c - i for i in range(k)) * x ** (c - k)
        np.testing.assert_allclose(got[k], exact, rtol=1e-12, err_msg=f"order {k}")
    # broadcast: one base, several exponents
    got = taylor.derivatives(lambda v: v ** mg.Variable(c[:3]), np.array(-1.5), 3)
    np.testing.assert_allclose(got[3], c[:3] * (c[:3] - 1) * (c[:3] - 2) * (-1.5) ** (c[:3] - 3), rtol=1e-12)


@pytest.mark.parametrize("row", [[-np.inf, -np.inf], [np.inf, 0.0], [-np.inf, 1.0]], ids=["all -inf", "+inf", "-inf"])
def test_logsumexp_family_at_infinities_has_the_forward_value(row):
    """Coefficient 0 is the value: log sum e^x of a row of -inf is log 0 = -inf, with +inf it is inf (the
    forward's shift by a finite max); the largest value, taken out first, was inf - inf = NaN there."""
    x = np.array(row)
    for f in (F.logsumexp, lambda v: F.log_softmax(v, axis=0)):
        with np.errstate(all="ignore"):
            y0, _ = taylor.jet(f, x, [np.zeros_like(x)])
            np.testing.assert_array_equal(y0, f(mg.Variable(x)).data)


def two_layer_network():
    rng = np.random.default_rng(0)
    W1, b1 = mg.Variable(rng.standard_normal((3, 4))), mg.Variable(rng.standard_normal(4))
    W2, b2 = mg.Variable(rng.standard_normal((4, 2))), mg.Variable(rng.standard_normal(2))
    return lambda x: F.affine(F.tanh(F.affine(F.tanh(x), W1, b1)), W2, b2)


COMPOSITES = {
    "exp(sin x)": (lambda x: F.exp(F.sin(x)), (7,)),
    "sigmoid": (F.sigmoid, (7,)),
    "log(1 + x^2)": (lambda x: F.log(1 + x ** 2), (7,)),
    "two-layer tanh network": (two_layer_network(), (5, 3)),
}


@pytest.mark.parametrize("name", COMPOSITES)
def test_composites_against_nested_reverse_mode_to_order_8(name):
    f, shape = COMPOSITES[name]
    rng = np.random.default_rng(2)
    x, v = rng.standard_normal(shape), rng.standard_normal(shape)
    w = rng.standard_normal(f(mg.Variable(x)).shape)
    expected = nested_reverse(f, mg.Variable(x, requires_grad=False), mg.Variable(v, requires_grad=False),
                              mg.Variable(w, requires_grad=False), 8)
    got = [float(np.sum(d * w)) for d in taylor.derivatives(f, x, 8, direction=v)]
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", COMPOSITES)
def test_composites_against_central_differences(name):
    f, shape = COMPOSITES[name]
    rng = np.random.default_rng(3)
    x, v = rng.standard_normal(shape), rng.standard_normal(shape)

    def g(t):
        with mg.no_grad():
            return f(mg.Variable(x + t * v)).numpy()

    d = taylor.derivatives(f, x, 2, direction=v)
    np.testing.assert_allclose(d[0], g(0.0), rtol=1e-14, atol=1e-14)
    h = 1e-5
    np.testing.assert_allclose(d[1], (g(h) - g(-h)) / (2 * h), rtol=1e-7, atol=1e-8)
    h = 1e-3
    np.testing.assert_allclose(d[2], (g(h) - 2 * g(0.0) + g(-h)) / h ** 2, rtol=1e-5, atol=1e-5)


@pytest.mark.usefixtures("device")
def test_on_every_device_the_values_stay_there():
    def f(v):
        return F.softmax(F.reshape(F.tanh(v) * v, (3, 3))) + F.sum(F.max_pooling(F.reshape(v, (1, 1, 3, 3)), 2, 1))

    x = mg.Variable(np.linspace(-1, 1, 9))
    got = taylor.derivatives(f, x, 3)
    assert all(type(d) is type(x.data) for d in got)
    with mg.device("cpu"):
        host = taylor.derivatives(f, np.linspace(-1, 1, 9), 3)
    for d, h in zip(got, host):
        np.testing.assert_allclose(as_numpy(d), h, rtol=1e-13, atol=1e-13)


def test_through_a_derivative_graph():
    """f = tanh' written as grad(tanh(x), x, create_graph=True): Taylor mode goes through TanhGrad."""
    x = np.linspace(-2, 2, 11)

    def tanh_prime(v):
        (g,) = mg.grad(F.tanh(v), v, create_graph=True)
        return g

    got = taylor.derivatives(tanh_prime, x, 6)
    expected = taylor.derivatives(F.tanh, x, 7)[1:]
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


# ---- jet ----
def test_jet_takes_and_gives_normalized_coefficients():
    x = np.array([0.3, -1.2])
    y0, ys = taylor.jet(F.exp, x, [np.ones(2), np.zeros(2), np.zeros(2)])
    np.testing.assert_allclose(y0, np.exp(x))
    for k, y in enumerate(ys, start=1):
        np.testing.assert_allclose(y, np.exp(x) / math.factorial(k))  # e^(x + t) = e^x sum t^k / k!
    # sin(x + t^2) = sin x + cos x t^2 - sin x t^4 / 2 + ...
    y0, ys = taylor.jet(F.sin, x, [np.zeros(2), np.ones(2), np.zeros(2), np.zeros(2)])
    np.testing.assert_allclose(ys[1], np.cos(x))
    np.testing.assert_allclose(ys[3], -np.sin(x) / 2)
    np.testing.assert_allclose(ys[0], 0.0)
    np.testing.assert_allclose(ys[2], 0.0)


def test_order_zero_and_a_constant_output():
    x = np.array([0.5, 2.0])
    (y,) = taylor.derivatives(F.exp, x, 0)
    np.testing.assert_allclose(y, np.exp(x))
    d = taylor.derivatives(lambda v: F.exp(mg.Variable(x, requires_grad=False)), x, 2)
    np.testing.assert_allclose(d[1:], 0.0)
    d = taylor.derivatives(lambda v: v, x, 2)
    np.testing.assert_allclose(d, [x, np.ones(2), np.zeros(2)])


def test_whole_powers_at_zero():
    x = np.array([-1.0, 0.0, 2.0])
    d = taylor.derivatives(lambda v: v ** 3, x, 4)
    np.testing.assert_allclose(d, [x ** 3, 3 * x ** 2, 6 * x, 6 + 0 * x, 0 * x])


# ---- the table ----
class Softplus(Function):
    def forward(self, x):
        return np.log1p(np.exp(x))


def test_a_missing_rule_says_how_to_register_one():
    with pytest.raises(NotImplementedError, match=r"Taylor rule registered for 'Softplus'.*register\('Softplus'\)"):
        taylor.derivatives(lambda x: Softplus()(x), np.ones(2), 2)


def test_register_a_rule_of_ones_own():
    @taylor.register("Softplus")
    def softplus_taylor(ctx, x):
        """y = log(1 + e^x)."""
        from minigrad import series

        e = series.exp(x)
        e[0] += 1
        return series.log(e)

    assert taylor.lookup("Softplus") is softplus_taylor
    assert taylor.lookup(Softplus) is softplus_taylor
    assert "Softplus" in taylor.registered()
    x = np.array([0.3, -0.7])
    s = 1 / (1 + np.exp(-x))
    d = taylor.derivatives(lambda v: Softplus()(v), x, 2)
    np.testing.assert_allclose(d[1:], [s, s * (1 - s)])


def test_a_namesake_of_a_library_function_gets_no_library_rule():
    class Tanh(Function):  # a student's own class named like minigrad's
        def forward(self, x):
            return np.tanh(x)

    with pytest.raises(NotImplementedError, match="not minigrad's own Tanh"):
        taylor.derivatives(lambda x: Tanh()(x), np.ones(2), 2)
    assert taylor.lookup(LibraryTanh) is tanh_taylor  # minigrad's own keeps its rule
    np.testing.assert_allclose(taylor.derivatives(F.tanh, np.zeros(1), 1)[1], 1.0)


def test_show_registry(capsys):
    taylor.show_registry()
    text = capsys.readouterr().out
    rows = text.strip().splitlines()
    assert rows[0].split()[:3] == ["function", "Taylor", "rule"]
    assert any(r.split()[:2] == ["Tanh", "minigrad.functions.elementwise.tanh_taylor"] for r in rows)
    assert rows[-1] == f"{len(taylor.registered())} functions registered."


def test_a_rule_returning_the_wrong_shape():
    taylor.register("Softplus", lambda ctx, x: x[0])
    with pytest.raises(ValueError, match=r"Taylor rule of Softplus returned ndarray of shape \(2,\).*\(3, 2\)"):
        taylor.derivatives(lambda x: Softplus()(x), np.ones(2), 2)


# ---- bad input ----
@pytest.mark.parametrize("n, error, message", [
    (-1, ValueError, r"n=-1 is negative; pass n >= 0"),
    (2.5, TypeError, r"n must be an int >= 0.*2\.5"),
    (True, TypeError, r"n must be an int >= 0"),
    ("3", TypeError, r"n must be an int >= 0"),
    (171, ValueError, r"n=171 is above 170, where k! overflows float64; taylor.jet"),
])
def test_bad_n(n, error, message):
    with pytest.raises(error, match=message):
        taylor.derivatives(F.tanh, np.ones(3), n)


def test_bad_direction_and_series():
    with pytest.raises(ValueError, match=r"direction has shape \(2,\), but x has shape \(3,\).*None for ones"):
        taylor.derivatives(F.tanh, np.ones(3), 2, direction=np.ones(2))
    with pytest.raises(ValueError, match=r"series\[1\] has shape \(\), but x has shape \(3,\)"):
        taylor.jet(F.tanh, np.ones(3), [np.ones(3), 0.0])
    with pytest.raises(TypeError, match=r"series must be a list of arrays"):
        taylor.jet(F.tanh, np.ones(3), np.ones(3)[0])


def test_f_must_return_a_variable():
    with pytest.raises(TypeError, match=r"taylor.derivatives: f must return a Variable or a tuple of Variables, "
                                        r"got ndarray.*not NumPy's"):
        taylor.derivatives(lambda x: np.tanh(x.data), np.ones(3), 2)
    with pytest.raises(TypeError, match=r"taylor.jet: f must return a Variable or a tuple of Variables, got float"):
        taylor.jet(lambda x: 1.0, np.ones(3), [np.ones(3)])
    with pytest.raises(TypeError, match=r"f must be a function of one Variable"):
        taylor.derivatives("tanh", np.ones(3), 2)


def test_inside_no_grad_f_is_still_recorded():
    x = np.array([0.2, 1.1])
    with mg.no_grad():
        d = taylor.derivatives(F.exp, x, 2)
    np.testing.assert_allclose(d, [np.exp(x)] * 3)


def test_maximum_and_minimum_choose_a_branch_so_an_infinite_loser_makes_no_nan():
    """y_k is the winner's x_k: the loser's coefficients are never multiplied by a share of 0 (0 * inf)."""
    low, high = np.array([-np.inf, 2.0, 0.5]), np.array([np.inf, -2.0, 0.5])
    for f, point, expected in [(lambda v: F.maximum(v, 0.5), low, [[0.5, 2.0, 0.5], [0.0, 1.0, 0.5]]),
                               (lambda v: F.minimum(v, 0.5), high, [[0.5, -2.0, 0.5], [0.0, 1.0, 0.5]])]:
        y = taylor.derivatives(f, point, 2)
        np.testing.assert_array_equal(y[0], expected[0])
        np.testing.assert_array_equal(y[1], expected[1])
        np.testing.assert_array_equal(y[2], [0.0, 0.0, 0.0])


def test_taylor_mode_through_a_graph_a_backward_pass_freed_treats_it_as_a_constant():
    w = mg.Variable(np.array([0.5, -1.0]))
    c = F.exp(w) * 2
    F.sum(c).backward()  # frees the graph behind c
    y = taylor.derivatives(lambda x: x * c, np.ones(2), 2)
    np.testing.assert_allclose(y[0], 2 * np.exp(w.data))
    np.testing.assert_allclose(y[1], 2 * np.exp(w.data))
    np.testing.assert_array_equal(y[2], [0.0, 0.0])
