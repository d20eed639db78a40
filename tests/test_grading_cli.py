"""The grading command without notebooks run: its help, who a notebook belongs to, and what the reports say.

The results here are built by hand (the sandboxed runs are exercised in
test_grading_notebooks.py), so each report line can be checked against
what was put in.
"""

import os
from pathlib import Path

import pytest

from minigrad.grading.cli import main
from minigrad.grading.course import submissions
from minigrad.grading.report import (
    csv_text, exercise_table, feedback_file_names, feedback_text, gradescope, lost_table, points, student_table,
)
from minigrad.grading.score import ExerciseResult, NotebookResult


def test_help_explains_every_option_the_layout_and_the_scores(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["--help"])
    assert exit.value.code == 0
    text = capsys.readouterr().out
    for option in ("--json FILE", "--feedback DIR", "--solutions DIR", "--timeout SECONDS", "--test-timeout SECONDS",
                   "--output-limit MB", "--memory MB", "--jobs N", "--csv FILE", "--no-sandbox",
                   "--gradescope-autograder OUT.zip", "--assignment NAME", "--notebook-timeout SECONDS"):
        assert option in text
    for topic in ("who is the student", "which notebook answers which assignment", "scores:", "output:",
                  "Gradescope's results.json", "hidden", "AUTOGRADER_ROOT=", "AUTOGRADER_PYTHON=", "Canvas",
                  " (1)", "max_points"):
        assert topic in text


def test_a_student_is_named_by_folder_or_by_file_name_less_the_assignment(tmp_path):
    for name in ("alice/05_matrix_calculus.ipynb", "bob_05_matrix_calculus.ipynb", "05_matrix_calculus.ipynb",
                 "carol.ipynb", "dan.IPYNB", ".ipynb_checkpoints/x.ipynb", ".eve.ipynb", "notes.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}")
    (tmp_path / "new\nline.ipynb").write_text("{}")
    open(bytes(tmp_path) + b"/latin\xe9.ipynb", "w").close()  # (a name that is not UTF-8)
    warnings = []
    found = submissions(tmp_path, ["05_matrix_calculus", "02_walker"], warnings.append)
    assert sorted(student for student, _ in found) == ["05_matrix_calculus", "alice", "bob", "carol", "dan"]
    assert set(warnings) == {"skipped .eve.ipynb: a name starting with '.'",
                                "skipped .ipynb_checkpoints/: a name starting with '.'",
                                "skipped 'latin\\udce9.ipynb': a name that cannot be printed",
                                "skipped 'new\\nline.ipynb': a name that cannot be printed",
                                "skipped notes.txt: not a notebook (.ipynb)"}


def test_a_student_is_named_in_the_names_browsers_and_learning_platforms_give_a_file(tmp_path):
    named = {"ivan_03_elementwise_rules (1).ipynb": "ivan", "ivan_03_elementwise_rules (2) (1).ipynb": "ivan",
             "jo-ann_03_elementwise_rules-1.ipynb": "jo-ann", "03_elementwise_rules_kim (1).ipynb": "kim",
             "smithlee_12345_67890_03_elementwise_rules.ipynb": "smithlee",
             "smithlee_LATE_12345_67891_03_elementwise_rules-2.ipynb": "smithlee",
             "max_2024_03_elementwise_rules.ipynb": "max_2024", "noor (1).ipynb": "noor",
             "03_elementwise_rules (3).ipynb": "03_elementwise_rules (3)"}
    for name in named:
        (tmp_path / name).write_text("{}")
    found = submissions(tmp_path, ["03_elementwise_rules", "01_function"])
    assert {nb.name: student for student, nb in found} == named


def test_a_folder_named_like_a_notebook_gets_a_row_that_says_what_it_is(tmp_path):
    from minigrad.grading.notebook import NotANotebook, read_cells

    (tmp_path / "ann_01_function.ipynb").mkdir()
    (tmp_path / "ann_01_function.ipynb" / "01_function.ipynb").write_text("{}")  # (not graded as another student)
    (tmp_path / "bo" / "01_function.IPYNB").mkdir(parents=True)
    warnings = []
    found = submissions(tmp_path, ["01_function"], warnings.append)
    assert [(student, str(nb.relative_to(tmp_path))) for student, nb in found] == [
        ("ann", "ann_01_function.ipynb"), ("bo", "bo/01_function.IPYNB")]
    assert warnings == []
    with pytest.raises(NotANotebook, match="a folder named like a notebook"):
        read_cells(tmp_path / "ann_01_function.ipynb")


def _test(name, passed, hidden=False, message=""):
    return {"name": name, "passed": passed, "hidden": hidden, "message": message}


def _results():
    full = ExerciseResult("1.1", "MySquare.forward", 2.0, 2.0, [_test("values", True)])
    wrong = ExerciseResult("1.2", "the rule of MySquare", 2.0, 0.5, [
        _test("first derivative", True), _test("second derivative", False, message="has no graph"),
        _test("weighted gradient", False, hidden=True, message="secret"), _test("order 3", False)])
    stub = ExerciseResult("1.2", "the rule of MySquare", 2.0, 0.0, [
        _test("first derivative", False, message="not written yet (NotImplementedError: ...)"),
        _test("weighted gradient", False, hidden=True, message="not written yet (...)")])
    ada = NotebookResult("ada.ipynb", "01_function", [full, wrong], ["cell 3 raised NameError: x"])
    bob = NotebookResult("bob.ipynb", "01_function", [full, stub])
    cy = NotebookResult("cy.ipynb", "01_function", [full, wrong], ["not a valid notebook"], zeroed=True)
    return [("ada", ada), ("bob", bob), ("cy", cy)]


def test_the_tables_say_who_lost_what_and_why():
    results = _results()
    students = student_table(results)
    assert "ada      01_function  2.5/4  1.2 (-1.5)  cell 3 raised NameError: x" in students
    assert "bob      01_function  2/4    1.2 (-2)" in students
    assert "cy       01_function  0/4    all (-4)    not a valid notebook" in students
    lost = lost_table(results)
    assert "ada      01_function  1.2       1.5   second derivative, hidden: weighted gradient, order 3" in lost
    assert "bob      01_function  1.2       2     not written" in lost
    exercises = exercise_table(results)
    row = next(line for line in exercises.splitlines() if line.startswith("1.2"))
    assert row.split()[-6:] == ["2", "0.17", "0/3", "second", "derivative", "(1)"]  # mean (0.5 + 0 + 0) / 3


def test_scores_and_losses_have_one_format():
    assert [points(x) for x in (10 / 3, 2 / 3, 6.0, 2.5, 0.0, 1.005)] == ["3.33", "0.67", "6", "2.5", "0", "1"]
    three = [("ann", _results()[0][1])]
    three[0][1].exercises[1].score = 2 / 3
    assert "ann      01_function  2.67/4  1.2 (-1.33)" in student_table(three)
    assert "Lost 1.33 on 1.2" in gradescope(three[0][1])["output"]


def test_the_csv_has_a_row_per_student_and_assignment_with_the_maximum_and_a_column_per_exercise():
    (_, ada), (_, bob), (_, cy) = _results()
    other = NotebookResult("ada2.ipynb", "03_elementwise_rules", [ExerciseResult("3.1", "sin", 2.0, 1.0),
                                                                  ExerciseResult("3.2", "tanh", 6.0, 6.0)])
    lost = NotebookResult("eve.ipynb", None, reasons=["no assignment"], zeroed=True)
    text = csv_text([("ada", ada), ("bob", bob), ("cy", cy), ("ada", other), ("eve", lost)])
    assert text.splitlines() == ["student,assignment,points,max_points,1.1,1.2,3.1,3.2",
                                 "ada,01_function,2.5,4,2,0.5,,", "ada,03_elementwise_rules,7,8,,,1,6",
                                 "bob,01_function,2,4,2,0,,", "cy,01_function,0,4,0,0,,",
                                 "eve,? (eve.ipynb),0,0,,,,"]


def test_the_csv_counts_a_students_best_notebook_of_an_assignment_whole():
    first = NotebookResult("eve/a.ipynb", "01_function", [ExerciseResult("1.1", "a", 2.0, 2.0),
                                                          ExerciseResult("1.2", "b", 2.0, 0.0)])
    second = NotebookResult("eve/b.ipynb", "01_function", [ExerciseResult("1.1", "a", 2.0, 0.0),
                                                           ExerciseResult("1.2", "b", 2.0, 1.5)])
    rows = csv_text([("eve", first), ("eve", second)]).splitlines()
    assert rows == ["student,assignment,points,max_points,1.1,1.2",
                    "eve,01_function,2,4,2,0"]  # (never 2 and 1.5, from two notebooks)


def test_gradescope_shows_hidden_tests_by_name_and_keeps_their_messages_aside():
    data = gradescope(_results()[0][1])
    assert data["score"] == 2.5
    assert data["output"].splitlines() == [
        "Score 2.5 of 4.", "Lost 1.5 on 1.2: second derivative, hidden: weighted gradient, order 3.",
        "cell 3 raised NameError: x"]
    rule = data["tests"][1]
    assert rule["score"] == 0.5 and "FAIL second derivative\nhas no graph" in rule["output"]
    assert "FAIL hidden test: weighted gradient" in rule["output"] and "secret" not in str(data)
    assert data["tests"][2] == {"name": "Exercise 1.2, hidden test: weighted gradient", "score": 0.0,
                                "max_score": 0.0, "status": "failed", "visibility": "after_published"}


def test_the_feedback_for_a_student_shows_visible_messages_and_hidden_names_only():
    text = feedback_text(*_results()[0])
    assert text.startswith("ada: 01_function\nScore 2.5 of 4.")
    assert "Exercise 1.2: the rule of MySquare: 0.5 of 2 points" in text
    assert "  FAIL second derivative\n        has no graph" in text
    assert "FAIL hidden test: weighted gradient" in text and "secret" not in text
    assert "cell 3 raised NameError: x" in text


def test_feedback_files_are_named_by_student_and_by_assignment_when_a_student_has_several():
    (_, ada), (_, bob), _ = _results()
    other = NotebookResult("ada2.ipynb", "03_elementwise_rules", [])
    names = feedback_file_names([("ada", ada), ("bob", bob), ("ada", other), ("a/b c", bob)])
    assert names == {0: "ada_01_function.txt", 1: "bob.txt", 2: "ada_03_elementwise_rules.txt", 3: "a_b_c.txt"}


def test_feedback_files_never_overwrite_one_another():
    (_, ada), (_, bob), _ = _results()
    first = NotebookResult("carol/01_function.ipynb", "01_function", [])
    again = NotebookResult("carol/01_function_resubmit.ipynb", "01_function", [])
    names = feedback_file_names([("Mary Ann", ada), ("Mary_Ann", bob), ("carol", first), ("carol", again),
                                 ("Bob", ada), ("bob", bob)])
    assert names == {0: "Mary_Ann.txt", 1: "Mary_Ann_2.txt", 2: "carol_01_function.txt",
                     3: "carol_01_function_resubmit.txt", 4: "Bob.txt", 5: "bob_2.txt"}


def test_feedback_file_names_fit_a_file_system_and_student_names_are_no_formulas(tmp_path):
    (_, ada), (_, bob), _ = _results()
    long = NotebookResult("mallory/" + "\u00e9" * 120 + "_01_function.ipynb", "01_function", [])
    names = feedback_file_names([("mallory", ada), ("mallory", long), ("mallory", bob)])
    for name in names.values():
        assert len(name.encode()) <= 255
        (tmp_path / name).write_text("feedback")  # (the file system takes it)
    assert len(set(names.values())) == 3
    rows = csv_text([("=1+2", ada), ("+cmd", bob), ("-x", bob), ("@SUM(A1)", bob), ("ann", bob)]).splitlines()
    assert [row.split(",")[0] for row in rows[1:]] == ["'+cmd", "'-x", "'=1+2", "'@SUM(A1)", "ann"]


def test_folders_nested_too_deep_and_too_many_notebooks_are_skipped_with_a_warning(tmp_path, monkeypatch):
    (tmp_path / "dee").mkdir()
    (tmp_path / "dee" / "01_function.ipynb").write_text("{}")
    monkeypatch.chdir(tmp_path / "dee")
    for _ in range(40):  # (os.walk recurses once a level: past ~1,000 levels, a RecursionError)
        os.mkdir("a")
        os.chdir("a")
    Path("01_function.ipynb").write_text("{}")
    for k in range(60):
        (tmp_path / "zed" / f"{k:02d}_01_function.ipynb").parent.mkdir(exist_ok=True)
        (tmp_path / "zed" / f"{k:02d}_01_function.ipynb").write_text("{}")
    warnings = []
    found = submissions(tmp_path, ["01_function"], warnings.append)
    assert [nb.name for student, nb in found if student == "dee"] == ["01_function.ipynb"]
    assert sum(student == "zed" for student, _ in found) == 50
    assert any("nested more than 16 deep" in w for w in warnings)
    assert sum("zed has more than 50 notebooks" in w for w in warnings) == 10


def test_a_student_who_answered_an_assignment_twice_has_both_notebooks_named_in_the_tables():
    _, (_, bob), _ = _results()
    first = NotebookResult("carol/01_function.ipynb", "01_function", bob.exercises)
    again = NotebookResult("carol/01_function_resubmit.ipynb", "01_function", bob.exercises)
    results = [("carol", first), ("carol", again), ("bob", bob)]
    students = student_table(results)
    assert "carol    01_function (01_function.ipynb)           2/4" in students
    assert "carol    01_function (01_function_resubmit.ipynb)  2/4" in students
    assert "bob      01_function                               2/4" in students
    assert "01_function (01_function_resubmit.ipynb)  1.2" in lost_table(results)


def test_python_dash_m_minigrad_grading_is_the_command_and_its_help_imports_nothing_heavy():
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-X", "importtime", "-m", "minigrad.grading", "--help"],
                         capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.startswith("usage: minigrad-grade")
    imported = {line.split("|")[-1].strip() for line in run.stderr.splitlines()}
    # (the time itself is not asserted: it is that of a loaded machine; what takes seconds is named)
    assert not imported & {"nbformat", "nbclient", "jupyter_client", "IPython", "jsonschema"}


def test_the_worker_a_notebook_runs_in_imports_no_notebook_reader():
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-X", "importtime", "-c", "import minigrad.grading.worker"],
                         capture_output=True, text=True)
    imported = {line.split("|")[-1].strip() for line in run.stderr.splitlines()}
    # (every worker, restarts included, pays for its imports: nbformat and jsonschema took a second each)
    assert run.returncode == 0 and not imported & {"nbformat", "nbclient", "jupyter_client", "jsonschema"}


def test_a_wrong_solutions_folder_is_an_error_not_a_class_of_zeros(tmp_path, capsys):
    (tmp_path / "a.ipynb").write_text("{}")
    for wrong in (tmp_path / "nowhere", tmp_path):
        with pytest.raises(SystemExit) as exit:
            main([str(tmp_path), "--solutions", str(wrong)])
        assert exit.value.code != 0
        assert "--solutions" in capsys.readouterr().err
