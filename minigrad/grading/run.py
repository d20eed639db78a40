"""Run the worker on a notebook, sandboxed or not, and watch the clock: its events, or why it stopped.

Three clocks: per cell, per test and per notebook. The worker stops a cell
or a test that runs too long itself; where that fails (a bare ``except:``
swallows the signal), the grader kills it and starts it again without that
cell, or from the next test, so that one stuck test costs only itself.
"""

import json
import os
import selectors
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import minigrad

from minigrad.grading import sandbox

GRACE = 2.0  # seconds past a limit before the grader kills the worker
GAP = 30  # seconds the worker may take to start, or between its cells and tests
MAX_LINE = 20_000_000  # bytes of one event line
MAX_EVENTS_BYTES = 200_000_000  # bytes of events from one worker
MAX_RESTARTS = 6


@dataclass
class RunResult:
    cell_errors: dict = field(default_factory=dict)  # cell index -> "Name: message"
    cell_timeouts: list = field(default_factory=list)  # cell indices
    stuck_cells: list = field(default_factory=list)  # cells that ignored their time limit and were skipped
    tests: dict = field(default_factory=dict)  # "N.M/name" -> what the test's code returned: {"observations", "end"}
    expected: dict = field(default_factory=dict)  # "N.M/name" -> what it expected (the reference run's alone count)
    printed: int = 0
    crashes: list = field(default_factory=list)  # why the worker stopped early, each time it did
    over_budget: int = None  # the first cell not run because the cells had had their time
    out_of_time: bool = False


def run_worker(request, sandboxed, memory=0, cells_timeout=120):
    """Run ``request`` (worker.py's) to the end, restarting after a stuck cell or test: a RunResult.

    The cells have ``cells_timeout`` seconds in all (the worker skips those past it); the whole run,
    should the student's code undo that, has twice that time plus each test's.
    """
    result = RunResult()
    request = dict(request, skip=[], cells_timeout=cells_timeout)
    per_test = request["test_time_limit"] + GRACE
    deadline = time.monotonic() + 2 * cells_timeout + GAP + len(request["tests"]) * per_test  # (a restart reruns cells)
    pending = list(request["tests"])
    for _ in range(MAX_RESTARTS + 1):
        request["tests"] = [t for t in pending if t not in result.tests]
        stopped = _run_once(request, sandboxed, memory, deadline, result)
        if stopped is None:
            return result
        kind, where = stopped
        if kind == "cell":
            result.stuck_cells.append(where)
            request["skip"].append(where)
        elif kind == "test":
            timeout = {"status": "timeout", "limit": request["test_time_limit"]}
            result.tests[where] = {"observations": [], "end": timeout}
        elif kind == "notebook":
            result.out_of_time = True
            return result
        else:  # the worker died: in a test, that test fails; in a cell, the cell is skipped next time
            result.crashes.append(kind)
            if where is None:
                return result
            if isinstance(where, int):
                request["skip"].append(where)
            else:
                result.tests[where] = {"observations": [], "end": {
                    "status": "not run", "message": f"the notebook's process died during this test ({kind})"}}
    return result


def _run_once(request, sandboxed, memory, deadline, result):
    """One worker process. None when it ran to the end, else (why, the cell or test it was in)."""
    argv = [sys.executable, "-m", "minigrad.grading.worker"]
    limits = sandbox.Limits(memory)
    read_end, write_end = os.pipe()
    root = str(Path(minigrad.__file__).resolve().parents[1])
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    env = None if sandboxed else {**os.environ, **sandbox.worker_env(), "PYTHONPATH": path}
    folder = tempfile.TemporaryDirectory(prefix="minigrad-grade-", ignore_cleanup_errors=True)  # (unsandboxed: its cwd)
    process = None
    try:
        try:
            process = subprocess.Popen(
                limits.wrap(sandbox.command(argv) if sandboxed else argv), stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(write_end,), env=env,
                start_new_session=True, cwd=folder.name)
        except OSError as e:
            return f"the worker could not start: {e}", None
        finally:
            os.close(write_end)
        try:
            process.stdin.write(json.dumps(dict(request, events_fd=write_end)).encode())
            process.stdin.close()
        except OSError:  # (it died at once: _watch says how)
            pass
        return _watch(process, read_end, request, deadline, result)
    finally:
        if process is not None and process.poll() is None:
            try:
                os.killpg(process.pid, 9)  # (its session: whatever it started dies with it)
            except OSError:
                process.kill()
        if process is not None:
            process.wait()
        os.close(read_end)
        limits.release()
        folder.cleanup()


def _watch(process, fd, request, deadline, result):
    """Read the worker's events into ``result`` as it runs: None when it ended well, else (why, where)."""
    selector = selectors.DefaultSelector()
    selector.register(fd, selectors.EVENT_READ)
    buffer, total, done = b"", 0, False
    where, clock = None, time.monotonic()  # ("cell", k) or ("test", key), and when it started
    while True:
        now = time.monotonic()
        if now > deadline:
            return "notebook", None
        if where is None:  # starting, or between cells and tests: the worker's own code, in the student's process
            if now - clock > max(request["cell_timeout"], request["test_time_limit"], GAP) + GRACE:
                return "it stopped answering", None
        elif now - clock > request["cell_timeout" if where[0] == "cell" else "test_time_limit"] + GRACE:
            return where
        if not selector.select(timeout=0.2):
            if process.poll() is not None and not selector.select(timeout=0):
                break
            continue
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        total += len(chunk)
        *lines, buffer = (buffer + chunk).split(b"\n")
        if total > MAX_EVENTS_BYTES or len(buffer) > MAX_LINE:
            return "it wrote more than the grader reads", where[1] if where else None
        for line in lines:
            where, clock, done = _apply(line, request, result, where, clock, done)
    if done:
        return None
    code = process.wait()
    why = f"exit status {code}" if code >= 0 else f"killed by signal {-code}"
    return why, where[1] if where else None


def _apply(line, request, result, where, clock, done):
    """Take one event line into ``result``; the new (where, clock, done). A line that is not a JSON
    object, or an event about no cell or test of the request, is ignored."""
    try:
        event = json.loads(line)
    except (ValueError, RecursionError):
        return where, clock, done
    if not isinstance(event, dict):
        return where, clock, done
    now = time.monotonic()
    cell, test = event.get("cell"), event.get("test")
    if type(cell) is int and 0 <= cell < len(request["cells"]):
        if event.get("over_budget") is True:
            result.over_budget = cell
        if event.get("start") is True:
            return ("cell", cell), now, done
        error = event.get("error")
        if isinstance(error, str):
            if error.startswith("CellTimeout"):
                result.cell_timeouts.append(cell)
            else:
                result.cell_errors[cell] = error[:400]
        return None, now, done
    if test in request["tests"]:
        if event.get("start") is True:
            return ("test", test), now, done
        if test not in result.tests:  # (verdict.judge reads what it holds as untrusted data)
            result.tests[test], result.expected[test] = event.get("received"), event.get("expected")
        return None, now, done
    printed = event.get("printed")
    if isinstance(printed, int) and not isinstance(printed, bool):
        result.printed = printed
        return where, clock, True
    return where, clock, done
