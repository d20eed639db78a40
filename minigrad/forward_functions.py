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

from minigrad.cuda import get_array_module
from minigrad.rule_table import RuleTable
from minigrad.variable import Variable

table = RuleTable("forward", "rule(ctx, *input_tangents) (register from minigrad.forward_functions)")
_rules = table.rules  # a Function's rule_key -> its forward rule: func's walker reads it directly


def register(func_name, rule=None, *, differentiable=True):
    """Register ``rule`` as the forward rule of the Function ``func_name`` (its class, or its class name).

    Works as a call, ``register("Sin", sin_forward)``, or as a decorator,
    ``@register("Sin")``, below the backward rule. Names mean what they mean
    in ``minigrad.backward_functions.register``; registering again replaces.
    """
    return table.register(func_name, rule, differentiable=differentiable)


def lookup(func_name):
    """The forward rule of a Function class (or class name); NotImplementedError that says how to add one."""
    return table.lookup(func_name)


def registered():
    """The names of the Functions that have a forward rule, sorted."""
    return table.registered()


def registry_text():
    """The registry as a table: one row per function, sorted, with no memory addresses."""
    return table.text("forward rule")


def show_registry():
    """Print every registered forward rule, sorted by function name."""
    print(registry_text())


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
