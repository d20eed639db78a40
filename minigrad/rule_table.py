"""A table of rules, one per Function: the shape shared by the backward, forward and Taylor tables.

The table is plain data, a dict from a Function's name to its rule, as in
nnabla: ``register("Sin")`` names the class. A name means one class, though.
A student's ``class Sin(Function)`` in a notebook is not
``minigrad.functions.Sin``: it must never run the library's rule, and without
a rule of its own it gets the error that says how to register one. So a class
outside minigrad that takes the name of one of minigrad's own Functions is
filed under its module too (``__main__.Sin``), and ``register("Sin")`` written
after it means it. Every other class is filed under its name alone, so a class
defined again (a notebook cell run twice) keeps its rule. A subclass without a
rule of its own uses its parent's.
"""

_defined = {}  # name -> the Function class defined last under that name
_library_names = set()  # the names of minigrad's own Function classes
tables = []  # every RuleTable made: backward, forward, Taylor


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


class RuleTable:
    """Rules keyed by Function (see above). ``kind`` ("backward") and ``form`` ("rule(ctx, *grad_outputs)")
    are for messages; ``differentiable`` records whether a rule was written with minigrad functions."""

    def __init__(self, kind, form):
        self.kind = kind
        self.form = form
        self.rules = {}  # key -> rule
        self.differentiable = {}  # key -> bool
        tables.append(self)

    def register(self, function, rule=None, *, differentiable=True):
        """Register ``rule`` for the Function named ``function`` (its class name, a str: nnabla's form).

        Works as a call, ``register("Sin", sin_rule)``, or as a decorator,
        ``@register("Sin")``. Registering again replaces the rule, so a
        notebook cell can be run twice.
        """
        if not isinstance(function, str):
            raise TypeError(
                f"register: the first argument must be the Function's class name as a str, "
                f"e.g. register('Sin', rule), got {type(function).__name__}"
            )
        if rule is None:
            def decorator(fn):
                self.register(function, fn, differentiable=differentiable)
                return fn

            return decorator
        if not callable(rule):
            raise TypeError(f"register({function!r}, rule): rule must be callable, got {type(rule).__name__}")
        key = key_of(function)
        self.rules[key] = rule
        self.differentiable[key] = bool(differentiable)
        return rule

    def lookup(self, function):
        """The rule for ``function`` (a Function class or its name); NotImplementedError saying how to add one."""
        return self.rules[self._key(function)]

    def is_differentiable(self, function):
        """Whether the rule of ``function`` was registered as differentiable."""
        return self.differentiable[self._key(function)]

    def _key(self, function):
        """The key whose rule ``function`` uses: its own, else a parent's; the error otherwise."""
        key = key_of(function)
        if key in self.rules:
            return key
        for parent in (function.__mro__[1:] if isinstance(function, type) else ()):
            if getattr(parent, "rule_key", None) in self.rules:
                return parent.rule_key
        raise NotImplementedError(self._missing_message(function, key))

    def registered(self):
        """The keys of the Functions with a rule, sorted: their names (``__main__.Sin`` for a namesake)."""
        return sorted(self.rules)

    def text(self, title):
        """The table: one row per Function, sorted, with no memory addresses."""
        rows = [("function", title, "differentiable")]
        for key in self.registered():
            rule = self.rules[key]
            where = f"{getattr(rule, '__module__', '?')}.{getattr(rule, '__qualname__', repr(rule))}"
            rows.append((key, where, "yes" if self.differentiable[key] else "no"))
        w0 = max(len(r[0]) for r in rows)
        w1 = max(len(r[1]) for r in rows)
        lines = [f"{a:<{w0}}  {b:<{w1}}  {c}" for a, b, c in rows]
        lines.append(f"{len(rows) - 1} functions registered.")
        return "\n".join(lines)

    def _missing_message(self, function, key):
        name = _name(function)
        message = (
            f"no {self.kind} rule registered for {name!r}; add one with @register({name!r}) on a "
            f"function {self.form}, below the class (see show_registry())"
        )
        if key != name and name in self.rules:
            message += (
                f". Your class {name} ({key}) is not minigrad's own {name}, whose rule belongs to it alone: "
                "register a rule for yours, or give your class another name"
            )
        return message


def _name(function):
    return function if isinstance(function, str) else function.__name__
