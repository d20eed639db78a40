"""Every registered function against central differences, in float64.

Each case of ``tests/cases.py`` is checked to second order, and to third
order when it is smooth. A function added to the registry without a case
makes ``test_every_registered_function_has_a_case`` fail.
"""

import pytest

from minigrad.backward_functions import lookup, registered
from minigrad.numerical import gradcheck
from cases import CASES


# the same tests on every device (see conftest.py)
pytestmark = pytest.mark.usefixtures("device")


def test_every_registered_function_has_a_case():
    # rules that tests register for themselves (outside the package) need no case
    package = {name for name in registered() if lookup(name).__module__.startswith("minigrad.")}
    missing = sorted(package - {case.name for case in CASES})
    assert not missing, f"registered functions without a case in tests/cases.py: {missing}"


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_gradcheck(case):
    order = 3 if case.smooth else 2
    assert gradcheck(case.f, case.inputs(), order=order)
