"""The cost table of the modes of automatic differentiation: each mode on one network, as multiples of f.

Each row is one way to differentiate (or just evaluate) f, timed and its peak
memory measured, as a multiple of one plain evaluation of f measured in the
same process:

- f, recording: f(x) with x a Variable that requires grad (the unit of time);
- f in no_grad(): the same inside ``mg.no_grad()`` (the unit of memory);
- gradient: ``mg.grad(f(x), x)``, forward and backward;
- func.jvp with NumPy primals, called as it is, and inside ``no_grad()``;
- the JVP by two reverse passes (the double-vjp trick): g(u) = J^T u with a dummy u, create_graph=True,
  then the gradient of <g(u), v> with respect to u, which is J v;
- func.hvp (forward over reverse), as it is and inside ``no_grad()``, and the HVP by reverse over
  reverse: the gradient of <grad f, v>, the gradient taken with create_graph=True; by reverse over
  forward: the gradient of the JVP <grad f, v>, the JVP recorded; and by central differences of two
  gradients, (grad f(x + h v) - grad f(x - h v)) / 2h, exact to O(h^2) only (so not checked against the others);
- jacfwd and jacrev of small maps R^8 -> R^8, R^64 -> R^1 and R^1 -> R^64 (affine-tanh-affine, 64 hidden
  units): a scalar output is reverse mode's best case, a scalar input forward mode's;
- the per-operation chain: forward and backward through 1,000 scalar operations (mul, add, sin), minigrad
  against PyTorch (one thread, same inputs) where torch is installed.

The network is a tanh MLP of width 256, batch 64, float64, and f(x) = sum(h * h) of its last layer. Every
derivative is with respect to the input x; the weights are NumPy constants, so a reverse pass multiplies by
one matrix a layer, as f does. By default it runs twice: 36 layers for the gradient and JVP rows, whose
memory is the point, and 12 layers for the HVP rows; ``--depth N`` runs every network row at N layers.

Time: best of the rounds, candidates alternating in one process (``_timing.compare``); the ratio of the
median rounds is printed beside it. The machine may run other work: the best round is the least disturbed,
and a median far above it says the round was disturbed. Memory: tracemalloc's peak while computing the
row, traced from after the inputs and the parameters were built, with the result kept until the peak is
read (NumPy reports its arrays to tracemalloc), in MiB and as a multiple of the no_grad pass. The chain
has no memory column: tracemalloc does not see PyTorch's allocations.

Beside each row, what the cost model of automatic differentiation expects; after the table, one line per
target that says whether it holds. Targets (read on the best rounds):

- func.jvp on the 36-layer network, with NumPy primals and inside no_grad(): peak memory at most 3x the
  no_grad pass and at most half of mg.grad's; time at most 2.5x the plain pass;
- func.hvp at most 0.9x the time of reverse over reverse on the 12-layer network;
- the gradient at most 3x the plain pass;
- per operation on the 1,000-op chain: at most PyTorch's time.

    python benchmarks/bench_modes.py [--quick] [--depth N] [--rows grad jvp ...] [--rounds N]

From a notebook: ``sys.path.insert(0, "../benchmarks"); import bench_modes;
print(bench_modes.table_text(bench_modes.measure(rows=["grad"], quick=True)))``.
"""

import _timing  # noqa: F401  (first: pins BLAS threads)
import argparse
from collections import namedtuple

import bench_overhead
import numpy as np

import minigrad as mg
import minigrad.functions as F
from minigrad import func

WIDTH, BATCH = 256, 64
MEMORY_DEPTH, HVP_DEPTH = 36, 12
HIDDEN = 64  # of the small maps
MAPS = ((8, 8), (64, 1), (1, 64))  # (n, m) of f: R^n -> R^m for jacfwd and jacrev
ROUNDS = {"network": (60, 3), "map": (40, 3), "chain": (30, 3)}  # rounds (full, quick) of each kind of section
REPEAT = {"network": 1, "map": 10, "chain": 1}  # calls timed together in a round: the maps take microseconds
MIB = 2.0 ** 20


# ---- what is measured: f, and the rows, each a function (f, x, v) -> a call to time ----
def mlp(depth, width=WIDTH, batch=BATCH, seed=0):
    """(f, x, v): f(x) = sum(h * h) of a tanh MLP of ``depth`` layers; x and v NumPy arrays (batch, width)."""
    rng = np.random.default_rng(seed)
    layers = [(rng.standard_normal((width, width)) / np.sqrt(width), 0.1 * rng.standard_normal(width))
              for _ in range(depth)]

    def f(x):
        h = x
        for W, b in layers:
            h = F.tanh(F.affine(h, W, b))
        return F.sum(h * h)

    return f, rng.standard_normal((batch, width)), rng.standard_normal((batch, width))


def small_map(n, m, seed=2):
    """(f, x, v): f: R^n -> R^m, affine-tanh-affine with HIDDEN hidden units, at x (v unused: None)."""
    rng = np.random.default_rng(seed)
    W1, b1 = rng.standard_normal((n, HIDDEN)) / np.sqrt(n), rng.standard_normal(HIDDEN)
    W2, b2 = rng.standard_normal((HIDDEN, m)) / np.sqrt(HIDDEN), rng.standard_normal(m)

    def f(x):
        return F.reshape(F.affine(F.tanh(F.affine(F.reshape(x, (1, n)), W1, b1)), W2, b2), (m,))

    return f, rng.standard_normal(n), None


def in_no_grad(run):
    """``run``, called inside no_grad()."""
    def quiet():
        with mg.no_grad():
            return run()
    return quiet


def plain(f, x, v):
    xv = mg.Variable(x)
    return lambda: f(xv)


def no_grad(f, x, v):
    return in_no_grad(plain(f, x, v))


def gradient(f, x, v):
    xv = mg.Variable(x)
    return lambda: mg.grad(f(xv), xv)


def jvp(f, x, v):
    return lambda: func.jvp(f, (x,), (v,))


def two_reverse_passes(f, x, v, by_cotangent):
    """g = J^T u, recorded (create_graph=True), then the gradient of <g, v>: by u, J v (the double-vjp trick,
    u a dummy cotangent), when ``by_cotangent``; else, u = 1 and g = grad f, by x: H v (reverse over reverse)."""
    xv = mg.Variable(x)

    def run():
        y = f(xv)
        u = mg.Variable(np.ones_like(y.data)) if by_cotangent else None
        (g,) = mg.grad(y, xv, grad_outputs=u, create_graph=True)
        (derivative,) = mg.grad(F.sum(g * v), u if by_cotangent else xv)
        return y, derivative

    return run


def jvp_double_vjp(f, x, v):
    return two_reverse_passes(f, x, v, by_cotangent=True)


def hvp_rev_rev(f, x, v):
    return two_reverse_passes(f, x, v, by_cotangent=False)


def hvp(f, x, v):
    return lambda: func.hvp(f, (x,), (v,))


def hvp_rev_fwd(f, x, v):
    """The JVP of f along v, <grad f, v>, recorded, then its gradient by x: H v (reverse over forward)."""
    xv = mg.Variable(x)

    def run():
        y, directional = func.jvp(f, (xv,), (v,))
        return y, mg.grad(directional, xv)[0]

    return run


def hvp_fd(f, x, v):
    """(grad f(x + h v) - grad f(x - h v)) / 2h: two gradients, h = eps^(1/3) scaled to x and v."""
    h = np.finfo(np.float64).eps ** (1 / 3) * max(1.0, np.abs(x).max()) / np.abs(v).max()
    up, down = mg.Variable(x + h * v), mg.Variable(x - h * v)

    def run():
        (g_up,) = mg.grad(f(up), up)
        (g_down,) = mg.grad(f(down), down)
        return None, (g_up.data - g_down.data) / (2 * h)

    return run


def jvp_no_grad(f, x, v):
    return in_no_grad(jvp(f, x, v))


def hvp_no_grad(f, x, v):
    return in_no_grad(hvp(f, x, v))


def jacfwd(f, x, v):
    xv = mg.Variable(x)
    return lambda: func.jacfwd(f)(xv)


def jacrev(f, x, v):
    xv = mg.Variable(x)
    return lambda: func.jacrev(f)(xv)


Row = namedtuple("Row", "mode call expected answer")  # answer: (what it computes, how to read it) or None


def second(result):
    return result[1]


def hvp_of(result):
    return result[1][0]


def itself(result):
    return result


ROWS = {
    "plain": Row("f, recording", plain, "1: the unit of time; memory: the graph, an activation a layer", None),
    "no_grad": Row("f in no_grad()", no_grad, "time <= 1; memory: a few activations, the unit", None),
    "grad": Row("gradient, mg.grad", gradient, "<= ~3x f (target 3x); memory ~ f recording's", None),
    "jvp": Row("func.jvp, NumPy primals", jvp, "~2-3x f (target 2.5x); memory ~2x no_grad's (target 3x)",
               ("J v", second)),
    "jvp_no_grad": Row("func.jvp in no_grad()", jvp_no_grad, "~2-3x f (target 2.5x); memory ~2x no_grad's",
                       ("J v", second)),
    "jvp_double_vjp": Row("jvp by two reverse passes", jvp_double_vjp, "f and two reverse passes: ~3-5x f; "
                          "memory above the gradient's",
                          ("J v", second)),
    "hvp": Row("func.hvp (fwd over rev)", hvp, "cheaper than reverse over reverse (target 0.9x)",
               ("H v", hvp_of)),
    "hvp_no_grad": Row("func.hvp in no_grad()", hvp_no_grad, "cheaper than reverse over reverse (target 0.9x)",
                       ("H v", hvp_of)),
    "hvp_rev_rev": Row("hvp, reverse over reverse", hvp_rev_rev, "a gradient with create_graph, then its reverse",
                       ("H v", second)),
    "hvp_rev_fwd": Row("hvp, reverse over forward", hvp_rev_fwd, "a JVP, recorded, then its reverse",
                       ("H v", second)),
    "hvp_fd": Row("hvp, differences of gradients", hvp_fd, "two gradients: ~2x the gradient's time", None),
    "jacfwd": Row("jacfwd", jacfwd, "f, then n = {n} tangent passes: ~1 + 2n = {fwd} x f", ("J", itself)),
    "jacrev": Row("jacrev", jacrev, "f, then m = {m} reverse passes: ~1 + 2m = {rev} x f", ("J", itself)),
}
BASELINES = ("plain", "no_grad")
NETWORK_ROWS = ("grad", "jvp", "jvp_no_grad", "jvp_double_vjp", "hvp", "hvp_no_grad", "hvp_rev_rev", "hvp_rev_fwd",
                "hvp_fd")
ALL_ROWS = tuple(ROWS) + ("chain",)

Section = namedtuple("Section", "title kind build rows depth sizes")  # sizes: the fields of "expected"


def sections(depth=None, width=WIDTH, batch=BATCH):
    """The configurations: the network (at 36 and 12 layers, or every row at ``depth``), then the small maps."""
    if depth is None:
        networks = [(MEMORY_DEPTH, NETWORK_ROWS[:4], "the gradient and JVP rows"),
                    (HVP_DEPTH, NETWORK_ROWS[4:], "the HVP rows")]
    else:
        networks = [(depth, NETWORK_ROWS, "every network row")]
    found = [Section(f"tanh MLP, {d} layers, width {width}, batch {batch}, float64 ({what})", "network",
                     lambda d=d: mlp(d, width, batch), rows, d, {}) for d, rows, what in networks]
    return found + [Section(f"f: R^{n} -> R^{m}, affine-tanh-affine with {HIDDEN} hidden units", "map",
                            lambda n=n, m=m: small_map(n, m), ("jacfwd", "jacrev"), None,
                            {"n": n, "m": m, "fwd": 1 + 2 * n, "rev": 1 + 2 * m}) for n, m in MAPS]


# ---- measuring ----
def checked(calls):
    """Rows that compute the same thing (J v, H v, J) must agree: each is timed computing the right answer."""
    answers = {}
    for name, call in calls.items():
        answer = ROWS[name].answer
        if answer is not None:
            what, read = answer
            array = read(call())
            answers.setdefault(what, []).append((name, getattr(array, "data", array)))
    for what, found in answers.items():
        for name, array in found[1:]:
            np.testing.assert_allclose(array, found[0][1], rtol=1e-8, atol=1e-10,
                                       err_msg=f"{name} and {found[0][0]} differ on {what}")


def measure_section(section, names, rounds, repeat=1):
    """Rows of one configuration: the baselines, then ``names``, timed alternating, then their peaks."""
    f, x, v = section.build()
    calls = {name: ROWS[name].call(f, x, v) for name in BASELINES + tuple(names)}
    checked(calls)
    times = _timing.compare(calls, rounds=rounds, repeat=repeat)
    peaks = {name: _timing.peak_bytes(call) for name, call in calls.items()}
    return [{"section": section.title, "depth": section.depth, "row": name, "mode": ROWS[name].mode,
             "time_ms": times[name] * 1e3, "median_ms": times.medians[name] * 1e3,
             "time_x": times[name] / times["plain"], "median_x": times.medians[name] / times.medians["plain"],
             "peak_mib": peaks[name] / MIB, "memory_x": peaks[name] / peaks["no_grad"],
             "expected": ROWS[name].expected.format(**section.sizes), "rounds": rounds} for name in calls]


def imported_torch():
    """(torch, None), set to one thread, or (None, the reason it cannot be used)."""
    try:
        import torch
    except Exception as error:  # not installed (ImportError), or installed but unloadable (OSError)
        return None, f"{type(error).__name__}: {error}"
    torch.set_num_threads(1)  # as BLAS is pinned to one thread (_timing)
    return torch, None


def torch_chain(torch):
    """The chain of bench_overhead in PyTorch: the same 1,000 operations on the same input, then autograd.grad."""
    c, d = torch.tensor(bench_overhead.C), torch.tensor(bench_overhead.D)

    def run():
        x = torch.tensor([0.5], dtype=torch.float64, requires_grad=True)
        (g,) = torch.autograd.grad(bench_overhead.chain(x, torch.sin, c, d), x)
        return g.numpy()

    return run


def measure_chain(rounds):
    """The chain's rows: minigrad's time per operation, and PyTorch's where it can be imported."""
    title = f"chain of {bench_overhead.N_OPS} scalar operations (mul, add, sin), forward and backward"
    calls = {"chain": bench_overhead.minigrad_chain}
    torch, reason = imported_torch()
    if torch is None:
        print(f"the PyTorch row of the chain is left out: {reason}")
    else:
        calls["chain_torch"] = torch_chain(torch)
        np.testing.assert_allclose(calls["chain_torch"](), calls["chain"](), rtol=1e-12)
        title += ", as multiples of PyTorch's time (one thread)"
    times = _timing.compare(calls, rounds=rounds)
    modes = {"chain": "minigrad", "chain_torch": "PyTorch"}
    expected = {"chain": "target: PyTorch's time per operation", "chain_torch": "the unit"}
    base = "chain_torch" if torch is not None else None
    return [{"section": title, "depth": None, "row": name, "mode": modes[name],
             "time_ms": times[name] * 1e3, "median_ms": times.medians[name] * 1e3,
             "per_op_us": times[name] * 1e6 / bench_overhead.N_OPS,
             "time_x": times[name] / times[base] if base else None,
             "median_x": times.medians[name] / times.medians[base] if base else None,
             "peak_mib": None, "memory_x": None, "expected": expected[name], "rounds": rounds} for name in calls]


def measure(rows=None, depth=None, width=WIDTH, batch=BATCH, quick=False, rounds=None):
    """The table's rows, a list of dicts: one per mode in each configuration its rows need.

    ``rows``: names from ALL_ROWS (None: every row); the baselines of a configuration are always measured,
    as its rows are ratios to them, and so are the rows a target compares a wanted row with (hvp_rev_rev
    for hvp, grad for jvp). ``depth``: every network row at this many layers (None: 36 layers for
    the gradient and JVP rows, 12 for the HVP rows). ``quick``: 3 rounds a configuration instead of 30 to 60.
    Times are in ms (best and median rounds), ratios are to "plain" (time) and "no_grad" (peak memory).
    The script also keeps freed memory in the process (``_timing.steady_heap``); a notebook does not.
    """
    wanted = set(ALL_ROWS if rows is None else rows)
    unknown = wanted - set(ALL_ROWS)
    if unknown:
        raise ValueError(f"unknown rows {sorted(unknown)}; the rows are {', '.join(ALL_ROWS)}")
    wanted |= {against for name, _, against, *_ in TARGETS if name in wanted and against in ROWS}
    found = []
    for i, section in enumerate(sections(depth, width, batch)):
        names = [name for name in section.rows if name in wanted]
        if names or (i == 0 and wanted & set(BASELINES)):
            found += measure_section(section, names, rounds or ROUNDS[section.kind][quick], REPEAT[section.kind])
    if "chain" in wanted:
        found += measure_chain(rounds or ROUNDS["chain"][quick])
    return found


# ---- printing ----
def number(value, form):
    """``value`` formatted, or "-" as wide, where there is none."""
    return format(value, form) if value is not None else "-".rjust(len(format(0.0, form)))


def row_text(row):
    mode = row["mode"] if "per_op_us" not in row else f"{row['mode']}, {row['per_op_us']:.2f} us/op"
    return (f"  {mode:<30} {row['time_ms']:10.3f} {number(row['time_x'], '8.2f')} "
            f"({number(row['median_x'], '.2f'):>6}) {number(row['peak_mib'], '9.2f')} "
            f"{number(row['memory_x'], '9.2f')}   {row['expected']}")


def table_text(rows):
    """The rows as a plain-text table, a block per configuration."""
    header = (f"  {'mode':<30} {'best ms':>10} {'time x':>8} {'(median)':>8} {'peak MiB':>9} {'memory x':>9}   "
              "the cost model expects")
    lines, section = [], None
    for row in rows:
        if row["section"] != section:
            section = row["section"]
            lines += ["", f"{section}; best of {row['rounds']} rounds", header]
        lines.append(row_text(row))
    return "\n".join(lines[1:])


# (row, what is compared, the row it is read against, at most, layers the target is set on, the target)
TARGETS = (
    ("jvp", "peak_mib", "no_grad", 3.0, MEMORY_DEPTH, "func.jvp, NumPy primals: peak memory <= 3x the no_grad pass"),
    ("jvp", "peak_mib", "grad", 0.5, MEMORY_DEPTH, "func.jvp, NumPy primals: peak memory <= half of mg.grad's"),
    ("jvp", "time_ms", "plain", 2.5, MEMORY_DEPTH, "func.jvp, NumPy primals: time <= 2.5x the plain pass"),
    ("jvp_no_grad", "peak_mib", "no_grad", 3.0, MEMORY_DEPTH,
     "func.jvp in no_grad(): peak memory <= 3x the no_grad pass"),
    ("jvp_no_grad", "peak_mib", "grad", 0.5, MEMORY_DEPTH, "func.jvp in no_grad(): peak memory <= half of mg.grad's"),
    ("jvp_no_grad", "time_ms", "plain", 2.5, MEMORY_DEPTH, "func.jvp in no_grad(): time <= 2.5x the plain pass"),
    ("hvp", "time_ms", "hvp_rev_rev", 0.9, HVP_DEPTH, "func.hvp: time <= 0.9x reverse over reverse"),
    ("hvp_no_grad", "time_ms", "hvp_rev_rev", 0.9, HVP_DEPTH,
     "func.hvp in no_grad(): time <= 0.9x reverse over reverse"),
    ("grad", "time_ms", "plain", 3.0, MEMORY_DEPTH, "the gradient: time <= 3x the plain pass"),
    ("chain", "time_ms", "chain_torch", 1.0, None, "the 1,000-op chain: time per operation <= PyTorch's"),
)


def verdicts(rows):
    """One dict per target whose rows were measured: the ratio (best rounds, and median), and whether it holds."""
    by_section = {}
    for row in rows:
        by_section.setdefault(row["section"], {})[row["row"]] = row
    found = []
    for name, key, against, limit, depth, target in TARGETS:
        for table in by_section.values():
            if name in table and against in table:
                a, b = table[name], table[against]
                ratio = a[key] / b[key]
                median = a["median_ms"] / b["median_ms"] if key == "time_ms" else None
                found.append({"target": target, "ratio": ratio, "median_ratio": median, "limit": limit,
                              "holds": ratio <= limit, "depth": a["depth"], "target_depth": depth})
    return found


def verdict_text(rows):
    """A line per target: holds or FAILS, with the ratio measured."""
    lines = []
    for v in verdicts(rows):
        where = f" on {v['depth']} layers" if v["depth"] is not None else ""
        if v["depth"] != v["target_depth"]:
            where += f" (the target is set on {v['target_depth']})"
        median = f", median rounds {v['median_ratio']:.2f}x" if v["median_ratio"] is not None else ""
        lines.append(f"{'holds' if v['holds'] else 'FAILS'}: {v['target']}: {v['ratio']:.2f}x{median}{where}")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds a configuration: under ~20 s")
    parser.add_argument("--depth", type=int, help="every network row at this many layers (default: "
                        f"{MEMORY_DEPTH} for the gradient and JVP rows, {HVP_DEPTH} for the HVP rows)")
    parser.add_argument("--width", type=int, default=WIDTH)
    parser.add_argument("--batch", type=int, default=BATCH)
    parser.add_argument("--rows", nargs="+", choices=ALL_ROWS, help="only these rows (and their baselines)")
    parser.add_argument("--rounds", type=int, help="rounds a configuration (default: 60 for the network, "
                        "40 for the maps, 30 for the chain; 3 with --quick)")
    args = parser.parse_args()
    _timing.steady_heap()
    print("network: " + (f"{args.depth} layers for every row" if args.depth else
                         f"{MEMORY_DEPTH} layers for the gradient and JVP rows, {HVP_DEPTH} for the HVP rows"))
    print("time: best round, ratio to f recording (median rounds in parentheses; other work on the machine "
          "disturbs some rounds); memory: tracemalloc's peak, ratio to f in no_grad()\n")
    rows = measure(args.rows, args.depth, args.width, args.batch, args.quick, args.rounds)
    print(table_text(rows))
    print()
    print(verdict_text(rows) or "no target is read on these rows")


if __name__ == "__main__":
    main()
