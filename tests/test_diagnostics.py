"""minigrad.doctor() and python -m minigrad: versions, the GPU and why not, the graph renderer, grading."""

import importlib.metadata
import platform
import re
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg
from minigrad import cuda, diagnostics
from minigrad.grading.sandbox import why_no_sandbox as WHY_NO_SANDBOX
from minigrad.viz import render

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def sandbox_probe(monkeypatch):
    """Each report would start bubblewrap (a second); the probe's answer is set here, as a test needs it."""
    from minigrad.grading import sandbox

    answer = {"why": None}
    monkeypatch.setattr(sandbox, "why_no_sandbox", lambda: answer["why"])
    return answer


def report(capsys):
    """What doctor() prints, as {what: finding}."""
    mg.doctor()
    lines = capsys.readouterr().out.splitlines()
    return dict(re.match(r"(\S+(?: \S+)*)\s{2,}(.*)", line).groups() for line in lines)


def fake_cupy(runtime_version, driver_version, device_error):
    """A CuPy module that finds these CUDA versions and no device (``device_error`` says why)."""
    def no_device():
        raise device_error

    runtime = types.SimpleNamespace(runtimeGetVersion=lambda: runtime_version,
                                    driverGetVersion=lambda: driver_version, getDeviceCount=no_device)
    return types.SimpleNamespace(__version__="13.6.0",
                                 cuda=types.SimpleNamespace(is_available=lambda: False, runtime=runtime))


def test_doctor_prints_the_versions_and_where_minigrad_is(capsys):
    found = report(capsys)
    assert found["Python"].startswith(platform.python_version() + " (")
    assert found["NumPy"] == np.__version__
    assert found["minigrad"] == f"{mg.__version__} ({ROOT / 'minigrad'})"
    assert list(found) == ["minigrad", "Python", "NumPy", "CuPy", "CUDA runtime", "CUDA driver", "GPU",
                           "graph renderer", "grading extra", "grading sandbox"]


def test_without_cupy_it_says_how_to_install_it(capsys, monkeypatch):
    def no_cupy():
        raise ImportError("No module named 'cupy'")

    monkeypatch.setattr(cuda, "_import_cupy", no_cupy)
    found = report(capsys)
    assert found["CuPy"] == "not installed" and found["CUDA runtime"] == "not found"
    assert found["GPU"].startswith("not usable: CuPy is not installed (No module named 'cupy')")
    assert "pip install 'minigrad-autodiff[gpu]'" in found["GPU"]


def test_with_cupy_but_no_device_it_gives_the_versions_and_cudas_reason(capsys, monkeypatch):
    error = RuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected")
    monkeypatch.setattr(cuda, "_import_cupy", lambda: fake_cupy(12040, 0, error))
    found = report(capsys)
    assert found["CuPy"] == "13.6.0"
    assert found["CUDA runtime"] == "12.4"
    assert found["CUDA driver"] == "not found"  # a driver version of 0: no driver
    assert found["GPU"] == ("not usable: CuPy is installed but no CUDA device or driver is usable "
                            "(RuntimeError: cudaErrorNoDevice: no CUDA-capable device is detected)")


def test_the_graph_renderer_is_the_engine_that_draw_uses(capsys):
    engines = render.find_engines()
    if not engines:
        pytest.skip("no DOT engine here (graphviz-pure is a dependency of minigrad)")
    assert report(capsys)["graph renderer"].startswith(f"{Path(engines[0]).name} ({engines[0]})")


def test_no_graph_renderer_says_what_to_install(capsys, monkeypatch):
    monkeypatch.setattr(render, "find_engines", lambda: [])
    assert report(capsys)["graph renderer"] == (
        "none found, so draw() cannot lay out a graph (to_dot() needs none): " + render.INSTALL_HINT)


def test_a_broken_graph_renderer_gives_its_error(capsys, monkeypatch, tmp_path):
    engine = tmp_path / "graphviz-pure"
    engine.write_text("#!/bin/sh\necho 'Error: cannot load its layout library' >&2\nexit 3\n")
    engine.chmod(0o755)
    monkeypatch.setattr(render, "find_engines", lambda: [str(engine)])
    finding = report(capsys)["graph renderer"]
    assert finding.startswith("found but failing: cannot draw the graph: every DOT engine failed")
    assert f"{engine}: Error: cannot load its layout library" in finding


def test_the_grading_extra_missing_is_named_with_how_to_install_it(capsys, monkeypatch):
    version = importlib.metadata.version

    def without_nbformat(name):
        if name == "nbformat":
            raise importlib.metadata.PackageNotFoundError(name)
        return version(name)

    monkeypatch.setattr(importlib.metadata, "version", without_nbformat)
    assert report(capsys)["grading extra"] == (
        "not installed (nbformat missing), so minigrad-grade cannot run notebooks: "
        "pip install 'minigrad-autodiff[grade]'")


def test_the_grading_packages_are_those_of_the_grade_extra():
    pyproject = (ROOT / "pyproject.toml").read_text()
    extra = re.search(r"^grade = \[(.*?)\]", pyproject, re.M).group(1)
    assert tuple(re.findall(r'"([A-Za-z0-9_.-]+)', extra)) == diagnostics.GRADING_PACKAGES


def test_it_says_whether_the_grader_can_make_its_sandbox_and_why_not(capsys, sandbox_probe):
    assert report(capsys)["grading sandbox"].startswith("bubblewrap")
    sandbox_probe["why"] = "bubblewrap (bwrap) is not installed: apt-get install bubblewrap"
    assert report(capsys)["grading sandbox"] == (
        "none: bubblewrap (bwrap) is not installed: apt-get install bubblewrap. "
        "minigrad-grade stops, or grades without one with --no-sandbox")


@pytest.mark.slow  # new Python processes
def test_python_dash_m_minigrad_answers_help_and_refuses_what_it_does_not_know():
    helped = subprocess.run([sys.executable, "-m", "minigrad", "--help"], capture_output=True, text=True, cwd=ROOT)
    assert helped.returncode == 0 and helped.stdout.startswith("usage: python -m minigrad")
    assert "sandbox" in helped.stdout and "NumPy" not in helped.stdout.split("\n\n")[0]
    wrong = subprocess.run([sys.executable, "-m", "minigrad", "--gpu"], capture_output=True, text=True, cwd=ROOT)
    assert wrong.returncode == 2 and "unrecognized arguments: --gpu" in wrong.stderr


@pytest.mark.slow  # a new Python process
def test_python_dash_m_minigrad_prints_the_same():
    done = subprocess.run([sys.executable, "-m", "minigrad"], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert re.search(rf"^NumPy\s+{re.escape(np.__version__)}$", done.stdout, re.M), done.stdout
    assert re.search(r"^grading extra\s+\S", done.stdout, re.M), done.stdout
    why = WHY_NO_SANDBOX()  # (the probe itself, not the fixture's: that process probed for real)
    sandbox = re.search(r"^grading sandbox\s+(.*)$", done.stdout, re.M).group(1)
    assert sandbox.startswith("bubblewrap") if why is None else why in sandbox, done.stdout
