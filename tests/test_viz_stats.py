"""graph_stats on graphs counted by hand, and how differentiation grows a graph."""

import numpy as np

import minigrad as mg
import minigrad.functions as F
from minigrad.viz import graph_stats


def nth_derivative(f, n, x0=(0.3, -1.2)):
    x = mg.Variable(np.array(x0))
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


def test_the_graphs_of_exps_derivatives():
    # y = exp(x) => gx = gy * y: Exp (order 0), Mul (order 1); variables x, y, gy, gx.
    stats = graph_stats(nth_derivative(F.exp, 1))
    assert (stats.functions, stats.variables, stats.by_order) == (2, 4, {0: 1, 1: 1})
    # d(gy * y)/dx: Mul's rule gives g = ggy * gy, a product of constants (no node); Exp's
    # gives g * y. The order-1 Mul is not behind the result. Variables x, y, g, g * y.
    stats = graph_stats(nth_derivative(F.exp, 2))
    assert (stats.functions, stats.variables, stats.by_order) == (2, 4, {0: 1, 2: 1})


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
