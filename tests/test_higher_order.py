"""Derivatives of any order, against closed forms."""

import numpy as np
import pytest

import minigrad as mg
import minigrad.functions as F


# the same tests on every device (see conftest.py)
pytestmark = pytest.mark.usefixtures("device")


def test_nth_derivative_of_sin_is_a_shifted_sin():
    xs = np.random.default_rng(0).standard_normal(50)
    x = mg.Variable(xs)
    d = F.sin(x)
    for n in range(1, 11):
        (d,) = mg.grad(d, x, create_graph=True)
        np.testing.assert_allclose(d.numpy(), np.sin(xs + n * np.pi / 2), rtol=1e-10, atol=1e-12)


def test_backward_through_the_second_derivative_of_sin():
    xs = np.linspace(-2, 2, 7)
    x = mg.Variable(xs)
    (d1,) = mg.grad(F.sin(x), x, create_graph=True)
    (d2,) = mg.grad(d1, x, create_graph=True)
    d2.backward()
    np.testing.assert_allclose(x.grad.numpy(), -np.cos(xs), atol=1e-15)


@pytest.mark.parametrize("n, closed_form", [
    (1, lambda t: 1 - np.tanh(t) ** 2),
    (2, lambda t: -2 * np.tanh(t) * (1 - np.tanh(t) ** 2)),
    (3, lambda t: (1 - np.tanh(t) ** 2) * (6 * np.tanh(t) ** 2 - 2)),
])
def test_derivatives_of_tanh(n, closed_form):
    ts = np.linspace(-2, 2, 9)
    x = mg.Variable(ts)
    d = F.tanh(x)
    for _ in range(n):
        (d,) = mg.grad(d, x, create_graph=True)
    np.testing.assert_allclose(d.numpy(), closed_form(ts), rtol=1e-12, atol=1e-14)


def test_derivatives_of_exp_log_and_pow():
    x = mg.Variable(1.7)
    (d,) = mg.grad(F.exp(x * 2), x, create_graph=True)
    (d2,) = mg.grad(d, x)
    assert np.isclose(d2.item(), 4 * np.exp(3.4))
    (d,) = mg.grad(F.log(x), x, create_graph=True)
    (d2,) = mg.grad(d, x)
    assert np.isclose(d2.item(), -1 / 1.7 ** 2)
    e = mg.Variable(2.5)
    (dx, de) = mg.grad(x ** e, [x, e])
    assert np.isclose(dx.item(), 2.5 * 1.7 ** 1.5) and np.isclose(de.item(), 1.7 ** 2.5 * np.log(1.7))


def test_hessian_vector_product():
    # f(x) = sum(x^3) has Hessian diag(6x): H v = 6 x v
    xs, vs = np.array([1.0, -2.0, 0.5]), np.array([0.3, 0.1, -1.0])
    x = mg.Variable(xs)
    (g,) = mg.grad(F.sum(x ** 3), x, create_graph=True)
    (hv,) = mg.grad(g, x, grad_outputs=[mg.Variable(vs)])
    np.testing.assert_allclose(hv.numpy(), 6 * xs * vs)


def test_graph_added_per_order_stays_constant_for_sin():
    from minigrad.autodiff import plan

    x = mg.Variable(np.linspace(0, 1, 5))
    d = F.sin(x)
    sizes = []
    for _ in range(8):
        (d,) = mg.grad(d, x, create_graph=True)
        order, needs, _ = plan([d], [x])
        sizes.append(len(needs))
    assert max(sizes) <= 4 and sizes[2:] == sizes[2:3] * len(sizes[2:])
