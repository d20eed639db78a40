"""The 1st to 20th derivative of sin at 1,000 points: the graph added per order stays constant.

Each derivative is one more grad(create_graph=True) of the previous one. If
the graph of the n-th derivative grew with n, the time per order would grow
too; minigrad's stays at a few nodes, so the time per order is flat and the
total grows linearly. Prints, per order, the nodes visited, the nodes added,
and the time of that one grad() call.
"""

import _timing  # noqa: F401  (first: pins BLAS threads)
import time

import numpy as np

import minigrad as mg
import minigrad.functions as F
from minigrad.autodiff import plan

ORDERS = 20


def run():
    xs = np.linspace(-3, 3, 1000)
    x = mg.Variable(xs)
    d = F.sin(x)
    rows = []
    for n in range(1, ORDERS + 1):
        t0 = time.perf_counter()
        (d,) = mg.grad(d, x, create_graph=True)
        dt = time.perf_counter() - t0
        visited = len(plan([d], [x])[1])
        err = np.abs(d.data - np.sin(xs + n * np.pi / 2)).max()
        rows.append((n, visited, dt, err))
    return rows


if __name__ == "__main__":
    best = None
    for _ in range(5):
        rows = run()
        best = rows if best is None else [min(a, b, key=lambda r: r[2]) for a, b in zip(best, rows)]
    print("order  nodes in its graph  grad() time   max |error|")
    for n, visited, dt, err in best:
        print(f"{n:5d}  {visited:18d}  {dt * 1e6:8.1f} us   {err:.1e}")
    first, last = np.mean([r[2] for r in best[:5]]), np.mean([r[2] for r in best[-5:]])
    print(f"time per order, orders 16-20 against 1-5: {last / first:.2f}x (flat means linear total time)")
