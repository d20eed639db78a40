"""``python -m minigrad.grading.worker``: run a notebook's cells, then record its tests. Decides nothing.

It runs a student's notebook in a sandbox (side "received") and a solution
notebook in the grader's trust (side "expected"). It reads a request (JSON)
on stdin and writes events, one JSON object a line, to the descriptor the
request names; the student's code can write there too, so the grader reads
them as untrusted data (run.py), values and never verdicts (verdict.py):

    {"cell": k, "start": true}            before cell k
    {"cell": k, "error": "Name: message"}  after it (error null when it ran)
    {"cell": k, "over_budget": true}      instead, when the cells have had their time
    {"test": "N.M/name", "start": true}   before a test
    {"test": "N.M/name", "received": {...}, "expected": {...}}  after it (testing.Recorder.record)
    {"printed": bytes}                    at the end: how much the cells printed
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
    request = json.loads(sys.stdin.read())
    events = os.fdopen(request["events_fd"], "w", buffering=1, encoding="utf-8")
    sys.stdout = sys.stderr = sink = _Dropped()

    def emit(**event):
        events.write(json.dumps(event) + "\n")  # (line-buffered: each event leaves at once)

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
        references = [(e, swap["references"][e]) for e in swap.get("with", {}).get(exercise, [])]
        with references_in_place(references, ns) as swapped:
            t = testing.Recorder(ns, side)
            if test is None:
                end = {"status": "not run", "message": "the test is missing"}
            elif references and not swapped:
                end = {"status": "not run", "message": "the reference answer cannot run in this notebook"}
            else:
                end = testing.run_recorded(test, t, request["test_time_limit"])
        received, expected = t.record(end)
        emit(test=key, received=received, expected=expected)
    emit(printed=sink.printed)


def run_cells(request, emit):
    """Run the code cells in an IPython shell, each with its time limit; the notebook's names."""
    from IPython.core.interactiveshell import InteractiveShell

    class Shell(InteractiveShell):
        def enable_gui(self, gui=None):  # (%matplotlib inline: there is no window to draw in, and no need)
            pass

    os.environ[GRADING] = "1"
    shell = Shell.instance(colors="NoColor")
    started = time.monotonic()
    for k, source in enumerate(request["cells"]):
        if k in request["skip"]:
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
