"""The tests of an exercise: small functions that compare a student's answer with the right one.

A test receives ``t``, a :class:`Recorder`: it reads the notebook's names as
``t.ns.MySigmoid``, says what it feeds in with ``t.given(...)``, and compares
with ``t.close(received, expected, what)``:

    @visible("4.1", hint="sigma(x) = 1 / (1 + e^-x)")
    def values_at_three_points(t):
        x = np.array([-2.0, 0.0, 3.0])
        t.given(f"x = {x}")
        t.close(t.ns.MySigmoid()(mg.Variable(x)), 1 / (1 + np.exp(-x)), "MySigmoid()(x)")

A comparison decides nothing: it writes down what the student's code
returned and what was expected, and verdict.judge decides from the two, the
same way in ``check()`` and in the grader. The grader makes the two apart:
what was returned in the student's sandbox, on a copy of the test with no
expected value in it (hide.py), and what was expected on the reference
answers, in its own process.
"""

import json
import signal
import traceback
import types
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

import minigrad as mg
from minigrad.backward_functions import lookup
from minigrad.grading.compare import show
from minigrad.grading.verdict import cap, judge
from minigrad.grading.verdict import stub_exercise as stub_exercise  # (the checks use it)
from minigrad.numerical import gradcheck

MAX_ELEMENTS = 100_000  # elements of one recorded value
MESSAGE_LIMIT = 4000  # characters of a test's own message (a diagnosis, a report of central differences)


class Failed(Exception):
    """The test cannot go on (a name is missing, a function recorded no node); the message says why."""


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
    higher: str = ""  # the likely cause when the first order is right and a higher one is not

    @property
    def key(self):
        return f"{self.exercise}/{self.fn.__name__}"


_tests = {}  # exercise id -> {test name: Test}


def _register(exercise, hint, is_hidden, higher=""):
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
        tests[fn.__name__] = Test(exercise, fn.__name__.replace("_", " "), fn, hint, is_hidden, higher)
        return fn

    return decorator


def visible(exercise, hint="", higher=""):
    """Register a visible test of exercise ``exercise`` ("N.M"): ``check("N.M")`` runs it.

    ``hint`` is shown whenever the test fails; ``higher``, a cause, only where the evidence points to it:
    the test compared a first derivative right and a higher one wrong (``gradcheck``, ``close(higher=True)``).
    """
    return _register(exercise, hint, False, higher)


def hidden(exercise, hint="", higher=""):
    """Register a hidden test: the grader runs it; ``check()`` does not, unless it was registered here."""
    return _register(exercise, hint, True, higher)


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


class Recorder:
    """What a test holds: the notebook's names, and comparisons that write down what they see, in order.

    ``observations``: what the student's code returned; ``expected``: what was
    expected, with the tolerances. ``side`` says which run this is: "check"
    (both, in the notebook), "received" (the sandbox: what was returned only)
    or "expected" (on the reference answers, where what they give is also
    what is expected of a derivative the test takes, ``_as_reference``).
    """

    def __init__(self, ns, side="check"):
        self.ns = Namespace(ns)
        self.side = side
        self.input = None
        self.observations, self.expected = [], []

    def given(self, text):
        """Say what goes in, so a failure or an exception can show it."""
        self.input = text

    def record(self, end):
        """The two records verdict.judge compares: (what was returned, what was expected)."""
        given = cap(self.input) if self.input else None
        return ({"observations": self.observations, "end": end},
                {"observations": self.expected, "end": {"status": "ok", "given": given}})

    def _note(self, kind, **entry):
        self.observations.append({"kind": kind, **entry})

    def _expect(self, kind, **entry):
        if self.side != "received":
            self.expected.append({"kind": kind, "given": cap(self.input) if self.input else None, **entry})

    def close(self, received, expected, what, rtol=1e-6, atol=1e-8, gy=None, higher=False):
        """``received`` (a Variable, array or number) equals ``expected`` to a tolerance, shape included.

        Pass ``gy``, the grad_outputs the test used, so a rule that forgot it is named as such; and
        ``higher`` for a derivative of order 2 or more compared after the first order was, so that a
        failure here gives the test's ``higher`` cause.
        """
        self._note("close", value=encode(received))
        self._expect("close", value=encode(expected), what=what, rtol=rtol, atol=atol, gy=encode(gy), higher=higher)

    def _as_reference(self, received, what, gy=None, higher=False):
        """To the grader, ``received`` must equal what the reference answer gives; check() has none."""
        if self.side != "check":
            self._note("close", value=encode(received))
            self._expect("close", value=encode(received), what=what, rtol=1e-6, atol=1e-8, gy=encode(gy),
                         higher=higher)

    def equal(self, received, expected, what):
        """``received`` is exactly ``expected``: plain data (numbers, strings, tuples, lists, dicts)."""
        self._note("equal", value=plain(received))
        self._expect("equal", value=plain(expected), what=what)

    def true(self, condition, message, higher=False):
        """A plain condition; ``message`` says what was expected (``higher``: as in ``close``)."""
        self._note("true", ok=bool(condition), message="" if condition else cap(message, MESSAGE_LIMIT),
                   higher=bool(higher))
        self._expect("true")

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
        """minigrad's derivatives of ``f`` up to ``order`` are right: in check(), by central differences,
        the first order alone first; to the grader, by the reference answer's, each projected on seeded
        random weights. A failure past the first order is the evidence for the test's ``higher`` cause."""
        if self.side != "check":
            cut = self._derivatives(f, inputs, order, what)
            if cut:
                self.true(False, f"{what}: {cut}", higher=True)
            return
        for upto in sorted({1, order}):
            try:
                gradcheck(f, inputs, order=upto, modes=("rev",))  # students write backward rules only
            except AssertionError as e:
                cut = self._derivatives(f, inputs, order, what) if upto > 1 else None  # (recorded nowhere here)
                self.true(False, f"{what}: {e}" + (f"\n{cut}" if cut else ""), higher=upto > 1)
                return

    def _derivatives(self, f, inputs, order, what):
        """Record the derivatives of orders 1 to ``order``; why those past order k come out as 0, or None.

        Order 1 is the gradient of sum(u * f(x)), u seeded random weights: the grad_outputs, shown, so
        that a rule that forgets them is named; order k + 1 that of the derivatives of order k, weighted so.
        """
        xs = [mg.Variable(np.array(x, dtype=np.float64)) for x in inputs]
        rng = np.random.default_rng(0)
        y = f(*xs)
        u = rng.standard_normal(np.shape(y))
        s = mg.functions.sum(y * mg.Variable(u, requires_grad=False))
        weights = show(u, "u = ") if u.size <= 12 else f"u of shape {u.shape}"
        for k in range(1, order + 1):
            gs = mg.grad(s, xs, create_graph=k < order, allow_unused=True)
            for n, g in enumerate(gs):
                if k == 1:
                    self._as_reference(g, f"{what}: the derivative of order 1 with respect to input {n}, weighted "
                                          f"by grad_outputs u (seeded random), {weights}", gy=u)
                else:
                    self._as_reference(g, f"{what}: the derivative of order {k} with respect to input {n} (of "
                                          f"the derivatives of order {k - 1}, weighted by seeded random numbers)",
                                       higher=True)
            if k < order:
                if any(g is None or g.creator is None for g in gs):
                    return (f"the derivative of order {k} has no graph (minigrad sees no dependence on the "
                            "input), so the derivatives after it come out as 0: a rule computed its result "
                            "from .data or with NumPy instead of minigrad functions on Variables")
                s = sum((mg.functions.sum(g * mg.Variable(rng.standard_normal(g.shape), requires_grad=False))
                         for g in gs), start=0.0)
        return None


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


def run(test, ns, time_limit=None):
    """Run one test on the notebook's names ``ns`` in check(): its Outcome, by the grader's verdict code."""
    t = Recorder(ns)
    end = run_recorded(test, t, time_limit)
    return judge(test, *t.record(end), limit=MESSAGE_LIMIT)


def run_recorded(test, t, time_limit=None):
    """Run ``test`` with the Recorder ``t``: how it ended, as JSON data (never an exception).

    {"status": "ok"}, {"status": "failed", "message"}, {"status": "timeout", "limit"}
    or {"status": "raised", "type", "message", "where"}.
    """
    try:
        with stop_after(time_limit, TestTimeout), mg.enable_grad():
            test.fn(t)
        return {"status": "ok"}
    except Failed as e:
        return {"status": "failed", "message": cap(e, MESSAGE_LIMIT)}
    except TestTimeout:
        return {"status": "timeout", "limit": time_limit}
    except Exception as e:  # the student's code raised
        return {"status": "raised", "type": cap(type(e).__name__, 100), "message": cap(e), "where": _where(e)}


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
