"""The registry of backward rules: plain data, a dict from a Function's class name to its rule.

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

_rules = {}
_differentiable = {}


def register(func_name, rule=None, *, differentiable=True):
    """Register ``rule`` as the backward of the Function class named ``func_name``.

    Works as a call, ``register("Sin", sin_backward)``, or as a decorator,
    ``@register("Sin")``. Registering a name again replaces its rule, so a
    notebook cell can be run twice. Pass ``differentiable=False`` for a rule
    that works on ``.data``: it gives first derivatives only.
    """
    if not isinstance(func_name, str):
        raise TypeError(
            f"register: func_name must be the Function's class name as a str, e.g. "
            f"register('Sin', rule), got {type(func_name).__name__}"
        )
    if rule is None:
        def decorator(fn):
            register(func_name, fn, differentiable=differentiable)
            return fn

        return decorator
    if not callable(rule):
        raise TypeError(f"register({func_name!r}, rule): rule must be callable, got {type(rule).__name__}")
    _rules[func_name] = rule
    _differentiable[func_name] = bool(differentiable)
    return rule


def lookup(func_name):
    """The rule registered for ``func_name``; NotImplementedError that says how to add one."""
    rule = _rules.get(func_name)
    if rule is None:
        raise NotImplementedError(
            f"no backward rule registered for {func_name!r}; add one with "
            f"@register({func_name!r}) on a function rule(ctx, *grad_outputs) "
            "(see show_registry())"
        )
    return rule


def registered():
    """The registered function names, sorted."""
    return sorted(_rules)


def is_differentiable(func_name):
    """Whether the rule of ``func_name`` was registered as differentiable."""
    lookup(func_name)
    return _differentiable[func_name]


def registry_text():
    """The registry as a table: one row per function, sorted, with no memory addresses."""
    rows = [("function", "backward rule", "differentiable")]
    for name in registered():
        rule = _rules[name]
        where = f"{getattr(rule, '__module__', '?')}.{getattr(rule, '__qualname__', repr(rule))}"
        rows.append((name, where, "yes" if _differentiable[name] else "no"))
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    lines = [f"{a:<{w0}}  {b:<{w1}}  {c}" for a, b, c in rows]
    lines.append(f"{len(rows) - 1} functions registered.")
    return "\n".join(lines)


def show_registry():
    """Print every registered backward rule, sorted by function name."""
    print(registry_text())
