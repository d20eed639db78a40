"""Exercises are generated from solutions: the contract of the stubs, and no drift between the folders."""

import re
from pathlib import Path

import nbformat
import pytest

from minigrad.grading.assignment import BEGIN_HIDDEN, BEGIN_SOLUTION, read_assignments
from minigrad.grading.feedback import load_visible
from minigrad.grading.generate import WouldOverwrite, generate, main, stub_source
from minigrad.grading.testing import exercise_tests

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS, EXERCISES = ROOT / "solutions", ROOT / "exercises"


def test_exercises_are_the_generated_solutions(tmp_path):
    written = generate(SOLUTIONS, tmp_path)
    assert sorted(p.name for p in written) == sorted(p.name for p in EXERCISES.glob("*.ipynb")), (
        "exercises/ and solutions/ hold different notebooks: run python -m minigrad.grading.generate"
    )
    for path in written:
        assert path.read_text() == (EXERCISES / path.name).read_text(), (
            f"exercises/{path.name} differs from what solutions/{path.name} generates: "
            "run python -m minigrad.grading.generate"
        )


def _answer_a_stub(path):
    """Write an answer into the first stub of exercise notebook ``path``, as a student would; its new text."""
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if "raise NotImplementedError(" in c.source)
    stub = r'raise NotImplementedError\("Exercise [^"]*"\)'
    cell.source = re.sub(stub, "return 42  # my answer", cell.source, count=1)
    nbformat.write(nb, path)
    return path.read_text()


def test_generate_never_overwrites_a_students_answers(tmp_path, capsys):
    written = generate(SOLUTIONS, tmp_path)
    edited, untouched = written[0], written[-1]
    answered = _answer_a_stub(edited)
    with pytest.raises(WouldOverwrite) as refused:
        generate(SOLUTIONS, tmp_path)
    assert refused.value.paths == [edited] and "--force" in str(refused.value)
    assert edited.read_text() == answered, "the student's answer was overwritten"
    assert main([str(SOLUTIONS), str(tmp_path)]) == 1  # the command says so, and stops
    said = capsys.readouterr().err
    assert str(edited) in said and "--force" in said and str(untouched) not in said
    assert edited.read_text() == answered
    generate(SOLUTIONS, tmp_path, force=True)  # --force overwrites
    assert "my answer" not in edited.read_text()
    # outputs and metadata are no one's work: a notebook that was only run is written again
    nb = nbformat.read(untouched, as_version=4)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    code = next(c for c in nb.cells if c.cell_type == "code")
    code.outputs = [nbformat.v4.new_output("stream", text="ran\n")]
    nbformat.write(nb, untouched)
    assert main([str(SOLUTIONS), str(tmp_path)]) == 0
    assert "ran\n" not in untouched.read_text()


def test_at_least_thirteen_assignments_each_with_points_and_visible_tests():
    assignments = read_assignments(SOLUTIONS)
    assert len(assignments) >= 13
    load_visible()
    for assignment in assignments.values():
        assert assignment.exercises, f"{assignment.name} has no graded exercise"
        for e in assignment.exercises:
            assert e.points > 0, f"exercise {e.id} has no points"
            assert any(not t.hidden for t in exercise_tests(e.id)), f"exercise {e.id} has no visible test"
            assert "@hidden(" in e.hidden_source, f"exercise {e.id} has no hidden test"


def test_every_solution_block_becomes_a_stub_that_names_its_exercise():
    for path in sorted(EXERCISES.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        solution = nbformat.read(SOLUTIONS / path.name, as_version=4)
        for cell, original in zip(nb.cells, solution.cells):
            assert BEGIN_SOLUTION not in cell.source and BEGIN_HIDDEN not in cell.source
            assert "outputs" not in cell or cell.outputs == []
            n_blocks = original.source.count(BEGIN_SOLUTION)
            exercise = original.metadata.get("minigrad", {}).get("exercise")
            stubs = re.findall(r'raise NotImplementedError\("Exercise ([\d.]+): write [\w.]+"\)', cell.source)
            assert stubs == [exercise] * n_blocks, f"{path.name}: a solution block was not stubbed"


def test_a_stub_keeps_the_signature_and_docstring():
    source = ('class A:\n    def f(self, x):\n        """Doc."""\n'
              '        ### BEGIN SOLUTION\n        return x\n        ### END SOLUTION\n')
    assert stub_source(source, "3.1") == (
        'class A:\n    def f(self, x):\n        """Doc."""\n'
        '        raise NotImplementedError("Exercise 3.1: write A.f")'
    )


def test_a_solution_outside_a_function_is_refused():
    with pytest.raises(ValueError, match="inside a function body"):
        stub_source("### BEGIN SOLUTION\nx = 1\n### END SOLUTION\n", "1.1")
    with pytest.raises(ValueError, match="has no ### END SOLUTION"):
        stub_source("def f():\n    ### BEGIN SOLUTION\n    return 1\n", "1.1")


def test_no_hidden_test_has_the_name_of_a_visible_one():
    # tests are registered by function name per exercise: a hidden test of a visible test's name replaces it
    load_visible()
    visible = {(t.exercise, t.fn.__name__) for e in read_assignments(SOLUTIONS).values() for x in e.exercises
               for t in exercise_tests(x.id, include_hidden=False)}
    for assignment in read_assignments(SOLUTIONS).values():
        for e in assignment.exercises:
            for name in re.findall(r"@hidden\([^\n]*(?:\n[^\n]*)*?\ndef (\w+)", e.hidden_source):
                assert (e.id, name) not in visible, f"exercise {e.id}: the hidden test {name} replaces a visible one"


def test_registering_a_hidden_test_under_a_visible_name_is_refused():
    from minigrad.grading import testing

    testing.load_source("@visible('99.1')\ndef same_name(t):\n    pass\n", "clash_visible")
    try:
        with pytest.raises(ValueError, match=r"hidden\('99.1'\).*visible test named 'same_name'.*another name"):
            testing.load_source("@hidden('99.1')\ndef same_name(t):\n    pass\n", "clash_hidden")
        assert not testing.exercise_tests("99.1")[0].hidden  # the visible test is still there
        testing.load_source("@visible('99.1')\ndef same_name(t):\n    pass\n", "clash_visible")  # a reload is fine
    finally:
        testing._tests.pop("99.1", None)


def test_each_exercise_notebook_is_numbered_after_its_lesson():
    # exercises/NN_name.ipynb pairs with notebooks/NN_*.ipynb, whatever NN: its exercises are NN.1, NN.2, ...,
    # its visible tests live in checks/exNN_name.py, its first cell names lesson NN, and the README's table
    # lists it on lesson NN's row
    checks = ROOT / "minigrad" / "grading" / "checks"
    rows = {line.split("`")[1]: line for line in (ROOT / "README.md").read_text().splitlines()
            if line.startswith("| `notebooks/")}
    assignments = read_assignments(SOLUTIONS)
    assert sorted(assignments) == sorted(p.stem for p in EXERCISES.glob("*.ipynb"))
    assert sorted(f"ex{name}.py" for name in assignments) == sorted(p.name for p in checks.glob("ex*.py"))
    for name, assignment in assignments.items():
        number = re.fullmatch(r"(\d\d)_\w+", name)
        assert number, f"solutions/{name}.ipynb: the name must start with its lesson's two-digit number"
        n = int(number[1])
        (lesson,) = ROOT.glob(f"notebooks/{number[1]}_*.ipynb")
        for e in assignment.exercises:
            assert re.fullmatch(rf"{n}\.\d+", e.id), f"{name}.ipynb: exercise {e.id} is not numbered {n}.M"
        first = nbformat.read(assignment.path, as_version=4).cells[0].source
        assert re.match(rf"# Exercises {n}\b", first) and re.search(rf"\blessons? {n} \(", first), (
            f"{name}.ipynb: the first cell must say 'Exercises {n}' and name lesson {n}")
        assert f"`{name}`" in rows[f"notebooks/{lesson.name}"], f"README: lesson {n}'s row does not list {name}"
