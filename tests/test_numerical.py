"""numerical_grad and gradcheck: they agree with closed forms and catch a wrong rule."""

import numpy as np
import pytest

import minigrad as mg
import minigrad.functions as F
from minigrad.backward_functions import register
from minigrad import Function
from minigrad.numerical import gradcheck, numerical_grad


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
