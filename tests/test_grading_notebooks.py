"""The grader on real notebooks, each in its own sandbox: solutions, untouched exercises, bad submissions.

Attacks on the grader are in test_grading_hostile.py.
"""

import json
from pathlib import Path

import nbformat
import pytest

from minigrad.grading.cli import main
from minigrad.grading.course import grade_all
from minigrad.grading.sandbox import why_no_sandbox
from minigrad.grading.score import Settings

pytest.importorskip("IPython", reason="the grader runs notebooks in an IPython shell")
NO_SANDBOX = why_no_sandbox()
SANDBOX_FLAGS = ["--no-sandbox"] if NO_SANDBOX else []

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS, EXERCISES = ROOT / "solutions", ROOT / "exercises"
QUICK = Settings(cell_timeout=3, test_time_limit=10, output_limit=200_000, sandbox=not NO_SANDBOX)


@pytest.mark.slow  # notebooks graded in sandboxes: seconds each
def test_every_solution_scores_full_marks():
    results = grade_all(SOLUTIONS, SOLUTIONS, Settings(cell_timeout=60, test_time_limit=30, sandbox=not NO_SANDBOX))
    assert len(results) >= 8
    for student, r in results:
        assert r.reasons == [], f"{student}: {r.reasons}"
        assert r.max_score > 0 and r.score == r.max_score, (
            f"{student}: {r.score}/{r.max_score}: "
            + "; ".join(t["message"] for e in r.exercises for t in e.tests if not t["passed"])
        )


@pytest.mark.slow  # notebooks graded in sandboxes: seconds each
def test_every_untouched_exercise_scores_zero_and_says_why():
    results = grade_all(EXERCISES, SOLUTIONS, Settings(cell_timeout=60, test_time_limit=30, sandbox=not NO_SANDBOX))
    assert len(results) >= 8
    for student, r in results:
        assert r.assignment == student and not r.zeroed, f"{student}: {r.reasons}"
        assert r.max_score > 0 and r.score == 0, f"{student} scored {r.score}"
        for e in r.exercises:
            assert e.tests and not any(t["passed"] for t in e.tests), f"exercise {e.id} passed a test"
            assert any("not written yet" in t["message"] for t in e.tests if not t["hidden"])


def _submission(folder, student, edit, assignment="01_function"):
    """A copy of a solution with ``edit(cells)`` applied, as FOLDER/student/ASSIGNMENT.ipynb."""
    nb = nbformat.read(SOLUTIONS / f"{assignment}.ipynb", as_version=4)
    edit(nb.cells)
    path = folder / student / f"{assignment}.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(nb, path)
    return path


def _insert(source, after=1):
    return lambda cells: cells.insert(after + 1, nbformat.v4.new_code_cell(source))


def _replace_solution(exercise, source):
    def edit(cells):
        for cell in cells:
            meta = cell.metadata
            if meta.get("nbgrader", {}).get("solution") and meta["minigrad"]["exercise"] == exercise:
                cell.source = source
    return edit


@pytest.mark.slow  # notebooks graded in sandboxes: seconds each
def test_broken_submissions_get_a_score_and_the_reason(tmp_path, capsys):
    _submission(tmp_path, "ada", _insert("while True:\n    pass"))
    _submission(tmp_path, "bob", _replace_solution("1.1", "class MySquare(Function)\n    pass"))
    _submission(tmp_path, "cy", _insert("mg.grad = lambda *args, **kwargs: [mg.Variable(0.0)]"))
    _submission(tmp_path, "dee", _insert("for k in range(40_000):\n    print('#' * 99)"))
    (tmp_path / "eve").mkdir()
    (tmp_path / "eve" / "01_function.ipynb").write_text('{"cells": [{"cell_type": "code", "sour')
    _submission(tmp_path, "fay", _replace_solution("1.2", "@register('MySquare')\ndef rule(ctx, gy):\n"
                                                           "    return gy * ctx.inputs[0]"))
    _submission(tmp_path, "gus", _insert("hoard = np.ones(250_000_000)  # 2 GB"))

    assert main([str(tmp_path), "--timeout", "3", "--test-timeout", "10", "--output-limit", "0.2",
                 "--memory", "1000", "--jobs", "3",
                 "--solutions", str(SOLUTIONS), "--json", str(tmp_path / "results.json"),
                 "--feedback", str(tmp_path / "feedback"), *SANDBOX_FLAGS]) == 0
    out = capsys.readouterr()
    handed_back = sorted(p.name for p in (tmp_path / "feedback").iterdir())
    assert handed_back == [f"{s}.txt" for s in ("ada", "bob", "cy", "dee", "eve", "fay", "gus")]
    fay_text = (tmp_path / "feedback" / "fay.txt").read_text()
    assert fay_text.startswith("fay: 01_function\nScore ") and "expected: " in fay_text
    assert "[7/7]" in out.err  # progress
    data = json.loads((tmp_path / "results.json").read_text())
    by = {s["student"]: s for s in data["submissions"]}
    assert [s["student"] for s in data["submissions"]] == ["ada", "bob", "cy", "dee", "eve", "fay", "gus"]
    assert by["gus"]["score"] == 6  # the cell over the memory limit raised; every other cell ran
    assert "cell 3 (hoard = np.ones(250_000_000)  # 2 GB) raised MemoryError" in by["gus"]["output"]
    assert "more than the 1000 MB a notebook may use" in by["gus"]["output"]

    assert by["ada"]["score"] == 6  # interrupted, then every other cell ran
    assert "cell 3 (while True:) ran longer than 3 s and was interrupted" in by["ada"]["output"]
    assert by["bob"]["score"] == 4  # 1.1 defines no MySquare; 1.2 is marked with the reference 1.1; 1.3 counts
    assert "SyntaxError" in by["bob"]["output"]
    # mg.grad replaced in the notebook: every test that differentiates gets its zeros and fails; the
    # forwards (1.1, and one test of 1.3) still pass
    assert by["cy"]["score"] == 2.67 and [t["score"] for t in by["cy"]["tests"] if "number" in t] == [2, 0, 0.67]
    assert by["dee"]["score"] == 6 and "printed more than 0.2 MB" in by["dee"]["output"]
    assert by["eve"]["score"] == 0 and "not a valid notebook: not valid JSON" in by["eve"]["output"]
    assert "Score 0 of 6." in by["eve"]["output"]  # its file name says which assignment it lost
    assert 0 < by["fay"]["score"] < 6  # a wrong rule: its exercise loses points, with the reason
    rule = next(t for t in by["fay"]["tests"] if t["number"] == "1.2")
    assert rule["score"] == 0 and "expected: " in rule["output"] and "received: " in rule["output"]

    for student in ("ada", "bob", "cy", "dee", "eve", "fay"):
        assert student in out.out  # the table per student
    assert "Scores per exercise" in out.out and "MySquare.forward" in out.out
    fay = [line for line in out.out.splitlines() if line.startswith("fay ") and " 1.2 " in line]
    assert any("first derivative" in line for line in fay)  # the points lost, with the failed tests


@pytest.mark.slow  # notebooks graded in sandboxes: seconds each
def test_an_endless_answer_costs_its_tests_not_every_check_cell(tmp_path):
    loop = "class MySquare(Function):\n    def forward(self, x):\n        while True:\n            pass"
    _submission(tmp_path, "hal", _replace_solution("1.1", loop))
    quick = Settings(cell_timeout=3, test_time_limit=1, sandbox=not NO_SANDBOX)
    ((student, r),) = grade_all(tmp_path, SOLUTIONS, quick)
    # check("1.1") and check("1.2") would each run into the cell's time limit; under the grader
    # they leave the tests to the grader, which runs them after the cells, each with its own second
    assert not any("ran longer" in reason for reason in r.reasons), r.reasons
    by_id = {e.id: e for e in r.exercises}
    assert by_id["1.1"].score == 0 and by_id["1.3"].score == by_id["1.3"].points
    assert any("did not finish in 1 s" in t["message"] for t in by_id["1.1"].tests)


@pytest.mark.slow  # notebooks graded in sandboxes: seconds each
def test_a_wrong_answer_costs_its_points_once_not_again_in_the_exercises_built_on_it(tmp_path, capsys):
    # 4.1 sums every axis whatever the shape; 4.2's rules, which call it, are right
    wrong_sum_to = ("class MySumTo(Function):\n    def __init__(self, shape):\n"
                    "        self.shape = tuple(shape)\n\n"
                    "    def forward(self, x):\n        return x.sum() + np.zeros(self.shape)\n\n\n"
                    "def my_sum_to(x, shape):\n    return MySumTo(shape)(x)\n")
    _submission(tmp_path, "ann", _replace_solution("4.1", wrong_sum_to), "04_broadcasting")
    # the same wrong 4.1, and a 4.2 that is wrong on its own (its broadcast rule forgets gy)
    wrong_rules = ("class MyBroadcastTo(Function):\n    def __init__(self, shape):\n"
                   "        self.shape = tuple(shape)\n\n"
                   "    def forward(self, x):\n        return np.broadcast_to(x, self.shape)\n\n\n"
                   "@register('MySumTo')\ndef r1(ctx, gy):\n    return MyBroadcastTo(ctx.inputs[0].shape)(gy)\n\n\n"
                   "@register('MyBroadcastTo')\ndef r2(ctx, gy):\n"
                   "    return my_sum_to(gy * 0 + 1, ctx.inputs[0].shape)\n")
    _submission(tmp_path, "ben", lambda cells: (_replace_solution("4.1", wrong_sum_to)(cells),
                                                _replace_solution("4.2", wrong_rules)(cells)), "04_broadcasting")
    # 2.1 unwritten; 2.2 and 2.3, which call topo_order, right
    stub = 'def topo_order(y):\n    raise NotImplementedError("Exercise 2.1: write topo_order")\n'
    _submission(tmp_path, "cat", _replace_solution("2.1", stub), "02_walker")
    # 2.1 unwritten and 2.2 wrong: 2.3 calls topo_order (2.1), not my_grad (2.2)
    zeros = "def my_grad(y, xs):\n    return [Variable(np.zeros_like(x.data)) for x in xs]\n"
    _submission(tmp_path, "dan", lambda cells: (_replace_solution("2.1", stub)(cells),
                                                _replace_solution("2.2", zeros)(cells)), "02_walker")

    assert main([str(tmp_path), "--timeout", "20", "--test-timeout", "20", "--solutions", str(SOLUTIONS),
                 "--json", str(tmp_path / "results.json"), *SANDBOX_FLAGS]) == 0
    out = capsys.readouterr().out
    data = json.loads((tmp_path / "results.json").read_text())
    scores = {s["student"]: {t["number"]: t["score"] for t in s["tests"] if "number" in t} for s in data["submissions"]}
    points = {s["student"]: {t["number"]: t["max_score"] for t in s["tests"] if "number" in t}
              for s in data["submissions"]}
    assert scores["ann"]["4.1"] < points["ann"]["4.1"]  # the mistake costs its points here...
    assert scores["ann"]["4.2"] == points["ann"]["4.2"]  # ...and not again in 4.2
    assert scores["ben"]["4.2"] < points["ben"]["4.2"]  # a 4.2 wrong on its own still loses
    assert scores["cat"]["2.1"] == 0
    assert scores["cat"]["2.2"] == points["cat"]["2.2"] and scores["cat"]["2.3"] == points["cat"]["2.3"]

    ann = next(s for s in data["submissions"] if s["student"] == "ann")
    shown = next(t["output"] for t in ann["tests"] if t["number"] == "4.2")
    assert "passed with the reference answer to exercise 4.1 in place of yours" in shown
    cat = [line for line in out.splitlines() if line.startswith("cat ")][0]
    assert "2.2: 4 tests passed with the reference answer to exercise 2.1;" in cat
    assert "2.3: 3 tests passed with the reference answer to exercise 2.1" in cat  # 2.2 is right: its own
    assert "2.1" in cat.split("2.2:")[0]  # 2.1 itself is in the points lost
    assert scores["dan"]["2.2"] == 0 and scores["dan"]["2.3"] == points["dan"]["2.3"]
    dan = [line for line in out.splitlines() if line.startswith("dan ")][0]
    assert "2.3: 3 tests passed with the reference answer to exercise 2.1" in dan  # not "2.1 and 2.2"


@pytest.mark.slow  # notebooks graded in sandboxes: seconds each
def test_magics_and_plots_run_as_in_jupyterlab(tmp_path):
    cell = "%matplotlib inline\nimport matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()\n!echo hi\ndisplay(3)"
    _submission(tmp_path, "kim", _insert(cell))
    ((student, r),) = grade_all(tmp_path, SOLUTIONS, QUICK)
    assert r.reasons == [] and r.score == 6
