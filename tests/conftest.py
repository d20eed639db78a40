"""The backend fixture: the same tests on the CPU, on a stand-in device, and on a GPU when one is usable.

A test module opts in with ``pytestmark = pytest.mark.usefixtures("device")``:
inside each test, Variables made from host data live on that device (as with
``with mg.device(...)``), so the test itself is not copied. The GPU runs skip,
with CuPy's reason, where no GPU can be used.
"""

import pytest

import minigrad as mg
from minigrad import cuda
from minigrad.core import rules as rule_tables
from minigrad.support import rule_keys

import stand_in_device  # noqa: F401  (registers the "stand-in" device)


@pytest.fixture(params=["cpu", "stand-in", "gpu"])
def device(request):
    if request.param == "gpu" and not cuda.is_available():
        pytest.skip(f"no usable GPU: {cuda.why_no_gpu()}")
    with mg.device(request.param):
        yield request.param


@pytest.hookimpl(tryfirst=True)  # (before -m deselects)
def pytest_collection_modifyitems(items):
    """A lesson run as a test (nbval, a cell an item) starts its kernel and takes seconds: it is slow."""
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """One "no usable GPU" line per test module in the summary, not one per test function.

    pytest folds skips that share a file, a line and a reason; the GPU runs
    skip in this fixture with one reason, so dropping the line folds them.
    """
    report = yield
    callspec = getattr(item, "callspec", None)
    if report.skipped and call.when == "setup" and callspec is not None and callspec.params.get("device") == "gpu":
        path, _, reason = report.longrepr
        report.longrepr = (path, None, reason)
    return report


@pytest.fixture(autouse=True)
def _registry_as_it_was():
    """Rules a test registers for its own functions, in any table, are gone after it,
    and a class a test defines no longer answers to its name."""
    saved = [(t, dict(t.rules), dict(t.differentiable)) for t in rule_tables.tables]
    defined = dict(rule_keys._defined)
    yield
    for table, rules, differentiable in saved:
        table.rules.clear()
        table.rules.update(rules)
        table.differentiable.clear()
        table.differentiable.update(differentiable)
    rule_keys._defined.clear()
    rule_keys._defined.update(defined)


@pytest.fixture(autouse=True)
def _no_parameters_left():
    """Every test starts and ends with no PF parameters: one test's W never fits another's x."""
    mg.clear_parameters()
    yield
    mg.clear_parameters()


@pytest.fixture(autouse=True)
def _no_hidden_tests_left():
    """Hidden tests the grader registers while grading in this process are gone after the test, so that
    ``check()`` in a later test runs the visible tests alone. (Visible tests stay: their modules are
    imported once.)"""
    import sys

    testing = sys.modules.get("minigrad.grading.testing")
    before = {(e, name) for e, tests in testing._tests.items() for name in tests} if testing else set()
    yield
    testing = sys.modules.get("minigrad.grading.testing")
    if testing is None:
        return
    for exercise, tests in testing._tests.items():
        for name in [n for n, t in tests.items() if t.hidden and (exercise, n) not in before]:
            del tests[name]
