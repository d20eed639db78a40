"""Marking with earlier reference answers: what is swapped in, and that everything is put back."""

from minigrad import taylor
from minigrad.backward_functions import register, table
from minigrad.grading.reference import defined_names, phrase, references_in_place

_rules = table.rules  # the backward table: a Function key -> its rule

REFERENCE = '''
class MySumTo:
    kind = "reference"


@register("MySumTo")
def my_sum_to_backward(ctx, gy):
    return gy


SCALE = 2.0
'''

TAYLOR_REFERENCE = '''
@taylor.register("MySqrt")
def my_sqrt_taylor(ctx, x):
    return x
'''


def test_the_names_a_cell_defines():
    assert defined_names(REFERENCE) == ["MySumTo", "my_sum_to_backward", "SCALE"]
    assert defined_names("a, (b, c) = 1, (2, 3)\nx: int = 4\nprint(a)\nimport os") == ["a", "b", "c", "x"]


def test_the_reference_is_in_place_inside_the_block_and_the_students_answer_after_it():
    class MySumTo:
        kind = "student's"

    ns = {"MySumTo": MySumTo, "register": register, "other": 1}
    assert "MySumTo" not in _rules
    with references_in_place([("4.1", REFERENCE)], ns) as swapped:
        assert swapped
        assert ns["MySumTo"].kind == "reference" and ns["SCALE"] == 2.0 and ns["other"] == 1
        assert "MySumTo" in _rules
    assert ns == {"MySumTo": MySumTo, "register": register, "other": 1}
    assert "MySumTo" not in _rules


def test_a_reference_that_cannot_run_in_the_notebook_swaps_nothing():
    ns = {"other": 1}  # no register: the notebook deleted its import
    with references_in_place([("4.1", REFERENCE)], ns) as swapped:
        assert not swapped and ns == {"other": 1}
    assert "MySumTo" not in _rules


def test_the_phrase_names_the_exercises():
    assert phrase(["4.1"]) == "the reference answer to exercise 4.1"
    assert phrase(["2.1", "2.2", "2.3"]) == "the reference answers to exercises 2.1, 2.2 and 2.3"


def test_rules_a_reference_registers_in_any_table_are_taken_back():
    ns = {"taylor": taylor}
    with references_in_place([("14.1", TAYLOR_REFERENCE)], ns) as swapped:
        assert swapped and "MySqrt" in taylor.table.registered()
    assert ns == {"taylor": taylor} and "MySqrt" not in taylor.table.registered()
