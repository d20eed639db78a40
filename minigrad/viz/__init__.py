"""minigrad.viz: seeing the graph, and plotting derivatives.

    from minigrad.viz import draw, to_dot, graph_stats, draw_paths, plot_derivatives, trace_backward

    draw(y)                      # shown inline in Jupyter; draw(y).save("graph.svg")
    draw(gx, by_order=True)      # the graph of a derivative, coloured by derivative order
    draw_paths(y, x)             # what grad(y, x) visits and what it skips
    plot_derivatives(F.sin, np.linspace(-3, 3, 200), order=4)
    plot_derivatives(F.tanh, np.linspace(-3, 3, 200), order=30, method="taylor")   # Taylor mode
    trace_backward(y)            # the backward pass, one function per row

Drawing needs a DOT engine: the ``graphviz-pure`` command, installed with
minigrad by pip, or Graphviz's ``dot``. ``to_dot`` needs neither.
"""

from minigrad.viz.dot import to_dot
from minigrad.viz.paths import draw_paths
from minigrad.viz.plots import plot_derivatives
from minigrad.viz.render import EngineNotFoundError, Graph, draw, find_engines
from minigrad.viz.stats import GraphStats, graph_stats
from minigrad.viz.trace import Trace, trace_backward

__all__ = [
    "to_dot", "draw", "Graph", "graph_stats", "GraphStats", "draw_paths",
    "plot_derivatives", "trace_backward", "Trace", "find_engines", "EngineNotFoundError",
]
