"""The registry of forward rules: the other mode, one table beside the backward one.

A forward rule is ``rule(ctx, *input_tangents)``: given the tangents of a
node's inputs (how fast each input moves along one direction), it returns
the tangent of its output (or a tuple, one per output). ``ctx`` is the same
recorded node a backward rule receives (``ctx.inputs``, ``ctx.outputs``,
``ctx.function``). An input that does not move has no tangent: the rule gets
None there. The two rules of a function are transposes of each other:

    y = sin x  =>  dy = cos(x) dx  =>  forward:  ty = cos(x) * tx
                                       backward: gx = gy * cos(x)

A rule written with minigrad's functions on Variables, never on ``.data``,
is differentiable again, in either mode: ``minigrad.func`` runs it with
recording on, so the tangent is a graph (forward over reverse, reverse over
forward, to any order).

    from minigrad.forward_functions import register

    @register("Sin")
    def sin_forward(ctx, tx):
        (x,) = ctx.inputs
        return cos(x) * tx
"""

from minigrad.core.rules import forward as table
from minigrad.core.variable import Variable
from minigrad.cuda import get_array_module

# The table's methods, named as the backward table's: register("Sin", rule) or @register("Sin") below the
# backward rule; lookup, registered, registry_text, show_registry.
register = table.register
lookup = table.lookup
registered = table.registered
registry_text = table.text
show_registry = table.show


def tangent_sum(*terms):
    """The sum of the terms that are not None (None when all are): a rule's ``t0 * x1 + x0 * t1``
    where an input without a tangent contributes nothing."""
    total = None
    for t in terms:
        if t is not None:
            total = t if total is None else total + t
    return total


def zero_tangent(x):
    """A constant zero of x's shape, dtype and device: the tangent of something that does not move."""
    data = x.node.data if isinstance(x, Variable) else x
    return Variable(get_array_module(data).zeros(data.shape, dtype=data.dtype), requires_grad=False)


def bilinear_tangent(op, a, b, ta, tb):
    """The tangent of y = op(a, b), op linear in each argument (a product): d op = op(da, b) + op(a, db)."""
    return tangent_sum(None if ta is None else op(ta, b), None if tb is None else op(a, tb))
