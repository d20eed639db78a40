"""The engine as a student meets it: it imports without drawing, and reads in one sitting."""

import ast
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
READING_BUDGET = 800  # lines (wc -l, docstrings included) of the files in the README's reading order

# Runs in a fresh interpreter: every import of matplotlib or a graphviz package fails, as where they are not
# installed, and PATH holds no directory, so no graphviz-pure (or dot) program can be found either.
WITHOUT_DRAWING = textwrap.dedent("""
    import sys

    class Missing:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("matplotlib", "graphviz", "graphviz_pure", "pydot"):
                raise ImportError(f"No module named {name!r} (blocked by the test)")
            return None

    sys.meta_path.insert(0, Missing())
    import numpy as np
    import minigrad as mg
    import minigrad.functions as F

    x = mg.Variable(np.array([0.5, 1.0]))
    (g,) = mg.grad(F.sum(F.sin(x) * x), x)
    np.testing.assert_allclose(g.data, np.cos(x.data) * x.data + np.sin(x.data), rtol=1e-12)
    drawing = sorted(m for m in sys.modules if m.split(".")[0] in ("matplotlib", "minigrad") and "viz" in m
                     or m.startswith("matplotlib"))
    assert not drawing, drawing
    print("ok")
""")


def test_the_core_imports_and_differentiates_without_drawing_libraries(tmp_path):
    env = {**os.environ, "PATH": str(tmp_path), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", WITHOUT_DRAWING], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def reading_order():
    """The files of the README's "Reading order" section: (the reading order, the optional ones)."""
    text = (ROOT / "README.md").read_text()
    match = re.search(r"^## Reading order\n(.*?)(?=^## )", text, re.S | re.M)
    assert match, "README.md has no section titled 'Reading order'"
    section = match.group(1)
    head, sep, optional = section.partition("ptional")
    assert sep, "the 'Reading order' section names its optional files after the word 'optional'"
    paths = re.compile(r"`(minigrad/[\w/]+\.py)`")
    return paths.findall(head), paths.findall(optional)


def test_the_reading_order_lists_existing_engine_files():
    order, optional = reading_order()
    assert order and optional
    for path in order + optional:
        assert (ROOT / path).is_file(), f"the README's reading order names {path}, which does not exist"
    assert len(set(order + optional)) == len(order + optional), "a file is listed twice"
    engine = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "minigrad" / "core").glob("[!_]*.py"))
    assert sorted(order) == engine, "the reading order is the folder minigrad/core, every file of it"


def test_the_reading_order_fits_in_one_sitting():
    order, _ = reading_order()
    lines = {path: len((ROOT / path).read_text().splitlines()) for path in order}
    total = sum(lines.values())
    assert total <= READING_BUDGET, (
        f"the files of the README's reading order hold {total} lines ({lines}), over the budget of "
        f"{READING_BUDGET}: move what a student need not read (checks, devices, speed) to an optional file"
    )


def import_graph():
    """{module: the minigrad modules it imports}, read from the source: every import, in a function too.

    ``from minigrad.core import rules`` imports the module minigrad.core.rules; ``from minigrad import
    Function`` imports the package minigrad (its __init__, where Function is found).
    """
    modules = {}
    for path in (ROOT / "minigrad").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                submodules = {f"{base}.{a.name}" for a in node.names} & modules.keys()
                targets |= submodules if len(submodules) == len(node.names) else submodules | {base}
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def circles(graph):
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_module_of_minigrad_imports_in_a_circle():
    graph = import_graph()
    assert "minigrad.core.variable" in graph and "minigrad.functions.shape" in graph
    found = circles(graph)
    assert not found, "modules that import each other, directly or through others: " + "; ".join(
        " <-> ".join(c) for c in found)


def test_the_circle_check_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_core_imports_nothing_outside_the_engine():
    """The core knows nothing of the library of functions, the other modes, drawing, grading or CuPy's users."""
    graph = import_graph()
    for name in (n for n in graph if n.startswith("minigrad.core")):
        outside = {t for t in graph[name] if not t.startswith(("minigrad.core", "minigrad.support", "minigrad.cuda"))}
        assert not outside, f"{name} imports {sorted(outside)}"


def test_importing_minigrad_runs_no_late_import():
    """No import hides below the code of a module (an import placed late to dodge a circle)."""
    for path in (ROOT / "minigrad").rglob("*.py"):
        text = path.read_text()
        assert "noqa: E402" not in text and "# Variable first" not in text, f"{path}: an import placed late"
