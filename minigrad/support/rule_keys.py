"""How a rule is keyed by its Function class, and the texts a rule table shows: its rows, a missing rule.

The table is plain data, a dict from a Function's key to its rule, as in
nnabla: ``register("Sin")`` names the class. A name means one class, though.
A student's ``class Sin(Function)`` in a notebook is not
``minigrad.functions.Sin``: it must never run the library's rule, and without
a rule of its own it gets the error that says how to register one. So a class
outside minigrad that takes the name of one of minigrad's own Functions is
filed under its module too (``__main__.Sin``), and ``register("Sin")`` written
after it means it. Every other class is filed under its name alone, so a class
defined again (a notebook cell run twice) keeps its rule.
"""

import warnings

_defined = {}  # name -> the Function class defined last under that name
_library_names = set()  # the names of minigrad's own Function classes


def function_defined(cls):
    """Called by ``Function.__init_subclass__`` for every new Function class: file it under its key."""
    name = cls.__name__
    if cls.__module__.split(".")[0] == "minigrad":
        _library_names.add(name)
        cls.rule_key = name
    else:
        cls.rule_key = f"{cls.__module__}.{name}" if name in _library_names else name
    _defined[name] = cls


def key_of(function):
    """The key of a Function class, or of a name (the class defined last under it)."""
    if isinstance(function, type):
        return function.rule_key
    cls = _defined.get(function)
    return function if cls is None else cls.rule_key


def missing_rule_message(table, function, key):
    """Why ``function`` has no rule in ``table``, and how to register one."""
    name = function if isinstance(function, str) else function.__name__
    message = (f"no {table.kind} rule registered for {name!r}; add one with @register({name!r}) on a "
               f"function {table.form}, below the class (see show_registry())")
    if key != name and name in table.rules:
        message += (f". Your class {name} ({key}) is not minigrad's own {name}, whose rule belongs to it "
                    "alone: register a rule for yours, or give your class another name")
    return message


def table_text(table):
    """The table: one row per Function, sorted, with no memory addresses."""
    rows = [("function", f"{table.kind} rule", "differentiable")]
    for key in table.registered():
        rule = table.rules[key]
        where = f"{getattr(rule, '__module__', '?')}.{getattr(rule, '__qualname__', repr(rule))}"
        rows.append((key, where, "yes" if table.differentiable[key] else "no"))
    w0, w1 = (max(len(r[i]) for r in rows) for i in (0, 1))
    lines = [f"{a:<{w0}}  {b:<{w1}}  {c}" for a, b, c in rows]
    return "\n".join(lines + [f"{len(rows) - 1} functions registered."])


def warn_not_differentiable(f):
    """The warning of grad(create_graph=True) through a rule that works on .data (registered differentiable=False)."""
    warnings.warn(
        f"grad(create_graph=True) went through {f.name}, whose rule is registered with "
        "differentiable=False: the gradient through it is a constant, so higher derivatives "
        "through it are lost; write its rule with minigrad functions to keep them",
        stacklevel=5,
    )
