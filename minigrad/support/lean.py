"""A backward pass that records nothing, at about the cost of the NumPy calls it makes: optional reading.

Every rule is written once, with minigrad's functions, so that with ``create_graph=True`` it
records and its result can be differentiated again. Without it (and with no jvp running, whose
tangents ride on Variables), nothing will ever differentiate what the rules compute: the
Variables, nodes and Function calls they would make are bookkeeping for nobody. So such a pass
is *lean*: it hands minigrad's own rules (those of ``minigrad/functions/``) plain arrays, the
gradients and ``ctx.inputs`` / ``ctx.outputs`` alike, and a rule runs as it reads:

- an operator between arrays (``gy * x1``) is NumPy's own;
- a minigrad function applied to arrays only (``cos(x)``, ``sum_to(gx, shape)``) runs its
  Function's ``forward`` and returns the array: :func:`call` below, the first thing
  ``Function.__call__`` checks.

Forward mode has its lean passes too. ``func.jvp`` of NumPy primals, with no other jvp running,
opens a *lean level* (``core/tangents.py``): its tangents are arrays, and each forward rule that
pushes them runs on arrays in the same way (:func:`pushed`), in every call that records no node
(a recorded call's tangent may be differentiated by reverse mode later, so there the rule runs
on Variables). ``func.hvp`` opens one whose rules always run on arrays, unless its result is to
be differentiated: its Hessian-vector product is then a NumPy computation riding on the
gradient's reverse pass.

The rules are the same functions either way: a lean pass changes what they run through, not
what they compute. A rule registered elsewhere (yours, in a notebook) is not known to be
written for arrays (``x.data`` on an array is its raw buffer), so it still receives Variables,
and what it returns is taken as arrays (``core/rules.py``). ``grad()`` and ``backward()`` hand
back Variables, as always.
"""

import contextlib

import numpy as np

from minigrad.core.variable import VariableNode, _variable_of
from minigrad.support import config as settings
from minigrad.support.config import config
from minigrad.support.function_inputs import _as_array, _constant_node, forward_failed


def call(f, inputs):
    """f applied, in a lean pass, to inputs none of which is a Variable: arrays in, arrays out."""
    arrays = [x if type(x) is np.ndarray and x.dtype.kind == "f" else _constant_node(x, inputs, f).data
              for x in inputs]  # (numbers and integer arrays as Function.__call__ makes them)
    try:
        ys = f.forward(*arrays)
    except (ValueError, TypeError, IndexError) as e:
        forward_failed(f, arrays, e)
    if type(ys) is tuple:
        return tuple(y if type(y) is np.ndarray else _as_array(y) for y in ys)
    return ys if type(ys) is np.ndarray else _as_array(ys)  # (a 0-d product is a NumPy scalar)


def begin(options, grads):
    """Make the pass lean when nothing will read what its rules record: the seeds as arrays."""
    options.lean = not options.create_graph and options.visit is None and not config.levels
    if not options.lean:
        return grads
    config.lean = True
    settings.lean_passes(1)
    return {node: g.node.data for node, g in grads.items()}


def end(options, grads):
    """Close a lean pass (``config.lean`` is put back by the walker): the gradients it kept, as Variables."""
    if not options.lean:
        return grads
    settings.lean_passes(-1)
    return {node: _variable_of(VariableNode(g, False)) for node, g in grads.items()}


def added(a, b):
    """a + b, two gradients of a lean pass, as an array (NumPy gives a scalar for two 0-d arrays)."""
    s = a + b
    return s if type(s) is np.ndarray else _as_array(s)


@contextlib.contextmanager
def lean_level(lean):
    """While f runs under a jvp's lean level (``lean`` true): counted among the lean passes, so that the
    calls in its forward rules look for arrays."""
    if lean:
        settings.lean_passes(1)
    try:
        yield
    finally:
        if lean:
            settings.lean_passes(-1)


def pushed(call_rule, table, f, tangents, outputs):
    """f's forward rule run on arrays: the tangents of a lean level (``func.jvp`` when nothing will
    differentiate them), through the same rules, at about the cost of their NumPy calls."""
    previous = config.lean
    config.lean = True  # (counted among the lean passes by lean_level, while the jvp runs)
    try:
        return call_rule(table, f, tangents, outputs, arrays=True)
    finally:
        config.lean = previous


def on_variables(call_rule, table, f, args, targets, wanted, visit):
    """A rule not known to take arrays (yours), called in a lean pass: Variables in, arrays out."""
    config.lean = False
    try:
        args = [None if a is None else _variable_of(VariableNode(a, False)) for a in args]
        return [None if r is None else r.node.data for r in call_rule(table, f, args, targets, wanted, visit)]
    finally:
        config.lean = True
