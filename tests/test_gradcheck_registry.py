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


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_gradcheck_when_every_unread_array_is_freed(case, monkeypatch):
    """The same check with every intermediate that no rule reads released at once, however small.

    A rule that reads an array its Function declared unread (``reads_inputs`` /
    ``reads_outputs``) meets a freed array here and fails.
    """
    monkeypatch.setattr("minigrad.core.function.RELEASE_FROM_BYTES", 0)

    def through_intermediates(*xs):
        # x + 0.0 and y + 0.0 make the function's inputs and output intermediates that add's
        # rule does not read: they are freed unless the function's own rule reads them
        return case.f(*[x + 0.0 for x in xs]) + 0.0

    order = 3 if case.smooth else 2
    assert gradcheck(through_intermediates, case.inputs(), order=order)
