"""grad(), backward() and trace(): what a caller asks of the walker (backprop.py), and what it gets back.

Each checks its arguments (grad_arguments.py), plans the pass (which nodes lie
between the outputs and the inputs), runs it with the options of a
:class:`~minigrad.core.backprop.Pass`, and hands back the gradients: as a list
(``grad``), in the leaves' ``.grad`` (``backward``), or step by step (``trace``).
"""

import itertools
import weakref

from minigrad.core.backprop import Pass, _backprop
from minigrad.core.graph import _plan, plan, topological_order
from minigrad.functions.elementwise import identity
from minigrad.support.config import config, enable_grad, is_grad_enabled
from minigrad.support.config import set_grad_enabled as _grad_mode
from minigrad.cuda import get_array_module
from minigrad.support.function_inputs import freed_message
from minigrad.support.memory import hang_tangent
from minigrad.support.grad_arguments import (as_list, checked_allow_unused, checked_grad_inputs, no_graph_message,
                                     seed_gradients, unreachable_message)
from minigrad.core.variable import Variable

__all__ = ["grad", "backward", "trace", "plan", "topological_order"]

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
    allow_unused = checked_allow_unused(allow_unused, materialize_grads)
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
    if len(targets) == 1 and grad_inputs is None:  # nothing upstream of the one input is needed: stop there
        stop = stop | targets
    order, needs, lost = _plan(outputs, targets, stop)
    grads = _backprop(seeds, order, needs, Pass(targets, retain_graph, create_graph, retain_grad))

    results = []
    for i, x in enumerate(inputs):
        g = grads.get(x.node)
        if g is None:
            g = _unused(i, x, outputs, lost, allow_unused, materialize_grads)
        elif not create_graph and g.creator is not None:
            g = g.detach()
        if set_grad:
            x.grad = g
        results.append(g)
    return results


def fresh(x):
    """A new node holding x's values, for one transform's call alone (func's, laplacian's): identity(x)
    keeps x's graph behind it, so what comes out is still differentiable with respect to whatever x came
    from; a jvp's tangents on x move the new node too. A new leaf is numbered (``mark``)."""
    with enable_grad():
        if x.requires_grad:
            return identity(x)
        new = Variable(x.node.data, requires_grad=True)
        _made[new.node] = next(_count)
        if x.node.tangents:
            new.node.tangents = {}
            for level, t in x.node.tangents.items():
                if level.open:
                    hang_tangent(level, new.node, t)
        return new


_count = itertools.count()
_made = weakref.WeakKeyDictionary()  # the leaves fresh made: their numbers, in the order made


def mark():
    """A number below those of every leaf ``fresh`` makes from now on: a transform takes one as it starts."""
    return next(_count)


def differentiable(outputs, since, own=(), given=()):
    """Whether reverse mode may differentiate what a transform makes of ``outputs`` (Variables), so that its
    reverse passes must record: in grad mode, while a jvp runs (its tangents ride on the rules' operations),
    or when the outputs' graph reaches a leaf that requires grad made before the transform started (mark
    ``since``), other than its ``own`` inputs: an argument that required grad, a parameter f closes over, an
    enclosing transform's input. Leaves the transform made, itself or by the transforms f calls, are private
    to it. Else the result is a constant, as torch.func's and JAX's are: a graph no one can use would only
    hold memory (a loop w = w - lr * grad(f)(w), or Newton's with hessian, would chain every step's).
    ``given``: the transform's arguments; one that requires grad answers without a walk."""
    if not is_grad_enabled():
        return False
    if config.levels or any(getattr(v, "requires_grad", False) for v in given):
        return True
    own = {x.node for x in own}
    stack, seen = [y.node for y in outputs if isinstance(y, Variable)], set()
    while stack:  # (a walk of the graph behind the outputs, in no order: cheaper than topological_order)
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        if n.creator is not None:
            stack.extend(n.creator._inputs or ())
        elif n.requires_grad and n not in own and _made.get(n, -1) < since:
            return True
    return False


def _unused(i, x, outputs, lost, allow_unused, materialize_grads):
    """What grad() gives for inputs[i], which got no gradient: None, zeros, or the error saying why."""
    if lost is not None:
        raise RuntimeError(f"grad: {freed_message(lost)}")
    if not allow_unused:
        raise ValueError(unreachable_message(i, x, outputs))
    if materialize_grads:
        return Variable(get_array_module(x.data).zeros_like(x.data), requires_grad=False)
    return None


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
    grads = _backprop(seeds, order, needs, Pass(leaves, retain_graph, create_graph, retain_grad))
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
    visit = lambda f, gys, gxs: steps.append((f, list(gys), list(gxs)))  # noqa: E731
    _backprop(seeds, order, needs, Pass({x.node for x in inputs}, retain_graph=True, visit=visit))
    return steps
