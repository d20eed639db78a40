"""Turning DOT text into a picture, with nothing installed but pip packages: ``draw``.

The layout is done by a DOT engine run as a command: ``graphviz-pure``
(a pip dependency of minigrad, with wheels for Linux, macOS and Windows)
or, failing that, Graphviz's own ``dot``. Commands are looked for next to
the running Python first, because a Jupyter kernel started from a virtual
environment does not always have that environment's ``bin`` on its PATH.

Every run has a time limit, so a huge graph can never hang the kernel.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from minigrad.viz.dot import graph_dot, quote
from minigrad.viz.stats import GraphStats
from minigrad.viz.walk import GraphView, as_outputs

ENGINES = ("graphviz-pure", "dot")
INSTALL_HINT = (
    "install the pip package that provides one: pip install graphviz-pure "
    "(or install Graphviz, whose 'dot' command also works)"
)


class EngineNotFoundError(RuntimeError):
    """No DOT engine could be found or run."""


def engine_folders():
    """Where commands are looked for: beside the running Python, then the PATH."""
    here = Path(sys.executable).parent
    folders = [str(here), str(here / "Scripts")]  # Scripts: a conda environment on Windows
    return folders + os.environ.get("PATH", "").split(os.pathsep)


def find_engines():
    """The DOT engine commands found, best first: graphviz-pure before dot."""
    path = os.pathsep.join(engine_folders())
    found = []
    for name in ENGINES:
        command = shutil.which(name, path=path)
        if command is not None:
            found.append(command)
    return found


def render(dot, fmt="svg", timeout=30):
    """Lay out ``dot`` with the first engine that works; return the output in ``fmt`` as bytes.

    Tries each engine of ``find_engines()`` in turn. An engine that cannot
    be started, or that fails, hands over to the next; when none is left the
    error names every attempt and what to install.
    """
    engines = find_engines()
    if not engines:
        raise EngineNotFoundError(
            f"cannot draw the graph: no DOT engine found (looked for {' and '.join(ENGINES)} "
            f"next to {sys.executable} and on the PATH); {INSTALL_HINT}. "
            "The DOT text itself needs no engine: minigrad.viz.to_dot(y)."
        )
    failures = []
    for command in engines:
        try:
            done = subprocess.run([command, f"-T{fmt}"], input=dot.encode("utf-8"),
                                  capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise TimeoutError(
                f"cannot draw the graph: {command} took more than {timeout} s to lay it out; "
                "draw fewer nodes (draw(..., max_nodes=...)), count them with graph_stats(y), "
                "or pass a larger timeout"
            ) from None
        except OSError as e:
            failures.append(f"{command}: {e}")
            continue
        if done.returncode == 0 and done.stdout:
            return done.stdout
        message = done.stderr.decode("utf-8", "replace").strip() or f"exit status {done.returncode}"
        failures.append(f"{command}: {message}")
    raise EngineNotFoundError(
        "cannot draw the graph: every DOT engine failed:\n  " + "\n  ".join(failures)
        + f"\nIf an engine is broken, {INSTALL_HINT}."
    )


class Graph:
    """A drawn graph: shown inline by Jupyter as SVG and PNG, saved with ``.save("g.svg")`` or ``.png``.

    ``.dot`` is the DOT text, ``.svg`` the picture's SVG text, ``.png`` its
    PNG bytes. ``.message`` says why the picture is a summary instead of the
    graph (None when it is not).

    Why both: JupyterLab does not show the SVG saved in a notebook until the
    notebook is trusted (an SVG may carry scripts), so a lesson opened fresh
    would show ``<Graph: ...>`` where its drawings are. A PNG is shown either
    way, and a trusted or running notebook still prefers the sharper SVG.
    """

    def __init__(self, dot, functions, variables, message=None, timeout=30):
        self.dot = dot
        self.functions = functions
        self.variables = variables
        self.message = message
        self.timeout = timeout
        self.svg = render(dot, "svg", timeout).decode("utf-8")
        self.png = render(dot, "png", timeout)

    def save(self, path):
        """Write the picture to ``path``: .svg, .png, .pdf, or .dot / .gv for the DOT text."""
        path = Path(path)
        fmt = path.suffix.lower().lstrip(".")
        if fmt in ("dot", "gv"):
            path.write_text(self.dot, encoding="utf-8")
        elif fmt == "svg":
            path.write_text(self.svg, encoding="utf-8")
        elif fmt == "png":
            path.write_bytes(self.png)
        elif fmt == "pdf":
            path.write_bytes(render(self.dot, fmt, self.timeout))
        else:
            raise ValueError(
                f"Graph.save: cannot tell the format of {str(path)!r} from its suffix; "
                "end the name with .svg, .png, .pdf, .dot or .gv"
            )
        return path

    def _repr_svg_(self):
        return self.svg

    def _repr_png_(self):
        return self.png

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"image/svg+xml": self.svg, "image/png": self.png, "text/plain": repr(self)}

    def __repr__(self):
        text = f"<Graph: {self.functions} functions, {self.variables} variables"
        if self.message is not None:
            text += ", summarised"
        return text + ">"


def draw(*outputs, show_values=False, by_order=False, max_nodes=300, timeout=30):
    """The graph behind ``outputs``, drawn: a Graph that Jupyter shows inline.

    Options as in ``to_dot``. A graph of more than ``max_nodes`` nodes is
    not laid out (that can take minutes); its picture is a summary with its
    counts instead. ``timeout`` (seconds) bounds the layout itself.
    """
    view = GraphView(as_outputs(outputs, "draw"))
    if len(view) > max_nodes:
        return summary(view, max_nodes, "draw", timeout)
    dot = graph_dot(view, show_values, by_order)
    return Graph(dot, len(view.functions), len(view.variables), timeout=timeout)


def summary(view, max_nodes, where, timeout):
    """A Graph whose picture is a note with the counts of a graph too large to draw."""
    stats = GraphStats(view)
    message = (
        f"{len(view)} nodes: too many to draw (max_nodes={max_nodes}).\n"
        f"{stats.functions} functions, {stats.variables} variables\n"
        f"functions by derivative order: {stats.by_order}\n"
        f"{where}(..., max_nodes={len(view)}) draws it all; to_dot(...) gives its DOT text."
    )
    dot = (f'digraph minigrad {{\n  summary [shape=note fontname="Helvetica" fontsize=11 '
           f'label="{quote(message)}"];\n}}\n')
    return Graph(dot, stats.functions, stats.variables, message=message, timeout=timeout)
