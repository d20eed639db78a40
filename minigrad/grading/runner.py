"""Run a notebook's code cells in a kernel of its own: a time limit per cell, a cap on output.

Every notebook gets a new kernel process (the current Python's ``python3``
kernel, with minigrad importable), started in an empty folder, so one
submission cannot touch another. A cell that runs too long is interrupted;
if the kernel does not come back, it is stopped and the run ends there.
Output beyond the cap is dropped. Nothing here raises for the notebook's
sake: every failure is written into the report.
"""

import logging
import os
import resource
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import run_sync

import minigrad
from minigrad.grading.feedback import GRADING

PROBE_TIMEOUT = 5  # seconds an interrupted kernel has to answer again
IOPUB_TIMEOUT_AFTER_INTERRUPT = 1  # seconds (nbclient takes whole seconds)


class _QuietInterruptedTasks(logging.Filter):
    """Drop asyncio's note about nbclient's output task, left behind when a cell times out."""

    def filter(self, record):
        return "_async_poll_output_msg" not in str(getattr(record, "msg", "")) + str(record.args or "")


logging.getLogger("asyncio").addFilter(_QuietInterruptedTasks())


@dataclass
class RunReport:
    errors: list = field(default_factory=list)  # (cell label, "Name: message")
    timeouts: list = field(default_factory=list)  # cell labels
    output_dropped: bool = False
    fatal: str = None  # why the run stopped early, if it did


class _CappedClient(NotebookClient):
    """A NotebookClient that keeps at most ``output_limit`` bytes of output in all."""

    def __init__(self, nb, output_limit, **kw):
        super().__init__(nb, **kw)
        self.output_limit = output_limit
        self.output_bytes = 0
        self.output_dropped = False

    def output(self, outs, msg, display_id, cell_index):
        size = len(str(msg.get("content", "")))
        self.output_bytes += size
        if self.output_bytes > self.output_limit:
            self.output_dropped = True
            return None
        return super().output(outs, msg, display_id, cell_index)


def kernel_env():
    """The environment of the kernel: this one, with this minigrad first on the path."""
    env = dict(os.environ)
    root = str(Path(minigrad.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    env[GRADING] = "1"  # check() cells leave the tests to the grading cell (see feedback.check)
    env.setdefault("MPLBACKEND", "Agg")
    return env


def _memory_cap(limit):
    """A function the kernel process runs before it starts: at most ``limit`` bytes of data (heap and
    arrays; 0 for no limit). Past it, an allocation raises MemoryError in the cell that asked."""
    def cap():
        if limit:
            resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    return cap


def run_cells(cells, final_source, cell_timeout=30, final_timeout=300, output_limit=1_000_000,
              startup_timeout=60, memory_limit=0):
    """Run ``cells`` [(label, source)], then ``final_source`` (if the kernel still lives).

    ``memory_limit``: bytes of data the kernel may hold (0: no limit).
    Returns a RunReport; the kernel is shut down in every case.
    """
    report = RunReport()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for _, source in cells]
    nb.cells.append(nbformat.v4.new_code_cell(final_source, metadata={"final": True}))
    labels = [label for label, _ in cells] + ["the grading cell"]
    with tempfile.TemporaryDirectory(prefix="minigrad-grade-") as cwd:
        client = _CappedClient(
            nb, output_limit, timeout=cell_timeout, kernel_name="python3", allow_errors=True,
            interrupt_on_timeout=False, startup_timeout=startup_timeout, shutdown_kernel="immediate",
            timeout_func=lambda cell: final_timeout if cell.metadata.get("final") else cell_timeout,
            resources={"metadata": {"path": cwd}},
        )
        try:
            with client.setup_kernel(env=kernel_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     preexec_fn=_memory_cap(memory_limit)):
                _run_all(client, nb, labels, report, cell_timeout)
        except DeadKernelError:
            report.fatal = report.fatal or "the kernel died"
        except Exception as e:  # the kernel could not start, or the client failed
            report.fatal = report.fatal or f"the kernel failed: {type(e).__name__}: {e}"
    report.output_dropped = client.output_dropped
    return report


def _run_all(client, nb, labels, report, cell_timeout):
    def on_cell_executed(cell, cell_index, execute_reply):
        """Errors are read from the kernel's reply, which comes even when the output is late."""
        content = (execute_reply or {}).get("content", {})
        if content.get("status") == "error" and cell_index < len(labels):
            report.errors.append((labels[cell_index], f"{content.get('ename')}: {content.get('evalue')}"))

    client.on_cell_executed = on_cell_executed
    for index, cell in enumerate(nb.cells):
        try:
            client.execute_cell(cell, index)
        except CellTimeoutError:
            report.timeouts.append(labels[index])
            # After an interrupt the kernel may never send the "idle" status of later cells:
            # wait for it briefly rather than the default seconds per cell.
            client.iopub_timeout = IOPUB_TIMEOUT_AFTER_INTERRUPT
            if not _interrupt(client, index):
                report.fatal = (f"{labels[index]} did not stop when interrupted, so its kernel was "
                                "stopped and the cells after it were not run")
                return
            continue
        except DeadKernelError:
            report.fatal = (f"the kernel died while running {labels[index]} "
                            "(did the code call os._exit(), crash, or run out of memory?)")
            return


def _interrupt(client, index):
    """Interrupt the kernel; True if it answers a trivial cell within PROBE_TIMEOUT seconds."""
    try:
        run_sync(client.km.interrupt_kernel)()
        probe = nbformat.v4.new_code_cell("pass")
        saved = client.timeout, client.timeout_func
        client.timeout, client.timeout_func = PROBE_TIMEOUT, None
        try:
            client.execute_cell(probe, index)
        finally:
            client.timeout, client.timeout_func = saved
        return True
    except (CellTimeoutError, DeadKernelError):
        return False
