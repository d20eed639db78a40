"""The tests of an exercise: small functions that compare a student's answer with the right one.

A test receives ``t``, a :class:`Probe`: it reads the notebook's names as
``t.ns.MySigmoid``, says what it feeds in with ``t.given(...)``, and compares
with ``t.close(received, expected, what)``; a mismatch raises :class:`Failed`
with the input, both values and the hint, never a bare traceback.

    @visible("4.1", hint="sigma(x) = 1 / (1 + e^-x)")
    def values_at_three_points(t):
        x = np.array([-2.0, 0.0, 3.0])
        t.given(f"x = {x}")
        t.close(t.ns.MySigmoid()(mg.Variable(x)), 1 / (1 + np.exp(-x)), "MySigmoid()(x)")

``check()`` runs a test with a Probe, which decides at once. The grader runs
it with a :class:`Recorder` twice: in the student's sandbox, on a copy with
no expected value in it (hide.py), and on the reference answers in its own
process; verdict.py compares the two records outside the sandbox.
"""

import json
import re
import signal
import traceback
import types
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

import minigrad as mg
from minigrad.backward_functions import lookup
from minigrad.grading.compare import mismatch
from minigrad.numerical import gradcheck

NOT_WRITTEN = "not written yet"
NEEDS = "needs exercise"  # the start of a failure caused by an earlier, unwritten exercise
TEXT_LIMIT = 300  # characters of any text that comes from a student's code, wherever it is shown
MAX_ELEMENTS = 100_000  # elements of one recorded value


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

    @property
    def key(self):
        return f"{self.exercise}/{self.fn.__name__}"


@dataclass
class Outcome:
    test: Test
    passed: bool
    message: str = ""
    with_reference: tuple = ()  # the earlier exercises whose reference answers it passed with


_tests = {}  # exercise id -> {test name: Test}


def _register(exercise, hint, is_hidden):
    def decorator(fn):
        tests = _tests.setdefault(exercise, {})
        earlier = tests.get(fn.__name__)
        if earlier is not None and earlier.hidden != is_hidden:
            kinds = ("visible", "hidden") if is_hidden else ("hidden", "visible")
            raise ValueError(
                f"{'hidden' if is_hidden else 'visible'}({exercise!r}): exercise {exercise} already has a "
                f"{kinds[0]} test named {fn.__name__!r}; a {kinds[1]} test of the same name would replace it "
                "without a word. Give one of them another name"
            )
        tests[fn.__name__] = Test(exercise, fn.__name__.replace("_", " "), fn, hint, is_hidden)
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


def exercise_order(exercise):
    """The sort key of an exercise id: 1.10 after 1.9."""
    return tuple(int(p) if p.isdigit() else 0 for p in exercise.split("."))


def load_source(source, name):
    """Run a module of tests (a check module, or a solution notebook's hidden tests), registering them."""
    module = types.ModuleType(name)
    module.__dict__.update(np=np, mg=mg, F=mg.functions, hidden=hidden, visible=visible)
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    return module


def cap(text, limit=TEXT_LIMIT):
    """``text`` (from a student's code) cut to ``limit`` characters."""
    text = str(text)
    return text if len(text) <= limit else text[:limit] + "... (cut)"


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
    """What a test holds in ``check()``: the notebook's names and comparisons that decide at once."""

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
        gy = None if gy is None else np.asarray(gy, dtype=np.float64)
        failure = mismatch(_as_array(received, what), np.asarray(expected, dtype=np.float64), what, rtol, atol, gy)
        if failure is not None:
            raise Failed(failure)

    def equal(self, received, expected, what):
        """``received`` is exactly ``expected``: plain data (numbers, strings, tuples, lists, dicts)."""
        if plain(received) != plain(expected):
            raise Failed(f"{what} is wrong\nexpected: {cap(expected)}\nreceived: {cap(received)}")

    def differentiable(self, v, wrt, what, why):
        """``v`` has a graph that reaches Variable ``wrt``, so it can be differentiated with respect to it.

        ``why`` says how a student's code loses the graph (``.data``, NumPy, create_graph=False).
        """
        self.true(isinstance(v, mg.Variable), f"{what} should be a Variable, got a {type(v).__name__}")
        self.true(v.creator is not None, f"{what} has no graph (its creator is None), so it cannot be "
                                         f"differentiated again: {why}")
        (g,) = mg.grad(mg.functions.sum(v), wrt, allow_unused=True, retain_graph=True)
        self.true(g is not None, f"{what} has a graph, but it does not reach the input, so its derivative "
                                 f"would be 0: {why}")
        self._as_reference(g, f"the derivative of sum({what})")

    def _as_reference(self, received, what, rtol=1e-6, atol=1e-8, gy=None):
        """In check(), nothing; to the grader, ``received`` must equal what the reference answer gives."""

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
        except AssertionError as e:  # the derivatives as the grader records them say whether a graph was cut
            walk = Recorder(self.ns._names, "received")
            walk.gradcheck(f, inputs, order, what)
            cut = [o["message"].split(": ", 1)[1] for o in walk.observations if o["kind"] == "true"]
            raise Failed(f"{what}: {e}" + "".join(f"\n{m}" for m in cut)) from None

    def true(self, condition, message):
        """A plain condition; ``message`` says what was expected."""
        if not condition:
            raise Failed(message)


class Recorder(Probe):
    """A Probe that decides nothing: it writes down observations, one per comparison, in order.

    ``side="received"`` (in the sandbox): what the student's code returned;
    the expected values are never computed there (hide.py strips them).
    ``side="expected"`` (on the reference answers, outside): what was expected,
    with the tolerances; the reference answer must pass every comparison.
    """

    def __init__(self, ns, side):
        super().__init__(ns)
        self.side = side
        self.observations = []

    def _note(self, kind, **entry):
        self.observations.append({"kind": kind, "given": cap(self.input) if self.input else None, **entry})

    def close(self, received, expected, what, rtol=1e-6, atol=1e-8, gy=None):
        if self.side == "expected":
            super().close(received, expected, what, rtol, atol, gy)
            received = expected
        self._as_reference(received, what, rtol, atol, gy)

    def _as_reference(self, received, what, rtol=1e-6, atol=1e-8, gy=None):
        if self.side == "expected":
            self._note("close", value=encode(received), what=what, rtol=rtol, atol=atol, gy=encode(gy))
        else:
            self._note("close", value=encode(received))

    def equal(self, received, expected, what):
        if self.side == "expected":
            super().equal(received, expected, what)
            self._note("equal", value=plain(expected), what=what)
        else:
            self._note("equal", value=plain(received))

    def true(self, condition, message):
        if self.side == "expected" and not condition:
            raise Failed(message)
        self._note("true", ok=bool(condition), message=cap(message) if not condition else "")

    def gradcheck(self, f, inputs, order, what):
        """The derivatives of orders 1 to ``order`` (each projected on seeded random directions)."""
        xs = [mg.Variable(np.array(x, dtype=np.float64)) for x in inputs]
        rng = np.random.default_rng(0)
        y = f(*xs)
        s = mg.functions.sum(y * mg.Variable(rng.standard_normal(np.shape(y)), requires_grad=False))
        for k in range(1, order + 1):
            gs = mg.grad(s, xs, create_graph=k < order, allow_unused=True)
            for n, g in enumerate(gs):
                self._as_reference(g, f"{what}: the derivative of order {k} with respect to input {n}")
            if k < order:
                if any(g is None or g.creator is None for g in gs):
                    self.true(False, f"{what}: the derivative of order {k} has no graph (minigrad sees no "
                                     "dependence on the input), so the derivatives after it come out as 0: a "
                                     "rule computed its result from .data or with NumPy instead of minigrad "
                                     "functions on Variables")
                    return
                s = sum((mg.functions.sum(g * mg.Variable(rng.standard_normal(g.shape), requires_grad=False))
                         for g in gs), start=0.0)


def encode(x):
    """A value as JSON data: {"shape", "data"} for numbers, None, or {"type", "repr"} for anything else."""
    if x is None:
        return None
    if isinstance(x, mg.Variable):
        x = x.data
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        return {"type": type(x).__name__, "repr": cap(repr(x))}
    if a.size > MAX_ELEMENTS:
        return {"type": f"array of {a.size} elements", "repr": "(too large to record)"}
    return {"shape": list(a.shape), "data": a.ravel().tolist()}


def plain(x):
    """``x`` as plain JSON data, so that two runs' values compare with ==: tuples become lists."""
    try:
        return json.loads(json.dumps(x, default=lambda v: v.item() if isinstance(v, np.generic) else cap(repr(v))))
    except (TypeError, ValueError, RecursionError):
        return cap(repr(x))


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
    """Run one test on the notebook names ``ns`` in check(): an Outcome, never an exception."""
    t = Probe(ns)
    end = run_recorded(test, t, time_limit)
    if end["status"] == "ok":
        return Outcome(test, True)
    return Outcome(test, False, message(test, t.input, end))


def run_recorded(test, t, time_limit=None):
    """Run ``test`` with the probe ``t``: how it ended, as JSON data (never an exception).

    {"status": "ok"}, {"status": "failed", "message"}, {"status": "timeout", "limit"}
    or {"status": "raised", "type", "message", "where"}.
    """
    try:
        with stop_after(time_limit, TestTimeout), mg.enable_grad():
            test.fn(t)
        return {"status": "ok"}
    except Failed as e:
        return {"status": "failed", "message": cap(e, 4000)}
    except TestTimeout:
        return {"status": "timeout", "limit": time_limit}
    except Exception as e:  # the student's code raised
        return {"status": "raised", "type": cap(type(e).__name__, 100), "message": cap(e), "where": _where(e)}


def message(test, given, end, failure=None):
    """What a student reads of a failed test: the input, what went wrong, and the hint of an attempt."""
    written, status = True, end.get("status")
    stub = stub_exercise(end["message"]) if end.get("type") == "NotImplementedError" else None
    if failure is not None:
        text = failure
    elif status == "timeout":
        text = f"did not finish in {end['limit']:g} s: is there an endless loop?"
    elif status in ("failed", "not run"):
        text = end["message"]
    elif stub is not None:
        written = False
        if stub == test.exercise:
            text = f"{NOT_WRITTEN} (NotImplementedError: {end['message']})"
        else:  # this exercise calls the student's answer to an earlier one
            text = f"{NEEDS} {stub}, which is {NOT_WRITTEN} (NotImplementedError: {end['message']})"
    else:
        text = f"raised {end['type']}: {end['message']}{end.get('where', '')}"
    if given:
        text = f"input: {given}\n{text}"
    if test.hint and written:  # a hint helps an attempt; before one, it would only give the answer away
        text += f"\nhint: {test.hint}"
    return text


def stub_exercise(e):
    """The exercise ("N.M") whose unwritten stub raised ``e`` (or said its message), or None."""
    if isinstance(e, BaseException) and not isinstance(e, NotImplementedError):
        return None
    found = re.match(r"Exercise (\d+\.\d+):", str(e))
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
    return cap(f" (in {f.name}, line {f.lineno} of its cell)", 100)


@contextmanager
def stop_after(seconds, error):
    """Within the block, ``error`` is raised after ``seconds``; no limit where no timer can be set (a thread)."""
    def on_alarm(signum, frame):
        raise error()

    try:
        previous = signal.signal(signal.SIGALRM, on_alarm) if seconds else False
    except (ValueError, AttributeError):  # not the main thread, or no SIGALRM (Windows)
        previous = False
    if previous is False:
        yield
        return
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous or signal.SIG_DFL)  # (None: a handler set outside Python)
