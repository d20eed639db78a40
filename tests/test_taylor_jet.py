"""taylor.jet of several primals and of f returning a tuple (JAX's jet(fun, primals, series) form).

Independent answers: the polynomial product (a closed form), the one-primal jet of the primals joined
into one vector (another path: getitem and reshape in the graph, one seeded leaf), func.jvp for order 1,
and PyTorch's nested forward mode (torch.func.jvp) for orders 2 and 3.
"""

import math

import numpy as np
import pytest

import minigrad.functions as F
from minigrad import func, taylor

RNG = np.random.default_rng(11)
A, B = RNG.standard_normal(3), RNG.uniform(0.5, 2.0, (2, 3))  # b broadcasts against a; b > 0 for log
A_TERMS = [RNG.standard_normal(3) for _ in range(3)]
B_TERMS = [RNG.standard_normal((2, 3)) for _ in range(3)]


def two_outputs(a, b):
    return F.tanh(a) * b ** 2 + a / b, F.sum(F.exp(a) * F.log(b), axis=0)


def test_a_product_of_two_primals_is_the_product_of_their_polynomials():
    """(a_0 + a_1 t + ...)(b_0 + b_1 t + ...): y_k = sum_j a_j b_(k-j), the coefficients np.convolve gives."""
    a, b = [A, *A_TERMS], [B[0], *(t[0] for t in B_TERMS)]
    y0, ys = taylor.jet(lambda u, v: u * v, (A, B[0]), (A_TERMS, [t[0] for t in B_TERMS]))
    want = [np.convolve(a_i, b_i)[:4] for a_i, b_i in zip(np.transpose(a), np.transpose(b))]
    np.testing.assert_allclose(np.stack([y0, *ys], axis=1), want, rtol=1e-14)


def test_several_primals_and_a_tuple_output_against_the_jet_of_the_primals_joined():
    """w = (a, b.ravel()) moving along the joined series: one primal, one seeded leaf, the same curve."""
    y0, ys = taylor.jet(two_outputs, (A, B), (A_TERMS, B_TERMS))
    assert isinstance(y0, tuple) and isinstance(ys, tuple) and len(y0) == len(ys) == 2
    assert all(isinstance(s, list) and len(s) == 3 for s in ys)

    def joined(w):
        return two_outputs(w[:3], F.reshape(w[3:], (2, 3)))

    w, w_terms = np.concatenate([A, B.ravel()]), [np.concatenate([a, b.ravel()]) for a, b in zip(A_TERMS, B_TERMS)]
    for i in range(2):
        want0, wants = taylor.jet(lambda v, i=i: joined(v)[i], w, w_terms)
        np.testing.assert_allclose(y0[i], want0, rtol=1e-14)
        for got, want in zip(ys[i], wants):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_order_0_is_the_forward_pass_and_order_1_is_jvp_for_every_output():
    y0, (ys0, ys1) = taylor.jet(two_outputs, (A, B), ([A_TERMS[0]], [B_TERMS[0]]))
    out, touts = func.jvp(two_outputs, (A, B), (A_TERMS[0], B_TERMS[0]))
    for got, want in zip(y0, out):
        np.testing.assert_array_equal(got, want.data)
    np.testing.assert_allclose(ys0[0], touts[0].data, rtol=1e-14)
    np.testing.assert_allclose(ys1[0], touts[1].data, rtol=1e-14)


def test_orders_2_and_3_against_torchs_nested_forward_mode():
    """k! y_k = d^k/dt^k f(a(t), b(t)) at t = 0, by torch.func.jvp of torch.func.jvp of ... in t."""
    torch = pytest.importorskip("torch")
    ta, tb = torch.tensor(A), torch.tensor(B)
    a_terms, b_terms = [torch.tensor(t) for t in A_TERMS], [torch.tensor(t) for t in B_TERMS]

    def curve(t):
        a = ta + sum(c * t ** (k + 1) for k, c in enumerate(a_terms))
        b = tb + sum(c * t ** (k + 1) for k, c in enumerate(b_terms))
        return torch.tanh(a) * b ** 2 + a / b, (torch.exp(a) * torch.log(b)).sum(0)

    def derivative(g):
        return lambda t: torch.func.jvp(g, (t,), (torch.ones((), dtype=torch.float64),))[1]

    _, ys = taylor.jet(two_outputs, (A, B), (A_TERMS, B_TERMS))
    g, t0 = curve, torch.zeros((), dtype=torch.float64)
    for k in range(1, 4):
        g = derivative(g)
        for i in range(2):
            np.testing.assert_allclose(ys[i][k - 1] * math.factorial(k), g(t0)[i].numpy(), rtol=1e-11,
                                       err_msg=f"output {i}, order {k}")


def test_the_one_primal_form_is_the_tuple_form_of_one():
    y0, ys = taylor.jet(F.sin, A, A_TERMS)
    y0_t, ys_t = taylor.jet(F.sin, (A,), (A_TERMS,))
    np.testing.assert_array_equal(y0, y0_t)
    assert isinstance(ys_t, list) and len(ys_t) == len(ys)
    for got, want in zip(ys_t, ys):
        np.testing.assert_array_equal(got, want)
    # the terms may be a list or a tuple; the primals a number; each primal keeps its own dtype
    y0, (y1,) = taylor.jet(lambda u, v: u * v, (2.0, np.float32(3.0)), [(1.0,), [np.float32(0.5)]])
    assert (y0, y1) == (6.0, 4.0) and y0.dtype == np.float64


def test_one_primal_and_a_tuple_output():
    y0, (s0, s1) = taylor.jet(lambda x: (F.sin(x), F.cos(x)), A, A_TERMS[:1])
    np.testing.assert_allclose(y0[0], np.sin(A), rtol=1e-15)
    np.testing.assert_allclose(y0[1], np.cos(A), rtol=1e-15)
    np.testing.assert_allclose(s0[0], np.cos(A) * A_TERMS[0], rtol=1e-15)
    np.testing.assert_allclose(s1[0], -np.sin(A) * A_TERMS[0], rtol=1e-15)


def test_a_primal_f_ignores_gets_its_series_ignored_and_a_primal_returned_as_is_keeps_its_own():
    y0, ((y1,), (z1,)) = taylor.jet(lambda u, v: (F.exp(u), v), (A, B), ([A_TERMS[0]], [B_TERMS[0]]))
    np.testing.assert_allclose(y1, np.exp(A) * A_TERMS[0], rtol=1e-15)
    np.testing.assert_array_equal(z1, B_TERMS[0])


@pytest.mark.parametrize("primals, series, error, message", [
    ((), (), ValueError, r"taylor\.jet: primals is an empty tuple"),
    ((A, B), [A_TERMS], ValueError, r"taylor\.jet: primals has 2 entries but series has 1; give one list of terms "
                                    r"per primal"),
    ((A, B), A_TERMS[0], TypeError, r"taylor\.jet: with a tuple of primals, series must be a tuple of 2 list"),
    ((A,), A_TERMS, ValueError, r"primals has 1 entries but series has 3"),
    ((A, B), (A_TERMS, B_TERMS[0]), TypeError, r"taylor\.jet: series\[1\] must be the list of terms of primals\[1\] "
                                               r"\(each of shape \(2, 3\)\), got ndarray of shape \(2, 3\)"),
    ((A, B), (A_TERMS, B_TERMS[:2]), ValueError, r"taylor\.jet: series\[1\] has 2 terms but series\[0\] has 3"),
    ((A, B), (A_TERMS, [B_TERMS[0], A_TERMS[1], B_TERMS[2]]), ValueError,
     r"taylor\.jet: series\[1\]\[1\] has shape \(3,\), but primals\[1\] has shape \(2, 3\); each term of "
     r"primals\[1\]'s series is a direction in primals\[1\]'s space: pass an array of shape \(2, 3\)"),
    ((A, None), ([], []), TypeError, r"taylor\.jet: primals\[1\]: cannot hold data of dtype object"),
    # one point given as a tuple of numbers is two primals now: the counts disagree, and the message says so
    ((0.5, 1.0), [[1.0, 1.0]], ValueError, r"primals has 2 entries but series has 1"),
])
def test_errors_of_the_several_primal_form(primals, series, error, message):
    with pytest.raises(error, match=message):
        taylor.jet(lambda *xs: F.sum(xs[0]), primals, series)


def test_errors_about_f():
    with pytest.raises(TypeError, match=r"taylor\.jet: f must be a function of 2 Variables, got str"):
        taylor.jet("mul", (A, B), ([A_TERMS[0]], [B_TERMS[0]]))
    with pytest.raises(TypeError, match=r"taylor\.jet: f must return a Variable or a tuple of Variables, "
                                        r"got a tuple of Variable, ndarray"):
        taylor.jet(lambda u, v: (u, v.data), (A, B), ([A_TERMS[0]], [B_TERMS[0]]))
    with pytest.raises(TypeError, match=r"taylor\.derivatives: f returned a tuple of Variables; derivatives "
                                        r"follows one output \(taylor\.jet follows each of a tuple\)"):
        taylor.derivatives(lambda x: (x, x), A, 2)
