"""An MLP training step, 784-256-256-10, tanh, batch 128: forward + backward + SGD.

The loss is the mean squared error against one-hot targets. The baseline
is the same step with its gradients written by hand in NumPy. Targets:
minigrad at most 1.05x (float64) and 1.10x (float32) of the NumPy time, and
float32 stays float32 throughout.
"""

import _timing  # noqa: F401  (first: pins BLAS threads)
import numpy as np

import minigrad as mg
import minigrad.functions as F

SIZES = (784, 256, 256, 10)
BATCH = 128
LR = 0.01


def make(dtype, seed=0):
    rng = np.random.default_rng(seed)
    params = []
    for n_in, n_out in zip(SIZES[:-1], SIZES[1:]):
        params.append((rng.standard_normal((n_in, n_out)) * np.sqrt(1.0 / n_in)).astype(dtype))
        params.append(np.zeros(n_out, dtype=dtype))
    X = rng.standard_normal((BATCH, SIZES[0])).astype(dtype)
    T = np.eye(SIZES[-1], dtype=dtype)[rng.integers(0, SIZES[-1], BATCH)]
    return params, X, T


def numpy_step(params, X, T):
    W1, b1, W2, b2, W3, b3 = params
    h1 = np.tanh(X @ W1 + b1)
    h2 = np.tanh(h1 @ W2 + b2)
    y = h2 @ W3 + b3
    d = y - T
    loss = (d * d).sum() / BATCH
    gy = d * (2 / BATCH)
    ga2 = (gy @ W3.T) * (1 - h2 * h2)
    ga1 = (ga2 @ W2.T) * (1 - h1 * h1)
    grads = [X.T @ ga1, ga1.sum(0), h1.T @ ga2, ga2.sum(0), h2.T @ gy, gy.sum(0)]
    for p, g in zip(params, grads):
        p -= LR * g
    return loss, grads


def minigrad_step(params, X, T):
    W1, b1, W2, b2, W3, b3 = params
    h1 = F.tanh(X @ W1 + b1)
    h2 = F.tanh(h1 @ W2 + b2)
    y = h2 @ W3 + b3
    loss = F.sum((y - T) ** 2) / BATCH
    grads = mg.grad(loss, params)
    for p, g in zip(params, grads):
        p.data -= LR * g.data
    return loss, grads


def check(dtype):
    """Both steps give the same loss and gradients, in the same dtype."""
    params, X, T = make(dtype)
    loss_np, grads_np = numpy_step([p.copy() for p in params], X, T)
    loss_mg, grads_mg = minigrad_step([mg.Variable(p.copy()) for p in params], X, T)
    tol = 1e-10 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(loss_mg.item(), loss_np, rtol=tol)
    for g_mg, g_np in zip(grads_mg, grads_np):
        assert g_mg.dtype == dtype, f"a {dtype.__name__} step gave a {g_mg.dtype} gradient"
        np.testing.assert_allclose(g_mg.data, g_np, rtol=tol, atol=tol)


def bench(dtype, target):
    check(dtype)
    params_np, X, T = make(dtype)
    params_mg = [mg.Variable(p.copy()) for p in params_np]
    times = _timing.compare(
        {"numpy (hand-written)": lambda: numpy_step(params_np, X, T),
         "minigrad": lambda: minigrad_step(params_mg, X, T)},
        rounds=15, repeat=5,
    )
    return _timing.report(f"MLP step {SIZES}, batch {BATCH}, {dtype.__name__}", times,
                          "numpy (hand-written)", target=target)


if __name__ == "__main__":
    bench(np.float64, 1.05)
    bench(np.float32, 1.10)
