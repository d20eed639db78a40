"""graph_stats on graphs counted by hand, and how differentiation grows a graph."""

import numpy as np

import minigrad as mg
import minigrad.functions as F
from minigrad.viz import graph_stats


def nth_derivative(f, n, x0=0.3):
    x = mg.Variable(x0)
    y = f(x)
    for _ in range(n):
        (y,) = mg.grad(y, x, create_graph=True)
    return y


def test_a_forward_graph():
    # y = sin(x) * x: Sin, Mul; variables x, sin(x), y.
    x = mg.Variable(np.array([1.0, 2.0]))
    stats = graph_stats(F.sin(x) * x)
    assert (stats.functions, stats.variables, stats.nodes) == (2, 3, 5)
    assert stats.by_order == {0: 2}
    assert repr(stats) == "GraphStats(functions=2, variables=3, by_order={0: 2})"


def test_the_graph_of_tanhs_first_derivative():
    # gx = gy * (1 - y*y), y = tanh(x): Tanh (order 0); Mul(y, y), Sub(1, .), Mul(gy, .) (order 1);
    # variables x, y, y*y, 1, 1 - y*y, gy, gx.
    stats = graph_stats(nth_derivative(F.tanh, 1))
    assert (stats.functions, stats.variables) == (4, 7)
    assert stats.by_order == {0: 1, 1: 3}


def test_a_leaf_alone_has_no_functions():
    stats = graph_stats(mg.Variable(1.0))
    assert (stats.functions, stats.variables, stats.by_order) == (0, 1, {})


def test_several_outputs_share_their_nodes():
    x = mg.Variable(1.0)
    s = F.sin(x)
    stats = graph_stats(s * 2, s * 3)  # Sin once, two Muls; x, s, 2, 3, two products
    assert (stats.functions, stats.variables) == (3, 6)


def test_tanhs_nth_derivative_graph_grows_while_sins_stays_small():
    tanh_sizes = [graph_stats(nth_derivative(F.tanh, n)).functions for n in range(1, 6)]
    sin_sizes = [graph_stats(nth_derivative(F.sin, n)).functions for n in range(1, 6)]
    assert all(a < b for a, b in zip(tanh_sizes, tanh_sizes[1:])), tanh_sizes
    assert tanh_sizes[-1] > 50
    assert max(sin_sizes) <= 3, sin_sizes
    # The n-th derivative's graph holds nodes of order n, made by the n-th grad call.
    assert max(graph_stats(nth_derivative(F.tanh, 4)).by_order) == 4
