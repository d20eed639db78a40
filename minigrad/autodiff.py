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

from minigrad.backward_functions import _differentiable, _rules, lookup
from minigrad.config import config
from minigrad.config import set_grad_enabled as _grad_mode
from minigrad.cuda import get_array_module
from minigrad.function import freed_message
from minigrad.grad_arguments import (as_list, checked_grad_inputs, no_graph_message, seed_gradients,
                                     unreachable_message)
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


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=None, materialize_grads=False, no_grad_vars=None, grad_inputs=None,
         set_grad=False, retain_grad=False, loss_scale=None):
    """The gradients of ``outputs`` with respect to ``inputs``: one per input, in a list.

    g_i = sum_j (dy_j/dx_i)^T gy_j, where gy_j is ``grad_outputs[j]`` (ones when
    None, a number is broadcast). Only the nodes between the outputs and the
    inputs are visited. The ``.grad`` of the Variables is left alone unless
    ``set_grad=True`` (store the results in the inputs' ``.grad``) or
    ``retain_grad=True`` (store the gradient of every visited Variable).

    - ``create_graph=True``: the results are graphs, differentiable again
      (even inside ``no_grad()``).
    - ``retain_graph``: keep the graph for another pass (default: ``create_graph``).
    - ``allow_unused=True``: None for an input no output depends on;
      ``materialize_grads=True``: zeros instead (``allow_unused`` defaults to it).
    - ``no_grad_vars``: Variables treated as constants.
    - ``grad_inputs``: initial values of the inputs' gradients (chainer): the
      pass adds onto them, and when one input lies upstream of another, what
      was given for the downstream one flows on to the upstream one, as any
      gradient does. An input no output depends on gets its value back.
    - ``loss_scale``: multiplies the implicit ones seeds (chainer).

    What you can observe: ``retain_grad=True`` overwrites the ``.grad`` of
    the Variables it visits at each call (chainer's meaning), it does not add
    to it; the rules of independent branches run in an order that is not
    specified (only the sums are); grad mode is per thread, so calls in two
    threads on two graphs never meet.
    """
    outputs = as_list(outputs, "outputs")
    inputs = as_list(inputs, "inputs")
    if allow_unused is None:
        allow_unused = materialize_grads
    elif materialize_grads and not allow_unused:
        raise ValueError(
            "grad: materialize_grads=True gives zeros for unused inputs, which contradicts "
            "allow_unused=False; leave allow_unused out (it defaults to materialize_grads)"
        )
    if retain_graph is None:
        retain_graph = create_graph
    seeds = seed_gradients(outputs, grad_outputs, loss_scale, "grad")
    if grad_inputs is not None:  # chainer's: initial values of the inputs' gradients, flowing on upstream
        grad_inputs = checked_grad_inputs(grad_inputs, inputs)
        seeds += [(x.node, g) for x, g in zip(inputs, grad_inputs) if g is not None]
    stop = set()
    if no_grad_vars is not None:
        stop = {v.node for v in as_list(no_grad_vars, "no_grad_vars")}

    targets = {x.node for x in inputs}
    order, needs, lost = _plan(outputs, targets, stop)
    grads = _backprop(seeds, order, needs, targets, retain_graph, create_graph, retain_grad)

    results = []
    for i, x in enumerate(inputs):
        g = grads.get(x.node)
        if g is None:
            if lost is not None:
                raise RuntimeError(f"grad: {freed_message(lost)}")
            if not allow_unused:
                raise ValueError(unreachable_message(i, x, outputs))
            if materialize_grads:
                g = Variable(get_array_module(x.data).zeros_like(x.data), requires_grad=False)
        if g is not None and not create_graph and g.creator is not None:
            g = g.detach()
        if set_grad:
            x.grad = g
        results.append(g)
    return results


def backward(y, grad=None, retain_graph=None, create_graph=False, retain_grad=False):
    """``y.backward()``: accumulate dy/dx into the ``.grad`` of every leaf x that requires grad.

    Unlike ``grad()`` it visits every node behind ``y``, prunes nothing, and
    adds to ``.grad`` rather than returning the gradients.

    What you can observe, as in PyTorch unless said otherwise:

    - ``.grad`` accumulates out of place: ``x.grad = x.grad + g`` is a new
      Variable, so a reference taken before a second ``backward()`` keeps the
      old value. ``x.zero_grad()`` (or ``x.grad = None``) starts again.
    - ``retain_grad=True`` also stores the gradient of every intermediate
      Variable, and overwrites it at each pass (chainer's meaning), while the
      leaves accumulate.
    - A Function whose forward returns the same array twice gives two distinct
      Variables, each with its own gradient.
    - y with no graph that requires no grad (made under ``no_grad()``, or from
      Variables none of which requires grad) raises a RuntimeError saying which.
    """
    if y.creator is None and not y.requires_grad:
        raise RuntimeError(no_graph_message(y))
    if retain_graph is None:
        retain_graph = create_graph
    seeds = seed_gradients([y], [grad], None, "backward")
    order = topological_order([y.node])
    needs = {f: tuple(x.requires_grad for x in f.parents()) for f in order}
    leaves = set()
    for f in order:
        if f._inputs is None:
            raise RuntimeError(f"backward: {freed_message(f)}")
        leaves.update(x for x in f._inputs if x.creator is None and x.requires_grad)
    if y.creator is None and y.requires_grad:
        leaves.add(y.node)
    grads = _backprop(seeds, order, needs, leaves, retain_graph, create_graph, retain_grad)
    with _grad_mode(create_graph):
        for node in leaves:
            g = grads.get(node)
            x = node._variable() if node._variable is not None else None
            if g is None or x is None:
                continue
            x.grad = g if x.grad is None else x.grad + g


def trace(outputs, inputs, grad_outputs=None):
    """One backward pass, step by step: [(node, gradients in, gradients out)] in visiting order.

    The pass is that of ``grad(outputs, inputs, grad_outputs)``; the graph is
    kept, so the same outputs can be traced or differentiated again. The
    gradients out are what each rule returned, before any broadcast was summed back.
    """
    outputs = as_list(outputs, "outputs")
    inputs = as_list(inputs, "inputs")
    seeds = seed_gradients(outputs, grad_outputs, None, "trace")
    order, needs, _ = plan(outputs, inputs)
    steps = []
    _backprop(seeds, order, needs, {x.node for x in inputs}, True, False, False,
              visit=lambda f, gys, gxs: steps.append((f, list(gys), list(gxs))))
    return steps


def _backprop(seeds, order, needs, keep, retain_graph, create_graph, retain_grad, visit=None):
    """Run the rules of the needed nodes, outputs first; return {VariableNode: gradient}.

    Gradients of nodes outside ``keep`` are dropped once their creator has used them.
    ``visit(f, gys, gxs)``, if given, sees every rule's gradients in and out.
    Nodes recorded by the rules are tagged with the derivative order they belong to.
    """
    grads = {}
    for node, g in seeds:
        grads[node] = g if node not in grads else grads[node] + g
    previous = config.derivative_order, config.enable_backprop
    if create_graph:
        config.derivative_order = 1 + max((f.order for f in needs), default=0)
    config.enable_backprop = create_graph  # the rules record a graph only with create_graph
    try:
        _run_rules(grads, order, needs, keep, retain_graph, retain_grad, visit, create_graph)
    finally:
        config.derivative_order, config.enable_backprop = previous
    if retain_grad:
        for node, g in grads.items():
            v = node._variable() if node._variable is not None else None
            if v is not None and node.creator is not None:
                v.grad = g
    return grads


def _run_rules(grads, order, needs, keep, retain_graph, retain_grad, visit, create_graph):
    """The loop of _backprop: each needed node, outputs first.

    Without create_graph, a gradient that is the sum of two others is a new
    array that only this loop knows, so later terms are added to it in place:
    on large arrays that saves an allocation per term.
    """
    owned = set()
    for f in reversed(order):
        flags = needs.get(f)
        if flags is None:
            continue
        inputs = f._inputs
        if inputs is None:
            raise RuntimeError(freed_message(f))
        outs = f._outputs
        if len(outs) == 1:  # the common case, without lists
            out_nodes = (outs[0](),)
            gys = (grads.get(out_nodes[0]),)
            if gys[0] is None:
                continue
        else:
            out_nodes = [ref() for ref in outs]
            gys = [grads.get(n) for n in out_nodes]
            if gys.count(None) == len(gys):
                continue
        f.needs_input_grad = flags
        kind = type(f)
        name = kind.__name__
        if create_graph and not _differentiable.get(kind.rule_key, True):
            warnings.warn(
                f"grad(create_graph=True) went through {name}, whose rule is registered with "
                "differentiable=False: the gradient through it is a constant, so higher derivatives "
                "through it are lost; write its rule with minigrad functions to keep them",
                stacklevel=4,
            )
        rule = _rules.get(kind.rule_key) or lookup(kind)  # lookup finds a parent's rule, or says how to register one
        gxs = rule(f, *gys)
        if type(gxs) is not tuple:
            gxs = tuple(gxs) if isinstance(gxs, list) else (gxs,)
        if visit is not None:
            visit(f, gys, gxs)
        if len(gxs) != len(inputs):
            raise TypeError(
                f"the backward rule of {name} returned {len(gxs)} gradients for "
                f"{len(inputs)} inputs; return one per input (None where there is none)"
            )
        for x, gx, wanted in zip(inputs, gxs, flags):
            if gx is None or not wanted:
                continue
            if type(gx) is not Variable:
                gx = _as_gradient(gx, f)
            g_data, x_data = gx.node.data, x.data
            if g_data.shape != x_data.shape:
                gx = _summed_back(gx, x, f)
            if g_data.dtype is not x_data.dtype and g_data.dtype != x_data.dtype:
                gx = _cast_back(gx, x)
            prev = grads.get(x)
            if prev is None:
                grads[x] = gx
            elif x in owned:
                prev.node.data += gx.node.data  # our own sum, not seen by anyone yet: add in place
            else:
                grads[x] = prev + gx
                if not create_graph:
                    owned.add(x)
        for n, g in zip(out_nodes, gys):
            if g is None:
                continue
            if retain_grad and n._variable is not None and n._variable() is not None:
                n._variable().grad = g
            if n not in keep:
                del grads[n]
        if not retain_graph:
            f.free()


def _as_gradient(gx, f):
    """A rule's result as a Variable (a rule may return an array)."""
    if isinstance(gx, Variable):
        return gx
    return Variable(as_float_array(gx, where=f"backward of {f.name}"), requires_grad=False)


def _cast_back(gx, x):
    """A gradient in its input's dtype (float32 stays float32)."""
    from minigrad.functions.elementwise import cast

    return cast(gx, x.data.dtype)


def _summed_back(gx, x, f):
    """A broadcast gradient summed back to its input's shape; an error for any other mismatch."""
    from minigrad.functions.shape import sum_to

    shape, gshape = x.data.shape, gx.shape
    lead = len(gshape) - len(shape)
    if lead < 0 or any(s != 1 and s != g for s, g in zip(shape, gshape[lead:])):
        raise ValueError(
            f"the backward rule of {f.name} returned a gradient of shape {gshape} for an input "
            f"of shape {shape}; a rule returns a gradient of its input's shape (or one that "
            "sums back to it, as a broadcast does)"
        )
    return sum_to(gx, shape)
