"""Property tests (hypothesis): random shapes, axes, permutations and graphs, checked against
identities that hold for every input and against PyTorch where it is installed.

Seeded (derandomize) and bounded, so the suite stays fast and a failure is reproducible.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minigrad as mg
import minigrad.functions as F

torch = pytest.importorskip("torch", reason="the oracle extra (PyTorch on the CPU) is not installed")
torch.set_default_dtype(torch.float64)

bounded = settings(max_examples=40, deadline=None, derandomize=True,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def arrays(draw, shape, low=-2.0, high=2.0):
    seed = draw(st.integers(0, 2**32 - 1))
    return np.random.default_rng(seed).uniform(low, high, shape)


@st.composite
def broadcast_pair(draw):
    """Two shapes that broadcast together: drop leading axes and set some axes to 1 in each."""
    full = draw(st.lists(st.integers(1, 4), min_size=0, max_size=4))
    shapes = []
    for _ in range(2):
        cut = draw(st.integers(0, len(full)))
        shape = [1 if draw(st.booleans()) else s for s in full[cut:]]
        shapes.append(tuple(shape))
    return shapes


def torch_grads(f, arrays_, gy=None):
    ts = [torch.tensor(a, requires_grad=True) for a in arrays_]
    y = f(*ts)
    gy = torch.ones_like(y) if gy is None else torch.tensor(gy)
    return y.detach().numpy(), [g.numpy() for g in torch.autograd.grad(y, ts, gy)]


BINARY = {
    "add": (F.add, torch.add, None), "sub": (F.sub, torch.sub, None), "mul": (F.mul, torch.mul, None),
    "div": (F.div, torch.div, (0.5, 2.0)), "pow": (F.pow, torch.pow, (0.5, 2.0)),
    "maximum": (F.maximum, torch.maximum, None), "minimum": (F.minimum, torch.minimum, None),
}


@pytest.mark.parametrize("name", sorted(BINARY))
@bounded
@given(data=st.data())
def test_every_binary_function_broadcasts_like_torch(name, data):
    f, twin, domain = BINARY[name]
    s0, s1 = data.draw(broadcast_pair())
    low, high = domain or (-2.0, 2.0)
    a0, a1 = arrays(data.draw, s0, low, high), arrays(data.draw, s1, low, high)
    x0, x1 = mg.Variable(a0), mg.Variable(a1)
    y = f(x0, x1)
    gy = np.random.default_rng(1).standard_normal(y.shape)
    want_y, want_g = torch_grads(twin, [a0, a1], gy)
    np.testing.assert_allclose(y.data, want_y, rtol=1e-12, atol=1e-12)
    g0, g1 = mg.grad(y, [x0, x1], grad_outputs=gy)
    assert g0.shape == s0 and g1.shape == s1
    np.testing.assert_allclose(g0.data, want_g[0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g1.data, want_g[1], rtol=1e-10, atol=1e-12)


@bounded
@given(data=st.data())
def test_broadcast_to_and_sum_to_are_adjoint(data):
    """<broadcast_to(x), y> = <x, sum_to(y)>: sum_to is the transpose of broadcasting."""
    small, big = data.draw(broadcast_pair())
    big = np.broadcast_shapes(small, big)
    x, y = arrays(data.draw, small), arrays(data.draw, big)
    lhs = np.sum(F.broadcast_to(mg.Variable(x), big).data * y)
    rhs = np.sum(x * F.sum_to(mg.Variable(y), small).data)
    assert lhs == pytest.approx(rhs, rel=1e-12, abs=1e-12)
    xv = mg.Variable(x)
    (g,) = mg.grad(F.broadcast_to(xv, big), xv, grad_outputs=y)  # broadcast_to's rule is sum_to
    np.testing.assert_allclose(g.data, F.sum_to(mg.Variable(y), small).data, rtol=1e-12)


@st.composite
def permutation(draw):
    ndim = draw(st.integers(1, 4))
    perm = draw(st.permutations(range(ndim)))
    axes = tuple(a - ndim if draw(st.booleans()) else a for a in perm)  # some counted from the end
    shape = tuple(draw(st.integers(1, 4)) for _ in range(ndim))
    return shape, axes


@bounded
@given(case=permutation(), data=st.data())
def test_transpose_with_negative_axes(case, data):
    shape, axes = case
    x = arrays(data.draw, shape)
    xv = mg.Variable(x)
    y = F.transpose(xv, axes)
    np.testing.assert_array_equal(y.data, np.transpose(x, axes))
    gy = np.random.default_rng(2).standard_normal(y.shape)
    (g,) = mg.grad(y, xv, grad_outputs=gy)
    np.testing.assert_array_equal(g.data, np.transpose(gy, np.argsort([a % len(shape) for a in axes])))


@st.composite
def axes_of(draw, allow_none=True):
    ndim = draw(st.integers(1, 4))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(ndim))
    kind = draw(st.sampled_from(["int", "tuple", "list"] + (["none"] if allow_none else [])))
    if kind == "none":
        axis = None
    elif kind == "int":
        axis = draw(st.integers(-ndim, ndim - 1))
    else:
        chosen = draw(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True))
        chosen = [a - ndim if draw(st.booleans()) else a for a in chosen]
        axis = tuple(chosen) if kind == "tuple" else list(chosen)
    return shape, axis, draw(st.booleans())


def torch_dim(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    return tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)


REDUCTIONS = {
    "sum": (F.sum, lambda t, d, k: torch.sum(t, dim=d, keepdim=k)),
    "mean": (F.mean, lambda t, d, k: torch.mean(t, dim=d, keepdim=k)),
    "logsumexp": (F.logsumexp, lambda t, d, k: torch.logsumexp(t, dim=d, keepdim=k)),
    "max": (F.max, lambda t, d, k: torch.amax(t, dim=d, keepdim=k)),
    "min": (F.min, lambda t, d, k: torch.amin(t, dim=d, keepdim=k)),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@bounded
@given(case=axes_of(), data=st.data())
def test_every_reduction_over_random_axes(name, case, data):
    shape, axis, keepdims = case
    f, twin = REDUCTIONS[name]
    x = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))).permutation(np.prod(shape)).reshape(shape)
    x = x / 3.0  # distinct values: no ties for max and min
    xv = mg.Variable(x)
    y = f(xv, axis=axis, keepdims=keepdims)
    want_y, (want_g,) = torch_grads(lambda t: twin(t, torch_dim(axis, len(shape)), keepdims), [x])
    np.testing.assert_allclose(y.data, want_y, rtol=1e-12)
    (g,) = mg.grad(y, xv)
    np.testing.assert_allclose(g.data, want_g, rtol=1e-12)


SOFTMAX_LIKE = {
    "softmax": (F.softmax, lambda t, d: torch.exp(t - torch.logsumexp(t, dim=d, keepdim=True))),
    "log_softmax": (F.log_softmax, lambda t, d: t - torch.logsumexp(t, dim=d, keepdim=True)),
}


@pytest.mark.parametrize("name", sorted(SOFTMAX_LIKE))
@bounded
@given(case=axes_of(allow_none=False), data=st.data())
def test_softmax_like_over_random_axes(name, case, data):
    shape, axis, _ = case
    f, twin = SOFTMAX_LIKE[name]
    x = arrays(data.draw, shape, -5, 5)
    xv = mg.Variable(x)
    y = f(xv, axis=axis)
    gy = np.random.default_rng(3).standard_normal(shape)
    want_y, (want_g,) = torch_grads(lambda t: twin(t, torch_dim(axis, len(shape))), [x], gy)
    np.testing.assert_allclose(y.data, want_y, rtol=1e-12, atol=1e-14)
    (g,) = mg.grad(y, xv, grad_outputs=gy)
    np.testing.assert_allclose(g.data, want_g, rtol=1e-10, atol=1e-12)


# ---- random small DAGs with fan-in and fan-out, to order 2 ----
UNARY = [(F.sin, torch.sin), (F.tanh, torch.tanh), (lambda v: F.exp(v * 0.3), lambda t: torch.exp(t * 0.3)),
         (F.sigmoid, torch.sigmoid), (lambda v: v * v, lambda t: t * t)]
BINARY_DAG = [(F.add, torch.add), (F.mul, torch.mul), (F.sub, torch.sub),
              (lambda a, b: a / (b * b + 1.0), lambda a, b: a / (b * b + 1.0))]


@st.composite
def dag(draw):
    """A program of 2-7 steps over 2 inputs; each step reads earlier values (fan-out), binary steps join two."""
    steps = []
    for i in range(draw(st.integers(2, 7))):
        available = 2 + i
        if draw(st.booleans()):
            steps.append(("u", draw(st.integers(0, len(UNARY) - 1)), draw(st.integers(0, available - 1))))
        else:
            steps.append(("b", draw(st.integers(0, len(BINARY_DAG) - 1)),
                          draw(st.integers(0, available - 1)), draw(st.integers(0, available - 1))))
    return steps


def run_dag(steps, inputs, lib):
    values = list(inputs)
    for step in steps:
        if step[0] == "u":
            values.append(UNARY[step[1]][lib](values[step[2]]))
        else:
            values.append(BINARY_DAG[step[1]][lib](values[step[2]], values[step[3]]))
    return values[-1] + values[-2]  # the last two values meet: more fan-in


@bounded
@given(steps=dag(), data=st.data())
def test_random_dags_against_torch_to_order_2(steps, data):
    a, b = arrays(data.draw, (3,)), arrays(data.draw, (3,))
    x, y = mg.Variable(a), mg.Variable(b)
    out = F.sum(run_dag(steps, [x, y], 0))
    gx, gy = mg.grad(out, [x, y], create_graph=True, allow_unused=True, materialize_grads=True)
    ggx = mg.grad(F.sum(gx * gy) + F.sum(gx), [x, y], allow_unused=True, materialize_grads=True)

    tx, ty = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    tout = run_dag(steps, [tx, ty], 1).sum()
    tgx, tgy = torch.autograd.grad(tout, [tx, ty], create_graph=True, allow_unused=True, materialize_grads=True)
    tgg = torch.autograd.grad((tgx * tgy).sum() + tgx.sum(), [tx, ty], allow_unused=True, materialize_grads=True)

    np.testing.assert_allclose(out.item(), tout.item(), rtol=1e-12)
    for got, want in zip([gx, gy, *ggx], [tgx, tgy, *tgg]):
        np.testing.assert_allclose(got.data, want.detach().numpy(), rtol=1e-9, atol=1e-10)
