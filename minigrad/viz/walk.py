"""Walking a graph once, in a fixed order, so that every drawing of it is the same.

A recorded graph is two kinds of node: Function nodes (``y.creator``) and
the VariableNodes they read and write (``f.parents()``, ``f.outputs``). The
walk lists the Function nodes in topological order (every node after those
that made its inputs) and numbers every node as it is first met: the
Variables read by a function, then the function, then the Variables it wrote.

The numbers, not ``id()``, name the nodes in the DOT text (``v0``, ``f0``,
...): the same code gives the same text, and the same picture, every run.
"""

from minigrad.autodiff import topological_order
from minigrad.core.variable import Variable


class GraphView:
    """The nodes behind some outputs, numbered in visiting order.

    ``functions``: Function nodes in topological order; ``variables``:
    VariableNodes in the order first met; ``ids``: node -> ``"f3"`` or
    ``"v7"``; ``edges``: (from node, to node, i) along the data, where i is
    the input's position for an edge into a function (None out of one);
    ``outputs``: the VariableNodes drawn from.
    """

    def __init__(self, outputs):
        self.outputs = [y.node for y in outputs]
        self.functions = topological_order(self.outputs)
        self.variables = []
        self.ids = {}
        self.edges = []
        for f in self.functions:
            for i, x in enumerate(f.parents()):
                self._number_variable(x)
                self.edges.append((x, f, i))
            self._number_function(f)
            for y in f.outputs:
                if y is not None:  # None: an output nobody holds any more
                    self._number_variable(y.node)
                    self.edges.append((f, y.node, None))
        for y in self.outputs:
            self._number_variable(y)  # an output with no creator: a lone leaf

    def _number_variable(self, x):
        if x not in self.ids:
            self.ids[x] = f"v{len(self.variables)}"
            self.variables.append(x)

    def _number_function(self, f):
        if f not in self.ids:
            self.ids[f] = f"f{len(self.ids) - len(self.variables)}"

    def __len__(self):
        """The number of nodes, functions and variables together."""
        return len(self.functions) + len(self.variables)


def as_outputs(outputs, where, what="outputs"):
    """The outputs (or inputs) as a list of Variables; a list or tuple passed as one argument is unpacked."""
    if len(outputs) == 1 and isinstance(outputs[0], (list, tuple)):
        outputs = outputs[0]
    outputs = list(outputs)
    if not outputs:
        raise ValueError(f"{where}: no {what} given; pass Variables, e.g. {where}(y)")
    for i, y in enumerate(outputs):
        if not isinstance(y, Variable):
            raise TypeError(
                f"{where}: {what}[{i}] is a {type(y).__name__}, not a Variable; "
                "pass the Variables a computation returned, e.g. y = F.sin(x)"
            )
    return outputs
