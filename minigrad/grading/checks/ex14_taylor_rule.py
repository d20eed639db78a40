"""Visible tests of exercises 14: Taylor rules, against closed-form derivatives to order 10.

``taylor.derivatives`` feeds a rule the line x(t) = x0 + t; fed through
``F.exp`` first, the rule receives a series whose every coefficient is
nonzero, which a rule written for the line alone gets wrong.
"""

import math

import numpy as np

import minigrad.functions as F
from minigrad import taylor
from minigrad.grading.testing import visible

X = np.array([0.5, 1.5, 4.0])
ORDER = 10
K = np.arange(ORDER + 1)[:, None]
FACTORIAL = np.array([math.factorial(k) for k in range(ORDER + 1)], dtype=np.float64)[:, None]
NOT_A_LINE = ("here the rule's input is exp's series, not the line x0 + t: every coefficient x_1, x_2, ... "
              "is nonzero, and the recurrence must use each of them")
SHAPE = ("a rule returns as many coefficients as it receives, each of the value's shape: the order and the shape "
         "come from the input, never from a number written in the rule")


def _derivatives(t, name, x, n, through_exp=False):
    """[f(x), f'(x), ..., f^(n)(x)] of the student's function ``name`` (after F.exp when ``through_exp``)."""
    cls = getattr(t.ns, name)
    f = (lambda v: cls()(F.exp(v))) if through_exp else (lambda v: cls()(v))
    return np.stack([np.asarray(d, dtype=np.float64) for d in taylor.derivatives(f, x, n)])


@visible("14.1", hint="y = 1/x means x y = 1: the coefficient of t^k of the product x y is 0 for k >= 1; "
                      "solve it for y_k, which needs only y_0, ..., y_(k-1)")
def reciprocal_to_order_ten(t):
    t.given(f"x = {X}, f = MyReciprocal, orders 0 to {ORDER}")
    want = (-1.0) ** K * FACTORIAL * X ** (-K - 1.0)  # d^k/dx^k 1/x = (-1)^k k! / x^(k+1)
    t.close(_derivatives(t, "MyReciprocal", X, ORDER), want, "taylor.derivatives(MyReciprocal, x, 10)",
            rtol=1e-9)


@visible("14.1", hint=NOT_A_LINE)
def reciprocal_of_exp(t):
    t.given(f"x = {X}, f(x) = MyReciprocal()(exp(x)) = e^-x, orders 0 to 6")
    want = (-1.0) ** K[:7] * np.exp(-X)
    t.close(_derivatives(t, "MyReciprocal", X, 6, through_exp=True), want,
            "taylor.derivatives(lambda x: MyReciprocal()(F.exp(x)), x, 6)", rtol=1e-9)


@visible("14.1", hint=SHAPE)
def reciprocal_of_a_matrix_to_order_four(t):
    x = np.array([[0.5, -2.0, 3.0], [1.0, 0.25, -0.75]])
    t.given(f"x = {x.tolist()} (shape (2, 3)), orders 0 to 4")
    k = K[:5, :, None]
    want = (-1.0) ** k * FACTORIAL[:5, :, None] * x ** (-k - 1.0)
    t.close(_derivatives(t, "MyReciprocal", x, 4), want, "taylor.derivatives(MyReciprocal, x, 4)", rtol=1e-9)


def _sqrt_derivatives(x, n):
    """d^k/dx^k sqrt(x) = (1/2)(1/2 - 1)...(1/2 - k + 1) x^(1/2 - k), k = 0..n."""
    falling = np.cumprod([1.0] + [0.5 - i for i in range(n)])[:, None]
    return falling * x ** (0.5 - np.arange(n + 1)[:, None])


@visible("14.2", hint="y = sqrt(x) means y y = x: compare the coefficients of t^k on both sides; y_k appears "
                      "twice in the product, beside y_0")
def sqrt_to_order_ten(t):
    t.given(f"x = {X}, f = MySqrt, orders 0 to {ORDER}")
    t.close(_derivatives(t, "MySqrt", X, ORDER), _sqrt_derivatives(X, ORDER),
            "taylor.derivatives(MySqrt, x, 10)", rtol=1e-9)


@visible("14.2", hint=NOT_A_LINE)
def sqrt_of_exp(t):
    t.given(f"x = {X}, f(x) = MySqrt()(exp(x)) = e^(x/2), orders 0 to 6")
    t.close(_derivatives(t, "MySqrt", X, 6, through_exp=True), 0.5 ** K[:7] * np.exp(X / 2),
            "taylor.derivatives(lambda x: MySqrt()(F.exp(x)), x, 6)", rtol=1e-9)
