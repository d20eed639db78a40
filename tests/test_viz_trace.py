"""trace_backward: the rows of a small graph, with gradients worked out by hand."""

import numpy as np
import pytest

import minigrad as mg
import minigrad.functions as F
from minigrad.viz import trace_backward


def small_graph():
    # y = x*w + sin(x), x = 2, w = 3; visited: Add, then Mul, then Sin.
    x, w = mg.Variable(2.0, name="x"), mg.Variable(3.0, name="w")
    return x, w, x * w + F.sin(x)


def test_each_step_holds_the_gradient_in_and_out():
    x, w, y = small_graph()
    t = trace_backward(y)
    assert [s.name for s in t] == ["f2 Add", "f1 Mul", "f0 Sin"]
    add, mul, sin = t
    # Add: gy = 1 (the seed); d(a + b) = 1, 1.
    assert add.gys == [1.0] and add.gxs == [1.0, 1.0]
    # Mul: gy = 1 from Add; d(x*w)/dx = w = 3, d(x*w)/dw = x = 2.
    assert mul.gys == [1.0] and mul.gxs == [3.0, 2.0] and mul.inputs == ["x", "w"]
    # Sin: gy = 1 from Add; d sin(x)/dx = cos(2).
    assert sin.gys == [1.0] and sin.gxs[0] == pytest.approx(np.cos(2.0), abs=1e-15)
    assert [s.step for s in t] == [1, 2, 3]


def test_the_text_table_is_the_same_every_run():
    text = repr(trace_backward(small_graph()[2]))
    assert text == repr(trace_backward(small_graph()[2]))
    assert text.splitlines() == [
        "step  function  gradient in (gy)  gradients out (gx)",
        "----  --------  ----------------  ------------------",
        "1     f2 Add    v4: 1             v3: 1, v1: 1",
        "2     f1 Mul    v3: 1             x: 3, w: 2",
        "3     f0 Sin    v1: 1             x: -0.4161",
    ]
    assert "<table>" in trace_backward(small_graph()[2])._repr_html_()


def test_only_the_functions_leading_to_the_inputs_are_visited():
    x, w = mg.Variable(2.0, name="x"), mg.Variable(3.0, name="w")
    y = x * w + F.exp(w)
    assert [s.name for s in trace_backward(y, inputs=x)] == ["f2 Add", "f1 Mul"]
    assert [s.name for s in trace_backward(y, inputs=[x, w])] == ["f2 Add", "f1 Mul", "f0 Exp"]


def test_arrays_broadcasts_and_a_seed():
    # y = sum(x * b) with x of shape (2,), b a scalar: Sum's gx is ones(2) * 2 (the seed);
    # Mul's gx for b has shape (2,), before the walker sums it to a scalar.
    x, b = mg.Variable(np.array([1.0, 2.0]), name="x"), mg.Variable(0.5, name="b")
    t = trace_backward(F.sum(x * b), grad_outputs=2.0)
    np.testing.assert_array_equal(t[0].gxs[0], [2.0, 2.0])
    np.testing.assert_array_equal(t[1].gxs[0], [1.0, 1.0])  # 2 * b
    np.testing.assert_array_equal(t[1].gxs[1], [2.0, 4.0])  # 2 * x
    assert "b: [2, 4]" in repr(t)


def test_the_graph_survives_a_trace():
    x, _, y = small_graph()
    trace_backward(y)
    (gx,) = mg.grad(y, x)
    assert gx.item() == pytest.approx(3.0 + np.cos(2.0))


def test_no_input_to_trace_is_a_clear_error():
    with pytest.raises(ValueError, match="trace_backward: no Variable behind the output requires grad"):
        trace_backward(mg.Variable(1.0, requires_grad=False) * 2)
