"""All derivatives 0..n of tanh at 1,000 points: Taylor mode against nested reverse mode.

Nested reverse mode differentiates the graph of the last derivative again;
tanh's graphs grow about 2.8x per order, and so does the time. Taylor mode
(minigrad.taylor) propagates a truncated series once, at O(n^2) array
operations. For each n this prints the time to get every derivative 0..n:

- Taylor mode: one call of ``taylor.derivatives(F.tanh, x, n)``, best of several rounds, n = 1..100;
- minigrad's nested reverse mode: tanh, then grad(create_graph=True) n times; the time to order n is
  the time since the start of the chain, so one chain gives every n; best of a few chains;
- PyTorch's nested ``torch.autograd.grad(create_graph=True)``, the same way, where torch is installed.

A nested method stops once an order passes ``--limit`` seconds (10 by default). The ratios of each
row come from this one process. The table is printed and a log-scale plot saved (``--plot``, by
default benchmarks/bench_taylor.png, which git ignores).

    python benchmarks/bench_taylor.py [--points 1000] [--max-order 100] [--limit 10] [--plot PATH]

Goals: 0..10 at least 100x faster than nested reverse mode; 0..100 in under 100 ms.
"""

import _timing  # noqa: F401  (first: pins BLAS threads)
import argparse
import time
from pathlib import Path

import numpy as np

import minigrad as mg
import minigrad.functions as F
from minigrad import taylor

NESTED_ORDERS = 14


def nested_minigrad(xs, limit):
    """Seconds to reach each order 1, 2, ... of tanh by nested grad, from the start of one chain."""
    t0 = time.perf_counter()
    x = mg.Variable(xs)
    d = F.tanh(x)
    times = []
    for _ in range(NESTED_ORDERS):
        (d,) = mg.grad(d, x, create_graph=True)
        times.append(time.perf_counter() - t0)
        if times[-1] > limit:
            break
    return times


def nested_torch(torch, xs, limit):
    """The same chain with torch.autograd.grad(create_graph=True)."""
    t0 = time.perf_counter()
    x = torch.tensor(xs, requires_grad=True)
    d = torch.tanh(x)
    times = []
    for _ in range(NESTED_ORDERS):
        (d,) = torch.autograd.grad(d, x, torch.ones_like(d), create_graph=True)
        times.append(time.perf_counter() - t0)
        if times[-1] > limit:
            break
    return times


def best_chain(chain, limit, rounds=3, short=1.0):
    """The best time per order over ``rounds`` chains: the first to ``limit``, the others to ``short`` s."""
    best = chain(limit)
    for _ in range(rounds - 1):
        for i, t in enumerate(chain(short)):
            best[i] = min(best[i], t)
    return best


def taylor_time(xs, n, rounds):
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        taylor.derivatives(F.tanh, xs, n)
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--points", type=int, default=1000)
    parser.add_argument("--max-order", type=int, default=100)
    parser.add_argument("--limit", type=float, default=10.0, help="stop a nested method past this many seconds")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per Taylor-mode timing (the best is kept)")
    parser.add_argument("--plot", default=str(Path(__file__).resolve().with_name("bench_taylor.png")),
                        help="where to save the plot (default: %(default)s)")
    args = parser.parse_args()
    _timing.steady_heap()
    xs = np.linspace(-3, 3, args.points)

    methods = {"nested reverse (minigrad)": best_chain(lambda limit: nested_minigrad(xs, limit), args.limit)}
    try:
        import torch
    except ImportError:
        print("PyTorch is not installed: its column is left out")
    else:
        torch.set_num_threads(1)  # as BLAS is pinned to one thread (_timing)
        methods["nested autograd.grad (PyTorch)"] = best_chain(lambda limit: nested_torch(torch, xs, limit),
                                                               args.limit)
    orders = sorted(set(range(1, NESTED_ORDERS + 1)) | set(range(20, args.max_order + 1, 10)) | {args.max_order})
    taylor_times = {n: taylor_time(xs, n, args.rounds) for n in orders if n <= args.max_order}

    names = list(methods)
    print(f"tanh and its derivatives 0..n at {args.points} points, best seconds (ratio to Taylor mode)")
    print(f"{'n':>4}  {'Taylor mode':>12}  " + "  ".join(f"{name:>34}" for name in names))
    for n, t in taylor_times.items():
        cells = []
        for name in names:
            times = methods[name]
            cells.append(f"{times[n - 1] * 1e3:16.3f} ms ({times[n - 1] / t:8.1f}x)" if n <= len(times) else "")
        print(f"{n:4d}  {t * 1e3:9.3f} ms  " + "  ".join(f"{c:>34}" for c in cells))

    nested = methods[names[0]]
    if len(nested) >= 10:
        ratio = nested[9] / taylor_times[10]
        print(f"0..10: Taylor mode is {ratio:.0f}x faster than nested reverse mode "
              f"({'meets' if ratio >= 100 else 'MISSES'} the goal of at least 100x)")
    if args.max_order in taylor_times:
        t = taylor_times[args.max_order]
        print(f"0..{args.max_order}: {t * 1e3:.1f} ms in Taylor mode "
              f"({'meets' if args.max_order < 100 or t < 0.1 else 'MISSES'} the goal of under 100 ms for 0..100)")
    plot(args.plot, taylor_times, methods, args.points)


def plot(path, taylor_times, methods, points):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.plot(list(taylor_times), list(taylor_times.values()), "o-", label="Taylor mode (minigrad.taylor)")
    for name, times in methods.items():
        ax.plot(range(1, len(times) + 1), times, "s-", label=name)
    ax.set_yscale("log")
    ax.set_xlabel("n: every derivative 0..n")
    ax.set_ylabel("seconds")
    ax.set_title(f"tanh and its derivatives at {points} points")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot saved to {path}")


if __name__ == "__main__":
    main()
