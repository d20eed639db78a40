"""``python -m minigrad.grading.worker``: run a notebook's cells, then record its tests. Decides nothing.

The grader starts it in a sandbox for a student's notebook (side
"received"), and in its own trusted process for a solution notebook (side
"expected"). It reads a request (JSON) on stdin and writes events, one JSON
object a line, to file descriptor 3:

    {"cell": k, "start": true}            before cell k
    {"cell": k, "error": "Name: message"}  after it (error null when it ran)
    {"test": "N.M/name", "start": true}   before a test
    {"test": "N.M/name", "observations": [...], "end": {...}}  after it
    {"printed": bytes}                    at the end: how much the cells printed

A student's code can write to that descriptor too, so the grader reads
every line as untrusted data: values, never verdicts (verdict.py).
"""

import json
import os
import signal
import sys
import time

import minigrad.grading.testing as testing
from minigrad.grading.feedback import GRADING
from minigrad.grading.reference import references_in_place


class CellTimeout(BaseException):
    """Raised in a cell that runs past its time limit."""


class _CappedOutput:
    """sys.stdout and sys.stderr: counts what the cells print and drops it."""

    def __init__(self):
        self.printed = 0

    def write(self, text):
        self.printed += len(text)
        return len(text)

    def flush(self):
        pass

    def isatty(self):
        return False


def main():
    request = json.loads(sys.stdin.read())
    events = os.fdopen(request["events_fd"], "w", buffering=1, encoding="utf-8")
    sink = _CappedOutput()
    sys.stdout = sys.stderr = sink

    def emit(**event):
        events.write(json.dumps(event) + "\n")
        events.flush()

    ns = run_cells(request, emit)
    testing._tests.clear()  # whatever the notebook registered: only the grader's tests run
    for source, name in request["sources"]:
        testing.load_source(source, name)
    side = request["side"]
    swap = request.get("swap") or {}
    for key in request["tests"]:
        exercise, fn_name = key.split("/", 1)
        test = testing._tests.get(exercise, {}).get(fn_name)
        emit(test=key, start=True)
        if test is None:
            emit(test=key, observations=[], end={"status": "not run", "message": "the test is missing"})
            continue
        references = [(e, swap["references"][e]) for e in swap.get("with", {}).get(exercise, [])]
        with references_in_place(references, ns) as swapped:
            t = testing.Recorder(ns, side)
            if references and not swapped:
                end = {"status": "not run", "message": "the reference answer cannot run in this notebook"}
            else:
                end = testing.run_recorded(test, t, request["test_time_limit"])
        emit(test=key, observations=t.observations, end=end)
    emit(printed=sink.printed)


def run_cells(request, emit):
    """Run the code cells in an IPython shell, each with its time limit; the notebook's names."""
    from IPython.core.interactiveshell import InteractiveShell

    class Shell(InteractiveShell):
        def enable_gui(self, gui=None):  # (%matplotlib inline: there is no window to draw in, and no need)
            pass

    os.environ[GRADING] = "1"
    shell = Shell.instance(colors="NoColor")
    limit, budget = request["cell_timeout"], request["cells_timeout"]
    started = time.monotonic()

    def on_alarm(signum, frame):
        raise CellTimeout(f"the cell ran longer than {limit:g} s")

    for k, source in enumerate(request["cells"]):
        if k in request.get("skip", ()):
            continue
        left = budget - (time.monotonic() - started)
        if left <= 0:  # the cells have had their time: the rest are not run, the tests still are
            emit(cell=k, over_budget=True)
            break
        emit(cell=k, start=True)
        signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, min(limit, left))
        try:
            result = shell.run_cell(source, store_history=False, silent=False)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        error = result.error_before_exec or result.error_in_exec
        emit(cell=k, error=None if error is None else
             testing.cap(f"{type(error).__name__}: {error}"))
    return shell.user_ns


if __name__ == "__main__":
    main()
