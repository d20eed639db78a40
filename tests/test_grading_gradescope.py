"""Gradescope's autograder zip: unpacked into a folder standing for /autograder, run on a submission."""

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from minigrad.grading.cli import main
from minigrad.grading.sandbox import why_no_sandbox

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # notebooks graded in sandboxes: seconds each
def test_the_autograder_zip_grades_a_submission_and_writes_results_json(tmp_path, capsys):
    out = tmp_path / "autograder.zip"
    assert main(["--gradescope-autograder", str(out), "01_function", "--solutions", str(ROOT / "solutions")]) == 0
    with zipfile.ZipFile(out) as z:
        names = set(z.namelist())
        z.extractall(tmp_path / "source")
    assert {"setup.sh", "run_autograder", "solutions/01_function.ipynb", "minigrad-src/pyproject.toml",
            "minigrad-src/minigrad/grading/worker.py"} <= names
    assert not any(n.startswith("solutions/") and "01_function" not in n for n in names)  # one assignment
    for script in ("setup.sh", "run_autograder"):
        (tmp_path / "source" / script).chmod(0o755)

    (tmp_path / "submission").mkdir()
    shutil.copy(ROOT / "solutions" / "01_function.ipynb", tmp_path / "submission" / "my work.ipynb")
    env = dict(os.environ, AUTOGRADER_ROOT=str(tmp_path), AUTOGRADER_PYTHON=sys.executable,
               PYTHONPATH=str(tmp_path / "source" / "minigrad-src"))
    run = subprocess.run(["bash", str(tmp_path / "source" / "run_autograder")], env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    results = json.loads((tmp_path / "results" / "results.json").read_text())
    shown = [t for t in results["tests"] if t["visibility"] == "visible"]
    assert results["score"] == 6 and [(t["score"], t["max_score"]) for t in shown] == [(2, 2)] * 3
    hidden = [t for t in results["tests"] if t["visibility"] == "after_published"]
    assert len(hidden) == 4 and all(t["status"] == "passed" and t["max_score"] == 0 for t in hidden)
    assert results["extra_data"]["sandbox"].startswith("bubblewrap" if why_no_sandbox() is None else "none")

    (tmp_path / "submission" / "my work.ipynb").unlink()
    run = subprocess.run(["bash", str(tmp_path / "source" / "run_autograder")], env=env, capture_output=True,
                         text=True, timeout=300)
    results = json.loads((tmp_path / "results" / "results.json").read_text())
    assert results["score"] == 0 and "No notebook" in results["output"]


def test_an_unknown_assignment_is_an_error(tmp_path):
    with pytest.raises(SystemExit) as exit:
        main(["--gradescope-autograder", str(tmp_path / "a.zip"), "99_nothing"])
    assert exit.value.code != 0 and not (tmp_path / "a.zip").exists()
