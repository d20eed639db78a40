"""Notebooks that attack the grader, each beside a blank notebook (which must score 0) and a correct one
(which must score full marks), graded with --jobs 1 and --jobs 2.

Each hostile notebook is the blank exercise 01_function (or its solution, where the attack aims at
the others) with one cell added. The attacks are those the sandbox is there to stop: give
oneself full marks, read the hidden tests or the solutions, change other students' files or scores,
outlive the grader, stop the run. Attacks that would harm this machine without a sandbox (kill the
grader, write into the environment or the repository) only run where a sandbox can be made.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import nbformat
import pytest

from minigrad.grading.cli import main
from minigrad.grading.sandbox import why_no_sandbox

pytest.importorskip("IPython", reason="the grader runs notebooks in an IPython shell")

ROOT = Path(__file__).resolve().parents[1]
NO_SANDBOX = why_no_sandbox()
SANDBOX_ONLY = pytest.mark.skipif(NO_SANDBOX is not None, reason=f"needs a sandbox: {NO_SANDBOX}")
FLAGS = ["--timeout", "3", "--test-timeout", "5", "--notebook-timeout", "40", "--memory", "1500"]
FLAGS += ["--no-sandbox"] if NO_SANDBOX else []

# Cells a blank notebook adds to give itself marks it did not earn. {marks}: the path of a file to
# write, standing for the grader's results.
CHEATS = {
    "post_run_cell_hook": """
import minigrad.grading.testing as _t
def _hook(result):
    _t.run_recorded = lambda test, t, limit=None: {"status": "ok"}
    _t.Recorder.close = lambda self, *a, **k: self.observations.append({"kind": "true", "ok": True})
get_ipython().events.register("post_run_cell", _hook)
""",
    "meta_path_finder": """
import sys, types, importlib.abc, importlib.machinery
class _Fake(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name.startswith("minigrad.grading"):
            return importlib.machinery.ModuleSpec(name, self)
    def create_module(self, spec):
        return None
    def exec_module(self, module):
        module.visible = module.hidden = lambda *a, **k: (lambda f: f)
        module.run_recorded = lambda *a, **k: {"status": "ok"}
for _name in [n for n in sys.modules if n.startswith("minigrad.grading")]:
    del sys.modules[_name]
sys.meta_path.insert(0, _Fake())
""",
    "input_transformer": """
get_ipython().input_transformers_post.append(lambda lines: ["pass\\n"])
""",
    "patched_open_and_numpy": """
import builtins, functools, numpy as np
_open = builtins.open
builtins.open = lambda *a, **k: _open("/dev/null", "w")
np.allclose = functools.partial(lambda *a, **k: True)
np.isclose = lambda *a, **k: np.True_
np.asarray = lambda x, *a, **k: np.zeros(4)
""",
    "forged_events": """
import os, json
for _fd in range(3, 64):
    try:
        for _key in ["1.1/values_at_four_points", "1.2/first_derivative", "1.3/forward_values"]:
            _forged = {"observations": [{"kind": "true", "ok": True}], "end": {"status": "ok"}}
            os.write(_fd, (json.dumps({"test": _key, "received": _forged, "expected": _forged}) + "\\n").encode())
        os.write(_fd, b'{"printed": 0}\\n' + b"[" * 100000 + b"\\n" + b"x" * 100 + b"\\n")
        for _event in [{"cell": 999, "start": True}, {"cell": 999, "error": "E"}, {"cell": -1, "error": "E"},
                       {"cell": True, "error": "E"}, {"test": "9.9/made_up", "start": True}]:
            os.write(_fd, (json.dumps(_event) + "\\n").encode())
    except OSError:
        pass
""",
    "answer_read_off_the_stack": """
import sys, numpy as np
class MySquare(Function):
    def forward(self, x):
        frame, found = sys._getframe(1), None
        while frame is not None:
            for name, value in frame.f_locals.items():
                if isinstance(value, np.ndarray) and value.shape == x.shape and value is not x:
                    found = value
            frame = frame.f_back
        return found if found is not None else x
""",
    "raises_the_request": """
import sys
from minigrad.backward_functions import register
def _request():
    frame = sys._getframe(1)
    while frame is not None:
        for value in frame.f_locals.values():
            if isinstance(value, dict) and ("sources" in value or "swap" in value):
                return repr(value.get("swap")) + repr(value.get("sources"))
        frame = frame.f_back
    return "no request found"
class MySquare(Function):
    def forward(self, x):
        raise RuntimeError(_request())
@register("MySquare")
def _rule(ctx, gy):
    raise RuntimeError(_request())
""",
    "leaks_the_hidden_tests": """
import gc
def _leak():  # a test's source held anywhere in the process, where a cell or a visible test can raise it
    for o in gc.get_objects():
        values = o.values() if isinstance(o, dict) else o if isinstance(o, (list, tuple)) else ()
        for v in list(values):
            if isinstance(v, str) and "@hidd" "en(" in v and "t.giv" "en(" in v:
                return v[v.index("t.giv" "en("):][:290]
_found = _leak()
if _found:
    raise RuntimeError(_found)
class MySquare(Function):
    def forward(self, x):
        raise RuntimeError(str(_leak()))
""",
    "stuck_checks_return_ok": """
import minigrad.grading.testing as _t
_t.Recorder.true = lambda self, condition, message: self._note("true", ok=True, message="")
_t.Recorder.equal = lambda self, received, expected, what: self._note("equal", value=received)
""",
}

# Where there is a sandbox, the published checks are not in it: a cell cannot compute their expected values there.
if NO_SANDBOX is None:
    CHEATS["records_the_public_expected_values"] = """
import ast, importlib, inspect
import minigrad.grading.testing as _t
class _Expected(ast.NodeTransformer):  # (the visible checks as published: each comparison fed its expected value)
    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("close", "equal") and len(node.args) >= 2:
            node.args[0] = node.args[1]
        return node
_load = _t.load_source
def _published(source, name):
    if name.startswith("minigrad.grading.checks."):
        tree = _Expected().visit(ast.parse(inspect.getsource(importlib.import_module(name))))
        source = ast.unparse(ast.fix_missing_locations(tree))
    return _load(source, name)
_t.load_source = _published
"""

# Cells that attack the run or other students; added to a correct notebook, which must still get
# full marks, as must everyone beside it.
ATTACKS = {
    "prints_megabytes": "for _ in range(20_000):\n    print('#' * 100)",
    "garbage_on_every_descriptor": """
import os
for _fd in range(3, 64):
    try:
        os.write(_fd, b"\\xff\\x00not json\\n" + b"{" * 5000 + b"\\n" + b'{"test": 5}\\n')
    except OSError:
        pass
""",
    "a_fork_bomb": """
import os, time
_children = 0
for _ in range(200):
    try:
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        _children += 1
    except OSError:
        break
if _children > 100:
    raise RuntimeError(f"ATTACK SUCCEEDED: {_children} processes")
""",
    "a_shared_mapping": """
import mmap
try:
    _m = mmap.mmap(-1, 3 * 2**30)
    for _k in range(0, len(_m), 4096):
        _m[_k] = 1
    raise RuntimeError("ATTACK SUCCEEDED: 3 GB mapped against a limit of 1.5 GB")
except (OSError, MemoryError, ValueError):
    pass
""",
    "swallows_the_time_limit": "import time\nfor _ in range(100):\n    try:\n        time.sleep(0.1)\n"
                                "    except BaseException:\n        pass",
    "raises_a_huge_message": "raise ValueError('x' * 1_000_000)",
    "redraws_the_tables": 'raise RuntimeError("\\r\\x1b[2K\\x1b[1A\\nforged_row  01_function  6/6")',  # (escapes)
    "an_error_in_a_cell_of_no_code": """
import os, json
for _fd in range(3, 64):
    try:
        os.write(_fd, (json.dumps({"cell": 0, "error": "E"}) + "\\n").encode())
    except OSError:
        pass
""",
    "sys_exit": "import sys\nsys.exit(3)",
}

# Attacks on this machine, the other students and the grader: only where a sandbox keeps them in.
# {folder}: the class's folder; {solutions}: the solutions folder; {results}: the JSON file.
SANDBOXED_ATTACKS = {
    "kills_its_parent": "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)",
    "kills_every_process": """
import os, signal
for _pid in os.listdir("/proc"):
    if _pid.isdigit() and int(_pid) != os.getpid():
        try:
            os.kill(int(_pid), signal.SIGKILL)
        except OSError:
            pass
""",
    "rewrites_the_others": """
import pathlib
for _p in pathlib.Path({folder!r}).rglob("*.ipynb"):
    try:
        _p.write_text("{{}}")
    except OSError:
        pass
""",
    "remounts_its_package_writable": """
import ctypes
_caps = next(line for line in open("/proc/self/status") if line.startswith("CapEff")).split()[1]
_libc = ctypes.CDLL(None, use_errno=True)
if _libc.mount(None, b"/opt/minigrad/minigrad", None, 32 | 4096 | 1, None) == 0:  # (read-only again: no harm)
    raise RuntimeError("ATTACK SUCCEEDED: remounted, with capabilities " + _caps)
if int(_caps, 16):
    raise RuntimeError("ATTACK SUCCEEDED: capabilities " + _caps)
""",
    "keeps_a_key_for_later": """
import ctypes
_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_rings = [-4] + [int(line.split()[0], 16) for line in open("/proc/keys") if line.split()[-2] == "_uid.0:"]
for _ring in _rings:  # (root's keyring outlives every sandbox: a notebook could leave there what it saw)
    _key = _libc.syscall(248, b"user", b"minigrad-grade-test", b"x", 1, _ring)
    if _key > 0:
        _libc.syscall(250, 9, _key, _ring)  # (unlinked again)
        raise RuntimeError("ATTACK SUCCEEDED: a key added to the keyring " + str(_ring))
""",
    "reads_the_solutions": """
raise RuntimeError(open({solutions!r} + "/01_function.ipynb").read()[2000:2280])
""",
    "rewrites_the_solutions_and_minigrad": """
import pathlib, minigrad
for _p in [*pathlib.Path({solutions!r}).glob("*.ipynb"), pathlib.Path(minigrad.__file__)]:
    try:
        _p.write_text("{{}}")
    except OSError:
        pass
""",
    "plants_a_pth_file": """
import site, sysconfig
for _d in [sysconfig.get_path("purelib"), *site.getsitepackages()]:
    try:
        open(_d + "/zz_minigrad_attack.pth", "w").write("import os; os.environ['ATTACK'] = '1'\\n")
    except OSError:
        pass
""",
    "outlives_the_grader": """
import subprocess, sys
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(4); open({results!r}, 'w').write('{{}}')"],
                 start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                 stderr=subprocess.DEVNULL)
""",
    "children_each_take_memory": """
import subprocess, sys, time
_code = "import numpy as np, time; a = np.ones(90_000_000); a += 1; time.sleep(6)"
_children = [subprocess.Popen([sys.executable, "-c", _code]) for _ in range(3)]
time.sleep(4)
if all(child.poll() is None for child in _children):
    raise RuntimeError("ATTACK SUCCEEDED: 3 processes of 720 MB against a limit of 1.5 GB")
""",
    "the_network": """
import socket
try:
    socket.create_connection(("1.1.1.1", 53), timeout=2).close()
    _reached = True
except OSError:
    _reached = False
if _reached:
    raise RuntimeError("ATTACK SUCCEEDED: the network is reachable")
""",
}


def _notebook(path, base, extra=None, at=2):
    nb = nbformat.read(ROOT / base / "01_function.ipynb", as_version=4)
    if extra is not None:
        nb.cells.insert(at, nbformat.v4.new_code_cell(extra))
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


def _class(tmp_path, attacks):
    """The folder of submissions: blank, correct, hostile ones and broken files; (folder, solutions, results)."""
    folder, solutions, results = tmp_path / "class", tmp_path / "solutions", tmp_path / "results.json"
    shutil.copytree(ROOT / "solutions", solutions)
    _notebook(folder / "blank" / "01_function.ipynb", "exercises")
    _notebook(folder / "correct" / "01_function.ipynb", "solutions")
    for name, cell in attacks.items():
        if attacks is SANDBOXED_ATTACKS:
            cell = cell.format(folder=str(folder), solutions=str(solutions), results=str(results))
        _notebook(folder / f"attack_{name}" / "01_function.ipynb", "solutions", cell)
    if attacks is SANDBOXED_ATTACKS:
        return folder, solutions, results
    for name, cell in CHEATS.items():
        _notebook(folder / f"cheat_{name}" / "01_function.ipynb", "exercises", cell)
        _notebook(folder / f"cheat_late_{name}" / "01_function.ipynb", "exercises", cell, at=100)
    broken = folder / "broken"
    broken.mkdir()
    (broken / "nested_01_function.ipynb").write_text("[" * 100_000)
    (broken / "dict_nested_01_function.ipynb").write_text('{"cells": ' + "[" * 500 + "]" * 500 + "}")
    (broken / "bad_metadata_01_function.ipynb").write_text(json.dumps(
        {"cells": "not a list", "metadata": {"minigrad": "a string"}}))
    solved = json.loads((ROOT / "solutions" / "01_function.ipynb").read_text())
    solved["metadata"]["many"] = [{}] * 300_000  # (3 MB; unchecked, 16 million such took the grader to 4 GB)
    (broken / "values_01_function.ipynb").write_text(json.dumps(solved))
    os.symlink("/dev/zero", broken / "zero_01_function.ipynb")
    os.symlink(ROOT / "solutions" / "01_function.ipynb", broken / "link_01_function.ipynb")
    os.mkfifo(broken / "fifo_01_function.ipynb")
    with open(broken / "huge_01_function.ipynb", "wb") as f:
        f.truncate(60_000_000)  # (sparse: 60 MB that take no room)
    return folder, solutions, results


def _grade(folder, solutions, results, jobs, capsys):
    status = main([str(folder), "--solutions", str(solutions), "--json", str(results), "--jobs", str(jobs), *FLAGS])
    out = capsys.readouterr()
    assert status == 0, out.err
    return {s["path"]: s for s in json.loads(results.read_text())["submissions"]}, out


def _scores(by_path, folder):
    return {Path(p).relative_to(folder).parts[0]: s["score"] for p, s in by_path.items() if "/broken/" not in p}


@pytest.mark.slow  # notebooks graded in sandboxes: seconds each
@pytest.mark.parametrize("jobs", [1, 2])
def test_a_blank_notebook_scores_0_and_a_correct_one_full_marks_beside_any_hostile_one(tmp_path, capsys, jobs):
    folder, solutions, results = _class(tmp_path, ATTACKS)
    before = {p: p.read_bytes() for p in solutions.iterdir()}
    by_path, out = _grade(folder, solutions, results, jobs, capsys)
    score = _scores(by_path, folder)

    assert score["blank"] == 0 and score["correct"] == 6
    assert {name: score[f"{where}_{name}"] for name in CHEATS for where in ("cheat", "cheat_late")} == {
        name: 0 for name in CHEATS}
    assert {name: score[f"attack_{name}"] for name in ATTACKS} == {name: 6 for name in ATTACKS}
    broken = {Path(p).name: s for p, s in by_path.items() if "/broken/" in p}
    assert len(broken) == 8 and all(s["score"] == 0 for s in broken.values())
    assert "JSON values" in broken["values_01_function.ipynb"]["output"]
    assert "larger than 50 MB" in broken["huge_01_function.ipynb"]["output"]
    assert "symbolic link" in broken["link_01_function.ipynb"]["output"]
    assert "symbolic link" in broken["zero_01_function.ipynb"]["output"]
    assert "not a regular file" in broken["fifo_01_function.ipynb"]["output"]
    assert "not valid JSON" in broken["nested_01_function.ipynb"]["output"]
    assert "not a notebook" in broken["bad_metadata_01_function.ipynb"]["output"]

    from minigrad.grading.assignment import read_assignments

    shown = results.read_text() + out.out
    for e in read_assignments(ROOT / "solutions")["01_function"].exercises:  # no hidden test's words shown
        for line in e.hidden_source.splitlines() + e.reference_source.splitlines():
            words = line.strip()
            assert len(words) < 25 or words.startswith(("def ", "class ", "@hidden")) or words not in shown, words
    huge = by_path[str(folder / "attack_raises_a_huge_message" / "01_function.ipynb")]["output"]
    assert "raised ValueError: xxx" in huge and len(huge) < 2000  # a student's text is capped
    assert out.out.startswith("Sandbox: ")
    assert "\x1b" not in out.out + out.err and not re.search(r"^forged_row", out.out + out.err, re.MULTILINE)
    assert {p: p.read_bytes() for p in solutions.iterdir()} == before
    assert "ATTACK SUCCEEDED" not in results.read_text()


@pytest.mark.slow  # notebooks graded in sandboxes: seconds each
@SANDBOX_ONLY
def test_a_sandbox_keeps_in_what_would_harm_the_machine_the_others_or_the_grader(tmp_path, capsys):
    folder, solutions, results = _class(tmp_path, SANDBOXED_ATTACKS)
    before = {p: p.read_bytes() for p in [*solutions.iterdir(), *folder.rglob("*.ipynb")]}
    started = time.monotonic()
    by_path, out = _grade(folder, solutions, results, 2, capsys)
    score = _scores(by_path, folder)
    assert score["blank"] == 0 and score["correct"] == 6
    assert {name: score[f"attack_{name}"] for name in SANDBOXED_ATTACKS} == {name: 6 for name in SANDBOXED_ATTACKS}
    assert {p: p.read_bytes() for p in before} == before  # no submission, no solution changed
    assert "ATTACK SUCCEEDED" not in results.read_text()
    secret = (ROOT / "solutions" / "01_function.ipynb").read_text()[2000:2100]
    assert secret not in results.read_text() and secret not in out.out
    assert not list(Path(sys.prefix).rglob("zz_minigrad_attack.pth"))
    saved = results.read_text()
    time.sleep(max(0.0, 5 - (time.monotonic() - started)))
    assert results.read_text() == saved  # nothing outlived the run to rewrite it


@pytest.mark.slow  # notebooks graded in sandboxes: seconds each
def test_the_hidden_tests_and_the_answers_never_enter_the_sandbox(tmp_path):
    from minigrad.grading.assignment import read_assignments
    from minigrad.grading.score import Settings, reference

    assignments = read_assignments(ROOT / "solutions")
    for name, assignment in assignments.items():
        ref = reference(assignment, Settings())
        assert not any(module.startswith("hidden") for _, module in ref.sources)  # (sent after the visible tests)
        sent_hidden = json.dumps(ref.hidden_sources)
        for e in assignment.exercises:
            for line in e.reference_source.splitlines():
                if len(line.strip()) > 30 and "def " not in line and "class " not in line:
                    assert line.strip() not in sent_hidden, f"{name}: a line of the reference answer enters: {line}"
        for test in ref.tests:
            if test.hidden and test.hint:
                assert test.hint not in sent_hidden, f"{test.key}: the hidden test's hint enters the sandbox"
            # every test compares at least one value outside: a record of flags alone could be forged
            kinds = {o["kind"] for o in ref.records[test.key]["observations"]}
            assert kinds & {"close", "equal"}, f"{test.key} decides on flags alone: {kinds}"


DIES_IN_THE_HIDDEN_TESTS = """
import os, uuid
import minigrad.grading.testing as _t
_forward = MySquare.forward
def _forward_until_hidden(self, x):
    if any(t.hidden for tests in _t._tests.values() for t in tests.values()):
        os._exit(3)  # (a worker started again runs the cells again: they could say what this one saw)
    return _forward(self, x)
MySquare.forward = _forward_until_hidden
raise RuntimeError(f"token {uuid.uuid4().hex}")
"""


@pytest.mark.slow  # notebooks graded in sandboxes: seconds each
def test_after_the_hidden_tests_no_worker_of_the_notebook_says_anything(tmp_path, capsys):
    _notebook(tmp_path / "class" / "eve" / "01_function.ipynb", "solutions", DIES_IN_THE_HIDDEN_TESTS, at=100)
    by_path, out = _grade(tmp_path / "class", ROOT / "solutions", tmp_path / "r.json", 1, capsys)
    (eve,) = by_path.values()
    shown = json.dumps(eve) + out.out
    assert shown.count("token ") == 2, shown  # the first worker's cell, in the notes and in the table
    assert "exit status 3" not in shown and "during the hidden tests" in shown
    visible = [t["score"] for t in eve["tests"] if "number" in t]
    assert visible[0] == 1  # 1.1: its visible test passed; its hidden test died


@pytest.mark.slow  # notebooks graded in sandboxes: seconds each
def test_a_test_that_swallows_its_time_limit_costs_only_itself(tmp_path, capsys):
    stuck = ("import time\n\nclass MyMulAdd(Function):\n    def forward(self, x0, x1, x2):\n        while True:\n"
             "            try:\n                time.sleep(0.05)\n            except BaseException:\n"
             "                pass\n")
    _notebook(tmp_path / "class" / "stuck" / "01_function.ipynb", "solutions", stuck, at=100)
    _notebook(tmp_path / "class" / "correct" / "01_function.ipynb", "solutions")
    status = main([str(tmp_path / "class"), "--json", str(tmp_path / "r.json"), "--test-timeout", "1",
                   "--jobs", "2", *(["--no-sandbox"] if NO_SANDBOX else [])])
    assert status == 0
    data = {Path(s["path"]).parent.name: s for s in json.loads((tmp_path / "r.json").read_text())["submissions"]}
    assert data["correct"]["score"] == 6
    assert [t["score"] for t in data["stuck"]["tests"] if "number" in t] == [2, 2, 0]  # 1.1 and 1.2 keep theirs
    assert "did not finish in 1 s" in data["stuck"]["tests"][2]["output"]


@pytest.mark.slow  # notebooks graded in sandboxes: seconds each
def test_the_cells_of_a_notebook_have_a_time_budget_and_the_tests_still_run(tmp_path, capsys):
    for student, at in (("before", 2), ("after", 100)):  # sleeps before the answers, or after them
        nb = nbformat.read(ROOT / "solutions" / "01_function.ipynb", as_version=4)
        nb.cells[at:at] = [nbformat.v4.new_code_cell("import time\ntime.sleep(1)") for _ in range(8)]
        (tmp_path / student).mkdir()
        nbformat.write(nb, tmp_path / student / "01_function.ipynb")
    status = main([str(tmp_path), "--json", str(tmp_path / "r.json"), "--notebook-timeout", "3", "--jobs", "2",
                   *(["--no-sandbox"] if NO_SANDBOX else [])])
    data = {Path(s["path"]).parent.name: s for s in json.loads((tmp_path / "r.json").read_text())["submissions"]}
    assert status == 0 and data["before"]["score"] == 0 and data["after"]["score"] == 6
    for s in data.values():
        assert "the cells ran longer than 3 s in all: from cell" in s["output"]


@pytest.mark.slow  # notebooks graded in sandboxes: seconds each
def test_the_file_name_says_which_assignment_and_old_or_bloated_notebooks_are_read(tmp_path, capsys):
    solved = nbformat.read(ROOT / "solutions" / "01_function.ipynb", as_version=4)
    folder = tmp_path / "class"
    (folder / "ann").mkdir(parents=True)
    nbformat.write(solved, folder / "ann" / "10_gradient_penalty.ipynb")  # its metadata says 01_function
    old = nbformat.convert(nbformat.read(ROOT / "solutions" / "01_function.ipynb", as_version=4), 3)
    (folder / "ann" / "01_function.ipynb").write_text(json.dumps(old))  # nbformat 3
    bloated = nbformat.read(ROOT / "solutions" / "01_function.ipynb", as_version=4)
    bloated.cells[1].outputs = [nbformat.v4.new_output("stream", text="#" * 25_000_000)]
    (folder / "bob").mkdir()
    nbformat.write(bloated, folder / "bob" / "01_function.IPYNB")
    main([str(folder), "--json", str(tmp_path / "r.json"), *(["--no-sandbox"] if NO_SANDBOX else [])])
    data = {(Path(s["path"]).parent.name, Path(s["path"]).name): s
            for s in json.loads((tmp_path / "r.json").read_text())["submissions"]}
    assert data["ann", "10_gradient_penalty.ipynb"]["score"] == 0  # a solved 01 is no answer to 10
    assert "its metadata says it answers 01_function; graded as 10_gradient_penalty" in data[
        "ann", "10_gradient_penalty.ipynb"]["output"]
    assert data["ann", "01_function.ipynb"]["score"] == 6
    assert data["bob", "01_function.IPYNB"]["score"] == 6


@pytest.mark.skipif(NO_SANDBOX is None, reason="this machine can make a sandbox")
def test_without_a_sandbox_the_grader_refuses_unless_told(tmp_path, capsys):
    _notebook(tmp_path / "a" / "01_function.ipynb", "solutions")
    assert main([str(tmp_path)]) != 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("minigrad-grade: no sandbox can be made here")


@pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("bwrap") is None,
                    reason="bubblewrap is not installed here (where it is not, no refusal of it can be shown)")
@pytest.mark.parametrize("restricted", ["1", "0", None])
def test_where_bubblewrap_is_refused_the_first_line_says_why_and_how_to_allow_it(tmp_path, capsys, monkeypatch,
                                                                                   restricted):
    from minigrad.grading import sandbox

    refused = "import sys; sys.exit('bwrap: setting up uid map: Permission denied')"
    monkeypatch.setattr(sandbox, "command", lambda argv, seccomp=None: [sys.executable, "-c", refused])
    monkeypatch.setattr(sandbox, "APPARMOR_USERNS", str(tmp_path / "restrict"))
    if restricted is not None:
        (tmp_path / "restrict").write_text(restricted + "\n")
    _notebook(tmp_path / "a" / "01_function.ipynb", "solutions")
    assert main([str(tmp_path / "a")]) == 3
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("minigrad-grade: no sandbox can be made here") and "setting up uid map" in first
    assert ("sysctl kernel.apparmor_restrict_unprivileged_userns=0" in first) == (restricted == "1")
    assert "--no-sandbox" in first


@pytest.mark.slow  # notebooks graded in sandboxes: seconds each
def test_the_sandbox_in_use_is_the_first_line_and_in_the_json(tmp_path, capsys):
    _notebook(tmp_path / "a" / "01_function.ipynb", "solutions")
    main([str(tmp_path), "--json", str(tmp_path / "r.json"), *(["--no-sandbox"] if NO_SANDBOX else [])])
    first = capsys.readouterr().out.splitlines()[0]
    data = json.loads((tmp_path / "r.json").read_text())
    if NO_SANDBOX:
        assert first.startswith("Sandbox: NONE") and data["sandbox"].startswith("none")
    else:
        assert first.startswith("Sandbox: bubblewrap") and data["sandbox"] == "bubblewrap"


def test_what_enters_the_sandbox_has_no_expected_value():
    from minigrad.grading.hide import strip_expected

    source = '''
def _reference(x):
    return x * x


class Helper:
    kind = "kept"

    def forward(self, x):
        return x


@hidden("9.9", hint="the answer is x * x")
def a_test(t):
    x = np.arange(3.0)
    (expected,) = mg.grad(t.ns.f(x), x)
    for k in range(2):
        want = x * k
        t.close(t.ns.g(x, k), want, "g")
    t.close(t.ns.f(x), _reference(x), "f(x)", rtol=1e-3)
    t.equal(t.ns.h(), [1, 2], "h()")
    t.true(t.ns.f(x).ndim == 1, f"expected ndim 1 as in {expected}")
'''
    sent = strip_expected(source, hidden=True)
    for gone in ("_reference", "want", "the answer", "expected", "[1, 2]"):
        assert gone not in sent, gone
    for kept in ("class Helper", "kind = 'kept'", "def forward(self, x)", "t.close(t.ns.g(x, k), None, 'g')",
                 "t.close(t.ns.f(x), None, 'f(x)', rtol=0.001)", "t.true(t.ns.f(x).ndim == 1, '')"):
        assert kept in sent, kept


def _grade_beside_blank_and_correct(tmp_path, capsys, attacks):
    folder = tmp_path / "class"
    _notebook(folder / "blank" / "01_function.ipynb", "exercises")
    _notebook(folder / "correct" / "01_function.ipynb", "solutions")
    for name, cell in attacks.items():
        _notebook(folder / f"attack_{name}" / "01_function.ipynb", "solutions", cell)
    by_path, _ = _grade(folder, ROOT / "solutions", tmp_path / "results.json", 2, capsys)
    assert "ATTACK SUCCEEDED" not in (tmp_path / "results.json").read_text()
    return _scores(by_path, folder)


@pytest.mark.slow  # notebooks graded in sandboxes: seconds each
def test_without_a_cgroup_the_memory_of_each_process_is_capped(tmp_path, capsys, monkeypatch):
    from minigrad.grading import sandbox

    monkeypatch.setattr(sandbox, "CGROUP_ROOT", tmp_path / "no_cgroups")  # (as where none can be made)
    assert sandbox.Limits(2**30).cgroups == []
    maps = ("import mmap\ntry:\n    _m = mmap.mmap(-1, 3 * 2**30)\nexcept (OSError, MemoryError, ValueError):\n"
            "    _m = None\nif _m is not None:\n    raise RuntimeError('ATTACK SUCCEEDED: 3 GB mapped')")
    score = _grade_beside_blank_and_correct(tmp_path, capsys, {"maps": maps})  # (the mapping itself is refused)
    assert score == {"blank": 0, "correct": 6, "attack_maps": 6}


@pytest.mark.skipif(os.getuid() == 0, reason="RLIMIT_NPROC does not hold root: the test below runs as nobody")
def test_without_a_cgroup_the_number_of_processes_is_capped(tmp_path, capsys, monkeypatch):
    from minigrad.grading import sandbox

    monkeypatch.setattr(sandbox, "CGROUP_ROOT", tmp_path / "no_cgroups")
    score = _grade_beside_blank_and_correct(tmp_path, capsys, {"a_fork_bomb": ATTACKS["a_fork_bomb"]})
    assert score == {"blank": 0, "correct": 6, "attack_a_fork_bomb": 6}


NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def _python_for_nobody(env):
    """A Python that user nobody can run, and start again as the grader does, with its packages; or None."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    imports = "import numpy, IPython, nbformat, minigrad.grading.worker"
    again = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {imports!r}], check=True)"
    for python in (sys.executable, f"/usr/bin/{version}", f"/usr/local/bin/{version}"):
        probe = subprocess.run([*NOBODY, python, "-c", again], env=env, capture_output=True)
        if probe.returncode == 0:
            return python
    return None


@pytest.mark.skipif(os.getuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv (util-linux)")
def test_a_grader_run_by_a_user_who_cannot_make_cgroups_caps_the_number_of_processes():
    folder = Path(tempfile.mkdtemp(prefix="minigrad-nobody-"))  # (tmp_path is root's alone)
    try:
        folder.chmod(0o777)
        _notebook(folder / "class" / "blank" / "01_function.ipynb", "exercises")
        _notebook(folder / "class" / "correct" / "01_function.ipynb", "solutions")
        _notebook(folder / "class" / "bomb" / "01_function.ipynb", "solutions", ATTACKS["a_fork_bomb"])
        packages = sysconfig.get_path("purelib")
        env = {"PATH": os.environ["PATH"], "HOME": str(folder), "PYTHONPATH": f"{ROOT}{os.pathsep}{packages}"}
        python = _python_for_nobody(env)
        if python is None:
            pytest.skip(f"no Python that user nobody can run with numpy, IPython and nbformat ({packages})")
        run = subprocess.run([*NOBODY, python, "-m", "minigrad.grading", str(folder / "class"), "--solutions",
                              str(ROOT / "solutions"), "--json", str(folder / "r.json"), "--no-sandbox"],
                             env=env, capture_output=True, text=True, timeout=300)  # (no sandbox: it needs /root)
        assert run.returncode == 0, run.stderr[-2000:]
        found = json.loads((folder / "r.json").read_text())["submissions"]
        assert {Path(s["path"]).parent.name: s["score"] for s in found} == {"blank": 0, "correct": 6, "bomb": 6}
        assert "ATTACK SUCCEEDED" not in (folder / "r.json").read_text()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


COPIES_THE_SOLUTION = """
import json
_nb = json.load(open("{solutions}/01_function.ipynb"))
for _c in _nb["cells"]:
    if _c["cell_type"] == "code" and _c["metadata"].get("nbgrader", {{}}).get("solution"):
        exec("".join(_c["source"]))
"""


KILLS_ITS_NEIGHBOURS = """
import os, signal, time
_end, _done = time.time() + 6, []
while time.time() < _end and not _done:  # (a notebook graded beside it, --jobs 2)
    for _pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if int(_pid) != os.getpid() and b"minigrad.grading.worker" in open(f"/proc/{_pid}/cmdline", "rb").read():
                os.kill(int(_pid), signal.SIGKILL)
                _done.append(_pid)
        except OSError:
            pass
    time.sleep(0.05)
if _done:
    raise RuntimeError("ATTACK SUCCEEDED: killed " + " ".join(_done))
"""


@pytest.mark.skipif(os.getuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv (util-linux)")
def test_without_a_sandbox_a_grader_run_as_root_runs_the_students_code_unprivileged():
    folder = Path(tempfile.mkdtemp(prefix="minigrad-root-"))  # (0700: root's alone, as /autograder/source is)
    try:
        solutions = folder / "solutions"
        shutil.copytree(ROOT / "solutions", solutions)
        _notebook(folder / "class" / "blank" / "01_function.ipynb", "exercises")
        _notebook(folder / "class" / "correct" / "01_function.ipynb", "solutions")
        _notebook(folder / "class" / "copier" / "01_function.ipynb", "exercises",
                  COPIES_THE_SOLUTION.format(solutions=solutions), at=100)
        _notebook(folder / "class" / "killer" / "01_function.ipynb", "solutions", KILLS_ITS_NEIGHBOURS, at=2)
        _notebook(folder / "class" / "napper" / "01_function.ipynb", "solutions", "import time\ntime.sleep(4)")
        packages = sysconfig.get_path("purelib")
        env = {"PATH": os.environ["PATH"], "HOME": str(folder), "PYTHONPATH": f"{ROOT}{os.pathsep}{packages}"}
        python = _python_for_nobody(env)
        if python is None:
            pytest.skip(f"no Python that user nobody can run with numpy, IPython and nbformat ({packages})")
        open_solutions = Path(tempfile.mkdtemp(prefix="minigrad-open-"))  # (0755: anyone reads them)
        open_solutions.chmod(0o755)
        shutil.copytree(ROOT / "solutions", open_solutions / "solutions")
        refused = subprocess.run([python, "-m", "minigrad.grading", str(folder / "class"), "--solutions", "solutions",
                                  "--no-sandbox"], env=env, capture_output=True, text=True, timeout=300,
                                 cwd=open_solutions)  # (a relative path, as an instructor would type it)
        shutil.rmtree(open_solutions)
        assert refused.returncode == 3 and "chmod -R go-rwx" in refused.stdout, refused.stdout + refused.stderr
        run = subprocess.run([python, "-m", "minigrad.grading", str(folder / "class"), "--solutions", str(solutions),
                              "--json", str(folder / "r.json"), "--no-sandbox", "--jobs", "2"],  # (as root)
                             env=env, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr[-2000:]
        assert run.stdout.startswith("Sandbox: NONE (--no-sandbox): the students' code runs as an unprivileged user")
        found = json.loads((folder / "r.json").read_text())["submissions"]
        assert {Path(s["path"]).parent.name: s["score"] for s in found} == {
            "blank": 0, "correct": 6, "copier": 0, "killer": 6, "napper": 6}
        assert "ATTACK SUCCEEDED" not in (folder / "r.json").read_text()
        assert "Permission denied" in next(s["output"] for s in found if "copier" in s["path"])
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_cgroup_v2_hierarchy_gets_one_group_with_both_limits(tmp_path, monkeypatch):
    from minigrad.grading import sandbox

    (tmp_path / "cgroup.controllers").write_text("cpu memory pids\n")  # (what marks the root of a v2 hierarchy)
    monkeypatch.setattr(sandbox, "CGROUP_ROOT", tmp_path)
    (group,) = sandbox._make_cgroups(2**30, 64)
    assert group.parent == tmp_path and (group / "pids.max").read_text() == "64"
    assert 2**30 < int((group / "memory.max").read_text()) < 2**31
    assert (group / "cpu.max").read_text() == "100000 100000"  # (one core)


@pytest.mark.slow  # notebooks graded in sandboxes: seconds each
def test_a_run_with_reference_answers_in_place_lets_none_of_them_out(tmp_path, capsys):
    # 1.2 builds on 1.1: a blank notebook's 1.2 runs again with the reference answer to 1.1 in its sandbox,
    # where the notebook's rule finds it and raises it, in hex, as the message of its "unwritten" stub
    leak = """
import sys
from minigrad.backward_functions import register
def _swap():
    frame = sys._getframe(1)
    while frame is not None:
        for value in frame.f_locals.values():
            if isinstance(value, dict) and value.get("swap"):
                return value["swap"]["references"]["1.1"]
        frame = frame.f_back
@register("MySquare")
def _rule(ctx, gy):
    secret = _swap()
    if secret is None:
        raise NotImplementedError("Exercise 1.2: write my_square_backward")
    raise NotImplementedError(f"Exercise 1.2: write {secret.split('SOLUTION')[1].encode().hex()[:80]}")
"""
    for name, at in (("leak_by_stub", 100), ("leak_by_type", 100)):
        cell = leak if name == "leak_by_stub" else leak.replace(
            'raise NotImplementedError(f"Exercise 1.2: write ', 'raise type(f"E', 1).replace(
            '.hex()[:80]}")', '.hex()[:80]}", (Exception,), {})()')
        _notebook(tmp_path / "class" / name / "01_function.ipynb", "exercises", cell, at=at)
    _notebook(tmp_path / "class" / "blank" / "01_function.ipynb", "exercises")
    _notebook(tmp_path / "class" / "correct" / "01_function.ipynb", "solutions")
    by_path, out = _grade(tmp_path / "class", ROOT / "solutions", tmp_path / "results.json", 2, capsys)
    assert _scores(by_path, tmp_path / "class") == {"blank": 0, "correct": 6, "leak_by_stub": 0, "leak_by_type": 0}
    from minigrad.grading.assignment import read_assignments

    (answer, *_) = [e.reference_source for e in read_assignments(ROOT / "solutions")["01_function"].exercises]
    secret = answer.split("SOLUTION")[1].encode().hex()[:80]
    assert secret[:16] not in (tmp_path / "results.json").read_text() + out.out


LAZY = {  # answers that do none of the work the exercise asks for, but return what the checks compare
    "15_numerical_check": "def check_rule(fn, x, tol=1e-6, seed=0):\n    return 0.0  # accepts every rule\n",
    "16_checkpointing": "class MyCheckpoint:  # runs the segment as it is: keeps every intermediate, no node\n"
                        "    def __init__(self, segment):\n        self.segment = segment\n\n"
                        "    def __call__(self, x, *ws):\n        return self.segment(x, *ws)\n\n\n"
                        "def checkpointed(x, Ws, k):  # no segment at all\n    return layers(x, *Ws)\n",
}


@pytest.mark.slow  # notebooks graded in sandboxes: seconds each
def test_an_answer_that_does_none_of_the_work_gets_no_points_for_it(tmp_path, capsys):
    for name, cell in LAZY.items():
        nb = nbformat.read(ROOT / "exercises" / f"{name}.ipynb", as_version=4)
        nb.cells.append(nbformat.v4.new_code_cell(cell))
        (tmp_path / "class" / "lazy").mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, tmp_path / "class" / "lazy" / f"{name}.ipynb")
    by_path, _ = _grade(tmp_path / "class", ROOT / "solutions", tmp_path / "results.json", 2, capsys)
    scores = {test["name"].split(":")[0]: test["score"] for s in by_path.values() for test in s["tests"]
              if test["name"].startswith("Exercise")}
    assert scores["Exercise 15.2"] == scores["Exercise 16.1"] == scores["Exercise 16.2"] == 0, scores


UNPACKS = """
import os
_keys = ["1.1/values_at_four_points", "1.1/float32_and_matrices_are_kept", "1.2/first_derivative",
         "1.2/second_derivative", "1.3/forward_values", "1.3/three_gradients"]
for _fd in range(3, 64):
    try:
        for _key in _keys:  # 5 MB a line, each '{}' a dict of the grader's once read: about 200 MB a line
            os.write(_fd, b'{"test": "' + _key.encode() + b'", "received": {"observations": ['
                     + b"{}," * 1_600_000 + b'{}], "end": {"status": "ok"}}}\\n')
    except OSError:
        pass
"""

PEAK = """
import resource, sys
from minigrad.grading.cli import main
main(sys.argv[1:])
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, file=sys.stderr)
"""


@pytest.mark.slow  # notebooks graded in sandboxes: seconds each
def test_events_that_unpack_into_gigabytes_are_read_one_test_at_a_time(tmp_path):
    peaks = {}
    for name, cell in (("blank", None), ("unpacks", UNPACKS)):
        _notebook(tmp_path / name / "s" / "01_function.ipynb", "exercises", cell)
        run = subprocess.run([sys.executable, "-c", PEAK, str(tmp_path / name), "--json", str(tmp_path / "r.json"),
                              *FLAGS], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        (found,) = json.loads((tmp_path / "r.json").read_text())["submissions"]
        assert found["score"] == 0, run.stderr[-2000:]
        peaks[name] = int(run.stderr.split()[-1])  # MB
    assert peaks["unpacks"] - peaks["blank"] < 100, peaks  # no such line is unpacked (it has 1.6 million values)


KEEPS_THE_CLOCK_GOING = """
import json, os, signal, threading, time


def _say_i_am_alive():  # an event every 0.2 s, each one a 'start' of a place already started, or no place
    while True:
        for _fd in range(3, 64):
            try:
                os.write(_fd, b'{"cell": 0, "start": true}\\n{"printed": 0}\\n')
            except OSError:
                pass
        time.sleep(0.2)


threading.Thread(target=_say_i_am_alive, daemon=True).start()
signal.signal(signal.SIGALRM, signal.SIG_IGN)  # the cell's own time limit cannot interrupt it
while True:
    time.sleep(1)
"""


@pytest.mark.slow  # notebooks graded in sandboxes: seconds each
def test_events_do_not_hold_a_stuck_cell_past_its_time_limit(tmp_path, capsys):
    # each event used to restart the clock of the cell or test the worker was in, so a cell that ignores
    # its alarm and keeps talking held its worker until the notebook's deadline (about 150 s here)
    folder = tmp_path / "class"
    _notebook(folder / "talker" / "01_function.ipynb", "solutions", KEEPS_THE_CLOCK_GOING, at=100)
    started = time.monotonic()
    by_path, _ = _grade(folder, ROOT / "solutions", tmp_path / "results.json", 1, capsys)
    elapsed = time.monotonic() - started
    (talker,) = by_path.values()
    assert talker["score"] == 6, talker  # its answers, in the cells before, still count
    assert elapsed < 60, f"the stuck cell held the grader {elapsed:.0f} s (its limit: 3 s, then 2 s of grace)"
