"""The reverse walker: backpropagation through a recorded graph, lesson 2's loop.

Given the order of the graph and the nodes needed (graph.py), visit the
needed nodes from the outputs back: hand each rule the summed gradients of
its outputs (``call_rule``, which also sums a broadcast gradient back to its
input's shape), and add what it returns to its inputs' gradients.

With ``create_graph=True`` the rules run with recording on, so the gradients
are graphs too and can be differentiated again. Without ``retain_graph``
every visited node frees its inputs as soon as its rule has run.
"""

from minigrad.support.function_inputs import freed_message
from minigrad.core.rules import backward, call_rule
from minigrad.support import lean
from minigrad.support.config import config, engage, switch
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


def _backprop(seeds, order, needs, options):
    """Run the rules of the needed nodes, outputs first; return {VariableNode: gradient}.

    Nodes recorded by the rules (with create_graph) are tagged with the derivative order they belong
    to; a pass that records nothing runs minigrad's rules on plain arrays (support/lean.py).
    """
    grads = {}
    for node, g in seeds:
        grads[node] = g if node not in grads else grads[node] + g
    previous = config.derivative_order, config.enable_backprop, config.lean
    grads = lean.begin(options, grads)
    if options.create_graph:
        engage(1)
        config.derivative_order = 1 + max((f.order for f in needs), default=0)
    switch(1)
    config.enable_backprop = options.create_graph or None  # rules record with create_graph (None: not no_grad())
    try:
        _run_rules(grads, order, needs, options)
    finally:
        config.derivative_order, config.enable_backprop, config.lean = previous
        switch(-1)
        if options.create_graph:
            engage(-1)
        grads = lean.end(options, grads)
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
        gys, outputs = _output_grads(f, grads, options)  # (outputs: alive while the rule may read them)
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
        if not options.retain_graph:
            f.free()


def _output_grads(f, grads, options):
    """(The gradients of f's outputs, None for one that got none, or None if none got one; the output nodes).
    Each gradient is taken out of ``grads``, unless its node is kept (and stored first, with retain_grad)."""
    if f._inputs is None:
        raise RuntimeError(freed_message(f))
    gys, nodes, none = [], [], True
    for ref in f._outputs:
        n = ref()
        g = grads.get(n) if n in options.keep else grads.pop(n, None)
        if g is not None:
            none = False
            if options.retain_grad:
                _store_grad(n, g)
        gys.append(g)
        nodes.append(n)
    return None if none else gys, nodes


def _accumulate(grads, owned, x, gx, options):
    """Add gx to x's gradient, already in ``grads``. Without create_graph, a sum of two gradients is a new
    array only this pass knows (``owned``): later terms are added to it in place, saving an allocation each."""
    prev = grads[x]
    if x in owned:  # our own sum, not seen by anyone yet: add in place
        if options.lean:
            prev += gx
        else:
            prev.node.data += gx.node.data
    else:
        grads[x] = lean.added(prev, gx) if options.lean else prev + gx
        if not (options.create_graph or config.levels):  # (a sum made in place would drop a jvp's tangents)
            owned.add(x)


def _store_grad(node, g):
    """g as the .grad of node's Variable, if the Variable still lives."""
    v = node._variable() if node._variable is not None else None
    if v is not None:
        v.grad = g
