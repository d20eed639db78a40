"""Truncated Taylor series as arrays: the arithmetic the Taylor rules share.

A series x(t) = x_0 + x_1 t + x_2 t^2 + ... + x_n t^n is one array ``x``
whose leading axis holds the coefficients: ``x[k]`` is x_k, of the value's
shape, and ``x[0]`` is the value itself. Everything here works on such
arrays, with the array module of its inputs (NumPy or CuPy), and is plain
array code: Taylor mode needs no graph.

Each result coefficient k is found from the coefficients below k, so a rule
fills its result from k = 0 up. Two facts give every recurrence:

- a product: if z = x y then z_k = sum_{j=0..k} x_j y_{k-j} (the Cauchy product);
- a derivative: x'(t) = sum_k k x_k t^(k-1), so the coefficient of t^(k-1) in x' is k x_k.

So y' = z x' (the chain rule, with z = f'(x) known to order k - 1) reads,
at t^(k-1), k y_k = sum_{j=1..k} j x_j z_{k-j}: ``chain(x, z, k)``.
"""

from contextvars import ContextVar

import numpy as np

from minigrad.cuda import get_array_module


def constant(value, n):
    """The series of a constant: [value, 0, ..., 0], n + 1 coefficients."""
    xp = get_array_module(value)
    c = xp.zeros((n + 1,) + value.shape, dtype=value.dtype)
    c[0] = value
    return c


def align(*xs):
    """The series with as many axes each, for broadcasting: the value axes of a shorter one get
    leading axes of length 1 after the coefficient axis ((n+1, 4) beside (n+1, 3, 1) -> (n+1, 1, 4))."""
    ndim = max(x.ndim for x in xs)
    return [x.reshape(x.shape[:1] + (1,) * (ndim - x.ndim) + x.shape[1:]) for x in xs]


def convolve(a, b, k, lo=0, hi=None):
    """sum_{j=lo..hi} a_j b_{k-j} (hi = k when None): one coefficient of a product, or part of one."""
    hi = k if hi is None else hi
    xp = get_array_module(a)
    if hi < lo:  # an empty sum (b's coefficient k may not be set yet: never multiplied)
        return xp.zeros(np.broadcast_shapes(a.shape[1:], b.shape[1:]), dtype=xp.result_type(a, b))
    a, b = a[lo:hi + 1], b[k - hi:k - lo + 1][::-1]
    if strong_zeros.get():  # a_j b_(k-j): the zeros of coefficients 1..n are exact, a value's (j = 0) is not
        j = xp.arange(lo, hi + 1).reshape((-1,) + (1,) * (a.ndim - 1))
        return strong_zero_product(a, b, j >= 1, k - j >= 1).sum(axis=0)
    # the sum over the coefficient axis in one pass, without the (hi - lo + 1)-fold product array
    return xp.einsum("i...,i...->...", a, b)


# Whether convolve() takes a zero coefficient as exact (strong_zero_product): Taylor mode runs a rule
# again so when its result has a nan (taylor.propagate), and only then, so that no other sum pays for it.
strong_zeros = ContextVar("strong_zeros", default=False)


def strong_zero_product(a, b, a_exact=True, b_exact=True):
    """a b, with 0 where either factor is 0, infinite or not: 0 t^k is no term of a series at all.

    A constant's coefficients 1..n, and x's 2..n in x + v t, are zeros that no
    value can make anything but 0 (JAX's jet skips such series outright);
    taken as numbers, the zeros meet inf (at x = inf, or at a pole) and make nan.
    A value, coefficient 0, is a number like any other: 0 inf is nan there, as in
    the forward pass, so ``a_exact`` and ``b_exact`` (booleans, or masks that
    broadcast) say which factors are coefficients past the value.
    """
    xp = get_array_module(a, b)
    with np.errstate(invalid="ignore"):  # (the 0 inf it replaces)
        z = a * b
        return xp.where(((a == 0) & a_exact) | ((b == 0) & b_exact), xp.zeros((), dtype=z.dtype), z)


def weighted(x):
    """j x_j for every j: the coefficients of the derivative x', each moved up one place."""
    xp = get_array_module(x)
    j = xp.arange(len(x), dtype=x.dtype).reshape((-1,) + (1,) * (x.ndim - 1))
    return x * j


def chain(jx, z, k):
    """y_k for y' = z x': k y_k = sum_{j=1..k} j x_j z_{k-j}, with ``jx = weighted(x)``."""
    return convolve(jx, z, k, lo=1) / k


def product(a, b):
    """z = a b: z_k = sum_{j=0..k} a_j b_{k-j} (broadcasting the values)."""
    a, b = align(a, b)
    xp = get_array_module(a)
    z = xp.empty((len(a),) + xp.broadcast_shapes(a.shape[1:], b.shape[1:]), dtype=xp.result_type(a, b))
    for k in range(len(a)):
        z[k] = convolve(a, b, k)
    return z


def quotient(a, b):
    """y = a / b, from y b = a: a_k = sum_{j=0..k} b_j y_{k-j}

    =>  y_k = (a_k - sum_{j=1..k} b_j y_{k-j}) / b_0. Needs b_0 != 0, as a / b does.
    """
    a, b = align(a, b)
    xp = get_array_module(a)
    y = xp.empty((len(a),) + xp.broadcast_shapes(a.shape[1:], b.shape[1:]), dtype=xp.result_type(a, b))
    for k in range(len(a)):
        y[k] = (a[k] - convolve(b, y, k, lo=1)) / b[0]
    return y


def exp(x):
    """y = e^x  =>  y' = y x'  =>  k y_k = sum_{j=1..k} j x_j y_{k-j}, from y_0 = e^(x_0)."""
    xp = get_array_module(x)
    y = xp.empty_like(x)
    y[0] = xp.exp(x[0])
    jx = weighted(x)
    for k in range(1, len(x)):
        y[k] = chain(jx, y, k)
    return y


def log(x):
    """y = log x  =>  x y' = x'  =>  at t^(k-1): sum_{j=0..k-1} x_j (k-j) y_{k-j} = k x_k

    =>  y_k = (x_k - (1/k) sum_{j=1..k-1} j y_j x_{k-j}) / x_0, from y_0 = log x_0.
    """
    xp = get_array_module(x)
    y = xp.empty_like(x)
    y[0] = xp.log(x[0])
    jy = xp.zeros_like(x)  # jy_k = k y_k, filled as y is
    for k in range(1, len(x)):
        y[k] = (x[k] - convolve(jy, x, k, lo=1, hi=k - 1) / k) / x[0]
        jy[k] = k * y[k]
    return y


def each(fn, *xs):
    """A linear function applied to each coefficient: y_k = fn(x_k) (the series of a linear map)."""
    xp = get_array_module(*xs)
    return xp.stack([fn(*(x[k] for x in xs)) for k in range(len(xs[0]))])


def bilinear(fn, a, b):
    """y = B(a, b), B bilinear (a matrix product): y_k = sum_{j=0..k} B(a_j, b_{k-j}).

    Terms with a zero coefficient are skipped: a constant operand (a weight
    matrix) has one nonzero coefficient, so y costs n + 1 products, not (n+1)(n+2)/2.
    """
    live_a = [bool(a[j].any()) for j in range(len(a))]
    live_b = [bool(b[j].any()) for j in range(len(b))]
    xp = get_array_module(a, b)
    ys = []
    for k in range(len(a)):
        y = fn(a[0], b[k]) if live_b[k] or not ys else None  # (term 0 always runs: it gives y's shape)
        for j in range(1, k + 1):
            if live_a[j] and live_b[k - j]:
                term = fn(a[j], b[k - j])
                y = term if y is None else y + term
        ys.append(y if y is not None else xp.zeros_like(ys[0]))
    return xp.stack(ys)
