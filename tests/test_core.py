"""The engine as a student meets it: it imports without drawing, and reads in one sitting."""

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
    engine = ("minigrad/variable.py", "minigrad/function.py", "minigrad/backward_functions.py", "minigrad/backprop.py")
    for core in engine:
        assert core in order


def test_the_reading_order_fits_in_one_sitting():
    order, _ = reading_order()
    lines = {path: len((ROOT / path).read_text().splitlines()) for path in order}
    total = sum(lines.values())
    assert total <= READING_BUDGET, (
        f"the files of the README's reading order hold {total} lines ({lines}), over the budget of "
        f"{READING_BUDGET}: move what a student need not read (checks, devices, speed) to an optional file"
    )
