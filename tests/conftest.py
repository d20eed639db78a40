"""The backend fixture: the same tests on the CPU, on a stand-in device, and on a GPU when one is usable.

A test module opts in with ``pytestmark = pytest.mark.usefixtures("device")``:
inside each test, Variables made from host data live on that device (as with
``with mg.device(...)``), so the test itself is not copied. The GPU runs skip,
with CuPy's reason, where no GPU can be used.
"""

import pytest

import minigrad as mg
from minigrad import cuda

import stand_in_device  # noqa: F401  (registers the "stand-in" device)


@pytest.fixture(params=["cpu", "stand-in", "gpu"])
def device(request):
    if request.param == "gpu" and not cuda.is_available():
        pytest.skip(f"no usable GPU: {cuda.why_no_gpu()}")
    with mg.device(request.param):
        yield request.param
