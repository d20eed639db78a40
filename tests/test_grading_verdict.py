"""Verdicts from two records: what the sandbox handed out against what the reference run expected.

Whatever the sandbox sends is data of unknown shape: nothing malformed passes a test, nothing crashes.
"""

import numpy as np

from minigrad.grading.testing import Test, encode
from minigrad.grading.verdict import judge

TEST = Test("1.1", "values", lambda t: None, "square it", hidden=False)
X = np.array([-2.0, 0.5, 3.0])
EXPECTED = {"observations": [
    {"kind": "true", "given": "x", "ok": True, "message": ""},
    {"kind": "close", "given": f"x = {X}", "value": encode(X * X), "what": "MySquare()(x)", "rtol": 1e-6,
     "atol": 1e-8, "gy": None},
    {"kind": "equal", "given": "x", "value": "float64", "what": "the dtype"}], "end": {"status": "ok"}}


def _received(*observations, end=None):
    return {"observations": list(observations), "end": end or {"status": "ok"}}


RIGHT = [{"kind": "true", "ok": True}, {"kind": "close", "value": encode(X * X)}, {"kind": "equal", "value": "float64"}]


def test_the_right_values_pass_and_a_wrong_one_is_described():
    assert judge(TEST, _received(*RIGHT), EXPECTED).passed
    wrong = judge(TEST, _received(RIGHT[0], {"kind": "close", "value": encode(-X * X)}, RIGHT[2]), EXPECTED)
    assert not wrong.passed
    assert wrong.message.startswith(f"input: x = {X}\nMySquare()(x) is wrong\nexpected: ")
    assert "a sign error?" in wrong.message and wrong.message.endswith("hint: square it")


def test_a_none_is_right_only_where_the_reference_gave_none():
    none = {"observations": [{"kind": "close", "given": "x", "value": None, "what": "the gradient of x1",
                              "rtol": 1e-6, "atol": 1e-8, "gy": None}], "end": {"status": "ok"}}
    assert judge(TEST, _received({"kind": "close", "value": None}), none).passed
    assert "should be None" in judge(TEST, _received({"kind": "close", "value": encode(X)}), none).message
    numbers = dict(none, observations=[dict(none["observations"][0], value=encode(X))])
    assert "is None" in judge(TEST, _received({"kind": "close", "value": None}), numbers).message


def test_nothing_malformed_or_forged_passes():
    forged = [
        None, {}, [], "ok", {"observations": "all", "end": {"status": "ok"}},
        _received(),  # ended well with nothing observed
        _received(*RIGHT[:2]),  # one observation short
        _received(*RIGHT, RIGHT[2]),  # one too many
        _received(*[{"kind": "true", "ok": True}] * 3),  # flags where values are due
        _received(RIGHT[0], {"kind": "close", "value": {"shape": [3], "data": [4.0, 0.25]}}, RIGHT[2]),
        _received(RIGHT[0], {"kind": "close", "value": {"shape": [10**9] * 32, "data": [1]}}, RIGHT[2]),
        _received(RIGHT[0], {"kind": "close", "value": {"shape": "3", "data": "4, 0.25, 9"}}, RIGHT[2]),
        _received(RIGHT[0], {"kind": "close", "value": None}, RIGHT[2]),
        _received(RIGHT[0], {"kind": "close"}, RIGHT[2]),
        _received(*RIGHT, end={"status": "passed"}),
        _received(*RIGHT, end={"status": "raised", "type": ["x"], "message": {"a": 1}}),
        _received(*RIGHT, end="ok"),
        _received(RIGHT[0], "close", RIGHT[2]),
    ]
    for record in forged:
        outcome = judge(TEST, record, EXPECTED)
        assert not outcome.passed, record
        assert isinstance(outcome.message, str) and len(outcome.message) < 2000


def test_a_students_text_is_capped_and_a_swap_runs_text_is_not_shown():
    raised = _received(end={"status": "raised", "type": "ValueError", "message": "x" * 100_000, "where": ""})
    assert len(judge(TEST, raised, EXPECTED).message) < 500
    secret = _received(RIGHT[0], {"kind": "close", "value": encode(np.arange(3.0))},
                       end={"status": "raised", "type": "E", "message": "the reference answer is ..."})
    quiet = judge(TEST, secret, EXPECTED, quiet=True)
    assert "reference answer is" not in quiet.message and "received" not in quiet.message


def test_a_notebook_has_at_most_twenty_notes_each_said_once():
    from minigrad.grading.run import RunResult, _note

    result = RunResult()
    for k in [0, 0, *range(1, 60)]:  # (a forged or a real error in each of 60 cells, the first said twice)
        _note(result, f"cell {k + 1} raised ValueError")
    assert result.notes[:2] == ["cell 1 raised ValueError", "cell 2 raised ValueError"]
    assert len(result.notes) == 21 and result.notes[-1] == "(more notes were left out)"
