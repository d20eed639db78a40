"""Per-op overhead: forward+backward of a 1,000-op chain (mul, add, sin) on a one-element array.

The baseline is the same chain and its chain rule written by hand in NumPy.
Target: minigrad at most 28x the NumPy time.
"""

import _timing  # noqa: F401  (first: pins BLAS threads)
import numpy as np

import minigrad as mg
import minigrad.functions as F

N_OPS = 1000
C = np.array([1.0001])
D = np.array([0.001])


def numpy_chain():
    x = np.array([0.5])
    h, saved = x, []
    for i in range(N_OPS):
        saved.append(h)
        k = i % 3
        h = h * C if k == 0 else (h + D if k == 1 else np.sin(h))
    g = np.ones_like(h)
    for i in reversed(range(N_OPS)):
        k = i % 3
        if k == 0:
            g = g * C
        elif k == 2:
            g = g * np.cos(saved[i])
    return g


def chain(h, sin, c=C, d=D):
    """The N_OPS operations from h: h * c, h + d, sin(h), repeated (bench_modes runs them in PyTorch too)."""
    for i in range(N_OPS):
        k = i % 3
        h = h * c if k == 0 else (h + d if k == 1 else sin(h))
    return h


def minigrad_chain():
    x = mg.Variable(np.array([0.5]))
    (g,) = mg.grad(chain(x, F.sin), x)
    return g.data


if __name__ == "__main__":
    np.testing.assert_allclose(minigrad_chain(), numpy_chain(), rtol=1e-12)
    times = _timing.compare({"numpy (hand-written)": numpy_chain, "minigrad": minigrad_chain}, rounds=9)
    _timing.report(f"chain of {N_OPS} ops, forward+backward, 1 element", times, "numpy (hand-written)", target=28)
