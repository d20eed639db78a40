"""A mistake costs its points once: a later answer tested with the reference answers to earlier ones.

4.2's rules call 4.1's ``MySumTo``: a wrong 4.1 fails 4.2's tests too. So a
failed test of an exercise that builds on a failed one (``checks.BUILDS_ON``)
runs again, in a second sandbox, with the solution cells of the earlier
exercises run in a copy of the notebook's names and swapped in for the test;
names and registered rules are put back afterwards. The test's expected
values stay outside that sandbox too.
"""

import ast
from contextlib import contextmanager

from minigrad.core import rules

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
    is swapped. The names and the rules of the three tables are put back after.
    """
    tables = [(t, {name: dict(d) for name, d in vars(t).items() if isinstance(d, dict)}) for t in rules.tables]
    copy, names = dict(ns), []
    try:
        for exercise, source in exercises:
            exec(compile(source, f"<reference answer to exercise {exercise}>", "exec"), copy)
            names += defined_names(source)
        ran = True
    except Exception:  # the notebook lacks what the reference answer needs (an import it deleted)
        ran = False
    saved = {name: ns.get(name, _MISSING) for name in names if name in copy} if ran else {}
    ns.update({name: copy[name] for name in saved})
    try:
        yield ran
    finally:
        for name, value in saved.items():
            if value is _MISSING:
                ns.pop(name, None)
            else:
                ns[name] = value
        for table, kept in tables:  # (rules, and what the table says of each: differentiable, lean)
            for name, d in kept.items():
                getattr(table, name).clear()
                getattr(table, name).update(d)


def phrase(ids):
    """'the reference answer to exercise 3.1' (or '... answers to exercises 5.1 and 5.2')."""
    if len(ids) == 1:
        return f"the reference answer to exercise {ids[0]}"
    return f"the reference answers to exercises {', '.join(ids[:-1])} and {ids[-1]}"
