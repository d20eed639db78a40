"""The reverse walker: backpropagation through a recorded graph, lesson 2's loop.

Given the order of the graph and the nodes needed (graph.py), visit the
needed nodes from the outputs back: hand each rule the summed gradients of
its outputs (``call_rule``, which also sums a broadcast gradient back to its
input's shape), and add what it returns to its inputs' gradients.

With ``create_graph=True`` the rules run with recording on, so the gradients
are graphs too and can be differentiated again. Without ``retain_graph``
every visited node frees its inputs as soon as its rule has run.
"""

import numpy as np

from minigrad.support.function_inputs import _as_array as as_array, freed_message
from minigrad.core.rules import backward, call_rule
from minigrad.support.config import config, engage, lean_passes
from minigrad.core.variable import VariableNode, _variable_of
from minigrad.support.rule_keys import warn_not_differentiable


class Pass:
    """The options of one backward pass: ``keep``, the nodes whose gradients are returned (the others are
    dropped once used); ``visit(f, gys, gxs)``, if given, sees every rule's gradients in and out (``trace``)."""

    __slots__ = ("keep", "retain_graph", "create_graph", "retain_grad", "visit", "lean")

    def __init__(self, keep, retain_graph=False, create_graph=False, retain_grad=False, visit=None):
        self.keep = keep
        self.retain_graph = retain_graph
        self.create_graph = create_graph
        self.retain_grad = retain_grad
        self.visit = visit
        self.lean = False


def _backprop(seeds, order, needs, options):
    """Run the rules of the needed nodes, outputs first; return {VariableNode: gradient}.

    Nodes recorded by the rules (with create_graph) are tagged with the
    derivative order they belong to.
    """
    grads = {}
    for node, g in seeds:
        grads[node] = g if node not in grads else grads[node] + g
    options.lean = not options.create_graph and options.visit is None and not config.levels
    if options.lean:
        grads = {node: g.node.data for node, g in grads.items()}
        config.lean = True
        lean_passes(1)
    previous = config.derivative_order, config.enable_backprop
    if options.create_graph:
        engage(1)
        config.derivative_order = 1 + max((f.order for f in needs), default=0)
    config.enable_backprop = options.create_graph or None  # the rules record only with create_graph (None: off
    # for the rules, not the caller's no_grad())
    try:
        _run_rules(grads, order, needs, options)
    finally:
        config.derivative_order, config.enable_backprop = previous
        if options.create_graph:
            engage(-1)
        if options.lean:
            config.lean = False
            lean_passes(-1)
    if options.lean:
        grads = {node: _variable_of(VariableNode(g, False)) for node, g in grads.items()}
    if options.retain_grad:
        for node, g in grads.items():
            if node.creator is not None:
                _store_grad(node, g)
    return grads


def _run_rules(grads, order, needs, options):
    """Lesson 2's loop: each needed node, from the outputs back."""
    owned = set()  # the sums this pass made and no one else has seen (see _accumulate)
    for f in reversed(order):
        flags = needs.get(f)
        if flags is None:
            continue  # pruned: no gradient goes from it to an input we want
        gys = _output_grads(f, grads)
        if gys is None:
            continue  # none of its outputs got a gradient
        f.needs_input_grad = flags  # what the rule reads as ctx.needs_input_grad
        if options.create_graph and not backward.differentiable.get(type(f).rule_key, True):
            warn_not_differentiable(f)
        for x, gx in zip(f._inputs, call_rule(backward, f, gys, f._inputs, flags, options.visit, options.lean)):
            if gx is None:
                continue
            if x in grads:  # another gradient for x: add them
                _accumulate(grads, owned, x, gx, options)
            else:
                grads[x] = gx
        _drop_used(f, gys, grads, options)


def _output_grads(f, grads):
    """The gradients of f's outputs (None for an output that got none), or None if none got one."""
    if f._inputs is None:
        raise RuntimeError(freed_message(f))
    gys, none = [], True
    for ref in f._outputs:
        g = grads.get(ref())
        gys.append(g)
        none = none and g is None
    return None if none else gys


def _accumulate(grads, owned, x, gx, options):
    """Add gx to x's gradient, already in ``grads``. Without create_graph, a sum of two gradients is a new
    array only this pass knows (``owned``): later terms are added to it in place, saving an allocation each."""
    prev = grads[x]
    if x in owned:
        if options.lean:
            prev += gx
        else:
            prev.node.data += gx.node.data  # our own sum, not seen by anyone yet: add in place
    elif options.lean:
        s = prev + gx
        grads[x] = s if type(s) is np.ndarray else as_array(s)
        owned.add(x)
    else:
        grads[x] = prev + gx
        if not (options.create_graph or config.levels):  # (a sum made in place would drop a jvp's tangents)
            owned.add(x)


def _drop_used(f, gys, grads, options):
    """Drop the gradients of f's outputs that no one keeps (stored first with retain_grad); free f."""
    for ref, g in zip(f._outputs, gys):
        if g is None:
            continue
        n = ref()
        if options.retain_grad:
            _store_grad(n, g)
        if n not in options.keep:
            del grads[n]
    if not options.retain_graph:
        f.free()


def _store_grad(node, g):
    """g as the .grad of node's Variable, if the Variable still lives."""
    v = node._variable() if node._variable is not None else None
    if v is not None:
        v.grad = g
