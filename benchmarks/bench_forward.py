"""Forward mode, measured: what carrying tangents costs, and where jacfwd beats jacrev.

(1) One forward pass carrying tangents, ``func.jvp``, over 10^6 elements of
    sin(x) * tanh(x) + x * x, against the plain forward pass (recording, as
    usual). Target: at most 2.5x. The tangent pass computes cos(x) (the price
    of one more transcendental), tanh's (1 - y^2) tx in one pass, and two
    products and a sum per product rule.
(2) The Jacobian of f: R^n -> R^m, f(x) = affine(tanh(affine(x)))) with 64
    hidden units, by columns (``jacfwd``: n forward passes) and by rows
    (``jacrev``: m reverse passes), n and m from 1 to 512. The ratio
    jacfwd / jacrev is below 1 where forward mode is cheaper: for n < m, so
    the crossover lies near the diagonal n = m. A scalar loss (m = 1) is
    reverse mode's best case, by a factor of about n. The table is printed
    and the ratios plotted to ``--plot`` (benchmarks/bench_forward.png).

    python benchmarks/bench_forward.py [--sizes 1 8 64 512] [--rounds 3] [--plot PATH]
"""

import _timing  # noqa: F401  (first: pins BLAS threads)
import argparse
import os

import numpy as np

import minigrad as mg
import minigrad.functions as F
from minigrad import func

N = 10 ** 6
HIDDEN = 64


def expression(x):
    return F.sin(x) * F.tanh(x) + x * x


def tangent_pass():
    x = mg.Variable(np.random.default_rng(0).standard_normal(N))
    v = np.random.default_rng(1).standard_normal(N)
    y, t = func.jvp(expression, (x,), (v,))
    xs = x.data
    expected = (np.cos(xs) * np.tanh(xs) + np.sin(xs) * (1 - np.tanh(xs) ** 2) + 2 * xs) * v
    np.testing.assert_allclose(t.data, expected, rtol=1e-10, atol=1e-12)
    times = _timing.compare({"plain forward pass": lambda: expression(x),
                             "forward pass with tangents": lambda: func.jvp(expression, (x,), (v,))}, rounds=15)
    return _timing.report("sin(x)*tanh(x) + x*x, 10^6 elements: func.jvp against the plain forward pass", times,
                          "plain forward pass", target=2.5)


def network(n, m, rng):
    W1, b1 = rng.standard_normal((n, HIDDEN)) / np.sqrt(n), rng.standard_normal(HIDDEN)
    W2, b2 = rng.standard_normal((HIDDEN, m)) / np.sqrt(HIDDEN), rng.standard_normal(m)
    return lambda x: F.reshape(F.affine(F.tanh(F.affine(F.reshape(x, (1, n)), W1, b1)), W2, b2), (m,))


def jacobian_ratios(sizes, rounds):
    rng = np.random.default_rng(2)
    ratios = np.zeros((len(sizes), len(sizes)))  # [i, j]: n = sizes[i], m = sizes[j]
    print(f"\njacfwd / jacrev time for f: R^n -> R^m, affine-tanh-affine with {HIDDEN} hidden units (below 1: "
          "forward mode wins)")
    print("n \\ m  " + "".join(f"{m:>9d}" for m in sizes))
    for i, n in enumerate(sizes):
        row = []
        for j, m in enumerate(sizes):
            f, x = network(n, m, rng), mg.Variable(rng.standard_normal(n))
            np.testing.assert_allclose(func.jacfwd(f)(x).data, func.jacrev(f)(x).data, rtol=1e-9, atol=1e-12)
            times = _timing.compare({"jacfwd": lambda f=f, x=x: func.jacfwd(f)(x),
                                     "jacrev": lambda f=f, x=x: func.jacrev(f)(x)}, rounds=rounds)
            ratios[i, j] = times["jacfwd"] / times["jacrev"]
            row.append(f"{ratios[i, j]:9.3f}")
        print(f"{n:5d}  " + "".join(row))
    return ratios


def plot(sizes, ratios, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4.5))
    for j, m in enumerate(sizes):
        ax.loglog(sizes, ratios[:, j], "o-", label=f"m = {m}")
    ax.axhline(1.0, color="k", lw=0.8, ls="--")
    ax.set_xlabel("n, the number of inputs")
    ax.set_ylabel("time of jacfwd / time of jacrev")
    ax.set_title("Jacobian of R^n -> R^m: forward mode wins below the line")
    ax.legend(title="outputs", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot saved to {path}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 4, 16, 64, 256, 512])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--plot", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench_forward.png"),
                        help="where to save the plot (default: %(default)s)")
    args = parser.parse_args()
    _timing.steady_heap()
    tangent_pass()
    plot(args.sizes, jacobian_ratios(args.sizes, args.rounds), args.plot)
