"""An MLP training step, 784-256-256-10, tanh, batch 128: forward + backward + SGD.

Two losses: the mean squared error against one-hot targets, and softmax
cross entropy against the labels. The baseline is the same step with its
gradients written by hand in NumPy. Targets: minigrad at most 1.05x
(float64) and 1.10x (float32) of the NumPy time, and float32 stays float32.

Both sides allocate the same large arrays. By default glibc hands much of that
memory back to the system after each float64 step and faults it in again on
the next, as many times as the heap's history decides; the script asks glibc
to keep it (``_timing.steady_heap``), so that the times compare the code. The
page faults per step are printed with the times: 0 on both sides once the heap
is steady. Each ratio is the best of 60 alternating rounds of 5 steps; the ratio
of the median rounds is printed beside it.

The ratio varies between processes by about 1%: where the heap puts the
large products differs, and so does their speed. ``--processes N`` measures
each case in N fresh processes, one after another, and gives the median.

Beside ``mg.grad``, the step is also timed the way a PyTorch user writes it:
``loss.backward()``, an SGD update of ``.data`` from ``.grad``, then
``.grad = None`` (the row "minigrad, y.backward()").

``--breakdown`` also times minigrad's forward pass followed by the
hand-written backward on its arrays: the least a minigrad step could cost
with this forward, so the gap above it is what minigrad's backward adds.
"""

import _timing  # noqa: F401  (first: pins BLAS threads)
import argparse
import resource
import statistics
import subprocess
import sys

import numpy as np

import minigrad as mg
import minigrad.functions as F

SIZES = (784, 256, 256, 10)
TARGETS = {"float64": 1.05, "float32": 1.10}  # at most this times the NumPy time
BATCH = 128
LR = 0.01


def make(dtype, seed=0):
    rng = np.random.default_rng(seed)
    params = []
    for n_in, n_out in zip(SIZES[:-1], SIZES[1:]):
        params.append((rng.standard_normal((n_in, n_out)) * np.sqrt(1.0 / n_in)).astype(dtype))
        params.append(np.zeros(n_out, dtype=dtype))
    X = rng.standard_normal((BATCH, SIZES[0])).astype(dtype)
    labels = rng.integers(0, SIZES[-1], BATCH)
    return params, X, labels


# ---- hand-written NumPy ----
def numpy_step(params, X, labels, loss="mse"):
    W1, b1, W2, b2, W3, b3 = params
    h1 = np.tanh(X @ W1 + b1)
    h2 = np.tanh(h1 @ W2 + b2)
    y = h2 @ W3 + b3
    value, gy = numpy_loss(y, labels, loss)
    grads = numpy_backward(params, X, h1, h2, gy)
    for p, g in zip(params, grads):
        p -= LR * g
    return value, grads


def numpy_loss(y, labels, loss):
    """The loss of the scores y, and its gradient gy with respect to them."""
    if loss == "mse":
        d = y - np.eye(SIZES[-1], dtype=y.dtype)[labels]
        return (d * d).sum() / BATCH, d * (2 / BATCH)
    z = y - y.max(axis=1, keepdims=True)
    e = np.exp(z)
    s = e.sum(axis=1, keepdims=True)
    value = (np.log(s)[:, 0] - z[np.arange(BATCH), labels]).mean()
    gy = e / s
    gy[np.arange(BATCH), labels] -= 1
    gy /= BATCH
    return value, gy


def numpy_backward(params, X, h1, h2, gy):
    """The six parameter gradients, from the activations and the gradient gy of the scores."""
    W1, b1, W2, b2, W3, b3 = params
    ga2 = (gy @ W3.T) * (1 - h2 * h2)
    ga1 = (ga2 @ W2.T) * (1 - h1 * h1)
    return [X.T @ ga1, ga1.sum(0), h1.T @ ga2, ga2.sum(0), h2.T @ gy, gy.sum(0)]


# ---- minigrad ----
def minigrad_step(params, X, labels, loss="mse"):
    value, _ = minigrad_forward(params, X, labels, loss)
    grads = mg.grad(value, params)
    for p, g in zip(params, grads):
        p.data -= LR * g.data
    return value, grads


def minigrad_backward_step(params, X, labels, loss="mse"):
    """The same step the way a PyTorch user writes it: ``loss.backward()``, an SGD update of ``.data``
    from ``.grad``, and ``.grad = None`` for the next step."""
    value, _ = minigrad_forward(params, X, labels, loss)
    value.backward()
    for p in params:
        p.data -= LR * p.grad.data
        p.grad = None
    return value


def minigrad_forward(params, X, labels, loss):
    """The loss, recorded as a graph, and the activations (h1, h2, y)."""
    W1, b1, W2, b2, W3, b3 = params
    h1 = F.tanh(F.affine(X, W1, b1))
    h2 = F.tanh(F.affine(h1, W2, b2))
    y = F.affine(h2, W3, b3)
    if loss == "mse":
        value = F.sum((y - np.eye(SIZES[-1], dtype=y.dtype)[labels]) ** 2) / BATCH
    else:
        value = F.mean(F.softmax_cross_entropy(y, labels))
    return value, (h1, h2, y)


def minigrad_forward_numpy_backward(params, X, labels, loss="mse"):
    """minigrad's forward pass (recording its graph), then the hand-written backward on its arrays.

    Its ratio to NumPy is the least a minigrad step can cost: what is left
    of the gap above it is minigrad's backward pass (``--breakdown``).
    """
    value, (h1, h2, y) = minigrad_forward(params, X, labels, loss)
    _, gy = numpy_loss(y.data, labels, loss)
    grads = numpy_backward([p.data for p in params], X, h1.data, h2.data, gy)
    for p, g in zip(params, grads):
        p.data -= LR * g
    return value, grads


def check(dtype, loss):
    """Both steps give the same loss and gradients, in the same dtype."""
    params, X, labels = make(dtype)
    stepped_np = [p.copy() for p in params]
    value_np, grads_np = numpy_step(stepped_np, X, labels, loss)
    stepped_mg = [mg.Variable(p.copy()) for p in params]
    minigrad_backward_step(stepped_mg, X, labels, loss)
    value_mg, grads_mg = minigrad_step([mg.Variable(p.copy()) for p in params], X, labels, loss)
    tol = 1e-10 if dtype == np.float64 else 2e-4
    np.testing.assert_allclose(value_mg.item(), value_np, rtol=tol)
    for g_mg, g_np in zip(grads_mg, grads_np):
        assert g_mg.dtype == dtype, f"a {dtype.__name__} step gave a {g_mg.dtype} gradient"
        np.testing.assert_allclose(g_mg.data, g_np, rtol=tol, atol=tol)
    for p_mg, p_np in zip(stepped_mg, stepped_np):  # the y.backward() step updates as the NumPy one does
        assert p_mg.dtype == dtype and p_mg.grad is None
        np.testing.assert_allclose(p_mg.data, p_np, rtol=tol, atol=tol)


def page_faults_per_step(step, steps=50):
    """Minor page faults per call: memory the allocator handed back to the system and took again."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(steps):
        step()
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / steps


def bench(dtype, loss, target, breakdown=False):
    check(dtype, loss)
    params_np, X, labels = make(dtype)
    params_mg = [mg.Variable(p.copy()) for p in params_np]
    params_bw = [mg.Variable(p.copy()) for p in params_np]
    steps = {"numpy (hand-written)": lambda: numpy_step(params_np, X, labels, loss),
             "minigrad": lambda: minigrad_step(params_mg, X, labels, loss),
             "minigrad, y.backward()": lambda: minigrad_backward_step(params_bw, X, labels, loss)}
    if breakdown:
        params_half = [mg.Variable(p.copy()) for p in params_np]
        steps["minigrad fwd, NumPy bwd"] = lambda: minigrad_forward_numpy_backward(params_half, X, labels, loss)
    times = _timing.compare(steps, rounds=60, repeat=5)
    ratio = _timing.report(f"MLP step {SIZES}, batch {BATCH}, {dtype.__name__}, loss {loss}", times,
                           "numpy (hand-written)", target=target)
    faults = {name: page_faults_per_step(step) for name, step in steps.items()}
    print("  page faults per step: " + ", ".join(f"{name} {n:.0f}" for name, n in faults.items()))
    base = times["numpy (hand-written)"]
    floor = times["minigrad fwd, NumPy bwd"] / base if breakdown else float("nan")
    return ratio, times.medians["minigrad"] / times.medians["numpy (hand-written)"], floor


def fixed_cost():
    """The same steps on a 4-4-4-3 MLP with a batch of 2: what is left is Python, not arithmetic."""
    global SIZES, BATCH
    sizes, batch = SIZES, BATCH
    SIZES, BATCH = (4, 4, 4, 3), 2
    try:
        params_np, X, labels = make(np.float32)
        params_mg = [mg.Variable(p.copy()) for p in params_np]
        params_bw = [mg.Variable(p.copy()) for p in params_np]
        times = _timing.compare(
            {"numpy (hand-written)": lambda: numpy_step(params_np, X, labels, "softmax_cross_entropy"),
             "minigrad": lambda: minigrad_step(params_mg, X, labels, "softmax_cross_entropy"),
             "minigrad, y.backward()": lambda: minigrad_backward_step(params_bw, X, labels,
                                                                      "softmax_cross_entropy")},
            rounds=10, repeat=200,
        )
    finally:
        SIZES, BATCH = sizes, batch
    _timing.report("fixed cost per step: MLP (4, 4, 4, 3), batch 2, float32, softmax cross entropy",
                   times, "numpy (hand-written)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loss", choices=("mse", "softmax_cross_entropy"), action="append",
                        help="only this loss (default: both)")
    parser.add_argument("--dtype", choices=("float64", "float32"), action="append",
                        help="only this dtype (default: both)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="measure each case this many times: the ratio varies by about 0.5%% "
                             "between measurements, so compare two versions of the code over several")
    parser.add_argument("--processes", type=int, default=1,
                        help="measure each case in this many fresh processes, one after another, and "
                             "print the median of their ratios")
    parser.add_argument("--breakdown", action="store_true",
                        help="also time minigrad's forward pass followed by the hand-written backward: "
                             "the gap between it and NumPy is the forward's, the rest is the backward's")
    parser.add_argument("--one-line", action="store_true", help=argparse.SUPPRESS)  # (for --processes)
    args = parser.parse_args()
    if args.processes > 1:
        return over_processes(args)
    if not _timing.steady_heap():
        print("(not glibc: the heap is left as it is, and float64 times may include page faults)")
    for loss in args.loss or ("mse", "softmax_cross_entropy"):
        for dtype in args.dtype or ("float64", "float32"):
            ratios, medians, floors = zip(*(bench(np.dtype(dtype).type, loss, TARGETS[dtype], args.breakdown)
                                            for _ in range(args.repeat)))
            if args.one_line:
                print(f"RATIOS {ratios[0]} {medians[0]} {floors[0]}")
            if args.repeat > 1:
                met = sum(r <= TARGETS[dtype] for r in ratios)
                listed = " ".join(f"{r:.3f}" for r in ratios)
                print(f"  {loss}, {dtype}, {args.repeat} measurements: {listed}; {met} meet the target")
                print("  their ratios of the median rounds: " + " ".join(f"{r:.3f}" for r in medians))
    if not args.loss and not args.dtype:
        fixed_cost()


def over_processes(args):
    """Each case measured in ``args.processes`` fresh processes, one after another; their median."""
    for loss in args.loss or ("mse", "softmax_cross_entropy"):
        for dtype in args.dtype or ("float64", "float32"):
            ratios, medians, floors = [], [], []
            command = [sys.executable, __file__, "--loss", loss, "--dtype", dtype, "--one-line"]
            for _ in range(args.processes):
                run = subprocess.run(command + ["--breakdown"] * args.breakdown,
                                     capture_output=True, text=True, check=True)
                line = next(line for line in run.stdout.splitlines() if line.startswith("RATIOS "))
                ratio, median, floor = map(float, line.split()[1:])
                ratios.append(ratio)
                medians.append(median)
                floors.append(floor)
            middle = statistics.median(ratios)
            met = sum(r <= TARGETS[dtype] for r in ratios)
            print(f"MLP step, loss {loss}, {dtype}, {args.processes} processes: "
                  + " ".join(f"{r:.3f}" for r in ratios))
            print(f"  median {middle:.3f}x ({'meets' if middle <= TARGETS[dtype] else 'MISSES'} the target of "
                  f"at most {TARGETS[dtype]}x); {met} of {args.processes} processes meet it; "
                  f"median of their ratios of the median rounds {statistics.median(medians):.3f}x")
            if args.breakdown:
                print("  minigrad's forward with the hand-written backward: "
                      + " ".join(f"{r:.3f}" for r in floors) + f"; median {statistics.median(floors):.3f}x")


if __name__ == "__main__":
    main()
