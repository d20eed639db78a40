"""A large elementwise graph: forward+backward of sum(sin(x) * tanh(x) + x * x) on 10^7 elements.

The baseline is the same expression and its chain rule written by hand in
NumPy, op by op. Target: minigrad at most 1.10x the NumPy time.
"""

import _timing  # noqa: F401  (first: pins BLAS threads)
import numpy as np

import minigrad as mg
import minigrad.functions as F

N = 10 ** 7


def numpy_step(xs):
    s, t = np.sin(xs), np.tanh(xs)
    loss = (s * t + xs * xs).sum()
    gu = np.ones_like(xs)  # d loss / d (s*t + x*x)
    gx = gu * t * np.cos(xs) + gu * s * (1 - t * t) + 2 * xs * gu
    return loss, gx


def minigrad_step(x):
    loss = F.sum(F.sin(x) * F.tanh(x) + x * x)
    (gx,) = mg.grad(loss, x)
    return loss, gx


if __name__ == "__main__":
    xs = np.random.default_rng(0).standard_normal(N)
    x = mg.Variable(xs)
    loss_np, g_np = numpy_step(xs)
    loss_mg, g_mg = minigrad_step(x)
    np.testing.assert_allclose(loss_mg.item(), loss_np, rtol=1e-10)
    np.testing.assert_allclose(g_mg.data, g_np, rtol=1e-10, atol=1e-12)
    times = _timing.compare({"numpy (hand-written)": lambda: numpy_step(xs), "minigrad": lambda: minigrad_step(x)},
                            rounds=5)
    _timing.report("sum(sin(x)*tanh(x) + x*x), 10^7 elements, forward+backward", times,
                   "numpy (hand-written)", target=1.10)
