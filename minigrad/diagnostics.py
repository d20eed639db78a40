"""``minigrad.doctor()``, or ``python -m minigrad``: what this installation can do, and why not.

The first thing to run when something does not work: it prints the versions
of Python, NumPy, CuPy and CUDA, whether a GPU is usable (and, if not, what
is missing), which command will lay out the graphs that ``draw`` shows,
whether the grading extra is installed, and whether ``minigrad-grade`` can
make its sandbox here (and if not, why). Each line that reports a problem
says what to install or do.
"""

import importlib.metadata
import platform
import sys
from pathlib import Path

import numpy as np

from minigrad import cuda

VERSION = "0.1.0"  # minigrad.__version__, as pyproject.toml says

# The `grade` extra of pyproject.toml: what minigrad-grade needs to run a notebook.
GRADING_PACKAGES = ("ipython", "nbformat")


def doctor(file=None):
    """Print what this installation can do, one finding a line (to ``file``, stdout by default)."""
    rows = findings()
    width = max(len(what) for what, _ in rows) + 2
    for what, finding in rows:
        print(f"{what:<{width}}{finding}", file=file or sys.stdout)


def findings():
    """The (what, finding) pairs that ``doctor`` prints, in order."""
    gpu = cuda.versions()
    reason = cuda.why_no_gpu()
    return [
        ("minigrad", f"{VERSION} ({Path(__file__).parent})"),
        ("Python", f"{platform.python_version()} ({sys.executable})"),
        ("NumPy", np.__version__),
        ("CuPy", gpu["CuPy"] or "not installed"),
        ("CUDA runtime", gpu["CUDA runtime"] or "not found"),
        ("CUDA driver", gpu["CUDA driver"] or "not found"),
        ("GPU", "usable" if reason is None else f"not usable: {reason}"),
        ("graph renderer", graph_renderer()),
        ("grading extra", grading_extra()),
        ("grading sandbox", grading_sandbox()),
    ]


def graph_renderer():
    """The DOT engine ``draw`` will use, checked by laying out a two-node graph."""
    # Drawing is loaded here, when asked for: `import minigrad` loads no drawing code.
    from minigrad.viz.render import INSTALL_HINT, EngineNotFoundError, find_engines, render

    engines = find_engines()
    if not engines:
        return f"none found, so draw() cannot lay out a graph (to_dot() needs none): {INSTALL_HINT}"
    try:
        render("digraph { x -> y }", "svg", timeout=20)
    except (EngineNotFoundError, TimeoutError) as e:
        return "found but failing: " + " ".join(str(e).split())  # on one line
    used = f"{Path(engines[0]).name} ({engines[0]})"
    return used if len(engines) == 1 else f"{used}, then {Path(engines[1]).name} ({engines[1]}) if it fails"


def grading_extra():
    """Whether the packages that minigrad-grade runs notebooks with are installed."""
    found, missing = [], []
    for name in GRADING_PACKAGES:
        try:
            found.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            missing.append(name)
    if missing:
        return (f"not installed ({', '.join(missing)} missing), so minigrad-grade cannot run notebooks: "
                "pip install 'minigrad-autodiff[grade]'")
    return f"installed ({', '.join(found)})"


def grading_sandbox():
    """Whether minigrad-grade can run a notebook in its bubblewrap sandbox here, and if not, why."""
    try:  # (loaded when asked, as drawing is; the sandbox's module needs a POSIX system)
        from minigrad.grading.sandbox import why_no_sandbox
    except ImportError as e:
        return f"none on {sys.platform} ({e}): minigrad-grade --no-sandbox grades without one"
    why = why_no_sandbox()
    if why is None:
        return "bubblewrap: minigrad-grade runs each notebook in a sandbox"
    return f"none: {why}. minigrad-grade stops, or grades without one with --no-sandbox"
