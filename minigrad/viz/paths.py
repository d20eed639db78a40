"""Pruning made visible: which nodes ``grad(outputs, inputs)`` visits, and which it skips.

``grad`` runs a backward rule only where a gradient can reach an input: a
function is *visited* when one of its inputs is an input we differentiate
with respect to, or was made by a visited function. Every other node lies
on a branch that leads to no input, and is skipped. ``minigrad.autodiff.plan``
makes that decision; this module colours it.
"""

from minigrad.autodiff import plan
from minigrad.viz.dot import dot_text
from minigrad.viz.render import Graph, summary
from minigrad.viz.walk import GraphView, as_outputs

VISITED_FILL = "#b9e4a8"
SKIPPED_FILL = "#e4e4e4"
INPUT_FILL = "#fff0a8"
VISITED_EDGE = 'color="#2e7d32" penwidth=2'
SKIPPED_EDGE = 'color="#bbbbbb" style=dashed'


def draw_paths(outputs, inputs, max_nodes=300, timeout=30):
    """The graph behind ``outputs``, coloured by what ``mg.grad(outputs, inputs)`` does.

    Green: functions it visits and the gradients' way through them; grey,
    dashed: functions it skips, because no path leads from them to an input;
    yellow, bold: the inputs.
    """
    outputs = as_outputs([outputs], "draw_paths")
    inputs = as_outputs([inputs], "draw_paths", "inputs")
    view = GraphView(outputs)
    if len(view) > max_nodes:
        return summary(view, max_nodes, "draw_paths", timeout)
    targets = {x.node for x in inputs}
    _, needs, _ = plan(outputs, inputs)

    def reached(x):  # a gradient arrives at x
        return x in targets or x.creator in needs

    def variable_fill(x):
        if x in targets:
            return INPUT_FILL
        return VISITED_FILL if reached(x) else SKIPPED_FILL

    def edge_attrs(a, b, i):
        if i is None:  # function -> output
            return VISITED_EDGE if a in needs else SKIPPED_EDGE
        return VISITED_EDGE if b in needs and needs[b][i] else SKIPPED_EDGE

    legend = [("visited by grad", VISITED_FILL), ("skipped: leads to no input", SKIPPED_FILL),
              ("input", INPUT_FILL)]
    dot = dot_text(view, function_fill=lambda f: VISITED_FILL if f in needs else SKIPPED_FILL,
                   variable_fill=variable_fill, legend=legend, legend_title="grad(outputs, inputs)",
                   marked=targets, edge_attrs=edge_attrs)
    return Graph(dot, len(view.functions), len(view.variables), timeout=timeout)
