"""The walker: backpropagation through a recorded graph, for ``grad()`` and ``backward()``.

One pass, in three steps:

1. **Collect** the Function nodes behind the outputs, in topological order
   (every node after the nodes that made its inputs), by a depth-first walk.
2. **Prune**: a node is *needed* when one of its inputs lies on a path to an
   output from an input we differentiate with respect to, that is, when the
   input is one of them or was made by a needed node. Going through the
   topological order once decides it. ``backward()`` needs every node.
3. **Backpropagate**: visit the needed nodes from the outputs back; hand
   each rule the summed gradients of its outputs; add what it returns to its
   inputs. A rule's result can be broadcast (``x + b`` gives ``b`` the
   gradient of ``x``'s shape): it is summed back to the input's shape here,
   in this one place, with ``sum_to``.

With ``create_graph=True`` the rules run with recording on, so the gradients
are graphs too and can be differentiated again. Without ``retain_graph``
every visited node frees its inputs as soon as its rule has run.
"""

import warnings

from minigrad import functions as F  # sum_to and cast, which fit a gradient to its input
from minigrad.backward_functions import _differentiable, _rules, lookup
from minigrad.config import config
from minigrad.function import freed_message
from minigrad.variable import Variable, as_float_array


def topological_order(nodes, stop=()):
    """The Function nodes behind these VariableNodes, each after the creators of its inputs."""
    order, seen = [], set()
    stack = [(n.creator, False) for n in nodes if n.creator is not None and n not in stop]
    while stack:
        f, expanded = stack.pop()
        if expanded:
            order.append(f)
            continue
        if f in seen:
            continue
        seen.add(f)
        stack.append((f, True))
        for x in (f._inputs if f._inputs is not None else f.parents()):
            creator = x.creator
            if creator is not None and creator not in seen and x not in stop:
                stack.append((creator, False))
    return order


def plan(outputs, inputs, stop=()):
    """Which nodes a grad() call visits: (all nodes behind the outputs, the needed ones, lost).

    ``order`` lists every Function node behind the outputs, in topological
    order; ``needs`` maps each needed node to one flag per input (does a
    gradient go there?); ``lost`` is a freed node whose inputs are gone, if
    one was met. Drawing code uses it to show what is pruned.
    """
    return _plan(outputs, {x.node for x in inputs}, stop)


def _plan(outputs, targets, stop):
    order = topological_order([y.node for y in outputs], stop)
    needs, lost = {}, None
    for f in order:
        parents = f._inputs
        if parents is None:
            parents = f.parents()
            if lost is None and len(parents) < len(f._freed):
                lost = f  # a freed node whose inputs are gone: paths through it cannot be seen
        flags = []
        for x in parents:
            flags.append(x in targets or (x.creator in needs and x not in stop))
        if True in flags:
            needs[f] = tuple(flags)
    return order, needs, lost


class Pass:
    """The options of one backward pass, read by every step of the loop.

    ``keep``: the nodes whose gradients are returned (the others are dropped
    once used); ``visit(f, gys, gxs)``, if given, sees every rule's gradients
    in and out (``trace``).
    """

    __slots__ = ("keep", "retain_graph", "create_graph", "retain_grad", "visit")

    def __init__(self, keep, retain_graph=False, create_graph=False, retain_grad=False, visit=None):
        self.keep = keep
        self.retain_graph = retain_graph
        self.create_graph = create_graph
        self.retain_grad = retain_grad
        self.visit = visit


def _backprop(seeds, order, needs, options):
    """Run the rules of the needed nodes, outputs first; return {VariableNode: gradient}.

    Nodes recorded by the rules (with create_graph) are tagged with the
    derivative order they belong to.
    """
    grads = {}
    for node, g in seeds:
        grads[node] = g if node not in grads else grads[node] + g
    previous = config.derivative_order, config.enable_backprop
    if options.create_graph:
        config.derivative_order = 1 + max((f.order for f in needs), default=0)
    config.enable_backprop = options.create_graph  # the rules record a graph only with create_graph
    try:
        _run_rules(grads, order, needs, options)
    finally:
        config.derivative_order, config.enable_backprop = previous
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
        gxs = _call_rule(f, flags, gys, options)
        for x, gx, wanted in zip(f._inputs, gxs, flags):
            if gx is not None and wanted:
                _accumulate(grads, owned, x, _fitted(gx, x, f), options)
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


def _call_rule(f, flags, gys, options):
    """Call f's backward rule on its outputs' gradients; its results, one per input, as a tuple."""
    f.needs_input_grad = flags  # what the rule reads as ctx.needs_input_grad
    kind = type(f)
    if options.create_graph and not _differentiable.get(kind.rule_key, True):
        warnings.warn(
            f"grad(create_graph=True) went through {kind.__name__}, whose rule is registered with "
            "differentiable=False: the gradient through it is a constant, so higher derivatives "
            "through it are lost; write its rule with minigrad functions to keep them",
            stacklevel=5,
        )
    rule = _rules.get(kind.rule_key) or lookup(kind)  # lookup finds a parent's rule, or says how to register one
    gxs = rule(f, *gys)
    if type(gxs) is not tuple:
        gxs = tuple(gxs) if isinstance(gxs, list) else (gxs,)
    if options.visit is not None:
        options.visit(f, gys, gxs)
    if len(gxs) != len(f._inputs):
        raise TypeError(
            f"the backward rule of {kind.__name__} returned {len(gxs)} gradients for "
            f"{len(f._inputs)} inputs; return one per input (None where there is none)"
        )
    return gxs


def _fitted(gx, x, f):
    """A rule's result fitted to its input x: a Variable, broadcast axes summed back, cast to x's dtype."""
    if type(gx) is not Variable:
        gx = _as_gradient(gx, f)
    g_data, x_data = gx.node.data, x.data
    if g_data.shape != x_data.shape:
        gx = _summed_back(gx, x, f)
    if g_data.dtype is not x_data.dtype and g_data.dtype != x_data.dtype:
        gx = F.cast(gx, x_data.dtype)  # float32 stays float32
    return gx


def _accumulate(grads, owned, x, gx, options):
    """Add gx to x's gradient.

    Without create_graph, a gradient that is the sum of two others is a new
    array that only this pass knows (``owned``), so later terms are added to
    it in place: on large arrays that saves an allocation per term.
    """
    prev = grads.get(x)
    if prev is None:
        grads[x] = gx
    elif x in owned:
        prev.node.data += gx.node.data  # our own sum, not seen by anyone yet: add in place
    else:
        grads[x] = prev + gx
        if not options.create_graph:
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


def _as_gradient(gx, f):
    """A rule's result as a Variable (a rule may return an array)."""
    if isinstance(gx, Variable):
        return gx
    return Variable(as_float_array(gx, where=f"backward of {f.name}"), requires_grad=False)


def _summed_back(gx, x, f):
    """A broadcast gradient summed back to its input's shape; an error for any other mismatch."""
    shape, gshape = x.data.shape, gx.shape
    lead = len(gshape) - len(shape)
    if lead < 0 or any(s != 1 and s != g for s, g in zip(shape, gshape[lead:])):
        raise ValueError(
            f"the backward rule of {f.name} returned a gradient of shape {gshape} for an input "
            f"of shape {shape}; a rule returns a gradient of its input's shape (or one that "
            "sums back to it, as a broadcast does)"
        )
    return F.sum_to(gx, shape)
