"""The backend fixture: the same tests on the CPU, on a stand-in device, and on a GPU when one is usable.

A test module opts in with ``pytestmark = pytest.mark.usefixtures("device")``:
inside each test, Variables made from host data live on that device (as with
``with mg.device(...)``), so the test itself is not copied. The GPU runs skip,
with CuPy's reason, where no GPU can be used.
"""

import pytest

import minigrad as mg
from minigrad import backward_functions, cuda, forward_functions, rule_table

import stand_in_device  # noqa: F401  (registers the "stand-in" device)


@pytest.fixture(params=["cpu", "stand-in", "gpu"])
def device(request):
    if request.param == "gpu" and not cuda.is_available():
        pytest.skip(f"no usable GPU: {cuda.why_no_gpu()}")
    with mg.device(request.param):
        yield request.param


@pytest.fixture(autouse=True)
def _registry_as_it_was():
    """Rules a test registers for its own functions are gone after it (from both tables), and a class a
    test names like one of minigrad's (a student's ``Sin``) no longer stands for that name."""
    rules = dict(backward_functions._rules)
    differentiable = dict(backward_functions._differentiable)
    forward = dict(forward_functions.table.rules), dict(forward_functions.table.differentiable)
    defined = dict(rule_table._defined)
    yield
    backward_functions._rules.clear()
    backward_functions._rules.update(rules)
    backward_functions._differentiable.clear()
    backward_functions._differentiable.update(differentiable)
    for now, before in zip((forward_functions.table.rules, forward_functions.table.differentiable), forward):
        now.clear()
        now.update(before)
    rule_table._defined.clear()
    rule_table._defined.update(defined)


@pytest.fixture(autouse=True)
def _no_parameters_left():
    """Every test starts and ends with no PF parameters: one test's W never fits another's x."""
    mg.clear_parameters()
    yield
    mg.clear_parameters()
