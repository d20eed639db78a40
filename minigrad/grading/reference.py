"""Marking an exercise on its own: a later answer tested with the reference answers to earlier ones.

Exercises build on each other: 4.2's rules call 4.1's ``MySumTo``, 2.3's
pruned walker calls 2.1's ``topo_order``. A wrong 4.1 then fails 4.2's
tests too, and the student would lose the same mistake's points twice.

So the grader runs each exercise's tests on the student's own code first.
When a test fails and an exercise it builds on (``checks.BUILDS_ON``) failed
a test of its own, the test runs again, in a second sandbox, with the
reference answers to those earlier exercises in place of the student's:
their cells from the solution notebook are run in a copy of the notebook's
names, the names they define are swapped into the notebook for the test,
and everything is put back afterwards (names and registered rules alike).
A test that passes then is credited, and says with which reference
answers; the earlier exercise keeps the points it lost on its own tests.
The test's expected values stay outside that sandbox too.
"""

import ast
from contextlib import contextmanager

from minigrad.backward_functions import _differentiable, _rules

_MISSING = object()


def defined_names(source):
    """The names a cell defines at its top level: its classes, functions and assigned names."""
    names = []
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [t.id for target in targets for t in ast.walk(target) if isinstance(t, ast.Name)]
    return names


@contextmanager
def references_in_place(exercises, ns):
    """Within the block, ``ns`` holds the reference answers to ``exercises`` instead of the student's.

    ``exercises`` are pairs (id, the source of the exercise's solution
    cells), in notebook order. Yields True, or False when a reference answer
    cannot run in this notebook (a name it needs is missing): then nothing
    is swapped.
    """
    rules, differentiable = dict(_rules), dict(_differentiable)
    copy, names = dict(ns), []
    try:
        for exercise, source in exercises:
            exec(compile(source, f"<reference answer to exercise {exercise}>", "exec"), copy)
            names += defined_names(source)
    except Exception:  # the notebook lacks what the reference answer needs (an import it deleted)
        _restore_registry(rules, differentiable)
        yield False
        return
    saved = {name: ns.get(name, _MISSING) for name in names if name in copy}
    try:
        ns.update({name: copy[name] for name in saved})
        yield True
    finally:
        for name, value in saved.items():
            if value is _MISSING:
                ns.pop(name, None)
            else:
                ns[name] = value
        _restore_registry(rules, differentiable)


def _restore_registry(rules, differentiable):
    _rules.clear()
    _rules.update(rules)
    _differentiable.clear()
    _differentiable.update(differentiable)


def phrase(ids):
    """'the reference answer to exercise 4.1' (or '... answers to exercises 2.1 and 2.2')."""
    if len(ids) == 1:
        return f"the reference answer to exercise {ids[0]}"
    return f"the reference answers to exercises {', '.join(ids[:-1])} and {ids[-1]}"
