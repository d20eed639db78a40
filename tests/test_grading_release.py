"""A student's copy of the course (python -m minigrad.grading.release): no solution line, no hidden test.

Every line of a solution block or a hidden-test block that appears in none of
the files a copy is made of (the package, the lessons, the examples, the
README, the exercises) is a line only the solutions hold: the copy must hold
none of them. The same search finds them in a copy that carries solutions/.
"""

import shutil
from pathlib import Path

import nbformat
import pytest

from minigrad.grading.assignment import BEGIN_HIDDEN, BEGIN_SOLUTION, END_HIDDEN, END_SOLUTION
from minigrad.grading.generate import exercise_notebook
from minigrad.grading.release import main, release

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions"
MARKERS = (BEGIN_SOLUTION, END_SOLUTION, BEGIN_HIDDEN, END_HIDDEN)


def text_of(path):
    """What a file says: a notebook's cell sources, another file's text ('' for a binary file)."""
    if path.suffix == ".ipynb":
        return "\n".join(cell.source for cell in nbformat.read(path, as_version=4).cells)
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return ""


def answer_lines():
    """The lines of every solution and hidden-test block of the solution notebooks, stripped."""
    lines = set()
    for path in sorted(SOLUTIONS.glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            inside = False
            for line in cell.source.splitlines():
                if line.strip() in MARKERS:
                    inside = line.strip() in (BEGIN_SOLUTION, BEGIN_HIDDEN)
                elif inside and line.strip():
                    lines.add(line.strip())
    return lines


def solution_only_lines():
    """The answer lines that no file a copy is made of holds (the generated exercises included)."""
    sources = [text_of(p) for folder in ("minigrad", "notebooks", "examples") for p in (ROOT / folder).rglob("*")
               if p.is_file() and "__pycache__" not in p.parts]
    sources += [text_of(ROOT / "README.md"), text_of(ROOT / "pyproject.toml")]
    sources += ["\n".join(c.source for c in exercise_notebook(nbformat.read(p, as_version=4)).cells)
                for p in SOLUTIONS.glob("*.ipynb")]
    return {line for line in answer_lines() if not any(line in text for text in sources)}


def leaks(folder, lines):
    """{file: [the solution-only lines it holds]} under ``folder``."""
    found = {}
    for path in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
        text = text_of(path)
        held = sorted(line for line in lines if line in text)
        if held or any(line.strip() in MARKERS for line in text.splitlines()):
            found[str(path.relative_to(folder))] = held or ["a solution or hidden-test marker"]
    return found


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    out = tmp_path_factory.mktemp("student") / "course"
    assert main([str(out), "--solutions", str(SOLUTIONS)]) == 0
    return out


def test_the_copy_holds_the_lessons_the_exercises_the_package_and_the_readme(copy):
    for folder in ("notebooks", "minigrad", "exercises"):
        ours = sorted(p.name for p in (ROOT / folder).glob("*") if p.suffix in (".ipynb", ".py"))
        assert ours and ours == sorted(p.name for p in (copy / folder).glob("*") if p.suffix in (".ipynb", ".py"))
    assert (copy / "README.md").read_text() == (ROOT / "README.md").read_text()
    assert (copy / "pyproject.toml").is_file()
    workspaces = sorted(p.name for p in (ROOT / ".jupyter" / "workspaces").glob("*.jupyterlab-workspace"))
    assert workspaces and workspaces == sorted(p.name for p in (copy / ".jupyter" / "workspaces").iterdir())
    assert not (copy / "solutions").exists() and not (copy / "tests").exists()


def test_the_copy_holds_no_solution_line_and_no_hidden_test(copy):
    lines = solution_only_lines()
    assert len(lines) >= 100, f"only {len(lines)} solution-only lines: the search would prove little"
    assert leaks(copy, lines) == {}


def test_the_search_finds_the_solutions_in_a_copy_that_carries_them(copy, tmp_path):
    leaky = tmp_path / "leaky"
    shutil.copytree(copy, leaky)
    shutil.copytree(SOLUTIONS, leaky / "solutions")
    found = leaks(leaky, solution_only_lines())
    assert found and all(name.startswith("solutions") for name in found)
    assert len(found) == len(list(SOLUTIONS.glob("*.ipynb")))


def test_release_never_writes_into_a_folder_that_holds_files(tmp_path, capsys):
    (tmp_path / "mine.txt").write_text("a student's file")
    assert main([str(tmp_path), "--solutions", str(SOLUTIONS)]) == 1
    assert "not empty" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.txt"]
    with pytest.raises(FileNotFoundError, match="no solution notebooks"):
        release(tmp_path / "new", solutions_dir=tmp_path)
