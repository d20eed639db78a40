"""Shared timing for the benchmarks: one BLAS thread, candidates alternating in one process.

Import this module before NumPy: it pins every BLAS/OpenMP pool to one thread,
so a ratio compares the code, not how many cores each side grabbed.
"""

import gc
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

# this checkout's minigrad, unless PYTHONPATH names the tree to measure (an A/B of two checkouts)
_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.environ.get("PYTHONPATH"):
    sys.path.append(_root)
else:
    sys.path.insert(0, _root)


def steady_heap():
    """Ask glibc to keep freed memory in the process, so that neither side pays page faults.

    By default glibc hands large freed blocks back to the system (it trims
    the heap, and unmaps blocks over a threshold that moves with the sizes
    it has seen) and faults them in again on the next allocation. In a
    float64 MLP step that is about 1,000 page faults per step, 2 ms of a
    4 ms step, and how many depends on the heap's history, so a ratio moved
    by up to 10% between runs of the same code. Keeping the memory measures
    the code instead. Returns False where the C library is not glibc.
    """
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return False
    M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # from glibc's malloc.h
    # trim only above 1 GiB; allocate from the heap up to 32 MiB (glibc's largest setting)
    return bool(libc.mallopt(M_TRIM_THRESHOLD, 1 << 30)) and bool(libc.mallopt(M_MMAP_THRESHOLD, 1 << 25))


class Times(dict):
    """{name: best seconds per call}, and ``medians``: {name: median seconds per call over the rounds}.

    The best is the least disturbed measurement, and the targets are read on
    it. The median says what a typical round costs: on a busy machine it sits
    above the best, and the ratio of medians tells whether a ratio of bests
    was a lucky round for one side.
    """

    def __init__(self, best, medians):
        super().__init__(best)
        self.medians = medians


def compare(candidates, rounds=7, repeat=1, warm=False):
    """Time each callable ``repeat`` times per round, alternating, for ``rounds`` rounds.

    Returns a :class:`Times`: {name: best seconds per call}, with the medians.
    The minimum over rounds is the least disturbed measurement; alternating
    cancels drifts of the machine. ``warm``: an untimed call of the same
    candidate before each timed one, so that no candidate pays for the caches
    the one before it emptied (a call of a few milliseconds that reads 10 MB
    of weights runs a third slower after a candidate that evicted them, while
    the next candidate finds them cached).
    """
    samples = {name: [] for name in candidates}
    for fn in candidates.values():
        fn()  # warm up
    for _ in range(rounds):
        for name, fn in candidates.items():
            if warm:
                fn()
            t0 = time.perf_counter()
            for _ in range(repeat):
                fn()
            samples[name].append((time.perf_counter() - t0) / repeat)
    return Times({name: min(ts) for name, ts in samples.items()},
                 {name: statistics.median(ts) for name, ts in samples.items()})


def report(title, times, baseline, target=None):
    """Print each time and its ratio to the baseline; return the ratio of the first non-baseline.

    With a :class:`Times`, the ratio of the medians is printed too; the verdict is on the best.
    """
    print(title)
    base = times[baseline]
    ratio = None
    for name, t in times.items():
        r = t / base
        if name != baseline and ratio is None:
            ratio = r
        print(f"  {name:<28} {t * 1e3:10.3f} ms   {r:6.2f}x")
    medians = getattr(times, "medians", None)
    if medians is not None and ratio is not None:
        other = next(name for name in times if name != baseline)
        print(f"  ratio of the median rounds {medians[other] / medians[baseline]:.3f}x")
    if target is not None:
        verdict = "meets" if ratio <= target else "MISSES"
        print(f"  ratio {ratio:.3f}x {verdict} the target of at most {target}x")
    return ratio


def log_plot(path, curves, xlabel, ylabel, title, logx=False):
    """Save ``curves``, {label: (xs, ys)}, on a log scale (both axes with ``logx``) to ``path``; say where."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, (xs, ys) in curves.items():
        ax.plot(xs, ys, "o-", label=label)
    if logx:
        ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot saved to {path}")


def peak_bytes(call):
    """tracemalloc's peak while ``call()`` runs, its result still alive when the peak is read."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        result = call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    del result
    return peak
