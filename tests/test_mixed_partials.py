"""taylor.mixed_partials: mixed partial derivatives of any order from univariate Taylor series.

Checked against closed forms (exp(a . x), a polynomial, sin(x_0 x_1)) and against the Hessian of
reverse over forward mode (func.hessian: another code path entirely).
"""

import itertools
import math

import numpy as np
import pytest

import minigrad.functions as F
from minigrad import func, taylor

A = np.array([0.7, -1.3, 0.4, 1.1])
X = np.array([0.2, 0.1, -0.3, 0.5])


def exp_of_a_dot(x):
    return F.exp(F.sum(x * A))


def every_index(d, size):
    return [j for j in itertools.product(range(d + 1), repeat=size) if sum(j) == d]


@pytest.mark.parametrize("d, rtol", [(1, 1e-15), (2, 1e-15), (3, 1e-14), (4, 1e-14), (6, 2e-13), (10, 2e-11)])
def test_every_partial_of_exp_a_dot_x(d, rtol):
    """d^i exp(a . x) = a^i exp(a . x), every multi-index of order d in 4 variables at once."""
    indices = every_index(d, 4)
    got = taylor.mixed_partials(exp_of_a_dot, X, indices)
    expected = np.array([np.prod(A ** np.array(i)) for i in indices]) * np.exp(A @ X)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=0)


def test_a_polynomial_and_sin_of_a_product_by_hand():
    """f = x0^3 x1^2 + x1 x2 + sin(x0 x1): each partial differentiated by hand."""
    x0, x1, x2 = 0.3, -0.7, 1.1
    s, c = math.sin(x0 * x1), math.cos(x0 * x1)
    expected = {
        (0, 0, 0): x0 ** 3 * x1 ** 2 + x1 * x2 + s,
        (1, 0, 0): 3 * x0 ** 2 * x1 ** 2 + x1 * c,
        (0, 1, 1): 1.0,
        (1, 1, 0): 6 * x0 ** 2 * x1 + c - x0 * x1 * s,
        (2, 1, 0): 12 * x0 * x1 - 2 * x1 * s - x0 * x1 ** 2 * c,
        (3, 2, 0): 12.0 + _d32_of_sin(x0, x1),
        (1, 1, 1): 0.0,
        (0, 0, 3): 0.0,
    }

    def f(x):
        return x[0] ** 3 * x[1] ** 2 + x[1] * x[2] + F.sin(x[0] * x[1])

    for index, value in expected.items():
        got = taylor.mixed_partials(f, np.array([x0, x1, x2]), index)
        assert got.shape == ()
        np.testing.assert_allclose(got, value, rtol=1e-13, atol=1e-13, err_msg=str(index))


def _d32_of_sin(a, b):
    """d^5 sin(ab) / da^3 db^2 by the general Leibniz formula: d^3/da^3 sin(ab) = -b^3 cos(ab), then
    d^2/db^2 of -b^3 cos(ab) = -(6b cos - 6 a b^2 sin - a^2 b^3 cos)."""
    s, c = math.sin(a * b), math.cos(a * b)
    return -(6 * b * c - 6 * a * b ** 2 * s - a ** 2 * b ** 3 * c)


def test_the_hessian_of_a_network_against_reverse_over_forward():
    rng = np.random.default_rng(0)
    W1, b1 = rng.standard_normal((5, 7)), rng.standard_normal(7)
    w2 = rng.standard_normal(7)

    def f(x):
        return F.sum(F.tanh(F.affine(F.reshape(x, (1, 5)), W1, b1)) * w2)

    x = rng.standard_normal(5)
    H = func.hessian(f)(x).data
    indices = [tuple(int(a == i) + int(a == j) for a in range(5)) for i in range(5) for j in range(5)]
    np.testing.assert_allclose(taylor.mixed_partials(f, x, indices).reshape(5, 5), H, rtol=1e-12, atol=1e-13)


def test_indices_of_one_order_share_their_jets():
    """The D(D + 1) / 2 entries of a Hessian take D(D + 1) / 2 jets (calls of f), not 3 per entry."""
    calls = []

    def f(x):
        calls.append(1)
        return exp_of_a_dot(x)

    pairs = [i for i in every_index(2, 4)]
    taylor.mixed_partials(f, X, pairs)
    assert len(calls) == 10
    calls.clear()
    taylor.mixed_partials(f, X, (1, 1, 0, 0))  # one mixed entry alone: e_0, e_1, e_0 + e_1
    assert len(calls) == 3


def test_shapes_outputs_orders_and_dtypes():
    """x of shape (2, 2), f with two outputs (column sums of x^3 + sin x), several orders in one call."""
    x = np.array([[0.5, -0.2], [0.3, 0.9]])

    def f(x):
        return F.sum(x * x * x + F.sin(x), axis=0)

    indices = np.array([[[3, 0], [0, 0]], [[0, 0], [0, 0]], [[1, 0], [0, 1]], [[0, 1], [0, 0]]])
    got = taylor.mixed_partials(f, x, indices)
    assert got.shape == (4, 2)
    np.testing.assert_allclose(got[0], [6 - math.cos(0.5), 0.0], atol=1e-14)  # d^3/dx00^3 of column 0 only
    np.testing.assert_allclose(got[1], np.sum(x ** 3 + np.sin(x), axis=0), rtol=1e-15)
    np.testing.assert_allclose(got[2], 0.0, atol=1e-14)  # no term holds both x[0, 0] and x[1, 1]
    np.testing.assert_allclose(got[3], [0.0, 3 * 0.04 + math.cos(-0.2)], rtol=1e-14)
    one = taylor.mixed_partials(f, x, indices[0])
    assert one.shape == (2,)
    single = taylor.mixed_partials(f, x.astype(np.float32), indices[3])
    assert single.dtype == np.float32
    np.testing.assert_allclose(single, got[3], rtol=1e-6)


def test_bad_indices_say_what_to_pass():
    with pytest.raises(ValueError, match=r"mixed_partials: index has shape \(3,\), but x has shape \(4,\)"):
        taylor.mixed_partials(exp_of_a_dot, X, (1, 0, 0))
    with pytest.raises(ValueError, match="negative order -1"):
        taylor.mixed_partials(exp_of_a_dot, X, (1, -1, 0, 0))
    with pytest.raises(TypeError, match="must hold ints >= 0"):
        taylor.mixed_partials(exp_of_a_dot, X, (0.5, 0, 0, 0))
    with pytest.raises(TypeError, match="returned a tuple of Variables"):
        taylor.mixed_partials(lambda x: (F.sum(x), F.sum(x * x)), X, (1, 1, 0, 0))
