"""Every registered function against PyTorch: first, second and (when smooth) third derivatives.

For each case of ``tests/cases.py`` both frameworks compute, at the same
random point in float64,

    g1 = d<y, v1>/dx,   g2 = d<g1, v2>/dx,   g3 = d<g2, v3>/dx,

with ``torch.autograd.grad(..., grad_outputs=...)`` on one side and
``mg.grad`` on the other. The directions v1, v2, v3 are fixed random
arrays rather than ones: with ones some derivatives vanish identically
(the entries of softmax sum to 1, so d<softmax(x), 1>/dx = 0) and the
comparison would prove nothing there.
"""

import numpy as np
import pytest

import minigrad as mg
from cases import CASES

torch = pytest.importorskip("torch", reason="PyTorch is the oracle framework (pip install .[oracle])")


def directions(shapes, seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


def minigrad_derivatives(case, arrays, order):
    xs = [mg.Variable(a) for a in arrays]
    outs = [case.f(*xs)]
    results = [[o.numpy() for o in outs]]
    for k in range(1, order + 1):
        vs = directions([o.shape for o in outs], seed=k)
        outs = mg.grad(outs, xs, grad_outputs=vs, create_graph=True, materialize_grads=True)
        results.append([g.numpy() for g in outs])
    return results


def torch_derivatives(case, arrays, order):
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    outs = [case.twin(torch, *ts)]
    results = [[o.detach().numpy(force=True) for o in outs]]
    for k in range(1, order + 1):
        vs = [torch.tensor(v) for v in directions([tuple(o.shape) for o in outs], seed=k)]
        live = [(o, v) for o, v in zip(outs, vs) if o.requires_grad]
        if live:  # a constant derivative (of a linear function) has a zero derivative
            outs = torch.autograd.grad([o for o, _ in live], ts, [v for _, v in live],
                                       create_graph=True, allow_unused=True, materialize_grads=True)
        else:
            outs = [torch.zeros_like(t) for t in ts]
        results.append([g.detach().numpy(force=True) for g in outs])
    return results


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_matches_torch(case):
    order = 3 if case.smooth else 2
    arrays = case.inputs(seed=1)
    ours = minigrad_derivatives(case, arrays, order)
    theirs = torch_derivatives(case, arrays, order)
    for k, (a, b) in enumerate(zip(ours, theirs)):
        for i, (u, w) in enumerate(zip(a, b)):
            what = "the value" if k == 0 else f"derivative of order {k}, input {i}"
            assert u.shape == w.shape, f"{case.id}: {what}: shape {u.shape} vs torch {w.shape}"
            np.testing.assert_allclose(u, w, rtol=1e-9, atol=1e-11, err_msg=f"{case.id}: {what}")


def test_every_function_in_show_registry_has_an_oracle_case():
    from minigrad.backward_functions import registry_text

    rows = registry_text().splitlines()[1:-1]  # the table show_registry prints, without header and count
    names = {row.split()[0] for row in rows if row.split()[1].startswith("minigrad.")}
    missing = sorted(names - {case.name for case in CASES})
    assert not missing, f"functions in show_registry() without an oracle case in tests/cases.py: {missing}"
