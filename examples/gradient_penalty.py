"""Double backpropagation through a small CNN: a gradient penalty on the parameters.

The loss of a classifier is augmented by the norms of its own gradients,

    total = loss + sum_k ||d loss / d theta_k||,

and training needs the gradient of that total, so ``loss`` is differentiated
twice: once, with ``create_graph=True``, to get d loss/d theta as a graph,
and once more through that graph by ``backward()``. Every rule on the way
(convolution, relu, max pooling, affine, softmax cross entropy) must itself
be differentiable.

Run it from the repository root, with minigrad installed (``pip install -e .``):
``python examples/gradient_penalty.py``. ``tests/test_gradient_penalty.py``
checks this step against PyTorch, and ``benchmarks/bench_gradient_penalty.py`` times it.
"""

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


def main():
    mg.seed(0)
    mg.clear_parameters()
    x, y = make_data()
    loss, gp = gradient_penalty_step(x, y)
    print(f"loss {loss.item():.10f}")
    print(f"gp   {gp.item():.10f}")
    for name, param in mg.get_parameters().items():
        print(f"{name:8s} shape {str(param.shape):16s} |grad| {np.linalg.norm(param.grad.numpy()):.6f}")


if __name__ == "__main__":
    main()
