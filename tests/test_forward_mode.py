"""Forward mode on the fly: no tape, nothing recorded unless reverse mode will read it, levels kept apart.

Memory is measured with tracemalloc (NumPy reports its arrays to it), with a
generous margin: these tests say what forward mode keeps, not how fast it runs.
"""

import tracemalloc

import numpy as np
import pytest

import minigrad as mg
import minigrad.functions as F
from minigrad import Function, func


def network(depth=24, width=128, batch=32, seed=0):
    """A tanh network as a function of its input, and an input."""
    rng = np.random.default_rng(seed)
    weights = [rng.standard_normal((width, width)) / np.sqrt(width) for _ in range(depth)]

    def f(x):
        for W in weights:
            x = F.tanh(F.matmul(x, W))
        return x

    return f, rng.standard_normal((batch, width))


def peak_bytes(call):
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    call()
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return peak


def test_jvp_keeps_no_tape_its_peak_is_a_few_activations_not_a_graph():
    f, x = network()
    t = np.ones_like(x)
    with mg.no_grad():
        plain = peak_bytes(lambda: f(x))
    forward = peak_bytes(lambda: func.jvp(f, (x,), (t,)))
    v = mg.Variable(x)
    reverse = peak_bytes(lambda: mg.grad(F.sum(f(v)), v))
    activation = x.nbytes
    # the graph of 24 layers keeps ~48 activations; forward mode, a value and a tangent at a time
    assert forward <= 3 * plain + 8 * activation, (forward, plain, activation)
    assert forward <= 0.5 * reverse, (forward, reverse)
    with mg.no_grad():
        inside = peak_bytes(lambda: func.jvp(f, (x,), (t,)))
    assert inside <= 3 * plain + 8 * activation, (inside, plain)


def test_numpy_primals_record_nothing_and_a_variable_that_requires_grad_does():
    recorded = []
    original = Function._record

    def counting(self, nodes, ys):
        recorded.append(self.name)
        return original(self, nodes, ys)

    f = lambda x: F.sum(F.sin(x) * x)  # noqa: E731
    x = np.array([0.3, -1.2, 2.0])
    Function._record = counting
    try:
        y, t = func.jvp(f, (x,), (np.ones(3),))
        assert recorded == [] and y.creator is None and t.creator is None
        with mg.no_grad():
            y, t = func.jvp(f, (mg.Variable(x),), (np.ones(3),))
        assert recorded == [] and y.creator is None
        v = mg.Variable(x)
        y, t = func.jvp(f, (v,), (np.ones(3),))  # grad mode, a primal that requires grad: reverse mode may read it
        assert recorded
    finally:
        Function._record = original
    # and reverse mode does read it: d/dx of the directional derivative sum(cos x * x + sin x)
    (g,) = mg.grad(t, v)
    np.testing.assert_allclose(g.data, -np.sin(x) * x + 2 * np.cos(x), rtol=1e-12)


def test_nested_jvps_keep_their_perturbations_apart():
    # d/dx [x * d/dy (x * y)] at (x, y) = (3, 5): the inner derivative is x, so d/dx x^2 = 2x = 6
    def outer(x):
        inner = lambda y: x * y  # noqa: E731
        _, dy = func.jvp(inner, (np.array(5.0),), (np.array(1.0),))
        return x * dy

    _, d = func.jvp(outer, (np.array(3.0),), (np.array(1.0),))
    assert float(d.data) == 6.0
    # the inner jvp's tangent of an expression in x alone is zero: d/dx [x * d/dy (x + y)] = 1
    _, d = func.jvp(lambda x: x * func.jvp(lambda y: x + y, (np.array(5.0),), (np.array(1.0),))[1],
                    (np.array(3.0),), (np.array(1.0),))
    assert float(d.data) == 1.0


def test_third_derivative_by_forward_over_forward_over_forward():
    def d(f):
        return lambda x: func.jvp(f, (x,), (np.ones_like(x.data if isinstance(x, mg.Variable) else x),))[1]

    x = np.array([0.2, 0.7, 1.3])
    np.testing.assert_allclose(d(d(d(F.sin)))(x).data, -np.cos(x), rtol=1e-12)
    np.testing.assert_allclose(d(d(d(lambda v: F.exp(2 * v))))(x).data, 8 * np.exp(2 * x), rtol=1e-12)


def test_reverse_over_forward_and_forward_over_reverse_match_the_closed_form_hessian():
    a = np.array([0.5, -1.0, 2.0])

    def f(x):  # f(x) = exp(a . x) + sum(x^3): H = exp(a.x) a a^T + diag(6x)
        return F.exp(F.sum(x * a)) + F.sum(x ** 3)

    x, v = np.array([0.1, 0.2, -0.3]), np.array([1.0, -2.0, 0.5])
    H = np.exp(a @ x) * np.outer(a, a) + np.diag(6 * x)
    _, (hv,) = func.hvp(f, (x,), (v,))  # forward over reverse
    np.testing.assert_allclose(hv.data, H @ v, rtol=1e-12)
    xv = mg.Variable(x)
    _, tangent = func.jvp(f, (xv,), (v,))  # reverse over forward: the gradient of the directional derivative
    (g,) = mg.grad(tangent, xv)
    np.testing.assert_allclose(g.data, H @ v, rtol=1e-12)
    np.testing.assert_allclose(func.hessian(f)(x).data, H, rtol=1e-12)
    np.testing.assert_allclose(func.jacrev(func.jacfwd(f))(x).data, H, rtol=1e-12)  # reverse over forward


def test_a_tangent_that_requires_grad_is_differentiated_by_reverse_mode():
    x = np.array([0.4, 1.1])
    t = mg.Variable(np.array([2.0, -1.0]))
    _, ty = func.jvp(lambda v: F.sum(F.sin(v)), (x,), (t,))  # ty = cos(x) . t
    (g,) = mg.grad(ty, t)
    np.testing.assert_allclose(g.data, np.cos(x), rtol=1e-12)


def test_a_tangent_is_freed_with_its_value():
    import gc
    import weakref

    f, x = network(depth=3, width=8, batch=2)
    seen = []
    original = F.tanh

    def watching(v):
        y = original(v)
        seen.append(weakref.ref(y.node))
        return y

    F.tanh = watching
    try:
        func.jvp(f, (x,), (np.ones_like(x),))
    finally:
        F.tanh = original
    gc.collect()
    assert all(ref() is None for ref in seen), "an intermediate node (and its tangent) outlived the jvp"


def _tanh_loss(W):
    return lambda z: F.sum(F.tanh(F.matmul(F.tanh(z), W)) ** 2)


_RNG = np.random.default_rng(7)
_W = _RNG.standard_normal((5, 5))
_X = _RNG.standard_normal(5)
_ONES = np.ones(5)
COMPOSITIONS = {  # each one records calls whose forward rules run on Variables (tanh's reads its output)
    "jvp of a Variable": lambda: func.jvp(lambda z: F.tanh(F.tanh(z)), (mg.Variable(_X),), (_ONES,)),
    "jvp, W requires grad": lambda: func.jvp(_tanh_loss(mg.Variable(_W, requires_grad=True)), (_X,), (_ONES,)),
    "hessian": lambda: func.hessian(_tanh_loss(_W))(_X),
    "jacrev(jacfwd)": lambda: func.jacrev(func.jacfwd(_tanh_loss(_W)))(_X),
    "jvp(grad)": lambda: func.jvp(func.grad(_tanh_loss(_W)), (_X,), (_ONES,)),
    "grad(jvp)": lambda: func.grad(lambda z: func.jvp(_tanh_loss(_W), (z,), (_ONES,))[1])(_X),
}


@pytest.mark.parametrize("name", list(COMPOSITIONS))
def test_forward_mode_leaves_no_cycle_for_the_garbage_collector(name):
    """A tangent recorded as a Variable may hold its own node (tanh's rule reads y): the jvp takes it off
    when it returns, so its graph is freed by reference counting alone, as a graph without jvp is."""
    import gc

    gc.collect()
    gc.disable()
    try:
        for _ in range(3):
            result = COMPOSITIONS[name]()
            del result
        found = gc.collect()
    finally:
        gc.enable()
    assert found == 0, f"{name}: {found} objects were left in cycles"


def test_the_graph_a_jvp_returns_carries_no_tangent_of_its_closed_level():
    x = mg.Variable(np.ones((50, 50)))
    y, t = func.jvp(lambda z: F.tanh(F.tanh(F.tanh(z))), (x,), (np.ones((50, 50)),))
    del t
    node, carried = y.node, []
    while node.creator is not None:
        carried.append(node.tangents)
        node = node.creator._inputs[0]
    assert len(carried) >= 3 and not any(carried), carried


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_jacfwd_nested_in_itself_gives_higher_derivatives_of_a_scalar_map(depth):
    def derivative(f):
        return lambda x: func.jacfwd(f)(x)

    f = F.exp
    for _ in range(depth):
        f = derivative(f)
    x = np.array(0.5)
    np.testing.assert_allclose(np.asarray(f(x).data), np.exp(0.5), rtol=1e-12)
