"""taylor.mixed_partials: mixed partial derivatives of any order from univariate Taylor series.

Checked against closed forms (exp(a . x), a polynomial, sin(x_0 x_1)) and against the Hessian of
reverse over forward mode (func.hessian: another code path entirely).
"""

import itertools
import math
import re

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


# ---- every argument checked, its error naming mixed_partials, the argument, what was found, the fix ----
def test_a_function_that_is_not_callable_is_named_as_mixed_partials_f():
    with pytest.raises(TypeError, match=r"^taylor.mixed_partials: f must be a function of one Variable returning a "
                                        r"Variable, got int; pass the function itself"):
        taylor.mixed_partials(3, X, (1, 0, 0, 0))


@pytest.mark.parametrize("index, shape", [([], r"\(0,\)"), (np.zeros((0, 4), dtype=int), r"\(0, 4\)"), ((), r"\(0,\)")])
def test_an_empty_index_or_stack_of_indices(index, shape):
    with pytest.raises(ValueError, match=rf"^taylor.mixed_partials: index is empty \(shape {shape}\), no multi-index "
                                         r"to compute; pass at least one, of x's shape \(4,\), e.g. \(2, 0, 0, 0\)"):
        taylor.mixed_partials(exp_of_a_dot, X, index)


def test_a_ragged_index():
    with pytest.raises(ValueError, match=r"^taylor.mixed_partials: index is ragged, its entries of lengths \[4, 2\], "
                                         r"but every multi-index has x's shape \(4,\); pass one order per entry"):
        taylor.mixed_partials(exp_of_a_dot, X, [(1, 0, 0, 0), (1, 0)])
    with pytest.raises(ValueError, match=r"index is ragged, its entries of lengths \[4, 'a number'\]"):
        taylor.mixed_partials(exp_of_a_dot, X, [(1, 0, 0, 0), 2])


@pytest.mark.parametrize("index, found", [
    ((0.5, 0, 0, 0), "float64 values, among them 0.5"),
    ((1.0, 0, 0, 0), "float64 values, among them 1.0"),
    ((True, False, False, False), "bool values, among them True"),
    ((True, 1, 0, 0), "bool values, among them True"),  # (NumPy makes these ints: (1, 1, 0, 0))
    ((0, 1, np.True_, 0), "bool values, among them True"),
    ([(1, 0, 0, 0), (0, 0, False, 2)], "bool values, among them False"),
    ([np.array([1, 0, 0, 0]), (0, 0, True, 1)], "bool values, among them True"),
    ("1000", "<U4 values, among them '1000'"),
    (None, "object values, among them None"),
    ([(1, 0, 0, 0), (0, 1, 0, None)], "object values, among them None"),
])
def test_entries_that_are_not_ints(index, found):
    with pytest.raises(TypeError, match=r"^taylor.mixed_partials: index must hold ints >= 0, one per entry of x, got "
                                        + re.escape(found) + r"; pass e.g. \(2, 0, 0, 0\)"):
        taylor.mixed_partials(exp_of_a_dot, X, index)


@pytest.mark.parametrize("index, where", [
    ((1, -1, 0, 0), r"-1, at entry \(1,\) of x;"),
    ([(1, 0, 0, 0), (0, 0, 0, -2)], r"-2, at entry \(3,\) of x in multi-index 1;"),
    (np.array([[0, 0], [-1, 0]]), r"-1, at entry \(1, 0\) of x;"),
])
def test_negative_entries_are_located(index, where):
    x = X.reshape(2, 2) if np.ndim(index) == 2 and np.shape(index) == (2, 2) else X
    with pytest.raises(ValueError, match=r"^taylor.mixed_partials: index has a negative order " + where
                                         + r" each entry counts how many times f is differentiated"):
        taylor.mixed_partials(lambda x: F.exp(F.sum(x)), x, index)


@pytest.mark.parametrize("index, shape", [
    ((1, 0, 0), r"\(3,\)"), ((1, 0, 0, 0, 0), r"\(5,\)"), ([(1, 0, 0)], r"\(1, 3\)"),
    (np.ones((2, 2), int), r"\(2, 2\)"), (2, r"\(\)"),
])
def test_an_index_whose_length_is_not_x_size(index, shape):
    with pytest.raises(ValueError, match=rf"^taylor.mixed_partials: index has shape {shape}, but x has shape \(4,\); "
                                         r"a multi-index has one order per entry of x"):
        taylor.mixed_partials(exp_of_a_dot, X, index)


def test_orders_beyond_factorials_even_where_int64_would_wrap():
    """(2**62, 2**62, 0, 0) sums to -2**63 in int64: the orders are summed as Python ints, and refused."""
    for index, order in [((2 ** 62, 2 ** 62, 0, 0), 2 ** 63), ((2 ** 70, 0, 0, 0), 2 ** 70), ((100, 71, 0, 0), 171)]:
        with pytest.raises(ValueError, match=rf"^taylor.mixed_partials: index asks for order {order}, above 170, "
                                             r"where factorials overflow float64; ask for orders \|i\| of at most"):
            taylor.mixed_partials(exp_of_a_dot, X, index)


def test_x_a_number_takes_an_int_order_and_x_with_no_entries_is_refused():
    """A number x is a function of one variable: index n gives d^n f / dx^n, as taylor.derivatives."""
    def f(x):
        return F.sin(x) * F.exp(x)

    expected = taylor.derivatives(f, 0.4, 5)
    np.testing.assert_allclose(taylor.mixed_partials(f, 0.4, 5), expected[5], rtol=1e-13)
    np.testing.assert_allclose(taylor.mixed_partials(f, 0.4, [0, 2, 5]), [expected[k] for k in (0, 2, 5)], rtol=1e-13)
    with pytest.raises(ValueError, match=r"^taylor.mixed_partials: index is empty \(shape \(0,\)\).* e.g. 2 for"):
        taylor.mixed_partials(f, 0.4, ())
    with pytest.raises(ValueError, match=r"^taylor.mixed_partials: x has shape \(0,\), no entries to differentiate "
                                         r"by; pass a point with at least one entry"):
        taylor.mixed_partials(f, np.zeros(0), ())


def test_indices_of_every_int_kind_give_the_same_partials():
    """int8, uint64, Python ints in an object array, a stack of one: each the same as a tuple of ints, and
    d^2 f / dx_a dx_b the Hessian's entry (func.hessian, another code path)."""
    H = func.hessian(exp_of_a_dot)(X).numpy()
    expected = taylor.mixed_partials(exp_of_a_dot, X, (1, 0, 1, 0))
    np.testing.assert_allclose(expected, H[0, 2], rtol=1e-14)
    for index in (np.array([1, 0, 1, 0], np.int8), np.array([1, 0, 1, 0], np.uint64),
                  np.array([1, 0, 1, 0], dtype=object), [1, 0, np.int64(1), 0]):
        np.testing.assert_array_equal(taylor.mixed_partials(exp_of_a_dot, X, index), expected)
    np.testing.assert_array_equal(taylor.mixed_partials(exp_of_a_dot, X, [(1, 0, 1, 0)]), [expected])
