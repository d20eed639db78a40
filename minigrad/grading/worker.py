"""The worker: the side of the sandbox wall a notebook runs on (the grader's side is run.py).

``python -m minigrad.grading.worker`` runs a notebook's cells, then records
its tests, and decides nothing: a student's notebook in a sandbox (side
"received"), a solution notebook in the grader's trust (side "expected").
It reads a request (a line of JSON) on stdin and writes events, one JSON
object a line, to the descriptor the request names; the student's code can
write there too, so the grader reads them as untrusted data, values and
never verdicts (run.py, verdict.py):

    {"cell": k, "start": true}            before cell k
    {"cell": k, "error": "Name: message"}  after it (error null when it ran)
    {"cell": k, "over_budget": true}      instead, when the cells have had their time
    {"test": "N.M/name", "start": true}   before a test
    {"test": "N.M/name", "received": {...}, "expected": {...}}  after it (testing.Recorder.record)
    {"send": "hidden tests"}              after the visible tests: the grader sends the hidden ones
    {"printed": bytes}                    at the end: how much the cells printed

The hidden tests come last: the worker asks for them (a second line on
stdin) when it reaches the first one, so no cell has run with them. It
stops a cell or a test that runs past its time limit itself, and skips the
cells past the notebook's budget (the tests still run); what it cannot
stop, the grader does.
"""

import io
import json
import os
import sys
import time

import minigrad.grading.testing as testing
from minigrad.grading.feedback import GRADING
from minigrad.grading.reference import references_in_place
from minigrad.grading.verdict import cap


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


if __name__ == "__main__":
    main()
