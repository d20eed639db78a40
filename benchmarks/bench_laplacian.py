"""The Laplacian of a tanh network, three ways in minigrad and PyTorch's nested one: time and memory.

The network is torch-jet's benchmark network, 50 -> 768 -> 768 -> 512 -> 512 -> 1 with tanh, in
float64; for batches of N points this times ``func.laplacian`` with method "collapsed", "taylor"
and "nested" (all the directions at once, as PyTorch's vmap of Hessian-vector products), one
forward pass of the network (minigrad, ``no_grad``), and PyTorch's nested
Laplacian where torch is installed: the trace of ``torch.func.hessian`` vmapped over the points,
and the vmap over the D directions of Hessian-vector products (forward over reverse), whichever
is faster. Everything runs on one thread: BLAS is pinned by ``_timing`` and PyTorch by
``torch.set_num_threads(1)``, so a ratio compares the code, not how many cores each side took.
All the ratios come from this one process (the candidates alternate, best of the rounds, each
timed call after an untimed one of the same candidate: the network's 10 MB of weights stay cached
from one Laplacian to the next, as in a training loop, whatever ran before).

Two rows trade time for memory: "collapsed, chunk=10" takes the directions 10 at a time
(``func.laplacian(f, chunk=10)``), and "nested, chunk=1" holds one Hessian-vector product at a
time, the least memory of all (``func.laplacian(f, "nested", chunk=1)``).

The timed calls run inside ``mg.no_grad()``: the results are constants (so they are too in grad mode,
the network's weights being arrays). To train a physics-informed network the weights require grad,
and every method records its result's graph, to differentiate it by them: the peak memory of that
call is given too ("to train").
Peak memory is what ``tracemalloc`` sees during one call (NumPy reports its arrays to it), above
what was allocated before; PyTorch's allocations are not visible to it, so it has no memory column.

    python benchmarks/bench_laplacian.py [--batches 1 16 128] [--rounds 5] [--plot PATH] [--quick]

Targets: collapsed at most 0.6x the time of "taylor" and 0.5x "nested", with a peak memory at most
"nested"'s; at most the time of PyTorch's nested Laplacian; and its cost, as a multiple of one
forward pass, against the D + 2 of the theory (plus the pass that records the graph).
"""

import _timing  # noqa: F401  (first: pins BLAS threads)
import argparse
import os

import numpy as np

import minigrad as mg
import minigrad.functions as F
from minigrad import func

WIDTHS = (50, 768, 768, 512, 512, 1)
QUICK_WIDTHS = (10, 64, 64, 1)
METHODS = ("collapsed", "taylor", "nested")
CHUNK = 10  # directions per pass in the row CHUNKED: memory traded for passes
CHUNKED = f"collapsed, chunk={CHUNK}"
ONE_AT_A_TIME = "nested, chunk=1"


def parameters(widths, seed=0):
    """Weights and biases, scaled so that the pre-activations stay O(1) (tanh neither saturated nor linear)."""
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((m, n)) / np.sqrt(m), 0.1 * rng.standard_normal(n))
            for m, n in zip(widths[:-1], widths[1:])]


def network(params):
    def f(x):
        for i, (W, b) in enumerate(params):
            x = F.affine(x, W, b)
            if i < len(params) - 1:
                x = F.tanh(x)
        return x
    return f


def torch_laplacians(torch, params):
    """PyTorch's two nested Laplacians of the same network: {name: function of a (N, D) tensor}."""
    tparams = [(torch.tensor(W), torch.tensor(b)) for W, b in params]

    def net(x):
        for i, (W, b) in enumerate(tparams):
            x = x @ W + b
            if i < len(tparams) - 1:
                x = torch.tanh(x)
        return x

    def hessian_trace(x):
        H = torch.func.vmap(torch.func.hessian(lambda xi: net(xi)[0]))(x)  # (N, D, D)
        return H.diagonal(dim1=-2, dim2=-1).sum(-1)

    eye = torch.eye(x_dim(params), dtype=torch.float64)

    def hvps(x):
        gradient = torch.func.grad(lambda x: net(x).sum())  # row n: the gradient of point n

        def hvp(v):
            return torch.func.jvp(gradient, (x,), (v.expand_as(x),))[1]

        Hv = torch.func.vmap(hvp)(eye)  # (D, N, D): H_n e_d for each direction d
        return torch.einsum("dnd->n", Hv)

    return {"PyTorch hessian trace": hessian_trace, "PyTorch vmap of HVPs": hvps}


def x_dim(params):
    return params[0][0].shape[0]


def measure(n, params, torch, rounds):
    """Times (best seconds), peak bytes, and the torch check, for a batch of n points."""
    f = network(params)
    x = np.random.default_rng(n).standard_normal((n, x_dim(params)))
    operators = {m: func.laplacian(f, m) for m in METHODS}
    operators[CHUNKED] = func.laplacian(f, chunk=CHUNK)
    operators[ONE_AT_A_TIME] = func.laplacian(f, "nested", chunk=1)
    values = {m: op(x).data for m, op in operators.items()}
    candidates = {m: (lambda op=op: op(x)) for m, op in operators.items()}

    def forward():
        with mg.no_grad():
            f(mg.Variable(x))

    candidates["forward pass"] = forward
    if torch is not None:
        tx = torch.tensor(x)
        for name, lap in torch_laplacians(torch, params).items():
            values[name] = lap(tx).numpy()
            candidates[name] = lambda lap=lap: lap(tx)
    reference = values["nested"].ravel()
    for name, v in values.items():  # every method computes the same numbers
        np.testing.assert_allclose(np.ravel(v), reference, rtol=1e-8, atol=1e-10, err_msg=name)
    with mg.no_grad():  # constants out: nested builds no graph of its result
        times = _timing.compare(candidates, rounds=rounds, warm=True)
        memory = {m: _timing.peak_bytes(candidates[m]) for m in operators}
    trained = network([(mg.Variable(W, requires_grad=True), mg.Variable(b, requires_grad=True)) for W, b in params])
    recorded = {m: _timing.peak_bytes(lambda m=m: func.laplacian(trained, m)(x)) for m in ("collapsed", "nested")}
    return times, memory, recorded


def verdicts(n, times, memory, recorded, D):
    """The target lines for one batch size."""
    c = times["collapsed"]
    m, r = memory["collapsed"] / memory["nested"], recorded["collapsed"] / recorded["nested"]
    lines = [
        f"  collapsed / taylor  {c / times['taylor']:.3f}x (target <= 0.6: {_meets(c / times['taylor'] <= 0.6)})",
        f"  collapsed / nested  {c / times['nested']:.3f}x (target <= 0.5: {_meets(c / times['nested'] <= 0.5)})",
        f"  peak memory collapsed / nested, constants  {m:.3f}x (target <= 1: {_meets(m <= 1)}); "
        f"to train (weights require grad: each records its result's graph, nested {recorded['nested'] / 1e6:.2f} "
        f"MB)  {r:.3f}x (target <= 1: {_meets(r <= 1)})",
        f"  peak memory collapsed / {ONE_AT_A_TIME}, no_grad()  {memory['collapsed'] / memory[ONE_AT_A_TIME]:.3f}x "
        f"(D + 2 rows at every node, against one Hessian-vector product at a time; not a target)",
    ]
    torch_names = [name for name in times if name.startswith("PyTorch")]
    if torch_names:
        best = min(torch_names, key=times.get)
        r = c / times[best]
        lines.append(f"  collapsed / {best} (the faster)  {r:.3f}x (target <= 1: {_meets(r <= 1)})")
    lines.append(f"  collapsed = {c / times['forward pass']:.1f} forward passes (theory: D + 2 = {D + 2}, "
                 f"plus the pass that records the graph)")
    return lines


def _meets(ok):
    return "meets" if ok else "MISSES"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batches", type=int, nargs="+", default=None, help="batch sizes (default 1 16 128)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per timing (the best is kept)")
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--plot", default=os.path.join(here, "bench_laplacian.png"),
                        help="where to save the plot (default: %(default)s)")
    parser.add_argument("--quick", action="store_true",
                        help=f"a CI-size run: network {QUICK_WIDTHS}, batches 1 and 16, 2 rounds")
    args = parser.parse_args()
    _timing.steady_heap()
    widths = QUICK_WIDTHS if args.quick else WIDTHS
    batches = args.batches or ([1, 16] if args.quick else [1, 16, 128])
    rounds = 2 if args.quick else args.rounds
    try:
        import torch
    except ImportError:
        torch = None
        print("PyTorch is not installed: its columns are left out")
    else:
        torch.set_num_threads(1)  # as BLAS is pinned to one thread (_timing)
    params = parameters(widths)
    D = widths[0]
    print(f"Laplacian of a tanh network {' -> '.join(map(str, widths))}, float64, one thread; best of {rounds} "
          "rounds, ms (peak MB seen by tracemalloc)")
    results = {}
    for n in batches:
        times, memory, recorded = measure(n, params, torch, rounds)
        results[n] = times
        print(f"N = {n}")
        for name, t in times.items():
            mem = f"  ({memory[name] / 1e6:8.2f} MB)" if name in memory else ""
            print(f"  {name:<24} {t * 1e3:10.2f} ms{mem}")
        print("\n".join(verdicts(n, times, memory, recorded, D)))
    plot(args.plot, results, widths)


def plot(path, results, widths):
    batches = list(results)
    curves = {name: (batches, [results[n][name] for n in batches]) for name in results[batches[0]]}
    _timing.log_plot(path, curves, "points in the batch N", "seconds per Laplacian of the batch",
                     f"Laplacian of a tanh network {'-'.join(map(str, widths))}, float64, one thread", logx=True)


if __name__ == "__main__":
    main()
