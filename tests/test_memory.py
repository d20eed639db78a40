"""Graph lifetime: nothing keeps a graph alive once its outputs are gone, without the cyclic GC."""

import gc
import tracemalloc
import weakref

import numpy as np

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


def test_thousand_steps_do_not_grow_memory_without_the_cyclic_gc():
    growth, cycles = _growth(create_graph=False)
    assert growth < 20_000, f"memory grew by {growth} bytes over 1000 steps"
    assert cycles == 0


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
