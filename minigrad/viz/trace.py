"""The backward pass, step by step: each function visited, its gradient in and its gradients out.

Backpropagation visits the functions of the graph from the output back.
Each one receives gy, the gradient of the output with respect to its own
output, and its backward rule returns gx, one gradient per input:
gx_i = gy * dy/dx_i. Where a Variable feeds several functions, the gx they
send it are added before its own creator is visited.

Nodes are named as ``draw`` names them (``f3``, ``v5``, or the Variable's
name), so a trace can be read beside the picture of the same graph.
"""

import html
from collections import namedtuple

import numpy as np

from minigrad.autodiff import trace
from minigrad.viz.dot import number_text
from minigrad.viz.walk import GraphView, as_outputs

TraceStep = namedtuple("TraceStep", "step function name gys gxs outputs inputs")
TraceStep.__doc__ = """One visited function: its node, its label, the gradients in (one per output)
and out (one per input, None where it gave none), and the labels of its outputs and inputs."""


class Trace:
    """The steps of one backward pass, in visiting order: ``.steps``, a list of TraceStep."""

    HEADER = ("step", "function", "gradient in (gy)", "gradients out (gx)")

    def __init__(self, steps):
        self.steps = steps

    def __len__(self):
        return len(self.steps)

    def __getitem__(self, i):
        return self.steps[i]

    def __iter__(self):
        return iter(self.steps)

    def rows(self):
        """The table as text cells, one tuple per step."""
        return [(str(s.step), s.name, _pairs(s.outputs, s.gys), _pairs(s.inputs, s.gxs)) for s in self.steps]

    def __repr__(self):
        rows = [self.HEADER] + self.rows()
        widths = [max(len(row[k]) for row in rows) for k in range(len(self.HEADER))]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)

    def _repr_html_(self):
        head = "".join(f"<th>{html.escape(h)}</th>" for h in self.HEADER)
        body = "".join(
            "<tr>" + "".join(f"<td><code>{html.escape(cell)}</code></td>" for cell in row) + "</tr>"
            for row in self.rows()
        )
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def trace_backward(y, inputs=None, grad_outputs=None):
    """The backward pass of ``grad(y, inputs)``, step by step: a Trace.

    ``inputs`` defaults to every leaf behind ``y`` that requires grad (what
    ``y.backward()`` would fill). The graph is kept: ``y`` can be traced or
    differentiated again afterwards.
    """
    outputs = as_outputs([y], "trace_backward")
    view = GraphView(outputs)
    if inputs is None:
        inputs = [x.variable() for x in view.variables if x.creator is None and x.requires_grad]
        if not inputs:
            raise ValueError(
                "trace_backward: no Variable behind the output requires grad, so the backward pass "
                "has nothing to visit; make the inputs with mg.Variable(data) (requires_grad=True)"
            )
    inputs = as_outputs([inputs], "trace_backward", "inputs")
    steps = []
    for k, (f, gys, gxs) in enumerate(trace(outputs, inputs, grad_outputs)):
        outs = [None if y is None else _label(y.node, view) for y in f.outputs]
        ins = [_label(x, view) for x in f.parents()]
        steps.append(TraceStep(k + 1, f, f"{view.ids[f]} {f.name}", [_array(g) for g in gys],
                               [_array(g) for g in gxs], outs, ins))
    return Trace(steps)


def _label(x, view):
    return x.name if x.name is not None else view.ids.get(x, "?")


def _array(g):
    """A gradient as a NumPy array (None stays None)."""
    if g is None:
        return None
    return g.numpy() if hasattr(g, "numpy") else np.asarray(g)


def _pairs(labels, values):
    """'x: 0.5, v2: [1., 2.]': each label with its value, 'None' where there is none."""
    cells = []
    for label, value in zip(labels, values):
        cells.append(f"{label}: {number_text(value)}")
    return ", ".join(cells)

