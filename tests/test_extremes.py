"""Numbers that must be right at the extremes: closed forms first, PyTorch where it is installed.

Each case here gave a wrong number once (0, inf or nan where the answer is finite).
"""

import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.functions as F


def nth_derivatives(f, x, n):
    """[f'(x), ..., f^(n)(x)] by nested reverse mode."""
    d, out = f(x), []
    for _ in range(n):
        (d,) = mg.grad(d, x, create_graph=True, allow_unused=True, materialize_grads=True)
        out.append(d.data.copy())
    return out


# ---- sigmoid: no cancellation for large negative x ----
@pytest.mark.parametrize("dtype,x", [(np.float64, -40.0), (np.float64, -700.0), (np.float32, -17.0),
                                     (np.float32, -20.0), (np.float32, -80.0), (np.float64, 30.0)])
def test_sigmoid_of_large_negative_x_is_its_tiny_value(dtype, x):
    v = mg.Variable(np.array(x, dtype=dtype))
    y = F.sigmoid(v)
    exact = 1 / (1 + math.exp(-x))  # float64 closed form, exact enough at these x
    assert y.dtype == dtype
    np.testing.assert_allclose(y.data, exact, rtol=1e-6 if dtype == np.float32 else 1e-14)
    (g,) = mg.grad(y, v)
    np.testing.assert_allclose(g.data, exact * (1 - exact), rtol=1e-6 if dtype == np.float32 else 1e-14)


def test_log_of_sigmoid_is_finite_far_out():
    v = mg.Variable(np.array([-40.0, -700.0]))
    np.testing.assert_allclose(F.log(F.sigmoid(v)).data, [-40.0, -700.0], rtol=1e-14)


# ---- log_softmax, logsumexp: large and infinite inputs ----
def test_log_softmax_of_huge_logits():
    x = mg.Variable(np.array([1e300, 1e300, 1.0]))
    y = F.log_softmax(x, axis=0)
    np.testing.assert_allclose(y.data, [-math.log(2), -math.log(2), -1e300], rtol=1e-14)
    (g,) = mg.grad(y[0], x)  # d/dx (x_0 - logsumexp(x)) = e_0 - softmax(x)
    np.testing.assert_allclose(g.data, [0.5, -0.5, 0.0], atol=1e-15)


def test_log_softmax_float32_keeps_its_digits():
    x = mg.Variable(np.array([100.0, 100.0, 1.0], dtype=np.float32))
    y = F.log_softmax(x, axis=0)
    assert y.dtype == np.float32
    assert abs(float(y.data[0]) + math.log(2)) < 1e-7  # was -0.6931458: 1.4e-6 off


def test_logsumexp_of_infinite_rows():
    x = mg.Variable(np.array([[1.0, np.inf, 0.0], [-np.inf, -np.inf, -np.inf], [0.0, -np.inf, 0.0]]))
    y = F.logsumexp(x, axis=1)
    np.testing.assert_allclose(y.data, [np.inf, -np.inf, math.log(2)])


def test_softmax_cross_entropy_of_huge_logits():
    x = mg.Variable(np.array([[1e300, 1e300, 1.0]]))
    loss = F.softmax_cross_entropy(x, np.array([0]))
    np.testing.assert_allclose(loss.data, [[math.log(2)]], rtol=1e-14)


@pytest.mark.parametrize("m", [1e300, -1e300, 1e17])
def test_softmax_family_of_equal_huge_values_in_every_mode(m):
    """logsumexp of n equal values m is m + log n, and m + log n rounds to m for m >= 2^53 log n: the
    weights (softmax, 1/n each) and log softmax (-log n) must not be computed from it, in any mode."""
    from minigrad import func, taylor

    x, n = np.full(4, m), 4
    v = mg.Variable(x)
    (g,) = mg.grad(F.logsumexp(v), v)
    np.testing.assert_allclose(g.data, 1 / n, rtol=1e-15)
    _, t = func.jvp(F.logsumexp, (x,), (np.arange(4.0),))
    np.testing.assert_allclose(t.data, np.arange(4.0).mean(), rtol=1e-15)  # sum_i x'_i / n
    for f, want0, want1 in [(lambda u: F.log_softmax(u, axis=0), -math.log(n), np.arange(4.0) - 1.5),
                            (lambda u: F.softmax(u, axis=0), 1 / n, (np.arange(4.0) - 1.5) / n),
                            (lambda u: F.softmax_cross_entropy(F.reshape(u, (1, 4)), np.array([3])),
                             math.log(n), 1.5 - 3)]:
        y0, (y1,) = taylor.jet(f, x, [np.arange(4.0)])
        np.testing.assert_allclose(y0, np.broadcast_to(want0, np.shape(y0)), rtol=1e-15)
        np.testing.assert_allclose(y1, np.broadcast_to(want1, np.shape(y1)), rtol=1e-15, atol=1e-15)


def test_the_slope_of_a_quotient_in_its_constant_numerator_where_x1_squared_leaves_the_range():
    """d(c/x1)/dx1 = -c / x1^2, with x1^-2 = inf (1e-300, 0) or a subnormal (1e160): not c inf or c 1e-320."""
    c = mg.Variable(np.array([1e-300, 0.0, 1e300, 2.0]), requires_grad=False)
    x1 = mg.Variable(np.array([1e-300, 1e-300, 1e160, 4.0]))
    (g,) = mg.grad(c / x1, x1, grad_outputs=np.ones(4))
    np.testing.assert_allclose(g.data, [-1e300, 0.0, -1e-20, -0.125], rtol=1e-15)
    with np.errstate(over="ignore"):  # (2 c / x1^3 at the others overflows: it is that large)
        (g2,) = mg.grad(F.sum(mg.grad(c / x1, x1, grad_outputs=np.ones(4), create_graph=True)[0]), x1)
    assert g2.data[3] == 2 * 2.0 / 4.0 ** 3  # the next order still follows 2 c / x1^3


@pytest.mark.parametrize("f", [F.softmax, F.log_softmax, F.logsumexp])
def test_softmax_family_takes_a_list_of_axes(f):
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    got = f(mg.Variable(x), axis=[0, 2]).data
    want = f(mg.Variable(x), axis=(0, 2)).data
    np.testing.assert_allclose(got, want)
    lse = np.log(np.exp(x).sum(axis=(0, 2), keepdims=True))
    expected = {F.softmax: np.exp(x - lse), F.log_softmax: x - lse, F.logsumexp: lse.reshape(3)}[f]
    np.testing.assert_allclose(got, expected, rtol=1e-12)


# ---- division: the n-th derivative of 1/x, and huge quotients ----
@pytest.mark.parametrize("numerator", [1.0, 3.0])
def test_nth_derivative_of_c_over_x_to_order_20(numerator):
    x = mg.Variable(0.8)
    got = nth_derivatives(lambda v: numerator / v, x, 20)
    for n, d in enumerate(got, start=1):
        exact = numerator * (-1) ** n * math.factorial(n) / 0.8 ** (n + 1)
        assert abs(d / exact - 1) < 1e-12, (n, d, exact)


def test_nth_derivative_of_1_over_x_stays_two_nodes_per_order():
    from minigrad.autodiff import topological_order

    x = mg.Variable(0.8)
    d = 1 / x
    for _ in range(20):
        (d,) = mg.grad(d, x, create_graph=True)
        assert len(topological_order([d.node])) <= 2  # c * x^-(n+1): a power and a product


def test_quotient_rule_never_squares_the_denominator():
    x0, x1 = mg.Variable(1e300), mg.Variable(1e160)
    g0, g1 = mg.grad(x0 / x1, [x0, x1])
    assert g0.item() == pytest.approx(1e-160, rel=1e-14, abs=0)
    assert g1.item() == pytest.approx(-1e-20, rel=1e-14, abs=0)  # x1 * x1 overflows: -1e300 / inf = -0


def test_derivatives_through_log_at_the_extremes():
    x = mg.Variable(1e-100)
    assert nth_derivatives(F.log, x, 3)[2] == pytest.approx(2e300, rel=1e-12, abs=0)  # 2/x^3
    x = mg.Variable(100.0)
    got = nth_derivatives(lambda v: F.log(F.exp(v)), x, 4)
    np.testing.assert_allclose(got, [1.0, 0.0, 0.0, 0.0], atol=1e-12)  # log(exp(x)) = x


# ---- powers at a base of 0 ----
def test_pow_with_a_variable_exponent_at_a_base_of_0():
    x, p = mg.Variable(np.array([0.0, 1.5])), mg.Variable(np.array([2.0, 2.0]))
    gx, gp = mg.grad((x ** p).sum(), [x, p])
    np.testing.assert_allclose(gx.data, [0.0, 3.0])
    np.testing.assert_allclose(gp.data, [0.0, 1.5 ** 2 * math.log(1.5)])  # 0**p is 0 for every p > 0


def test_d_dp_of_0_to_the_p():
    y = mg.Variable(np.array([0.5, 2.0]))
    (g,) = mg.grad((0.0 ** y).sum(), y)
    np.testing.assert_allclose(g.data, [0.0, 0.0])


def test_d_dx_of_x_to_a_variable_exponent_0_at_0():
    x, e = mg.Variable(0.0), mg.Variable(0.0)
    (g,) = mg.grad(x ** e, x)  # x^0 = 1 is flat
    assert g.item() == 0.0


@pytest.mark.parametrize("c", [np.int64(2), np.float32(2), np.float64(2), 2])
def test_numpy_scalar_exponent_is_a_constant(c):
    x = mg.Variable(0.0)
    got = nth_derivatives(lambda v: v ** c, x, 4)
    np.testing.assert_allclose(got, [0.0, 2.0, 0.0, 0.0])
    assert (x ** c).creator.name == "PowScalar"


def test_numpy_scalar_exponent_0_is_1_with_derivative_0():
    x = mg.Variable(np.array([0.0, 2.0]))
    y = x ** np.int64(0)
    np.testing.assert_allclose(y.data, [1.0, 1.0])
    np.testing.assert_allclose(nth_derivatives(lambda v: (v ** np.int64(0)).sum(), x, 2), [[0, 0], [0, 0]])


def test_mixed_derivative_at_exponent_0_keeps_its_value():
    """d2/dx dp x^p = x^(p-1) (1 + p log x), which is 1/x at p = 0 (sympy agrees; torch gives 0)."""
    x, p = mg.Variable(2.0), mg.Variable(0.0)
    (gx,) = mg.grad(x ** p, x, create_graph=True)
    (gxp,) = mg.grad(gx, p)
    assert gxp.item() == pytest.approx(0.5)


# ---- the same numbers, against PyTorch where it is installed ----
def test_the_extremes_against_pytorch():
    torch = pytest.importorskip("torch", reason="the oracle extra (PyTorch on the CPU) is not installed")
    t = torch.tensor([-40.0, -5.0, 0.0, 5.0], dtype=torch.float64, requires_grad=True)
    (tg,) = torch.autograd.grad(torch.log(torch.sigmoid(t)).sum(), t)
    v = mg.Variable(t.detach().numpy())
    np.testing.assert_allclose(F.log(F.sigmoid(v)).data, torch.log(torch.sigmoid(t)).detach().numpy(), rtol=1e-14)
    np.testing.assert_allclose(mg.grad(F.log(F.sigmoid(v)).sum(), v)[0].data, tg.numpy(), rtol=1e-14)

    x = torch.tensor([0.0, 1.5], dtype=torch.float64, requires_grad=True)
    p = torch.tensor([2.0, 2.0], dtype=torch.float64, requires_grad=True)
    want = torch.autograd.grad((x ** p).sum(), [x, p])
    xm, pm = mg.Variable(np.array([0.0, 1.5])), mg.Variable(np.array([2.0, 2.0]))
    got = mg.grad((xm ** pm).sum(), [xm, pm])
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.data, b.numpy(), rtol=1e-14)


# ---- edge cases a differential test against PyTorch found ----
def test_max_pooling_with_padding_sends_no_gradient_to_the_padding():
    """Windows whose real pixels are all -inf tie with the -inf padding: a real pixel must win,
    or the gradient lands on the wrong pixel (and, through the flat index, in another sample)."""
    x = np.full((2, 1, 2, 2), -np.inf)
    x[1] = 1.0
    v = mg.Variable(x)
    (g,) = mg.grad(F.sum(F.max_pooling(v, (2, 2), pad=(1, 1))), v)
    np.testing.assert_array_equal(g.data, np.ones_like(x))  # each pixel is alone in its window


@pytest.mark.parametrize("f", [F.logsumexp, F.softmax, F.log_softmax])
def test_the_softmax_family_over_an_empty_axis(f):
    y = f(mg.Variable(np.zeros((2, 0))), axis=1)
    if f is F.logsumexp:
        np.testing.assert_array_equal(y.data, [-np.inf, -np.inf])  # log of an empty sum
    else:
        assert y.shape == (2, 0)


def test_flatten_of_an_empty_batch():
    assert F.flatten(mg.Variable(np.zeros((0, 3, 2)))).shape == (0, 6)


def test_powers_at_infinity_have_derivative_0_where_flat():
    x = mg.Variable(np.array([np.inf, -np.inf, 2.0]))
    (g,) = mg.grad(F.sum(x ** 0), x)
    np.testing.assert_array_equal(g.data, [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(nth_derivatives(lambda v: F.sum(v ** 2), x, 3)[2], [0.0, 0.0, 0.0])


def test_d_dp_of_0_to_a_negative_p_is_minus_infinity():
    a, b = mg.Variable(0.0), mg.Variable(-1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        (gb,) = mg.grad(a ** b, b)
    assert gb.item() == -np.inf  # y = inf, y log 0 = -inf (PyTorch agrees)
