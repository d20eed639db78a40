"""The registry of transpose rules: the fourth table, one rule per linear Function.

A Function y = L(x) that is linear in some of its inputs (the others held
constant) is a linear map, and its transpose L^T is defined by

    <L t, u> = <t, L^T u>   for every t and u   (the dot-product test).

A transpose rule is ``rule(ctx, *output_cotangents)``: given u, one per
output, it returns L^T u, one cotangent per input (None for a constant
input). ``ctx`` is the recorded node; ``ctx.needs_input_grad`` says, input by
input, which inputs are the linear ones. The rule is called and its results
fitted (summed back over broadcast axes, cast to the input's dtype) by
``call_rule``, as every rule is.

    from minigrad.transpose_functions import register

    @register("Neg")
    def neg_transpose(ctx, u):
        return -u                     # <-t, u> = <t, -u>

For a linear Function this is its backward rule: the gradient of <L x, gy>
by x is L^T gy. So ``families.linear`` registers the backward rule here, and
a Function linear in some inputs but not in others says which (``products``:
two inputs multiplied together, ``constants``: an input that must not move).
``minigrad.linearize.linear_transpose`` refuses any other Function.

A rule written with minigrad's functions on Variables is differentiable, so
a transpose can be differentiated again (a VJP of second order).
"""

from minigrad.core.rules import RuleTable
from minigrad.cuda import get_array_module
from minigrad.support.rule_keys import key_of

table = RuleTable("transpose", "rule(ctx, *output_cotangents) (register from minigrad.transpose_functions)",
                  "cotangent", "input")

# The table's methods, named as the backward table's; register takes what the Function is linear in.
lookup = table.lookup
registered = table.registered
registry_text = table.text
show_registry = table.show

is_differentiable = table.is_differentiable

_linear_in = {}  # key -> (products, constants): the inputs the Function is not linear in together


def register(function, rule=None, *, products=(), constants=(), differentiable=None):
    """Register ``rule`` as the transpose of the Function named ``function``, as the other tables do.

    ``products``: inputs multiplied together (Mul's (0, 1)): linear in each, not
    in both at once. ``constants``: inputs it is not linear in at all (Div's
    divisor, 1): they must be constants.
    """
    if rule is None:
        return lambda fn: register(function, fn, products=products, constants=constants,
                                   differentiable=differentiable)
    table.register(function, rule, differentiable=differentiable)
    _linear_in[key_of(function)] = (tuple(products), tuple(constants))
    return rule


class NotLinearError(TypeError, ValueError):
    """linear_transpose was given a function that is not linear in its arguments (the wrong kind of
    function, and a value it cannot take: both TypeError and ValueError)."""


def why_not_linear(f, linear):
    """None if Function node ``f`` is linear in its inputs flagged in ``linear`` (the others constant),
    else why not, in words."""
    moving = [i for i, flag in enumerate(linear) if flag]
    try:
        table.lookup(type(f))
    except NotImplementedError:
        return (f"{f.name} is applied to input {moving[0]}, which depends on the arguments, and {f.name} is "
                f"not linear: it has no transpose rule (if it is linear, register one with @register({f.name!r}) "
                "from minigrad.transpose_functions)")
    products, constants = _linear_in.get(type(f).rule_key, ((), ()))
    if products and all(i in moving for i in products):
        return (f"{f.name} multiplies its inputs {' and '.join(map(str, products))}, and both depend on the "
                "arguments: a product of two arguments is not linear in them (one must be a constant)")
    for i in constants:
        if i in moving:
            return (f"{f.name} is not linear in its input {i}, which depends on the arguments (it must be "
                    "a constant)")
    for i, node in enumerate(f._inputs):
        if i not in moving and i not in products + constants and get_array_module(node.data).any(node.data):
            return (f"{f.name} takes input {i}, a constant that is not zero, beside the arguments: the result "
                    "is affine (a constant plus a linear map), not linear")
    return None
