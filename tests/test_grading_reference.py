"""Marking with earlier reference answers: what is swapped in, and that everything is put back."""

from minigrad.backward_functions import _rules, register
from minigrad.grading.inkernel import _with_references
from minigrad.grading.reference import defined_names, phrase, references_in_place
from minigrad.grading.testing import Test, run

REFERENCE = '''
class MySumTo:
    kind = "reference"


@register("MySumTo")
def my_sum_to_backward(ctx, gy):
    return gy


SCALE = 2.0
'''


def test_the_names_a_cell_defines():
    assert defined_names(REFERENCE) == ["MySumTo", "my_sum_to_backward", "SCALE"]
    assert defined_names("a, (b, c) = 1, (2, 3)\nx: int = 4\nprint(a)\nimport os") == ["a", "b", "c", "x"]


def test_the_reference_is_in_place_inside_the_block_and_the_students_answer_after_it():
    class MySumTo:
        kind = "student's"

    ns = {"MySumTo": MySumTo, "register": register, "other": 1}
    assert "MySumTo" not in _rules
    with references_in_place([{"id": "3.1", "reference": REFERENCE}], ns) as swapped:
        assert swapped
        assert ns["MySumTo"].kind == "reference" and ns["SCALE"] == 2.0 and ns["other"] == 1
        assert "MySumTo" in _rules
    assert ns == {"MySumTo": MySumTo, "register": register, "other": 1}
    assert "MySumTo" not in _rules


def test_a_reference_that_cannot_run_in_the_notebook_swaps_nothing():
    ns = {"other": 1}  # no register: the notebook deleted its import
    with references_in_place([{"id": "3.1", "reference": REFERENCE}], ns) as swapped:
        assert not swapped and ns == {"other": 1}
    assert "MySumTo" not in _rules


def test_the_phrase_names_the_exercises():
    assert phrase(["3.1"]) == "the reference answer to exercise 3.1"
    assert phrase(["5.1", "5.2", "5.3"]) == "the reference answers to exercises 5.1, 5.2 and 5.3"


def _outcomes(fn, ns):
    test = Test("9.3", "a test", fn, "", False)
    return [run(test, ns)]


def test_a_credited_test_names_only_the_earlier_answers_it_needed():
    earlier = [{"id": "9.1", "reference": "A = 1"}, {"id": "9.2", "reference": "B = 2"}]
    ns = {"A": 0, "B": 0}

    def needs_a(t):
        t.true(t.ns.A == 1, "A should be 1")

    first = _outcomes(needs_a, ns)
    assert not first[0].passed
    (outcome,) = _with_references(first, earlier, ns, None)
    assert outcome.passed and outcome.with_reference == ("9.1",)
    assert outcome.message == "passed with the reference answer to exercise 9.1 in place of yours"
    assert ns == {"A": 0, "B": 0}


def test_a_test_that_passes_the_second_time_on_its_own_is_a_plain_pass():
    earlier = [{"id": "9.1", "reference": "A = 1"}, {"id": "9.2", "reference": "B = 2"}]
    calls = []

    def lucky(t):  # fails the first time only, whatever the names
        calls.append(1)
        t.true(len(calls) > 1, "unlucky")

    (outcome,) = _with_references(_outcomes(lucky, {"A": 0}), earlier, {"A": 0}, None)
    assert outcome.passed and outcome.with_reference == () and outcome.message == ""
