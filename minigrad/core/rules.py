"""Rule tables, one per mode, and ``call_rule``: the one way any walker calls a rule.

A table is plain data, a dict from a Function's key to its rule, as in nnabla:
``register("Sin")`` names the class. The backward and forward tables (shown as
``minigrad.backward_functions`` and ``minigrad.forward_functions``) are made
here, the Taylor table the same way in its own module. A rule of any table is called as
``rule(ctx, *args)``, ``ctx`` the recorded node, and ``call_rule`` does the rest
in one place for every walker:

- **normalise**: one value, a tuple or a list of values (None where there is none);
- **count**: one per input (backward) or one per output (forward, Taylor);
- **fit**: each value becomes a Variable (an array of coefficients in Taylor mode)
  of its node's shape and dtype. Broadcasting is undone here, once: a gradient
  is summed back to its input's shape, a tangent broadcast to its output's.

How a Function's name keys its rules, for a student's namesake class too: support/rule_keys.py.
"""

from itertools import repeat

import numpy as np

from minigrad.core import variable
from minigrad.core.variable import Variable
from minigrad.support import lean
from minigrad.support.numpy_interop import as_float_array
from minigrad.support.rule_keys import key_of, missing_rule_message, table_text

tables = []  # every RuleTable made: backward, forward, Taylor


class RuleTable:
    """The rules of one mode. ``kind`` and ``form`` name it in messages; each rule returns ``result``s,
    one per ``per`` ("input" or "output"); ``fit``: how call_rule fits one to its node, when not a Variable."""

    def __init__(self, kind, form, result, per, fit=None):
        self.kind, self.form, self.result, self.per, self.series = kind, form, result, per, fit is not None
        self.fit = fit or _fitted  # (Taylor mode's results are arrays of coefficients: taylor.fitted_series)
        self.rules = {}  # key -> rule
        self.differentiable = {}  # key -> bool: written with minigrad functions
        self.lean = {}  # key -> bool: runs on plain arrays in a pass that records nothing (minigrad's own rules)
        tables.append(self)

    def register(self, function, rule=None, *, differentiable=None):
        """Register ``rule`` for the Function named ``function`` (its class name, a str: nnabla's form).

        As a call, ``register("Sin", rule)``, or as a decorator, ``@register("Sin")``.
        Registering again replaces the rule, so a notebook cell can be run twice.
        """
        if not isinstance(function, str):
            raise TypeError(f"register: the first argument must be the Function's class name as a str, "
                            f"e.g. register('Sin', rule), got {type(function).__name__}")
        if rule is None:
            return lambda fn: self.register(function, fn, differentiable=differentiable)
        if not callable(rule):
            raise TypeError(f"register({function!r}, rule): rule must be callable, got {type(rule).__name__}")
        key = key_of(function)
        self.rules[key] = rule
        # (None: a Taylor rule works on arrays, any other is written with minigrad functions)
        self.differentiable[key] = not self.series if differentiable is None else bool(differentiable)
        self.lean[key] = (getattr(rule, "__module__", None) or "").startswith("minigrad.functions.")
        return rule

    def lookup(self, function):
        """The rule of ``function`` (a Function class or its name): its own, else a parent's; else
        NotImplementedError saying how to register one."""
        return self.rules[self._key(function)]

    def is_differentiable(self, function):
        """Whether the rule of ``function`` was registered as differentiable."""
        return self.differentiable[self._key(function)]

    def registered(self):
        """The keys of the Functions with a rule, sorted: their names (``__main__.Sin`` for a namesake)."""
        return sorted(self.rules)

    def _key(self, function):
        key = key_of(function)
        if key in self.rules:
            return key
        for parent in (function.__mro__[1:] if isinstance(function, type) else ()):
            if getattr(parent, "rule_key", None) in self.rules:
                return parent.rule_key
        raise NotImplementedError(missing_rule_message(self, function, key))

    text = table_text  # registry_text(): one row per Function, sorted

    def show(self):  # show_registry()
        print(self.text())


ALL = repeat(True)  # every result wanted: the default of call_rule's ``wanted``


def call_rule(table, f, args, targets, wanted=ALL, visit=None, arrays=False):
    """f's rule in ``table`` called on ``args``; its results, one per target, each fitted to its target.

    ``targets`` are the nodes the results belong to (f's inputs for a backward
    rule, its outputs for a forward or Taylor rule); None for one whose result
    nobody wants, which is dropped, as is a result whose flag in ``wanted`` is
    False; a rule's None is no result (a Taylor rule's, for a wanted output, is refused by its fit).
    ``visit(f, args, results)``, if given, sees the results as the rule returned them (``trace``).
    """
    key = type(f).rule_key
    rule = table.rules.get(key) or table.lookup(type(f))
    if arrays and not table.lean.get(key):
        return lean.on_variables(call_rule, table, f, args, targets, wanted, visit)  # (a rule of yours)
    results = rule(f, *args)
    if type(results) is not tuple:
        results = tuple(results) if isinstance(results, list) else (results,)
    if visit is not None:
        visit(f, args, results)
    if len(results) != len(targets):
        raise TypeError(f"the {table.kind} rule of {f.name} returned {len(results)} {table.result}s for "
                        f"{len(targets)} {table.per}s; return one per {table.per} (None where there is none)")
    fitted = []
    for r, node, w in zip(results, targets, wanted):
        if node is None or not w or r is None and not table.series:  # (a Taylor rule's None: fit refuses it)
            r = None
        elif arrays:  # (a lean pass: an array of its node's shape and dtype fits already)
            data = node.data
            if type(r) is not np.ndarray or r.dtype is not data.dtype or r.shape != data.shape:
                r = _fitted(r, node, f, table, args).node.data
        elif table.series or type(r) is not Variable or r.node.data.shape != node.data.shape or \
                r.node.data.dtype != node.data.dtype:  # (a Variable of its node's shape and dtype fits already)
            r = table.fit(r, node, f, table, args)
        fitted.append(r)
    return fitted


def _fitted(r, node, f, table, args):
    """A rule's result as a Variable of its node's shape (summed back or broadcast) and dtype."""
    if type(r) is not Variable:
        r = Variable(as_float_array(r, where=f"{table.kind} rule of {f.name}"), requires_grad=False)
    data, target = r.node.data, node.data
    if data.shape != target.shape:
        r = _shaped(r, target.shape, f, table)
    if data.dtype is not target.dtype and data.dtype != target.dtype:
        r = variable.F.cast(r, target.dtype)  # float32 stays float32
    return r


def _shaped(r, shape, f, table):
    """r broadcast to its output's shape, or summed back to its input's; an error for any other mismatch."""
    small, large = (shape, r.shape) if table.per == "input" else (r.shape, shape)
    if not broadcasts(small, large):
        how = "sums back to it, as a broadcast does" if table.per == "input" else "broadcasts to it"
        raise ValueError(f"the {table.kind} rule of {f.name} returned a {table.result} of shape {r.shape} for "
                         f"an {table.per} of shape {shape}; a rule returns a {table.result} of its {table.per}'s "
                         f"shape (or one that {how})")
    return variable.F.sum_to(r, shape) if table.per == "input" else variable.F.broadcast_to(r, shape)


def broadcasts(small, large):
    """Whether an array of shape ``small`` broadcasts to ``large``."""
    lead = len(large) - len(small)
    return lead >= 0 and all(s == 1 or s == g for s, g in zip(small, large[lead:]))


backward = RuleTable("backward", "rule(ctx, *grad_outputs)", "gradient", "input")
forward = RuleTable("forward", "rule(ctx, *input_tangents) (register from minigrad.forward_functions)", "tangent",
                    "output")
