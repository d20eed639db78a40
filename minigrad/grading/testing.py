"""The tests of an exercise: small functions that compare a student's answer with the right one.

A test receives ``t``, a :class:`Probe`. It reads the student's names from
the notebook through ``t.ns`` (``t.ns.MySigmoid``), says what it feeds in
with ``t.given(...)``, and compares with ``t.close(received, expected, what)``.
A mismatch raises :class:`Failed` with the input, both values and the hint,
so the student reads what went wrong, never a bare traceback.

    @visible("4.1", hint="sigma(x) = 1 / (1 + e^-x)")
    def values_at_three_points(t):
        x = np.array([-2.0, 0.0, 3.0])
        t.given(f"x = {x}")
        t.close(t.ns.MySigmoid()(mg.Variable(x)), 1 / (1 + np.exp(-x)), "MySigmoid()(x)")

Visible tests live in ``minigrad.grading.checks`` (students may read them);
hidden tests live in the solution notebooks and are registered with
:func:`hidden` when the grader runs them.
"""

import signal
import traceback
from dataclasses import dataclass

import re

import numpy as np

import minigrad as mg
from minigrad.backward_functions import lookup
from minigrad.grading.compare import describe
from minigrad.numerical import gradcheck


NOT_WRITTEN = "not written yet"
NEEDS = "needs exercise"  # the start of a failure caused by an earlier, unwritten exercise


class Failed(Exception):
    """A test's verdict: the answer is wrong, and the message says how."""


class TestTimeout(BaseException):
    """Raised in a test that runs too long (a BaseException, so ``except Exception`` cannot hide it)."""


@dataclass
class Test:
    __test__ = False  # not a pytest test class

    exercise: str
    name: str
    fn: object
    hint: str
    hidden: bool


@dataclass
class Outcome:
    test: Test
    passed: bool
    message: str = ""
    with_reference: tuple = ()  # the earlier exercises whose reference answers it passed with (reference.py)


_tests = {}  # exercise id -> {test name: Test}


def _register(exercise, hint, is_hidden):
    def decorator(fn):
        test = Test(exercise, fn.__name__.replace("_", " "), fn, hint, is_hidden)
        _tests.setdefault(exercise, {})[fn.__name__] = test
        return fn

    return decorator


def visible(exercise, hint=""):
    """Register a visible test of exercise ``exercise`` ("N.M"): ``check("N.M")`` runs it."""
    return _register(exercise, hint, False)


def hidden(exercise, hint=""):
    """Register a hidden test: the grader runs it; ``check()`` does not, unless it was registered here."""
    return _register(exercise, hint, True)


def exercise_tests(exercise, include_hidden=True):
    """The tests registered for ``exercise``, visible first."""
    tests = list(_tests.get(exercise, {}).values())
    return [t for t in tests if not t.hidden] + [t for t in tests if t.hidden and include_hidden]


def forget_hidden():
    """Drop every hidden test (the grader registers the instructor's own afresh)."""
    for tests in _tests.values():
        for name in [n for n, t in tests.items() if t.hidden]:
            del tests[name]


class Namespace:
    """The notebook's names, read as attributes; a missing name fails with a message, not a NameError."""

    def __init__(self, names):
        self._names = names

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return self._names[name]
        except KeyError:
            raise Failed(
                f"{name} is not defined in the notebook: run the cell that defines it "
                "(and the cells above it) first"
            ) from None


class Probe:
    """What a test holds: the notebook's names and the comparisons it makes."""

    def __init__(self, ns):
        self.ns = Namespace(ns)
        self.input = None

    def given(self, text):
        """Say what goes in, so a failure or an exception can show it."""
        self.input = text

    def close(self, received, expected, what, rtol=1e-6, atol=1e-8, gy=None):
        """``received`` (a Variable, array or number) equals ``expected`` to a tolerance, shape included.

        Pass ``gy``, the grad_outputs the test used, so a rule that forgot it is named as such.
        """
        got = _as_array(received, what)
        want = np.asarray(expected, dtype=np.float64)
        if got.shape != want.shape or not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
            gy = None if gy is None else np.asarray(gy, dtype=np.float64)
            raise Failed(describe(got, want, what, rtol, atol, gy))

    def differentiable(self, v, wrt, what, why):
        """``v`` has a graph that reaches Variable ``wrt``, so it can be differentiated with respect to it.

        ``why`` says how a student's code loses the graph (``.data``, NumPy, create_graph=False).
        """
        self.true(isinstance(v, mg.Variable), f"{what} should be a Variable, got a {type(v).__name__}")
        if v.creator is None:
            raise Failed(f"{what} has no graph (its creator is None), so it cannot be differentiated "
                         f"again: {why}")
        (g,) = mg.grad(mg.functions.sum(v), wrt, allow_unused=True, retain_graph=True)
        if g is None:
            raise Failed(f"{what} has a graph, but it does not reach the input, so its derivative would "
                         f"be 0: {why}")

    def rule(self, y, gy):
        """Call the registered rule of ``y``'s creator with ``gy``, as the walker would: a tuple of gradients.

        The walker sums a gradient of a broadcast shape back to its input's
        shape; calling the rule directly shows what the rule itself returns.
        """
        f = y.creator
        if f is None:
            raise Failed("the function recorded no node, so its rule cannot be called")
        f.needs_input_grad = tuple(True for _ in f.parents())
        gxs = lookup(f.name)(f, mg.Variable(np.asarray(gy, dtype=np.float64), requires_grad=False))
        return tuple(gxs) if isinstance(gxs, (tuple, list)) else (gxs,)

    def gradcheck(self, f, inputs, order, what):
        """minigrad's derivatives of ``f`` agree with central differences up to ``order``."""
        try:
            gradcheck(f, inputs, order=order, modes=("rev",))  # students write backward rules only
        except AssertionError as e:
            raise Failed(f"{what}: {e}{_cut_graph(f, inputs, e)}") from None

    def true(self, condition, message):
        """A plain condition; ``message`` says what was expected."""
        if not condition:
            raise Failed(message)


def _cut_graph(f, inputs, error):
    """Why gradcheck failed at order n >= 2, when it is because derivative n - 1 has no graph ('' if not).

    A rule computed on ``.data`` (or with NumPy) returns a constant: its
    result is right, but minigrad sees no dependence on x, so every higher
    derivative comes out as 0.
    """
    found = re.search(r"derivative of order (\d+)", str(error))
    if found is None or int(found.group(1)) < 2:
        return ""
    xs = [mg.Variable(np.array(x, dtype=np.float64)) for x in inputs]
    rng = np.random.default_rng(0)
    try:
        y = f(*xs)
        s = mg.functions.sum(y * rng.standard_normal(y.shape))
        for k in range(1, int(found.group(1))):
            gs = mg.grad(s, xs, create_graph=True, allow_unused=True)
            if any(g is None or g.creator is None for g in gs):
                return (f"\nthe derivative of order {k} has no graph (minigrad sees no dependence on "
                        "the input), so the derivatives after it come out as 0: a rule computed its "
                        "result from .data or with NumPy instead of minigrad functions on Variables")
            s = sum((mg.functions.sum(g * rng.standard_normal(g.shape)) for g in gs), start=0.0)
    except Exception:  # the diagnosis is a bonus: the failure itself is already reported
        return ""
    return ""


def _as_array(x, what):
    if isinstance(x, mg.Variable):
        x = x.data
    if x is None:
        raise Failed(f"{what} is None: does the function return its result?")
    try:
        return np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise Failed(f"{what} should be numbers, got a {type(x).__name__}: {x!r:.200}") from None


def run(test, ns, time_limit=None):
    """Run one test on the notebook names ``ns``: an Outcome, never an exception."""
    t = Probe(ns)
    written = True
    previous = _start_alarm(time_limit)
    try:
        with mg.enable_grad():
            test.fn(t)
        return Outcome(test, True)
    except Failed as e:
        message = str(e)
    except TestTimeout:
        message = f"did not finish in {time_limit:g} s: is there an endless loop?"
    except NotImplementedError as e:
        stub = stub_exercise(e)
        written = stub is None
        if written:
            message = f"raised NotImplementedError: {e}"
        elif stub == test.exercise:
            message = f"{NOT_WRITTEN} (NotImplementedError: {e})"
        else:  # this exercise calls the student's answer to an earlier one
            message = f"{NEEDS} {stub}, which is {NOT_WRITTEN} (NotImplementedError: {e})"
    except Exception as e:  # the student's code raised: say where, in one line
        message = f"raised {type(e).__name__}: {e}{_where(e)}"
    finally:
        _stop_alarm(previous)
    if t.input is not None:
        message = f"input: {t.input}\n{message}"
    if test.hint and written:  # a hint helps an attempt; before one, it would only give the answer away
        message += f"\nhint: {test.hint}"
    return Outcome(test, False, message)


def stub_exercise(e):
    """The exercise ("N.M") whose unwritten stub raised ``e``, or None: the stubs say "Exercise N.M: write ..."."""
    found = re.match(r"Exercise (\d+\.\d+):", str(e)) if isinstance(e, NotImplementedError) else None
    return found.group(1) if found else None

def _where(e):
    """' (in f, line n of its cell)' for the innermost frame outside minigrad, or ''."""
    frames = [f for f in traceback.extract_tb(e.__traceback__)
              if "minigrad" not in f.filename and "site-packages" not in f.filename]
    if not frames:
        return ""
    f = frames[-1]
    if f.name == "<module>":
        return f" (line {f.lineno} of a cell)"
    return f" (in {f.name}, line {f.lineno} of its cell)"


def _on_alarm(signum, frame):
    raise TestTimeout()


def _start_alarm(seconds):
    if not seconds or not hasattr(signal, "setitimer"):
        return None
    try:
        previous = signal.signal(signal.SIGALRM, _on_alarm)
    except ValueError:  # not the main thread: no time limit
        return None
    signal.setitimer(signal.ITIMER_REAL, seconds)
    return previous


def _stop_alarm(previous):
    if previous is None:
        return
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)
