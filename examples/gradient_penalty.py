"""Double backpropagation through a small CNN: a gradient penalty on the parameters.

The loss of a classifier is augmented by the norms of its own gradients,

    total = loss + sum_k ||d loss / d theta_k||,

and training needs the gradient of that total, so ``loss`` is differentiated
twice: once, with ``create_graph=True``, to get d loss/d theta as a graph,
and once more through that graph by ``backward()``. Every rule on the way
(convolution, relu, max pooling, affine, softmax cross entropy) must itself
be differentiable.

Run it from the repository root, with minigrad installed (``pip install -e .``):
``python examples/gradient_penalty.py``. Where PyTorch is installed, it runs
the same step there, on the same parameters, and prints how far apart the two
are; ``tests/test_gradient_penalty.py`` checks that they agree, and
``benchmarks/bench_gradient_penalty.py`` times the step.
"""

import importlib.util

import numpy as np

import minigrad as mg
import minigrad.functions as F
import minigrad.parametric_functions as PF


def gradient_penalty_step(x, y):
    """One step: forward, the parameter gradients as a graph, then backward of loss + penalty.

    Leaves every parameter's ``.grad`` set; returns (loss, gp).
    """
    h = PF.convolution(x, 8, (3, 3), (1, 1), name="conv1")
    h = F.relu(h)
    h = F.max_pooling(h, (2, 2))
    h = PF.convolution(h, 16, (3, 3), (1, 1), name="conv2")
    h = F.relu(h)
    h = F.max_pooling(h, (2, 2))
    p = PF.affine(h, 10, name="pred")
    loss = F.mean(F.softmax_cross_entropy(p, y))

    grads = mg.grad([loss], list(mg.get_parameters().values()), create_graph=True)
    gp = sum([F.sum(g ** 2.0) ** 0.5 for g in grads])
    (loss + gp).backward()
    return loss, gp


def make_data(seed=0, dtype=np.float64):
    """A batch of 4 random 3x32x32 images and their labels in [0, 10)."""
    rng = np.random.default_rng(seed)
    x = mg.Variable(rng.standard_normal((4, 3, 32, 32)).astype(dtype))
    y = mg.Variable(rng.integers(0, 10, (4, 1)), requires_grad=False)
    return x, y


def torch_step(x, y, params):
    """The same step re-typed in PyTorch, on parameters ``params`` (name -> array); returns loss, gp and the
    gradients of loss + gp, as NumPy."""
    import torch

    P = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
    xt, yt = torch.tensor(x), torch.tensor(y.astype(np.int64)).view(-1)
    h = torch.nn.functional.conv2d(xt, P["conv1/W"], P["conv1/b"], padding=1)
    h = torch.nn.functional.max_pool2d(torch.relu(h), 2)
    h = torch.nn.functional.conv2d(h, P["conv2/W"], P["conv2/b"], padding=1)
    h = torch.nn.functional.max_pool2d(torch.relu(h), 2)
    p = h.reshape(h.shape[0], -1) @ P["pred/W"] + P["pred/b"]
    loss = torch.nn.functional.cross_entropy(p, yt)
    grads = torch.autograd.grad(loss, list(P.values()), create_graph=True)
    gp = sum(g.pow(2.0).sum().pow(0.5) for g in grads)
    (loss + gp).backward()
    return loss.item(), gp.item(), {k: v.grad.numpy() for k, v in P.items()}


def main():
    mg.seed(0)
    mg.clear_parameters()
    x, y = make_data()
    loss, gp = gradient_penalty_step(x, y)
    print(f"loss {loss.item():.10f}")
    print(f"gp   {gp.item():.10f}")
    params = mg.get_parameters()
    for name, param in params.items():
        print(f"{name:8s} shape {str(param.shape):16s} |grad| {np.linalg.norm(param.grad.numpy()):.6f}")
    if importlib.util.find_spec("torch") is None:
        print("PyTorch is not installed: no comparison (pip install torch, CPU build, to see one)")
        return
    t_loss, t_gp, t_grads = torch_step(x.data, y.data, {k: p.data for k, p in params.items()})
    print(f"PyTorch, on the same parameters: loss {t_loss:.10f}, gp {t_gp:.10f}; relative differences:")
    print(f"  loss {abs(loss.item() - t_loss) / abs(t_loss):.1e}, gp {abs(gp.item() - t_gp) / abs(t_gp):.1e}")
    for name, param in params.items():
        g, t = param.grad.numpy(), t_grads[name]
        print(f"  the gradient of {name}: {np.abs(g - t).max() / np.abs(t).max():.1e} (of its largest element)")


if __name__ == "__main__":
    main()
