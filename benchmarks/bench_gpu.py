"""The same minigrad code on the GPU (CuPy) against the CPU (NumPy), and PyTorch on CUDA where present.

Two workloads: the MLP step of bench_mlp.py (float32, batch 128 and 1024),
and forward+backward of sum(sin(x) * tanh(x) + x * x) on 10^7 elements.
Results are checked against the CPU before anything is timed. On a machine
without a usable GPU it says why and exits 0.
"""

import _timing  # noqa: F401  (first: pins BLAS threads)
import time

import numpy as np

import minigrad as mg
import minigrad.functions as F
from minigrad import cuda

import bench_mlp


def gpu_time(fn, rounds=10):
    """Best time of ``fn`` with the device synchronised around it."""
    import cupy

    fn()
    cupy.cuda.Device().synchronize()
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        cupy.cuda.Device().synchronize()
        best = min(best, time.perf_counter() - t0)
    return best


def cpu_time(fn, rounds=5):
    fn()
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def elementwise(x):
    loss = F.sum(F.sin(x) * F.tanh(x) + x * x)
    (gx,) = mg.grad(loss, x)
    return gx


def main():
    reason = cuda.why_no_gpu()
    if reason is not None:
        print(f"no GPU benchmark: {reason}")
        return
    xs = np.random.default_rng(0).standard_normal(10 ** 7)
    g_cpu = elementwise(mg.Variable(xs)).numpy()
    x_gpu = mg.Variable(xs).to_gpu()
    g_gpu = elementwise(x_gpu).numpy()
    np.testing.assert_allclose(g_gpu, g_cpu, rtol=1e-10, atol=1e-12)
    t_cpu = cpu_time(lambda: elementwise(mg.Variable(xs)))
    t_gpu = gpu_time(lambda: elementwise(x_gpu))
    print(f"10^7-element graph, float64: cpu {t_cpu * 1e3:.1f} ms, gpu {t_gpu * 1e3:.2f} ms, "
          f"speed-up {t_cpu / t_gpu:.0f}x")
    torch_line(xs)

    for batch in (128, 1024):
        bench_mlp.BATCH = batch
        params, X, T = bench_mlp.make(np.float32)
        p_cpu = [mg.Variable(p.copy()) for p in params]
        p_gpu = [mg.Variable(p.copy()).to_gpu() for p in params]
        X_gpu, T_gpu = mg.Variable(X).to_gpu(), mg.Variable(T).to_gpu()
        loss_cpu, _ = bench_mlp.minigrad_step([mg.Variable(p.copy()) for p in params], X, T)
        loss_gpu, _ = bench_mlp.minigrad_step([mg.Variable(p.copy()).to_gpu() for p in params], X_gpu, T_gpu)
        np.testing.assert_allclose(loss_gpu.item(), loss_cpu.item(), rtol=1e-4)
        t_cpu = cpu_time(lambda p=p_cpu, X=X, T=T: bench_mlp.minigrad_step(p, X, T))
        t_gpu = gpu_time(lambda p=p_gpu, X=X_gpu, T=T_gpu: bench_mlp.minigrad_step(p, X, T))
        print(f"MLP step, float32, batch {batch}: cpu {t_cpu * 1e3:.2f} ms, gpu {t_gpu * 1e3:.2f} ms, "
              f"speed-up {t_cpu / t_gpu:.1f}x")


def torch_line(xs):
    try:
        import torch
    except ImportError:
        print("  (PyTorch is not installed: no CUDA comparison)")
        return
    if not torch.cuda.is_available():
        print("  (PyTorch has no CUDA here: no comparison)")
        return
    x = torch.tensor(xs, device="cuda", requires_grad=True)

    def step():
        loss = (torch.sin(x) * torch.tanh(x) + x * x).sum()
        (gx,) = torch.autograd.grad(loss, x)
        return gx

    import cupy  # noqa: F401

    t = gpu_time(step)
    print(f"  PyTorch on CUDA, same graph: {t * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
