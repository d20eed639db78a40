"""numerical_grad and gradcheck: they agree with closed forms and catch a wrong rule."""

import numpy as np
import pytest

import minigrad as mg
import minigrad.functions as F
from minigrad import forward_functions
from minigrad.backward_functions import register
from minigrad import Function
from minigrad.numerical import _assert_close, gradcheck, numerical_grad


def test_numerical_grad_matches_closed_form():
    xs = np.array([0.1, 0.7, -1.2])
    g = numerical_grad(F.sin, xs)
    np.testing.assert_allclose(g, np.cos(xs), atol=1e-9)
    ga, gb = numerical_grad(lambda a, b: a * b, [np.array(2.0), np.array(3.0)])
    assert np.isclose(ga, 3.0) and np.isclose(gb, 2.0)


@pytest.mark.parametrize("order", [1, 2, 3])
def test_gradcheck_passes_for_correct_rules(order):
    x = np.random.default_rng(1).uniform(0.5, 1.5, (2, 3))
    assert gradcheck(lambda a: F.tanh(a) * F.log(a) + a ** 3, [x], order=order)


class BadSquare(Function):
    def forward(self, x):
        return x * x


@register("BadSquare")
def bad_square_backward(ctx, gy):
    (x,) = ctx.inputs
    return gy * x  # wrong: should be 2 x gy


def test_gradcheck_names_the_worst_element():
    with pytest.raises(AssertionError, match=r"order 1 with respect to input 0 differs at index \(\d+,\): analytic"):
        gradcheck(lambda a: BadSquare()(a), [np.array([1.0, 2.0, 3.0])], modes=("rev",))


class BadSecond(Function):
    """Right first derivative, written on .data: its second derivative is lost."""

    def forward(self, x):
        return np.sin(x)


@register("BadSecond", differentiable=False)
def bad_second_backward(ctx, gy):
    (x,) = ctx.inputs
    return gy * mg.Variable(np.cos(x.data))


def test_gradcheck_catches_a_rule_that_is_not_differentiable():
    x = np.array([0.3, 1.1])
    assert gradcheck(lambda a: BadSecond()(a), [x], order=1, modes=("rev",))
    with pytest.raises(AssertionError, match="order 2"), pytest.warns(UserWarning, match="differentiable=False"):
        gradcheck(lambda a: BadSecond()(a), [x], order=2, modes=("rev",))


# ---- NaN and infinities ----
class NaNRule(Function):
    """sin, whose rules return NaN: the derivative a rule gives when it divides 0 by 0."""

    def forward(self, x):
        return np.sin(x)


@register("NaNRule")
def nan_rule_backward(ctx, gy):
    return gy * np.nan


@forward_functions.register("NaNRule")
def nan_rule_forward(ctx, tx):
    return tx * np.nan


@pytest.mark.parametrize("fast", [False, True])
@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_gradcheck_fails_a_rule_that_returns_nan(mode, fast):
    with pytest.raises(AssertionError, match=r"order 1.*: analytic nan, numerical -?\d.*a NaN or an infinity"):
        gradcheck(lambda a: NaNRule()(a), [np.array([0.3, -1.2])], modes=(mode,), fast=fast)


@pytest.mark.parametrize("analytic, numeric, agree", [
    (np.nan, 1.0, False), (1.0, np.nan, False), (np.inf, 1.0, False), (1.0, np.inf, False),
    (np.inf, np.nan, False), (np.inf, -np.inf, False), (np.nan, np.nan, True), (-np.inf, -np.inf, True),
])
def test_a_nan_or_an_infinity_agrees_only_with_the_same(analytic, numeric, agree):
    a, n = np.array([1.0, analytic, 2.0]), np.array([1.0, numeric, 2.0])
    if agree:
        _assert_close(a, n, 1e-5, 1e-4, "at index")
    else:
        with pytest.raises(AssertionError, match=rf"at index \(1,\): analytic {analytic:g}, numerical {numeric:g}"):
            _assert_close(a, n, 1e-5, 1e-4, "at index")


# ---- the step, at large arguments ----
class Curve(Function):
    """y = value(x), whose rules, in both modes, multiply by slope(x): a function of Variables (a Curve too)."""

    def __init__(self, value, slope):
        self.value, self.slope = value, slope

    def forward(self, x):
        return self.value(x)


@register("Curve")
def curve_backward(ctx, gy):
    (x,) = ctx.inputs
    return gy * ctx.function.slope(x)


@forward_functions.register("Curve")
def curve_forward(ctx, tx):
    (x,) = ctx.inputs
    return tx * ctx.function.slope(x)


def sine(first=1.0, second=1.0):
    """sin, its derivative times ``first``, its second derivative times ``second``: right when both are 1."""
    return Curve(np.sin, lambda x: Curve(lambda a: first * np.cos(a), lambda v: -second * F.sin(v))(x))


def square(first=1.0, second=1.0):
    """x^2, with its derivatives scaled the same way."""
    return Curve(np.square, lambda x: Curve(lambda a: 2 * first * a, lambda v: 2.0 * second)(x))


LARGE = [("sin", sine, 1e7), ("x**2", square, 1e9)]


@pytest.mark.parametrize("fast", [False, True])
@pytest.mark.parametrize("mode", ["rev", "fwd"])
@pytest.mark.parametrize("name, curve, x0", LARGE, ids=[case[0] for case in LARGE])
def test_right_rules_pass_at_large_arguments(name, curve, x0, mode, fast):
    x = np.array([x0, -x0 * 1.3, x0 + 0.37])
    assert gradcheck(lambda a: curve()(a), [x], order=2, modes=(mode,), fast=fast)
    assert gradcheck(lambda a: curve()(a), [x.astype(np.float32)], order=2, modes=(mode,), fast=fast)


@pytest.mark.parametrize("fast", [False, True])
@pytest.mark.parametrize("mode", ["rev", "fwd"])
@pytest.mark.parametrize("wrong", [{"first": -1.0}, {"first": 1.5}, {"second": -1.0}, {"second": 1.5}],
                         ids=["sign of f'", "factor of f'", "sign of f''", "factor of f''"])
@pytest.mark.parametrize("name, curve, x0", LARGE, ids=[case[0] for case in LARGE])
def test_wrong_rules_fail_at_large_arguments(name, curve, x0, wrong, mode, fast):
    x = np.array([x0, -x0 * 1.3, x0 + 0.37])
    order = 2 if "second" in wrong else 1
    if order == 2:  # a wrong second derivative: the first is right
        assert gradcheck(lambda a: curve(**wrong)(a), [x], order=1, modes=(mode,), fast=fast)
    with pytest.raises(AssertionError, match=f"order {order}"):
        gradcheck(lambda a: curve(**wrong)(a), [x], order=2, modes=(mode,), fast=fast)


def logarithm(first=1.0, second=1.0):
    """log, with its derivatives 1/x and -1/x^2 scaled the same way: singular at 0."""
    return Curve(np.log, lambda x: Curve(lambda a: first / a, lambda v: -second / (v * v))(x))


def reciprocal(first=1.0, second=1.0):
    """1/x, with -1/x^2 and 2/x^3 scaled the same way."""
    return Curve(np.reciprocal, lambda x: Curve(lambda a: -first / (a * a), lambda v: 2.0 * second / (v * v * v))(x))


def root(first=1.0, second=1.0):
    """sqrt, with 1/(2 sqrt x) and -1/(4 x^1.5) scaled the same way."""
    return Curve(np.sqrt, lambda x: Curve(lambda a: first * 0.5 / np.sqrt(a),
                                          lambda v: -second * 0.25 * v ** -1.5)(x))


def cosine(first=1.0, second=1.0):
    """cos: of unit size at 0, where its derivative is small (rounding, eps |f| / h, against a small step)."""
    return Curve(np.cos, lambda x: Curve(lambda a: -first * np.sin(a), lambda v: -second * F.cos(v))(x))


NEAR_ZERO = [("log", logarithm), ("1/x", reciprocal), ("sqrt", root), ("cos", cosine)]


@pytest.mark.parametrize("fast", [False, True])
@pytest.mark.parametrize("mode", ["rev", "fwd"])
@pytest.mark.parametrize("x0", [1e-4, 3e-3, 2e-5])
@pytest.mark.parametrize("name, curve", NEAR_ZERO, ids=[case[0] for case in NEAR_ZERO])
def test_right_rules_pass_near_0_and_wrong_ones_fail(name, curve, x0, mode, fast):
    """A function singular at 0 curves on the scale of x: the default step shrinks with x near 0
    (H = 6e-6 at 1e-4 is a 6% step: log's central difference was 1e-3 off)."""
    x = np.array([x0, 1.7 * x0, 2.9 * x0])
    assert gradcheck(lambda a: curve()(a), [x], order=2, modes=(mode,), fast=fast)
    for wrong, order in [({"first": 1.001}, 1), ({"second": 1.001}, 2)]:
        if name == "cos":  # -sin x 1.001 is 1e-7 off at 1e-4, under atol: found at order 2, in its derivative
            wrong, order = {"first": 1.001}, 2
        with pytest.raises(AssertionError, match=f"order {order}"):
            gradcheck(lambda a, wrong=wrong: curve(**wrong)(a), [x], order=2, modes=(mode,), fast=fast)


@pytest.mark.parametrize("x0", [1e7, -3e8, 1e9])
def test_numerical_grad_at_large_arguments(x0):
    """Each scale alone: the rounding of a sum is that of its largest term, 1e18 next to 1e14 would drown it."""
    x = np.array([x0, 1.1 * x0])
    np.testing.assert_allclose(numerical_grad(lambda a: a ** 2, x), 2 * x, rtol=1e-5)
    np.testing.assert_allclose(numerical_grad(lambda a: a ** 3, x), 3 * x ** 2, rtol=1e-5)
    if abs(x0) < 1e8:
        np.testing.assert_allclose(numerical_grad(F.sin, x), np.cos(x), rtol=1e-5, atol=1e-7)


def test_a_function_of_unit_scale_far_from_0_needs_a_given_step():
    """The default step at 1e9 is 0.037, for x**2; sin's curvature then costs 2.3e-4: eps=1e-6 serves it."""
    x = np.array([1e9, -2e9])
    with pytest.raises(AssertionError, match="order 1"):
        gradcheck(F.sin, [x])
    assert gradcheck(F.sin, [x], order=2, eps=1e-6)


@pytest.mark.parametrize("x0", [1e7, 1e9])
def test_many_large_outputs_do_not_leak_their_rounding_into_each_derivative(x0):
    """Each output is differenced on its own before they are summed: x**2 of 30 elements near x0 passes,
    where the rounding of the 29 others used to drown each element's difference."""
    rng = np.random.default_rng(0)
    for _ in range(5):
        x = x0 * (1 + rng.random(30))
        assert gradcheck(lambda a: a ** 2, [x], order=2)
        assert gradcheck(lambda a: a ** 2, [x], order=2, fast=True, seed=int(rng.integers(100)))
    with pytest.raises(AssertionError, match="order 1"):  # a wrong rule still fails among them
        gradcheck(lambda a: square(first=1.001)(a), [x], modes=("rev",))


def test_a_given_step_is_that_distance_for_every_element():
    x = np.array([0.5, 1e3, -2.0])  # x +- 1e-3 are exact enough that the distance is 2e-3 to a few ulps
    expected = (np.sin(x + 1e-3) - np.sin(x - 1e-3)) / ((x + 1e-3) - (x - 1e-3))
    np.testing.assert_allclose(numerical_grad(F.sin, x, eps=1e-3), expected, rtol=1e-12)
    assert not np.allclose(numerical_grad(F.sin, x, eps=1e-3), np.cos(x), rtol=1e-8, atol=0)  # truncation: h^2/6


def test_a_function_computing_in_float32_is_told_its_step():
    x = np.array([0.3, 1.1, -0.7])
    f = lambda v: F.sin(F.cast(v, np.float32))  # noqa: E731
    for mode in ("rev", "fwd"):
        with pytest.raises(AssertionError, match=r"order 1.*f returns float32.*gradcheck\(\.\.\., eps=5e-03\)"):
            gradcheck(f, [x], modes=(mode,))
        assert gradcheck(f, [x], modes=(mode,), eps=5e-3)


# ---- fast mode ----
@pytest.mark.parametrize("order", [1, 2, 3])
def test_fast_gradcheck_passes_for_correct_rules(order):
    x = np.random.default_rng(1).uniform(0.5, 1.5, (2, 3))
    w = np.random.default_rng(2).uniform(0.5, 1.5, 3)
    assert gradcheck(lambda a, b: F.tanh(a * b) * F.log(a) + a ** 3 / b, [x, w], order=order, fast=True)


class OneWrong(Function):
    """x^2, element by element; both rules forget the factor 2 on element 7 alone."""

    def forward(self, x):
        return x * x


def _slope_with_one_mistake(x):
    factor = np.full(x.shape, 2.0)
    factor[7] = 1.0
    return x * mg.Variable(factor, requires_grad=False)


@register("OneWrong")
def one_wrong_backward(ctx, gy):
    (x,) = ctx.inputs
    return gy * _slope_with_one_mistake(x)


@forward_functions.register("OneWrong")
def one_wrong_forward(ctx, tx):
    (x,) = ctx.inputs
    return tx * _slope_with_one_mistake(x)


X50 = np.random.default_rng(3).uniform(0.5, 1.5, 50)


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_fast_gradcheck_catches_one_wrong_element_of_fifty(mode, seed):
    fast_message = r"fast: derivative of order 1.*random direction \d.*fast=False\) compares every element"
    with pytest.raises(AssertionError, match=fast_message):
        gradcheck(lambda a: F.sum(OneWrong()(a)), [X50], modes=(mode,), fast=True, seed=seed)
    with pytest.raises(AssertionError, match=r"order 1.*index \(7,\)" if mode == "rev" else "order 1"):
        gradcheck(lambda a: F.sum(OneWrong()(a)), [X50], modes=(mode,), seed=seed)


def test_fast_gradcheck_misses_an_error_smaller_than_its_tolerance():
    """The documented blind spot: one entry off by 2e-4 of its size, in 50, hides under u^T J v's tolerance."""
    def slightly_off(a):
        return F.sum(F.sin(a)) + 2e-4 * F.sum(mg.Variable(np.eye(50)[7]) * (a - a.detach()))

    x = np.random.default_rng(4).uniform(0.5, 1.5, 50)
    assert gradcheck(slightly_off, [x], modes=("rev",), fast=True, atol=0)
    with pytest.raises(AssertionError, match=r"index \(7,\)"):
        gradcheck(slightly_off, [x], modes=("rev",), atol=0)


def test_a_fast_failure_reproduces_with_its_seed():
    def message(seed):
        with pytest.raises(AssertionError) as e:
            gradcheck(lambda a: F.sum(OneWrong()(a)), [X50], modes=("rev",), fast=True, seed=seed)
        return str(e.value)

    assert message(5) == message(5) != message(6)


# ---- what each costs, in evaluations of f ----
def counted(f):
    def g(*xs):
        g.calls += 1
        return f(*xs)

    g.calls = 0
    return g


@pytest.mark.parametrize("n", [10, 50])
def test_evaluations_of_f_per_order(n):
    x = np.random.default_rng(5).uniform(0.5, 1.5, n)
    for mode, fast, per_order in [("rev", False, 2 * n + 1), ("fwd", False, 3), ("rev", True, 5), ("fwd", True, 6)]:
        for order in (1, 2):
            f = counted(lambda a: F.tanh(a) * a)
            gradcheck(f, [x], order=order, modes=(mode,), fast=fast)
            assert f.calls == order * per_order, (mode, fast, order)
    f = counted(lambda a: F.tanh(a) * a)
    numerical_grad(f, x)
    assert f.calls == 2 * n


def test_forward_mode_costs_three_evaluations_per_input_array():
    xs = [np.array(0.5 + k / 50) for k in range(50)]
    f = counted(lambda *vs: sum(vs[1:], start=vs[0]) * vs[0])
    gradcheck(f, xs, modes=("fwd",))
    assert f.calls == 3 * 50
    f.calls = 0
    gradcheck(f, xs, modes=("fwd",), fast=True)
    assert f.calls == 6


@pytest.mark.parametrize("eps", ["1e-6", float("nan"), float("inf"), True, -1e-6, 0.0])
def test_a_step_that_is_not_a_small_positive_number_is_refused(eps):
    with pytest.raises(ValueError, match=r"^gradcheck: eps=.* must be a small positive step"):
        gradcheck(F.sin, [np.ones(3)], eps=eps)


def test_no_inputs_is_refused_by_gradcheck():
    with pytest.raises(ValueError, match=r"^gradcheck: inputs is empty"):
        gradcheck(lambda: mg.Variable(np.ones(2)), [])
