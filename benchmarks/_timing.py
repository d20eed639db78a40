"""Shared timing for the benchmarks: one BLAS thread, candidates alternating in one process.

Import this module before NumPy: it pins every BLAS/OpenMP pool to one thread,
so a ratio compares the code, not how many cores each side grabbed.
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import sys  # noqa: E402
import time  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def compare(candidates, rounds=7, repeat=1):
    """Time each callable ``repeat`` times per round, alternating, for ``rounds`` rounds.

    Returns {name: best seconds per call}. The minimum over rounds is the
    least disturbed measurement; alternating cancels drifts of the machine.
    """
    best = {name: float("inf") for name in candidates}
    for fn in candidates.values():
        fn()  # warm up
    for _ in range(rounds):
        for name, fn in candidates.items():
            t0 = time.perf_counter()
            for _ in range(repeat):
                fn()
            best[name] = min(best[name], (time.perf_counter() - t0) / repeat)
    return best


def report(title, times, baseline, target=None):
    """Print each time and its ratio to the baseline; return the ratio of the first non-baseline."""
    print(title)
    base = times[baseline]
    ratio = None
    for name, t in times.items():
        r = t / base
        if name != baseline and ratio is None:
            ratio = r
        print(f"  {name:<28} {t * 1e3:10.3f} ms   {r:6.2f}x")
    if target is not None:
        verdict = "meets" if ratio <= target else "MISSES"
        print(f"  ratio {ratio:.2f}x {verdict} the target of at most {target}x")
    return ratio
