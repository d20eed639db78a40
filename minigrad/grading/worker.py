"""The worker, the process a notebook runs in, and the grader's side of it: run it, watch its clocks.

``python -m minigrad.grading.worker`` runs a notebook's cells, then records
its tests, and decides nothing: a student's notebook in a sandbox (side
"received"), a solution notebook in the grader's trust (side "expected").
It reads a request (a line of JSON) on stdin and writes events, one JSON
object a line, to the descriptor the request names; the student's code can
write there too, so ``run_worker`` reads them as untrusted data, values and
never verdicts (verdict.py):

    {"cell": k, "start": true}            before cell k
    {"cell": k, "error": "Name: message"}  after it (error null when it ran)
    {"cell": k, "over_budget": true}      instead, when the cells have had their time
    {"test": "N.M/name", "start": true}   before a test
    {"test": "N.M/name", "received": {...}, "expected": {...}}  after it (testing.Recorder.record)
    {"send": "hidden tests"}              after the visible tests: the grader sends the hidden ones
    {"printed": bytes}                    at the end: how much the cells printed

The worker only moves on: an event about a place before the last one it
started, or about another place than the one it is in, is ignored. The
hidden tests come last, and the grader sends them (a second line) only
when asked: no cell has run with them. From then on nothing a worker of the
notebook says is shown to the student (hidden tests are shown by name
only), nor a visible test run again: a worker started again could have
kept something of them.

Three clocks: per cell, per test and per notebook. The worker stops a cell
or a test that runs too long itself; where that fails (a bare ``except:``
swallows the signal) or the worker dies, the grader kills it and starts it
again without that cell, or from the next test, so that one stuck test
costs only itself. What went wrong becomes notes for the student.
"""

import contextlib
import io
import json
import os
import selectors
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

import minigrad.grading.testing as testing
from minigrad.grading import sandbox
from minigrad.grading.feedback import GRADING
from minigrad.grading.reference import references_in_place
from minigrad.grading.verdict import MAX_VALUES, cap, json_values

GRACE = 2.0  # seconds past a limit before the grader kills the worker
GAP = 30  # seconds the worker may take to start, or between its cells and tests
MAX_LINE = 5_000_000  # bytes of one event line
MAX_EVENTS_BYTES = 200_000_000  # bytes of events from one notebook's workers
MAX_RESTARTS = 6
MAX_NOTES = 20


class CellTimeout(BaseException):
    """Raised in a cell that runs past its time limit."""


class _Dropped(io.TextIOBase):
    """sys.stdout and sys.stderr: counts what the cells print and drops it."""

    printed = 0

    def write(self, text):
        self.printed += len(text)
        return len(text)


def main():
    stdin = sys.stdin
    request = json.loads(stdin.readline())
    events = os.fdopen(request["events_fd"], "w", buffering=1, encoding="utf-8")
    sys.stdout = sys.stderr = sink = _Dropped()

    def emit(**event):
        events.write(json.dumps(event) + "\n")  # (line-buffered: each event leaves at once)

    _load(request["sources"])  # (a cell may import a check's helper: the sandbox has the checks as sent)
    ns = run_cells(request, emit)
    testing._tests.clear()  # whatever the notebook registered: only the grader's tests run
    _load(request["sources"])
    swap, asked = request.get("swap") or {}, False
    for key in request["tests"]:
        if key in request["hidden"] and not asked:  # (the hidden tests were not here while the cells ran)
            emit(send="hidden tests")
            _load(json.loads(stdin.readline()))
            asked = True
        exercise, fn_name = key.split("/", 1)
        test = testing._tests.get(exercise, {}).get(fn_name)
        emit(test=key, start=True)
        references = [(e, swap["references"][e]) for e in swap.get("with", {}).get(exercise, [])]
        with references_in_place(references, ns) as swapped:
            t = testing.Recorder(ns, request["side"])
            if test is None:
                end = {"status": "not run", "message": "the test is missing"}
            elif references and not swapped:
                end = {"status": "not run", "message": "the reference answer cannot run in this notebook"}
            else:
                end = testing.run_recorded(test, t, request["test_time_limit"])
        received, expected = t.record(end)
        emit(test=key, received=received, expected=expected)
    emit(printed=sink.printed)


def _load(sources):
    """Run modules of tests, registering their tests, each importable by its name (a hidden test may use
    the helpers of a published check)."""
    for source, name in sources:
        sys.modules[name] = testing.load_source(source, name)


def run_cells(request, emit):
    """Run the code cells (the others are "") in an IPython shell, each with its time limit: the names."""
    from IPython.core.interactiveshell import InteractiveShell

    class Shell(InteractiveShell):
        def enable_gui(self, gui=None):  # (%matplotlib inline: there is no window to draw in, and no need)
            pass

    os.environ[GRADING] = "1"
    shell = Shell.instance(colors="NoColor")
    started = time.monotonic()
    for k, source in enumerate(request["cells"]):
        if k in request["skip"] or not source.strip():
            continue
        left = request["cells_timeout"] - (time.monotonic() - started)
        if left <= 0:  # the cells have had their time: the rest are not run, the tests still are
            emit(cell=k, over_budget=True)
            break
        emit(cell=k, start=True)
        with testing.stop_after(min(request["cell_timeout"], left), CellTimeout):
            result = shell.run_cell(source, store_history=False, silent=False)
        error = result.error_before_exec or result.error_in_exec
        emit(cell=k, error=None if error is None else cap(f"{type(error).__name__}: {error}"))
    return shell.user_ns


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
    selector = selectors.DefaultSelector()
    selector.register(fd, selectors.EVENT_READ)
    limit = {"cell": request["cell_timeout"], "test": request["test_time_limit"],
             None: max(request["cell_timeout"], request["test_time_limit"], GAP)}  # (None: between them)
    places = [("cell", k) for k, source in enumerate(request["cells"]) if source.strip()]
    rank = {place: i for i, place in enumerate(places + [("test", key) for key in request["tests"]])}
    hidden = [rank["test", key] for key in request["tests"] if key in request["hidden"]]
    buffer, sent = b"", False
    where, last, clock = None, -1, time.monotonic()  # the place it is in, the rank of the last it started, since
    result.printed = None  # (each worker says it at its end; a worker before it may have been killed)
    while True:
        now = time.monotonic()
        if now > until:
            return "notebook", None
        if now - clock > limit[where[0] if where else None] + GRACE:
            return ("timeout", where) if where else ("it stopped answering", None)
        if not selector.select(timeout=0.2):
            if process.poll() is not None and not selector.select(timeout=0):
                break
            continue
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        result.read += len(chunk)
        *lines, buffer = (buffer + chunk).split(b"\n")
        if result.read > MAX_EVENTS_BYTES or len(buffer) > MAX_LINE:
            return "it wrote more than the grader reads", where
        for line in lines:
            if json_values(line) > MAX_VALUES:  # (a test's record holds some 600 values; this, 250,000)
                continue
            try:
                event = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if not isinstance(event, dict):
                continue
            if event.get("send") == "hidden tests" and hidden and not sent and where is None:
                send_hidden()  # (between places only; from now on, hidden tests only)
                sent, where, last, clock = True, None, max(last, hidden[0] - 1), time.monotonic()
                result.hidden_sent = True
            place = _place(event)
            over = event.get("over_budget") is True and place is not None and place[0] == "cell"
            if place in rank and rank[place] > last and (event.get("start") is True or over):
                where, last, clock = place, rank[place], time.monotonic()
                if over:  # (said instead of a start: the cells past it are not run)
                    where = None
                    if not result.hidden_sent:
                        _note(result, f"the cells ran longer than {request['cells_timeout']:g} s in all: from "
                                      f"{_label(request, place[1])} on, they were not run")
            elif place is not None and place == where and _end(place, event, line, request, result):
                where, clock = None, time.monotonic()
            if type(event.get("printed")) is int:
                result.printed = event["printed"]
    if result.printed is not None:
        return None, None
    code = process.wait()
    if sent:  # (an exit status chosen by the student's code would say something of the hidden tests)
        return "during the hidden tests", where
    return (f"exit status {code}" if code >= 0 else f"killed by signal {-code}"), where


def _place(event):
    """The cell or test an event is about: ("cell", k), ("test", key) or None."""
    cell, test = event.get("cell"), event.get("test")
    if type(cell) is int:
        return "cell", cell
    return ("test", test) if type(test) is str else None


def _end(place, event, line, request, result):
    """Take the event (read from ``line``) that ends ``place``, where the worker is, into ``result``:
    whether it was such an event."""
    kind, at = place
    if kind == "test":
        if "received" not in event:
            return False
        result.tests.setdefault(at, line)  # (verdict.judge reads it as untrusted data)
        return True
    error = event.get("error", False)
    if not isinstance(error, str) or result.hidden_sent:  # (a worker started again after the hidden tests)
        return error is None or isinstance(error, str)
    if error.startswith("CellTimeout"):
        _note(result, f"{_label(request, at)} ran longer than {request['cell_timeout']:g} s and was "
                      "interrupted (an endless loop?)")
    else:
        over = error.startswith("MemoryError") and request["memory_limit"]
        _note(result, f"{_label(request, at)} raised {cap(error, 400)}" + (
            f" (more than the {request['memory_limit'] / 2**20:g} MB a notebook may use)" if over else ""))
    return True


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


if __name__ == "__main__":
    main()
