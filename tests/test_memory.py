"""Graph lifetime: nothing keeps a graph alive once its outputs are gone, without the cyclic GC."""

import gc
import tracemalloc
import weakref

import numpy as np
import pytest

import minigrad as mg
import minigrad.functions as F


def test_graph_is_freed_when_its_output_is_dropped():
    x = mg.Variable(np.ones(3))
    y = F.sin(x * 2)
    creator = weakref.ref(y.creator)
    inner = weakref.ref(y.creator.inputs[0].creator)
    del y
    assert creator() is None and inner() is None


def test_outputs_are_held_weakly_by_their_creator():
    x = mg.Variable(1.0)
    y = F.exp(x)
    f = y.creator
    node = weakref.ref(y.node)
    del y
    assert node() is None and f.outputs == [None]


def _steps(n, create_graph):
    for _ in range(n):
        x = mg.Variable(np.random.default_rng(0).standard_normal(100))
        y = F.sum(F.sin(x) * F.tanh(x) + x * x)
        y.backward(create_graph=create_graph)
        if create_graph:
            F.sum(x.grad * x.grad).backward()  # a gradient penalty uses x.grad's graph


def _growth(create_graph):
    gc.collect()
    gc.disable()
    try:
        tracemalloc.start()
        _steps(1000, create_graph)  # warm up NumPy's and the allocator's caches
        before = tracemalloc.get_traced_memory()[0]
        _steps(1000, create_graph)
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        return after - before, gc.collect()
    finally:
        gc.enable()


@pytest.mark.slow  # a thousand steps under tracemalloc
def test_thousand_steps_do_not_grow_memory_without_the_cyclic_gc():
    growth, cycles = _growth(create_graph=False)
    assert growth < 20_000, f"memory grew by {growth} bytes over 1000 steps"
    assert cycles == 0


@pytest.mark.slow  # a thousand steps under tracemalloc
def test_no_cycle_through_grad_built_with_create_graph():
    # x.grad = 2x + ... is a graph that uses x: the graph holds x.node, not x,
    # so x -> x.grad -> graph -> x is not a cycle.
    growth, cycles = _growth(create_graph=True)
    assert growth < 20_000, f"memory grew by {growth} bytes over 1000 steps"
    assert cycles == 0


def test_dropping_x_frees_its_create_graph_gradient():
    x = mg.Variable(np.ones(4))
    (x * x).sum().backward(create_graph=True)
    g = weakref.ref(x.grad)
    gc.disable()
    try:
        del x
        assert g() is None
    finally:
        gc.enable()


def _mlp_layer(rows=128):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, 256))
    W = mg.Variable(rng.standard_normal((256, 256)) / 16, name="W")
    b = mg.Variable(np.zeros(256), name="b")
    return x, W, b


def test_an_intermediate_no_rule_reads_is_freed_after_the_forward_pass():
    x, W, b = _mlp_layer()
    a = F.affine(x, W, b)  # 128 x 256 float64: 256 KiB, above the release size
    array = weakref.ref(a.data)
    h = F.tanh(a)  # tanh's rule reads h, not a
    del a
    gc.collect()
    assert array() is None, "the graph kept an array that no backward rule reads"
    # and the gradients are still right: d sum(tanh(xW + b))/dW = x^T (1 - h^2)
    gW, gb = mg.grad(F.sum(h), [W, b])
    expected = 1 - np.tanh(x @ W.data + b.data) ** 2
    np.testing.assert_allclose(gW.data, x.T @ expected, rtol=1e-12)
    np.testing.assert_allclose(gb.data, expected.sum(0), rtol=1e-12)


def test_an_intermediate_a_rule_reads_is_kept():
    x, W, b = _mlp_layer()
    a = F.affine(x, W, b)
    array = weakref.ref(a.data)
    y = F.sum(F.sin(a))  # sin's rule reads its input a
    del a
    gc.collect()
    assert array() is not None
    (gb,) = mg.grad(y, [b])
    np.testing.assert_allclose(gb.data, np.cos(x @ W.data + b.data).sum(0), rtol=1e-12)


def test_reading_a_freed_intermediate_says_why_and_what_to_do():
    x, W, b = _mlp_layer()
    h = F.tanh(F.affine(x, W, b))
    freed = h.creator.inputs[0]
    assert freed.shape == (128, 256) and freed.dtype == np.float64  # shape and dtype stay
    with pytest.raises(RuntimeError, match=r"output of Affine were freed.*Keep a reference"):
        freed.data + 1
    with pytest.raises(RuntimeError, match="freed"):
        freed.numpy().sum()
    assert "freed" in repr(freed)


def test_small_intermediates_are_kept_so_a_drawing_can_show_them():
    x = mg.Variable(np.array([0.5, 1.0]))
    h = F.tanh(x * 2.0)
    np.testing.assert_allclose(h.creator.inputs[0].data, [1.0, 2.0])


def test_a_drawing_shows_freed_values_as_freed():
    from minigrad.viz import to_dot

    x, W, b = _mlp_layer()
    dot = to_dot(F.tanh(F.affine(x, W, b)), show_values=True)
    assert "(values freed)" in dot


def test_the_gradient_of_a_large_sum_or_mean_is_a_view_of_one_number():
    """d sum(x)/dx and d mean(x)/dx repeat one number: for 10^6 elements, no 10^6 copies of it."""
    x = mg.Variable(np.ones(10**6))
    for f, value in ((F.sum, 1.0), (F.mean, 1e-6)):
        (g,) = mg.grad(f(x), [x])
        assert g.data.strides == (0,), f"{f.__name__}: the gradient is a new array of {g.data.nbytes} bytes"
        assert g.data[0] == value and g.data[-1] == value


def test_a_dropped_output_of_several_is_kept_for_a_rule_that_reads_it():
    """s, _ = sin_cos(x): the rule reads cos, whose Variable is gone; the gradient of sum(s * s) is 2 sin cos,
    and its derivative, through the kept cos, 2 cos 2x."""
    class SinCos(mg.Function):  # reads_outputs = True, the default
        def forward(self, x):
            return np.sin(x), np.cos(x)

    def sin_cos_backward(ctx, gs, gc):
        s, c = ctx.outputs
        return (0 if gs is None else gs * c) - (0 if gc is None else gc * s)

    mg.backward_functions.register("SinCos", sin_cos_backward)
    try:
        x = mg.Variable(np.array([0.5, 1.0]))
        s = SinCos()(x)[0]  # the cos output is dropped at once
        gc.collect()
        (g,) = mg.grad(F.sum(s * s), x, create_graph=True)
        np.testing.assert_allclose(g.data, np.sin(2 * x.data), rtol=1e-14)
        (h,) = mg.grad(F.sum(g), x)
        np.testing.assert_allclose(h.data, 2 * np.cos(2 * x.data), rtol=1e-14)
    finally:
        mg.backward_functions.table.rules.pop("SinCos", None)
