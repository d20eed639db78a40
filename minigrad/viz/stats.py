"""Counting a graph: how many function and variable nodes, and of which derivative order.

The graph of an n-th derivative is made of the nodes of the forward pass
(order 0) and of every ``grad(create_graph=True)`` before it (orders 1..n).
Counting them by order shows how differentiation grows a graph: the n-th
derivative of sin stays a few nodes (it is only ever sin or cos again),
while that of tanh, a polynomial in tanh, grows with n.
"""

from minigrad.viz.walk import GraphView, as_outputs


class GraphStats:
    """Counts of a graph: ``.functions``, ``.variables`` and ``.by_order`` ({order: functions})."""

    def __init__(self, view):
        self.functions = len(view.functions)
        self.variables = len(view.variables)
        by_order = {}
        for f in view.functions:
            by_order[f.order] = by_order.get(f.order, 0) + 1
        self.by_order = dict(sorted(by_order.items()))

    @property
    def nodes(self):
        """Functions and variables together."""
        return self.functions + self.variables

    def __repr__(self):
        return f"GraphStats(functions={self.functions}, variables={self.variables}, by_order={self.by_order})"


def graph_stats(*outputs):
    """The counts of the graph behind ``outputs``: a GraphStats."""
    return GraphStats(GraphView(as_outputs(outputs, "graph_stats")))
