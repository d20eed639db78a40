"""What check() says about a wrong value: both values, where they differ, and the likely mistake.

Each wrong value is built from the right one by a known mistake, so the
note it should get is known in advance; an unrelated value gets no note.
"""

import numpy as np
import pytest

from minigrad.grading.compare import describe

RNG = np.random.default_rng(7)
WANT = RNG.standard_normal((3, 4))


def _note(got, want=WANT, gy=None):
    text = describe(np.asarray(got, dtype=float), np.asarray(want, dtype=float), "gx", 1e-6, 1e-8, gy)
    notes = [line for line in text.splitlines() if line.startswith("note: ")]
    return text, (notes[0] if notes else None)


@pytest.mark.parametrize("got, words", [
    (-WANT, "the negative of expected: a sign error"),
    (WANT * 4, "4 times expected"),
    (WANT / 3, "0.3333 times expected"),
    (np.zeros_like(WANT), "zero everywhere"),
])
def test_a_wrong_value_names_its_likely_mistake(got, words):
    text, note = _note(got)
    assert text.startswith("gx is wrong\nexpected: ")
    assert note is not None and words in note


def test_a_missing_gy_is_named_when_the_test_passed_grad_outputs():
    gy = RNG.standard_normal(WANT.shape)
    _, note = _note(WANT, WANT * gy, gy=gy)
    assert "does the rule multiply by gy?" in note


def test_a_transposed_square_matrix_is_named():
    want = RNG.standard_normal((3, 3))
    _, note = _note(want.T, want)
    assert "transpose" in note


def test_a_gradient_left_in_the_broadcast_shape_is_told_to_sum():
    gy = RNG.standard_normal((5, 4))
    text, note = _note(gy, gy.sum(axis=0))
    assert text.startswith("gx has shape (5, 4), expected shape (4,)")
    assert "summed over its extra axes down to (4,) it would be right" in note


def test_a_forward_left_unsummed_gets_no_note_that_gives_the_sum_away():
    x = RNG.standard_normal((5, 4))
    message = describe(x, x.sum(axis=0), "MySumTo((4,))(x)", 1e-6, 1e-8)
    assert message.startswith("MySumTo((4,))(x) has shape (5, 4), expected shape (4,)")
    assert "note:" not in message and "gradient" not in message


def test_keepdims_is_named_when_only_axes_of_length_one_differ():
    _, note = _note(WANT.sum(axis=0, keepdims=True), WANT.sum(axis=0))
    assert "axes of length 1 were added or dropped" in note


def test_an_unrelated_value_gets_no_guess_and_a_large_array_says_where_it_differs():
    got = WANT.copy()
    got[1, 2] += 0.5
    text, note = _note(got)
    assert note is None
    assert f"wrong at 1 of 12 elements; the first at index (1, 2): expected {WANT[1, 2]:.6g}" in text


def test_a_wrong_number_is_not_called_a_constant_factor_off():
    # one number is always some multiple of another: the guess would name a cause it cannot know
    _, note = _note(1.006 * 2.5, want=2.5)
    assert note is None
