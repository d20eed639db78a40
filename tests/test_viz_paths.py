"""draw_paths: what grad(outputs, inputs) visits is green, a branch leading to no input is grey."""

import pytest

import minigrad as mg
import minigrad.functions as F
from minigrad.viz import draw_paths, find_engines
from minigrad.viz.paths import INPUT_FILL, SKIPPED_FILL, VISITED_FILL
from test_viz_dot import edges, nodes


@pytest.fixture(autouse=True)
def engine():
    if not find_engines():
        pytest.skip("no DOT engine installed: pip install graphviz-pure")


def fills_by_label(dot):
    return {label: fill for label, _, fill in nodes(dot).values()}


def test_a_branch_that_leads_to_no_input_is_skipped():
    # y = sin(x) * exp(w) + cos(w), differentiated for x only: Exp and Cos lead to w alone.
    x, w = mg.Variable(0.5, name="x"), mg.Variable(2.0, name="w")
    y = F.sin(x) * F.exp(w) + F.cos(w)
    dot = draw_paths(y, x).dot
    fills = fills_by_label(dot)
    assert {f: fills[f] for f in ("Sin", "Mul", "Add")} == dict.fromkeys(("Sin", "Mul", "Add"), VISITED_FILL)
    assert fills["Exp"] == fills["Cos"] == SKIPPED_FILL
    assert fills["x\\nscalar float64"] == INPUT_FILL and fills["w\\nscalar float64"] == SKIPPED_FILL
    assert 'legend1 [label="skipped: leads to no input"' in dot
    # Green: x->Sin->s->Mul->p->Add->y; dashed: w->Exp->e->Mul, w->Cos->c->Add.
    green = [line for line in dot.splitlines() if "->" in line and "penwidth=2" in line]
    assert len(green) == 6 and len(edges(dot)) == 12


def test_every_node_is_visited_when_all_inputs_are_asked_for():
    x, w = mg.Variable(0.5, name="x"), mg.Variable(2.0, name="w")
    y = F.sin(x) * F.exp(w)
    fills = fills_by_label(draw_paths(y, [x, w]).dot)
    assert [fills[f] for f in ("Sin", "Exp", "Mul")] == [VISITED_FILL] * 3
    assert fills["x\\nscalar float64"] == fills["w\\nscalar float64"] == INPUT_FILL


def test_the_marked_nodes_agree_with_the_gradient_grad_computes():
    x, w = mg.Variable(0.5, name="x"), mg.Variable(2.0, name="w")
    y = F.exp(w) * 3.0 + x
    fills = fills_by_label(draw_paths(y, w).dot)
    assert fills["Exp"] == fills["Mul"] == VISITED_FILL
    (gw,) = mg.grad(y, w)
    assert gw.item() == pytest.approx(3.0 * 2.718281828459045 ** 2.0)
