"""Visible tests of exercises 2: the backward walker, against minigrad's own."""

import numpy as np

import minigrad as mg
import minigrad.functions as F
from minigrad.grading.testing import stub_exercise, visible


def _diamond():
    """x -> (a = sin x, b = exp x) -> y = a * b + a: x reaches y by several paths."""
    x = mg.Variable(np.array([0.2, 1.1]))
    a = F.sin(x)
    b = F.exp(x)
    return x, a * b + a


@visible("2.1", hint="a node may be listed only once every node that made one of its inputs is listed; "
                     "lesson 2 writes such an order out")
def every_node_after_its_inputs(t):
    t.given("x = [0.2, 1.1], a = sin x, b = exp x, y = a * b + a")
    x, y = _diamond()
    order = list(t.ns.topo_order(y))
    t.true(len(order) == len(set(order)), f"a node is listed twice: {order}")
    t.equal(sorted(f.name for f in set(order)), sorted(f.name for f in mg.autodiff.topological_order([y.node])),
            "the names of the nodes in topo_order(y)")
    position = {f: k for k, f in enumerate(order)}
    for f in order:
        for n in f.parents():
            if n.creator is not None:
                t.true(position[n.creator] < position[f],
                       f"{n.creator} makes an input of {f}, so it must come before it; got {order}")


@visible("2.1", hint="a node may be reached by a short path and a long one: it must come after the creators of "
                     "all its inputs, which a breadth-first order, even reversed, does not ensure")
def a_node_reached_by_two_paths(t):
    t.given("x = [0.5, -0.3], a = sin x, y = a + exp(a) (Add reaches Sin directly and through Exp)")
    x = mg.Variable(np.array([0.5, -0.3]))
    a = F.sin(x)
    y = a + F.exp(a)
    order = list(t.ns.topo_order(y))
    t.equal(sorted(f.name for f in order), ["Add", "Exp", "Sin"], "the names of the nodes in topo_order(y)")
    position = {f: k for k, f in enumerate(order)}
    names = [f.name for f in order]
    for f in order:
        for n in f.parents():
            if n.creator is not None:
                t.true(position[n.creator] < position[f],
                       f"{n.creator.name} makes an input of {f.name}, so it must come before it; got {names}")


def _not_none(t, g, what):
    t.true(g is not None, f"{what} is None: my_grad found no gradient for it. Is the dictionary keyed by "
                          "VariableNodes (x.node, and the nodes f.parents() gives), not by Variables?")


@visible("2.2", hint="x reaches y by several paths (a is used twice): add the gradients of every path: "
                     "a node's gradient is the sum of what each of its uses sends back")
def against_mg_grad(t):
    t.given("x = [0.2, 1.1], a = sin x, b = exp x, y = a * b + a")
    x, y = _diamond()
    (expected,) = mg.grad(y, x, retain_graph=True)
    (gx,) = t.ns.my_grad(y, [x])
    _not_none(t, gx, "my_grad(y, [x])[0]")
    t.close(gx, expected.data, "my_grad(y, [x])[0]")


def _tanh_of_a_product(t, note=""):
    """x0, x1 and y = tanh(x0 * x1) / x1: x1 reaches y by two paths."""
    x0, x1 = np.array([1.5, -0.5]), np.array([2.0, 0.25])
    t.given(f"x0 = {x0}, x1 = {x1}, y = tanh(x0 * x1) / x1{note}")
    v0, v1 = mg.Variable(x0), mg.Variable(x1)
    return v0, v1, F.tanh(v0 * v1) / v1


@visible("2.2", hint="a node's rule may run only once the gradient of its output is complete, every use "
                     "added: walk from the output back; x1 is used twice, so its two gradients add")
def two_inputs(t):
    v0, v1, y = _tanh_of_a_product(t)
    expected = mg.grad(y, [v0, v1], retain_graph=True)
    got = t.ns.my_grad(y, [v0, v1])
    t.true(len(got) == 2, f"expected one gradient per input, two in all; got {len(got)}")
    _not_none(t, got[0], "the gradient of x0")
    _not_none(t, got[1], "the gradient of x1")
    t.close(got[0], expected[0].data, "the gradient of x0")
    t.close(got[1], expected[1].data, "the gradient of x1")


class NoRule(mg.Function):
    """A function with no registered backward rule: a walker that calls its rule fails."""

    def forward(self, x):
        return x * 1.0


@visible("2.3", hint="a node is needed when one of its inputs is in xs or was made by a needed node; "
                     "its flags say which inputs those are")
def flags_against_mg_grad(t):
    v0, v1, y = _tanh_of_a_product(t, ", xs = [x0]")
    got = t.ns.on_paths(t.ns.topo_order(y), [v0])
    t.equal(sorted((f.name, tuple(flags)) for f, flags in got.items()),
            sorted((f.name, flags) for f, flags in mg.autodiff.plan([y], [v0])[1].items()),
            "on_paths: each node on a path from x0 to y, with its flags (one per input: does a gradient go there?)")


@visible("2.3", hint="skip every node on_paths leaves out: mg.grad never runs the rule of a branch that "
                     "leads to none of xs")
def a_branch_without_a_rule_is_never_visited(t):
    t.given("x = [0.5, -0.3], c = [2.0, 3.0], y = tanh(x) * NoRule()(c), xs = [x] (NoRule has no rule)")
    x, c = mg.Variable(np.array([0.5, -0.3])), mg.Variable(np.array([2.0, 3.0]))
    y = F.tanh(x) * NoRule()(c)
    (expected,) = mg.grad(y, [x], retain_graph=True)
    try:
        (gx,) = t.ns.my_grad_pruned(y, [x])
    except NotImplementedError as e:
        if stub_exercise(e):  # my_grad_pruned itself is not written yet
            raise
        t.true(False, "my_grad_pruned called the rule of NoRule, on a branch that leads to none of xs")
    _not_none(t, gx, "my_grad_pruned(y, [x])[0]")
    t.close(gx, expected.data, "my_grad_pruned(y, [x])[0]")
