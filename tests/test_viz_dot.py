"""DOT text of known graphs: nodes, edges, labels and colours, counted by hand."""

import re

import numpy as np
import pytest

import minigrad as mg
import minigrad.functions as F
from minigrad.viz import to_dot
from minigrad.viz.dot import ORDER_FILLS, order_name

NODE = re.compile(r'^\s*(\w+) \[label="((?:[^"\\]|\\.)*)" shape=(\w+) fillcolor="(#\w+)"', re.M)
EDGE = re.compile(r"^\s*(\w+) -> (\w+)", re.M)


def nodes(dot):
    """{id: (label, shape, fill)} of the graph's nodes (the legend's are left out)."""
    return {m[1]: (m[2], m[3], m[4]) for m in NODE.finditer(dot) if not m[1].startswith("legend")}


def edges(dot):
    return [(a, b) for a, b in EDGE.findall(dot) if not a.startswith("legend")]


def sin_times_x():
    """y = sin(x) * x: functions Sin, Mul; variables x, sin(x), y; edges x->Sin->s, s->Mul, x->Mul, Mul->y."""
    x = mg.Variable(np.array([0.5, 1.0, 2.0]), name="x")
    return x, F.sin(x) * x


def test_a_known_graph_has_its_nodes_edges_and_labels():
    x, y = sin_times_x()
    dot = to_dot(y)
    found = nodes(dot)
    shapes = sorted(shape for _, shape, _ in found.values())
    assert shapes == ["box", "box", "ellipse", "ellipse", "ellipse"]
    labels = {label for label, _, _ in found.values()}
    assert {"Sin", "Mul", "x\\n(3,) float64", "(3,) float64"} == labels
    assert len(edges(dot)) == 5
    by_label = {label: node for node, (label, _, _) in found.items()}
    x_id, sin_id, mul_id = by_label["x\\n(3,) float64"], by_label["Sin"], by_label["Mul"]
    assert (x_id, sin_id) in edges(dot) and (x_id, mul_id) in edges(dot)


def test_ids_number_nodes_in_visiting_order_so_the_text_repeats():
    texts = [to_dot(sin_times_x()[1]) for _ in range(3)]
    assert texts[0] == texts[1] == texts[2]
    assert sorted(nodes(texts[0])) == ["f0", "f1", "v0", "v1", "v2"]
    assert dot_is_balanced(texts[0])


def dot_is_balanced(dot):
    return dot.startswith("digraph") and dot.count("{") == dot.count("}")


def test_values_are_shown_on_request():
    x = mg.Variable(np.array([0.5, 0.25]), name="x")
    y = x * 2.0
    assert "0.5" not in to_dot(y)
    dot = to_dot(y, show_values=True)
    assert r'label="x\n(2,) float64\n[0.5, 0.25]"' in dot
    assert r'label="scalar float64\n2"' in dot  # the constant 2.0
    assert r'label="(2,) float64\n[1, 0.5]"' in dot


def test_several_outputs_and_a_lone_leaf():
    x = mg.Variable(1.0, name="x")
    a, b = F.sin(x), F.cos(x)
    dot = to_dot(a, b)
    assert sorted(label for label, _, _ in nodes(dot).values() if not label.startswith(("x", "scalar"))) == [
        "Cos", "Sin"]
    assert len(nodes(dot)) == 5 and len(edges(dot)) == 4
    assert to_dot([a, b]) == dot  # a list works as well as several arguments
    lone = to_dot(x)
    assert list(nodes(lone)) == ["v0"] and edges(lone) == []


def test_names_are_quoted_for_dot():
    x = mg.Variable(1.0, name='say "hi"\\')
    assert r'say \"hi\"\\' in to_dot(F.exp(x))


def test_by_order_colours_the_graph_of_a_derivative():
    # d tanh(x)/dx = gy * (1 - y*y): Mul(y, y), Sub(1, yy), Mul(gy, .) are order 1; Tanh is order 0.
    x = mg.Variable(0.3, name="x")
    (gx,) = mg.grad(F.tanh(x), x, create_graph=True)
    dot = to_dot(gx, by_order=True)
    fills = [(label, fill) for label, shape, fill in nodes(dot).values() if shape == "box"]
    assert sorted(fills) == sorted([("Tanh", ORDER_FILLS[0]), ("Mul", ORDER_FILLS[1]),
                                    ("Sub", ORDER_FILLS[1]), ("Mul", ORDER_FILLS[1])])
    assert 'label="forward"' in dot and 'label="1st derivative"' in dot
    assert "2nd derivative" not in dot


def test_order_names():
    assert [order_name(k) for k in (0, 1, 2, 3, 4, 11, 12, 21, 22)] == [
        "forward", "1st derivative", "2nd derivative", "3rd derivative", "4th derivative",
        "11th derivative", "12th derivative", "21st derivative", "22nd derivative"]


def test_not_a_variable_is_a_clear_error():
    with pytest.raises(TypeError, match=r"to_dot: outputs\[0\] is a ndarray, not a Variable"):
        to_dot(np.ones(3))
    with pytest.raises(ValueError, match="to_dot: no outputs"):
        to_dot()
