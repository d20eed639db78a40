"""The registry of backward rules: plain data, a dict from a Function's name to its rule.

A rule is ``rule(ctx, *grad_outputs)``. ``ctx`` is the recorded node:
``ctx.inputs`` and ``ctx.outputs`` are its Variables, ``ctx.function`` the
Function instance (for attributes such as ``axis``), and
``ctx.needs_input_grad`` says, input by input, whether a gradient is wanted
there. The rule returns one gradient per input (a Variable, or None), or the
gradient itself when the function has one input.

A rule written with minigrad's functions on Variables, never on ``.data``,
is itself differentiable: the walker runs it with recording on when
``create_graph=True``, so its result is a new graph and the next derivative
comes for free.

    from minigrad.backward_functions import register

    @register("Sin")
    def sin_backward(ctx, gy):
        (x,) = ctx.inputs
        return gy * cos(x)
"""

from minigrad.rule_table import RuleTable

table = RuleTable("backward", "rule(ctx, *grad_outputs)")
_rules = table.rules  # a Function's rule_key -> its rule: the walker reads it directly
_differentiable = table.differentiable


def register(func_name, rule=None, *, differentiable=True):
    """Register ``rule`` as the backward of the Function ``func_name`` (its class, or its class name).

    Works as a call, ``register("Sin", sin_backward)``, or as a decorator,
    ``@register("Sin")``, below the class. A name means the Function class of
    that name defined last, so a student's own ``class Sin`` gets the rule
    registered after it, and minigrad's Sin keeps its own (rule_table.py). Registering again
    replaces the rule, so a notebook cell can be run twice. Pass
    ``differentiable=False`` for a rule that works on ``.data``: it gives first
    derivatives only.
    """
    return table.register(func_name, rule, differentiable=differentiable)


def lookup(func_name):
    """The rule of a Function class (or class name); NotImplementedError that says how to add one."""
    return table.lookup(func_name)


def registered():
    """The names of the Functions that have a backward rule, sorted (``__main__.Sin`` for a namesake of minigrad's)."""
    return table.registered()


def is_differentiable(func_name):
    """Whether the rule of ``func_name`` was registered as differentiable."""
    return table.is_differentiable(func_name)


def registry_text():
    """The registry as a table: one row per function, sorted, with no memory addresses."""
    return table.text("backward rule")


def show_registry():
    """Print every registered backward rule, sorted by function name."""
    print(registry_text())
