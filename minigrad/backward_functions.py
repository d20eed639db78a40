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

from minigrad.core.rules import backward as table

# The table's methods, under nnabla's names. register(name, rule=None, *, differentiable=True): as a call,
# register("Sin", sin_backward), or as a decorator, @register("Sin"), below the class. A name means the
# Function class of that name defined last, so a student's own class Sin gets the rule registered after it,
# and minigrad's Sin keeps its own (core/rules.py). Registering again replaces the rule, so a notebook cell
# can be run twice. differentiable=False marks a rule that works on .data: it gives first derivatives only.
register = table.register
lookup = table.lookup  # the rule of a Function class (or name); NotImplementedError saying how to add one
registered = table.registered  # the names of the Functions with a backward rule, sorted
is_differentiable = table.is_differentiable
registry_text = table.text  # the table as text: one row per function, sorted, no memory addresses
show_registry = table.show  # print it
