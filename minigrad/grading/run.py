"""The grader's side of the sandbox wall: start a worker (worker.py, the side a notebook runs on), take
its events, start it again where it got stuck, and turn what went wrong into notes for the student.

The events are untrusted (the student's code can write them too) and taken
in order by ``_Watch``, one handler an event, through its stages: CELLS
running, VISIBLE tests, HIDDEN tests sent. A start moves the worker on past
the furthest place (a cell or a test) it reached, never back; an end counts
only for the place it is in; the hidden tests are sent when it asks,
between places. From then on only theirs count, and nothing a worker of the
notebook says is shown, nor a visible test run again: a worker started
again could have kept something of them.

``_Clock`` keeps the three clocks: per cell, per test, and per notebook (one
deadline for its workers). Where the worker does not stop a cell or a test
itself (a bare ``except:`` swallows the signal), or dies, the grader kills
it and starts it again without that cell, or from the next test: one stuck
test costs only itself.
"""

import contextlib
import json
import os
import selectors
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

from minigrad.grading import sandbox
from minigrad.grading.verdict import MAX_VALUES, cap, json_values

GRACE = 2.0  # seconds past a limit before the grader kills the worker
GAP = 30  # seconds the worker may take to start, or between its cells and tests
MAX_LINE = 5_000_000  # bytes of one event line
MAX_EVENTS_BYTES = 200_000_000  # bytes of events from one notebook's workers
MAX_RESTARTS = 6
MAX_NOTES = 20
CELLS, VISIBLE, HIDDEN = "cells running", "visible tests", "hidden tests sent"  # a worker's stages, in order


@dataclass
class RunResult:
    tests: dict = field(default_factory=dict)  # "N.M/name" -> the line of its event, or a record the grader made
    notes: list = field(default_factory=list)  # what went wrong in the cells and the process, for the student
    printed: int = None  # bytes the cells printed, once the worker has said (at its end)
    read: int = 0  # bytes of events read from all its workers
    hidden_sent: bool = False  # a worker has had the hidden tests: what workers say is shown no more

    def records(self, key):
        """(what test ``key`` returned, what it expected), each None where not said. A line is read only
        here, one test at a time: a few MB of JSON ('{},' repeated) unpack into GBs of objects."""
        line = self.tests.get(key)
        if not isinstance(line, bytes):
            return line, None
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):
            return None, None
        return event.get("received"), event.get("expected")


def deadline(settings, tests):
    """When a notebook's runs must have ended: its cells have ``settings.notebook_timeout`` seconds in all
    (the worker skips those past it); should the student's code undo that, or a worker be started again,
    twice that time, plus each of the ``tests``' time."""
    return time.monotonic() + 2 * settings.notebook_timeout + GAP + tests * (settings.test_time_limit + GRACE)


class _Clock:
    """All the time a worker has: the notebook's deadline (``until``), and the limit of the place it is in (a
    cell's, a test's, or between them the longest of those and GAP) from when it got there, plus GRACE."""

    def __init__(self, request, until):
        self.until, self.limits = until, {"cell": request["cell_timeout"], "test": request["test_time_limit"],
                                          None: max(request["cell_timeout"], request["test_time_limit"], GAP)}
        self.restart(None)

    def restart(self, place):
        """The worker got to ``place`` (None: between places) now."""
        self.limit, self.since = self.limits[place and place[0]] + GRACE, time.monotonic()

    def out_of_time(self, place):
        """(why, where) once the deadline or the limit of ``place``, where the worker is, has passed; else None."""
        now = time.monotonic()
        if now > self.until:
            return "notebook", None
        if now - self.since > self.limit:
            return ("timeout", place) if place else ("it stopped answering", None)
        return None


def run_worker(request, settings, until=None):
    """Run ``request`` (main's) to the end, restarting after a stuck cell or test: a RunResult.

    ``until``: the notebook's deadline, shared by all its runs (default: this run's own).
    """
    result = RunResult()
    request = dict(request, skip=[], cells_timeout=settings.notebook_timeout, cell_timeout=settings.cell_timeout,
                   test_time_limit=settings.test_time_limit, memory_limit=settings.memory_limit)
    until = deadline(settings, len(request["tests"])) if until is None else until
    pending = list(request["tests"])
    for _ in range(MAX_RESTARTS + 1):
        request["tests"] = [t for t in pending if t not in result.tests
                            and (t in request["hidden"] or not result.hidden_sent)]
        why, where = _run_once(request, settings, until, result)
        if why is None:
            break
        if why == "notebook":
            _note(result, "the notebook ran longer than its cells' and tests' time in all and was stopped; "
                          "the tests it had not run fail")
            break
        if why != "timeout":
            _note(result, f"the notebook's process stopped ({why}); the tests it had not run fail")
        if where is None:
            break
        kind, at = where
        if kind == "cell":
            request["skip"].append(at)
            if why == "timeout":
                _note(result, f"{_label(request, at)} ran longer than {settings.cell_timeout:g} s and did not "
                              "stop when interrupted: the notebook was run again without it")
        elif why == "timeout":
            result.tests[at] = {"observations": [], "end": {"status": "timeout", "limit": settings.test_time_limit}}
        else:
            result.tests[at] = {"observations": [], "end": {
                "status": "not run", "message": f"the notebook's process died during this test ({why})"}}
    if (result.printed or 0) > settings.output_limit:
        _note(result, f"the notebook printed more than {settings.output_limit / 1e6:g} MB; "
                      "the rest of its output was dropped")
    return result


def _run_once(request, settings, until, result):
    """One worker process: (None, None) when it ran to the end, else (why, the cell or test it was in)."""
    if settings.sandbox or not sandbox.drops_privileges():
        return _run_as(None, request, settings, until, result)
    with sandbox.unprivileged_user() as user:
        return _run_as(user, request, settings, until, result)


def _run_as(user, request, settings, until, result):
    argv = [sys.executable, "-m", "minigrad.grading.worker"]
    limits = sandbox.Limits(settings.memory_limit, user=user)
    hidden = (json.dumps(request["hidden_sources"]) + "\n").encode()
    request = {key: value for key, value in request.items() if key != "hidden_sources"}
    read_end, write_end = os.pipe()
    with tempfile.TemporaryDirectory(prefix="minigrad-grade-", ignore_cleanup_errors=True) as folder:
        if user is not None:
            os.chown(folder, user, user)
        env = None if settings.sandbox else sandbox.unsandboxed_env(folder)
        seccomp = sandbox.seccomp_fd() if settings.sandbox else None
        try:
            process = subprocess.Popen(  # (unsandboxed, the folder is its working directory and HOME)
                limits.wrap(sandbox.command(argv, seccomp) if settings.sandbox else argv), stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True, cwd=folder,
                pass_fds=(write_end, *([seccomp] if seccomp is not None else [])))
        except OSError as e:
            os.close(read_end)
            limits.release()
            return f"the worker could not start: {e}", None
        finally:
            os.close(write_end)
            if seccomp is not None:
                os.close(seccomp)
        try:
            with contextlib.suppress(OSError):  # (it died at once: _watch says how)
                process.stdin.write((json.dumps(dict(request, events_fd=write_end)) + "\n").encode())
                process.stdin.flush()

            def send_hidden():  # (a thread: the worker may never read them)
                with contextlib.suppress(OSError, ValueError):
                    process.stdin.write(hidden)
                    process.stdin.close()

            return _watch(process, read_end, request, until, result,
                          lambda: threading.Thread(target=send_hidden, daemon=True).start())
        finally:
            with contextlib.suppress(OSError):
                os.killpg(process.pid, 9)  # (its session: whatever it started dies with it)
            process.wait()
            os.close(read_end)
            limits.release()


def _watch(process, fd, request, until, result, send_hidden):
    """Read the worker's events into ``result`` as it runs: (None, None) when it ended well, else (why, where).

    ``send_hidden()`` sends the hidden tests, once the worker asks for them.
    """
    watch, pipe = _Watch(request, _Clock(request, until), result, send_hidden), _Pipe(fd, result)
    while not (stopped := watch.clock.out_of_time(watch.place)):
        lines = pipe.read(process)
        if lines is None:
            return watch.on_exit(process)
        if pipe.too_much:
            return "it wrote more than the grader reads", watch.place
        for line in lines:
            event = _event(line)
            if event is not None:
                watch.take(event, line)
    return stopped


class _Watch:
    """One worker as its events say: its ``stage``, the ``place`` it is in (None between places) and the rank of
    the furthest it ``reached`` (once the hidden tests are sent, at least the last place before them)."""

    def __init__(self, request, clock, result, send_hidden):
        self.request, self.clock, self.result, self.send_hidden = request, clock, result, send_hidden
        places = [("cell", k) for k, source in enumerate(request["cells"]) if source.strip()]
        self.rank = {place: i for i, place in enumerate(places + [("test", key) for key in request["tests"]])}
        self.hidden = [self.rank["test", key] for key in request["tests"] if key in request["hidden"]]
        self.stage, self.place, self.reached = CELLS, None, -1
        result.printed = None  # (each worker says it at its end; a worker before it may have been killed)

    def take(self, event, line):
        """One event (``line`` as it came): each of its parts to its handler."""
        if event.get("send") == "hidden tests":
            self.on_send()
        place = _place(event)
        ahead = place in self.rank and self.rank[place] > self.reached  # (a start moves on, never back)
        here = place is not None and place == self.place  # (an end counts only for the place it is in)
        if ahead and place[0] == "cell" and event.get("over_budget") is True:
            self.on_over_budget(place)
        elif ahead and event.get("start") is True:
            self.on_start(place)
        elif here and place[0] == "cell":
            self.on_cell_end(place[1], event)
        elif here:
            self.on_test_end(place[1], event, line)
        if type(event.get("printed")) is int:  # (said last: the worker ran to its end)
            self.result.printed = event["printed"]

    def move(self, place):
        """The worker is at ``place`` now (None: between places), on its clock."""
        self.place = place
        self.clock.restart(place)

    def on_start(self, place):
        """A cell or a test starts, past the furthest place reached."""
        self.reached = self.rank[place]
        if place[0] == "test" and self.stage == CELLS:
            self.stage = VISIBLE
        self.move(place)

    def on_over_budget(self, place):
        """Said instead of a cell's start: the cells have had their time, and from this one on are not run."""
        self.reached = self.rank[place]
        self.move(None)
        if not self.result.hidden_sent:
            _note(self.result, f"the cells ran longer than {self.request['cells_timeout']:g} s in all: from "
                               f"{_label(self.request, place[1])} on, they were not run")

    def on_send(self):
        """The worker asks for the hidden tests: sent once, between places only; from now on only theirs count."""
        if self.hidden and self.stage != HIDDEN and self.place is None:
            self.send_hidden()
            self.stage, self.result.hidden_sent = HIDDEN, True
            self.reached = max(self.reached, self.hidden[0] - 1)
            self.move(None)

    def on_test_end(self, key, event, line):
        """A test's record: its line kept as it came (verdict.judge reads it as untrusted data)."""
        if "received" in event:
            self.result.tests.setdefault(key, line)
            self.move(None)

    def on_cell_end(self, k, event):
        """A cell ran (error null) or raised: a note, unless a worker of the notebook has had the hidden tests."""
        error = event.get("error", False)
        if error is not None and not isinstance(error, str):
            return
        if error is not None and not self.result.hidden_sent:
            _note(self.result, _cell_note(self.request, k, error))
        self.move(None)

    def on_exit(self, process):
        """The pipe closed, or the worker ended: (None, None) where it ran to its end, else (why, where)."""
        if self.result.printed is not None:
            return None, None
        code = process.wait()
        if self.stage == HIDDEN:  # (an exit status chosen by the student's code would say something of them)
            return "during the hidden tests", self.place
        return (f"exit status {code}" if code >= 0 else f"killed by signal {-code}"), self.place


class _Pipe:
    """The grader's end of the event pipe, within the bytes the grader reads: ``too_much`` once past them."""

    def __init__(self, fd, result):
        self.fd, self.result, self.buffer, self.too_much = fd, result, b"", False
        self.selector = selectors.DefaultSelector()
        self.selector.register(fd, selectors.EVENT_READ)

    def read(self, process):
        """The whole lines that came in 0.2 s, maybe none; None once the worker has ended."""
        if not self.selector.select(timeout=0.2):
            return None if process.poll() is not None and not self.selector.select(timeout=0) else []
        chunk = os.read(self.fd, 1 << 20)
        if not chunk:
            return None
        self.result.read += len(chunk)
        *lines, self.buffer = (self.buffer + chunk).split(b"\n")
        self.too_much = self.result.read > MAX_EVENTS_BYTES or len(self.buffer) > MAX_LINE
        return lines


def _event(line):
    """The event a line holds (a dict), or None."""
    if json_values(line) > MAX_VALUES:  # (a test's record holds some 600 values; this, 250,000)
        return None
    try:
        event = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return event if isinstance(event, dict) else None


def _place(event):
    """The cell or test an event is about: ("cell", k), ("test", key) or None."""
    cell, test = event.get("cell"), event.get("test")
    if type(cell) is int:
        return "cell", cell
    return ("test", test) if type(test) is str else None


def _cell_note(request, k, error):
    """The note for cell k's ``error``."""
    label = _label(request, k)
    if error.startswith("CellTimeout"):
        return f"{label} ran longer than {request['cell_timeout']:g} s and was interrupted (an endless loop?)"
    over = error.startswith("MemoryError") and request["memory_limit"]
    return f"{label} raised {cap(error, 400)}" + (
        f" (more than the {request['memory_limit'] / 2**20:g} MB a notebook may use)" if over else "")


def _note(result, note):
    """Add a note, once (a restarted worker runs the cells again), and at most MAX_NOTES of them."""
    if note in result.notes[:MAX_NOTES]:
        return
    if len(result.notes) < MAX_NOTES:
        result.notes.append(note)
    elif len(result.notes) == MAX_NOTES:
        result.notes.append("(more notes were left out)")


def _label(request, k):
    """How a note names a cell: its place among all cells, and its first line (JupyterLab numbers none)."""
    first = next(line.strip() for line in request["cells"][k].splitlines() if line.strip())
    return f"cell {k + 1} ({cap(first if len(first) <= 40 else first[:37] + '...', 60)})"


