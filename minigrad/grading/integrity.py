"""Has minigrad been tampered with? A fingerprint of its code, taken where it is used.

The grader takes the fingerprint of a fresh minigrad in its own process,
and the kernel takes it again after the student's cells have run. A
function replaced (``mg.grad = lambda *a, **k: ...``), a method patched onto
a class, a module that minigrad uses swapped for a stand-in, a library rule
re-registered, or a NumPy comparison the tests rely on swapped out: each
changes an entry, and :func:`differences` names it.
"""

import hashlib
import importlib
import inspect
import pkgutil
import sys
import types
from pathlib import Path

import numpy as np

import minigrad

# NumPy functions the tests compare with: replacing one would let a wrong answer pass.
NUMPY_NAMES = ("allclose", "isclose", "asarray", "array", "abs", "max", "all", "any", "array_equal")


def minigrad_modules():
    """Every module of the minigrad package, imported (sorted by name)."""
    names = ["minigrad"]
    for info in pkgutil.walk_packages(minigrad.__path__, "minigrad."):
        if not info.name.endswith(".__main__"):  # (a command: importing it would run it)
            names.append(info.name)
    modules = []
    for name in sorted(names):
        try:
            modules.append(importlib.import_module(name))
        except Exception:  # an optional part (e.g. drawing) whose dependency is missing
            continue
    return modules


def fingerprint():
    """{where: digest} for every function, method and registered rule of minigrad."""
    from minigrad.backward_functions import _rules

    entries = {}
    for module in minigrad_modules():
        for name, value in sorted(vars(module).items()):
            where = f"{module.__name__}.{name}"
            if isinstance(value, type) and value.__module__.startswith("minigrad"):
                for attr, member in sorted(vars(value).items()):
                    digest = _digest(member)
                    if digest is not None:
                        entries[f"{where}.{attr}"] = digest
            else:
                digest = _digest(value)
                if digest is not None:
                    entries[where] = digest
    for name, rule in sorted(_rules.items()):
        # the library's rules only: a rule a notebook (or a test) adds for its own
        # function is no tampering, while one that replaces a library rule shows up
        # here as that rule deleted and changed
        if getattr(rule, "__module__", "").startswith("minigrad."):
            entries[f"registered rule of {name}"] = _digest(rule) or repr(type(rule))
    for name in NUMPY_NAMES:
        entries[f"numpy.{name}"] = _digest(getattr(np, name, None)) or "missing"
    return entries


def _digest(value):
    """A digest of a function's code (its bytecode, constants and names), or None for data."""
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    if isinstance(value, property):
        return "|".join(str(_digest(f)) for f in (value.fget, value.fset))
    if isinstance(value, types.FunctionType):
        return _code_digest(value.__code__)
    if inspect.isbuiltin(value) or isinstance(value, np.ufunc):
        return f"builtin {getattr(value, '__module__', '')}.{getattr(value, '__qualname__', value.__name__)}"
    if isinstance(value, types.ModuleType):  # the module imported under its name, from its file
        known = sys.modules.get(value.__name__) is value
        return f"module {value.__name__} from {getattr(value, '__file__', None)}" + ("" if known else " (a stand-in)")
    return None


def _code_digest(code):
    h = hashlib.sha256(code.co_code)
    h.update(repr(code.co_names).encode())
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            h.update(_code_digest(const).encode())
        else:
            h.update(repr(const).encode())
    return h.hexdigest()[:16]


def differences(pristine, current):
    """What changed between two fingerprints, as readable phrases (empty when nothing did).

    Entries that only ``current`` has are new registrations (a student's own
    Function rules, an optional module imported): those are allowed.
    """
    changed = [f"{where} was replaced" for where in pristine
               if where in current and current[where] != pristine[where]]
    removed = [f"{where} was deleted" for where in pristine if where not in current]
    return changed + removed


class CodeChanged(RuntimeError):
    """minigrad's files changed on disk while a class was being graded."""

    def __init__(self, message=(
            "minigrad's files changed on disk while grading (an upgrade, a git pull or an edit), so the "
            "notebooks' kernels no longer ran the code the grader started with, and every notebook graded "
            "since would look tampered with. Grade again once minigrad's files stay as they are.")):
        super().__init__(message)  # (a message argument, so that the exception pickles between processes)


def source_digest():
    """A digest of minigrad's source files as they are on disk now.

    A kernel imports minigrad from disk afresh, so an upgrade or an edit
    during a grading run makes its fingerprint differ from the one the
    grader took at the start, through no fault of the notebook. When the
    files' digest has moved too, that is the reason, not tampering.
    """
    h = hashlib.sha256()
    root = Path(minigrad.__file__).parent
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]

