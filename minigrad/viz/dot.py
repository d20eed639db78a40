"""DOT text of a computational graph: what ``draw`` renders, readable by itself.

DOT is Graphviz's language for graphs: ``v0 -> f0`` is an edge, and
``v0 [label="x" shape=ellipse]`` a node. Variables are ellipses (name,
shape, dtype and, if asked, value), Functions are boxes (the class name).
Edges follow the data: input -> function -> output.

With ``by_order=True`` every node takes the colour of the derivative order
that created it (``f.order``: 0 for the forward pass, n for a node built by
the n-th ``grad(create_graph=True)``), so the graph of a 2nd derivative is
seen growing out of the 1st.
"""

import numpy as np

from minigrad.viz.walk import GraphView, as_outputs

VARIABLE_FILL = "#fbe3c6"
FUNCTION_FILL = "#cfe2f3"
LEAF_FILL = "#ffffff"
# One colour per derivative order; orders beyond the list reuse it from the start.
ORDER_FILLS = ["#cfe2f3", "#fdd5b1", "#c9ecc4", "#f4c7e3", "#ddd0f5", "#fff0a8", "#c7eeee"]


def to_dot(*outputs, show_values=False, by_order=False):
    """DOT text of the graph behind ``outputs``.

    ``show_values=True`` adds each Variable's value; ``by_order=True``
    colours each node by the derivative order that created it, with a legend.
    """
    return graph_dot(GraphView(as_outputs(outputs, "to_dot")), show_values, by_order)


def graph_dot(view, show_values=False, by_order=False):
    """``to_dot`` for a GraphView already walked."""
    if not by_order:
        return dot_text(view, show_values=show_values)
    orders = sorted({f.order for f in view.functions})
    legend = [(order_name(k), order_fill(k)) for k in orders] + [("leaf (no creator)", LEAF_FILL)]
    return dot_text(view, function_fill=lambda f: order_fill(f.order),
                    variable_fill=lambda x: LEAF_FILL if x.creator is None else order_fill(x.creator.order),
                    show_values=show_values, legend=legend, legend_title="derivative order")


def order_fill(k):
    return ORDER_FILLS[k % len(ORDER_FILLS)]


def order_name(k):
    """0 -> 'forward', 1 -> '1st derivative', 2 -> '2nd derivative', ..."""
    if k == 0:
        return "forward"
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix} derivative"


def dot_text(view, function_fill=None, variable_fill=None, show_values=False,
             legend=(), legend_title="", marked=(), edge_attrs=None):
    """The DOT text of a GraphView, with a fill colour per node and an optional legend.

    ``function_fill(f)`` colours a function, ``variable_fill(x)`` a VariableNode.
    ``legend`` is a list of (text, fill colour); ``marked`` VariableNodes get a bold border;
    ``edge_attrs(a, b, i)`` gives extra DOT attributes of an edge of ``view.edges``.
    """
    function_fill = function_fill or (lambda f: FUNCTION_FILL)
    variable_fill = variable_fill or (lambda x: VARIABLE_FILL)
    lines = [
        "digraph minigrad {",
        '  graph [rankdir=TB fontname="Helvetica" fontsize=12];',
        '  node [fontname="Helvetica" fontsize=11 style=filled];',
        '  edge [color="#555555"];',
    ]
    for x in view.variables:
        extra = ' penwidth=2.5' if x in marked else ""
        lines.append(f'  {view.ids[x]} [label="{quote(variable_label(x, show_values))}" '
                     f'shape=ellipse fillcolor="{variable_fill(x)}"{extra}];')
    for f in view.functions:
        lines.append(f'  {view.ids[f]} [label="{quote(f.name)}" shape=box fillcolor="{function_fill(f)}"];')
    for a, b, i in view.edges:
        extra = f" [{edge_attrs(a, b, i)}]" if edge_attrs is not None else ""
        lines.append(f"  {view.ids[a]} -> {view.ids[b]}{extra};")
    if legend:
        lines.append("  subgraph cluster_legend {")
        lines.append(f'    label="{quote(legend_title)}" style=rounded color="#999999";')
        for i, (text, fill) in enumerate(legend):
            lines.append(f'    legend{i} [label="{quote(text)}" shape=box style="rounded,filled" '
                         f'fillcolor="{fill}"];')
        # Invisible edges stack the legend's entries in a column.
        for i in range(len(legend) - 1):
            lines.append(f"    legend{i} -> legend{i + 1} [style=invis];")
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def variable_label(x, show_values=False):
    """'name\\n(3,) float64', then the value when asked (at most a few numbers)."""
    shape = "scalar" if x.shape == () else str(x.shape)
    text = f"{shape} {x.dtype}"
    if x.name is not None:
        text = f"{x.name}\n{text}"
    if show_values:
        try:
            value = number_text(x.variable().numpy(), max_line_width=40)
        except RuntimeError:  # a large intermediate no rule reads: the graph freed its values
            value = "(values freed)"
        text = f"{text}\n{value}"
    return text


def quote(text):
    """Text made safe inside a DOT double-quoted string; newlines become DOT's centred breaks."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def number_text(value, max_line_width=10**6):
    """4 significant digits: '0.5', '-0.4161', '[1, 2]'; a long array shows its ends."""
    if value is None:
        return "None"
    if value.ndim == 0:
        return f"{value.item():.4g}"
    return np.array2string(value, threshold=6, edgeitems=2, separator=", ", max_line_width=max_line_width,
                           formatter={"float_kind": lambda v: f"{v:.4g}"})
