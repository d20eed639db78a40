"""The project's promises about itself: CI runs the README's test command."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def readme_commands():
    """The commands of the README's bash blocks, without their comments."""
    blocks = re.findall(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    return [line.split("  #")[0].strip() for block in blocks for line in block.splitlines()]


def test_ci_runs_the_readme_test_commands():
    """PyTorch's CPU build from its own index, then the extras, then every test, as the README says."""
    commands = readme_commands()
    installs = ["python -m pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu",
                'python -m pip install -e ".[dev,oracle]"']
    assert [c for c in commands if c in installs] == installs
    assert 'python -m pytest -m "not slow"' in commands and "python -m pytest" in commands
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    steps = [ci.index(command) for command in installs + ["python -m pytest"]]
    assert steps == sorted(steps), "CI installs torch's CPU build, then the extras, then runs the tests"


def test_the_readme_says_how_long_the_tests_take():
    readme = (ROOT / "README.md").read_text()
    for command in ['python -m pytest -m "not slow"', "python -m pytest"]:
        line = re.search(rf"^{re.escape(command)} +# .*\d+ (s|min|minutes?)\b.*$", readme, re.M)
        assert line, f"the README gives no time for {command}"


def test_the_slow_marker_is_registered():
    assert '"slow: ' in (ROOT / "pyproject.toml").read_text()


def test_every_notebook_is_listed_in_the_readme():
    readme = (ROOT / "README.md").read_text()
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        assert f"notebooks/{nb.name}" in readme, f"{nb.name} is missing from the README's lessons table"


def readme_tables():
    """(line, cells per row) of each table of the README, header first; GitHub splits a cell at every unescaped |."""
    lines = (ROOT / "README.md").read_text().splitlines()
    tables, table = [], None
    for n, line in enumerate(lines, 1):
        if re.fullmatch(r"\|(\s*:?-+:?\s*\|)+\s*", line) and n > 1 and lines[n - 2].startswith("|"):
            table = (n - 1, [len(re.findall(r"(?<!\\)\|", lines[n - 2])) - 1])
            tables.append(table)
        elif table and line.startswith("|"):
            table[1].append(len(re.findall(r"(?<!\\)\|", line)) - 1)
        else:
            table = None
    return tables


def test_every_row_of_a_readme_table_has_its_header_s_columns():
    """An extra | (``||``) adds an empty cell and pushes the last column out from under its header."""
    tables = readme_tables()
    assert any(counts[0] == 3 and len(counts) > 20 for _, counts in tables), "the lessons table is not found"
    for line, counts in tables:
        wrong = [(line + 1 + i, n) for i, n in enumerate(counts[1:], 1) if n != counts[0]]
        assert not wrong, (f"README.md, the table at line {line} has {counts[0]} columns; "
                           f"(line, columns) of the rows that differ: {wrong}")


def test_every_drawing_saved_in_a_lesson_has_a_png_form():
    """JupyterLab hides the SVG of an untrusted notebook: a drawing saved without a PNG shows as <Graph: ...>."""
    import json

    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        for i, cell in enumerate(cells):
            for output in cell.get("outputs", []):
                data = output.get("data", {})
                if "".join(data.get("text/plain", [])).startswith("<Graph:"):
                    assert "image/png" in data, f"{nb.name}, cell {i}: a drawing saved without its PNG; re-run it"


def readme_python_blocks():
    """(line, source) of each fenced Python block of the README."""
    readme = (ROOT / "README.md").read_text()
    return [(readme[:m.start()].count("\n") + 2, m.group(1)) for m in re.finditer(r"```python\n(.*?)```", readme, re.S)]


@pytest.mark.parametrize("line, source", readme_python_blocks(), ids=[f"line{n}" for n, _ in readme_python_blocks()])
def test_every_readme_python_block_runs_as_it_stands(line, source, tmp_path, monkeypatch):
    """Each block in a fresh namespace, as a reader pastes it into a new notebook."""
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    exec(compile("\n" * (line - 1) + source, "README.md", "exec"), {"__name__": "__readme__"})


def test_the_readme_has_its_python_examples():
    assert len(readme_python_blocks()) >= 6


@pytest.mark.slow  # runs pytest in a subprocess
def test_the_gpu_runs_skip_with_one_line_per_test_module():
    import subprocess
    import sys

    from minigrad import cuda

    if cuda.is_available():
        pytest.skip("a GPU is usable here: the GPU runs run")
    done = subprocess.run([sys.executable, "-m", "pytest", "tests/test_dtypes.py", "tests/test_higher_order.py",
                           "-q", "-rs", "-p", "no:randomly"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    skips = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    assert len(skips) == 2, done.stdout[-3000:]
    for line, module in zip(skips, ["tests/test_dtypes.py", "tests/test_higher_order.py"]):
        assert line.startswith("SKIPPED [") and f"] {module}: no usable GPU: " in line, line


@pytest.mark.slow  # a Python process per benchmark
def test_a_benchmark_saves_its_plot_in_benchmarks_where_git_ignores_it():
    import os
    import subprocess
    import sys

    plotting = [p for p in sorted((ROOT / "benchmarks").glob("bench_*.py")) if "--plot" in p.read_text()]
    assert len(plotting) >= 2
    for script in plotting:
        helped = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, cwd="/",
                                env={**os.environ, "COLUMNS": "1000"})  # (no path wrapped at a hyphen)
        assert helped.returncode == 0, helped.stderr
        default = Path(re.search(r"--plot .*?\(default: (\S+?)\)", helped.stdout).group(1))
        assert default.parent == ROOT / "benchmarks", f"{script.name} saves its plot to {default}"
        ignored = subprocess.run(["git", "check-ignore", "-q", str(default)], cwd=ROOT)
        assert ignored.returncode == 0, f"git does not ignore {default}"
