"""The project's promises about itself: CI runs the README's test command."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    command = "python -m pytest"
    assert f"```bash\npython -m pip install -e \".[dev,oracle]\"\n{command}\n```" in readme
    assert f"\n{command}\n" in ci
    assert '-e ".[dev,oracle]"' in ci


def test_every_notebook_is_listed_in_the_readme():
    readme = (ROOT / "README.md").read_text()
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        assert f"notebooks/{nb.name}" in readme, f"{nb.name} is missing from the README's lessons table"


def test_the_readme_python_examples_run(tmp_path, monkeypatch):
    import re

    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert len(blocks) >= 5
    namespace = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)  # each block builds on the ones before


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
