"""The seeds' gradient-penalty step (examples/gradient_penalty.py): minigrad against PyTorch CPU.

Forward through conv-relu-pool twice and an affine layer, the parameter
gradients as a graph (create_graph=True), then backward of loss + the sum
of the gradients' norms: a double backward through a small CNN, batch 4 of
3x32x32 images, float64. Both run in this process, alternating, one thread
each. Target: minigrad at most 2.0x of PyTorch.
"""

import _timing  # noqa: F401  (first: pins BLAS threads)
import numpy as np
import torch

import minigrad as mg
import minigrad.functions as F
import minigrad.parametric_functions as PF

torch.set_num_threads(1)


def minigrad_step(x, y):
    h = PF.convolution(x, 8, (3, 3), (1, 1), name="conv1")
    h = F.max_pooling(F.relu(h), (2, 2))
    h = PF.convolution(h, 16, (3, 3), (1, 1), name="conv2")
    h = F.max_pooling(F.relu(h), (2, 2))
    p = PF.affine(h, 10, name="pred")
    loss = F.mean(F.softmax_cross_entropy(p, y))
    params = list(mg.get_parameters().values())
    for param in params:
        param.zero_grad()
    grads = mg.grad([loss], params, create_graph=True)
    gp = sum([F.sum(g ** 2.0) ** 0.5 for g in grads])
    (loss + gp).backward()
    return loss, gp


def torch_step(x, y, P):
    fn = torch.nn.functional
    h = fn.max_pool2d(torch.relu(fn.conv2d(x, P["conv1/W"], P["conv1/b"], padding=1)), 2)
    h = fn.max_pool2d(torch.relu(fn.conv2d(h, P["conv2/W"], P["conv2/b"], padding=1)), 2)
    p = h.reshape(h.shape[0], -1) @ P["pred/W"] + P["pred/b"]
    loss = fn.cross_entropy(p, y)
    for param in P.values():
        param.grad = None
    grads = torch.autograd.grad(loss, list(P.values()), create_graph=True)
    gp = sum(g.pow(2.0).sum().pow(0.5) for g in grads)
    (loss + gp).backward()
    return loss, gp


def main():
    mg.seed(0)
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((4, 3, 32, 32))
    y_np = rng.integers(0, 10, (4, 1))
    x, y = mg.Variable(x_np), mg.Variable(y_np, requires_grad=False)
    minigrad_step(x, y)  # creates the parameters
    P = {k: torch.tensor(v.data, requires_grad=True) for k, v in mg.get_parameters().items()}
    xt, yt = torch.tensor(x_np), torch.tensor(y_np).view(-1)

    loss, gp = minigrad_step(x, y)
    t_loss, t_gp = torch_step(xt, yt, P)
    np.testing.assert_allclose([loss.item(), gp.item()], [t_loss.item(), t_gp.item()], rtol=1e-10)

    times = _timing.compare(
        {"pytorch (CPU, 1 thread)": lambda: torch_step(xt, yt, P),
         "minigrad": lambda: minigrad_step(x, y)},
        rounds=15, repeat=5,
    )
    return _timing.report("gradient-penalty step, CNN on 4x3x32x32, float64", times,
                          "pytorch (CPU, 1 thread)", target=2.0)


if __name__ == "__main__":
    main()
