"""check() in the notebook: what a student reads when a rule is wrong."""

import re

import numpy as np

import minigrad as mg
from minigrad import Function
from minigrad.backward_functions import register, table
from minigrad.grading.feedback import HIDDEN_NOTE, check_text, fit
from minigrad.grading.testing import Test, run

_rules = table.rules  # the backward table: a Function key -> its rule


def _flat(text):
    """The text with its lines joined (check() cuts them to a notebook's width)."""
    return " ".join(text.split())


class WrongSin(Function):
    def forward(self, x):
        return np.sin(x)


def _names_with_wrong_sin():
    """MySin with the rule gy * sin(x) (should be cos), MyCos missing."""
    return {"MySin": WrongSin}


def test_a_wrong_rule_names_the_exercise_and_shows_expected_against_received():
    register("WrongSin", lambda ctx, gy: gy * mg.functions.sin(ctx.inputs[0]))
    try:
        text = check_text("3.1", ns=_names_with_wrong_sin())
    finally:
        del _rules["WrongSin"]
    x, gy = np.array([-1.2, 0.3, 2.0]), np.array([2.0, -1.0, 0.5])
    assert text.startswith("Exercise 3.1: 0 of 3 visible tests passed.")
    assert "FAIL  sin first derivative" in text
    assert "input: x = [-1.2  0.3  2. ], grad_outputs = [ 2.  -1.   0.5]" in text
    assert "expected: " + np.array2string(gy * np.cos(x), precision=6, separator=", ") in text
    assert "received: " + np.array2string(gy * np.sin(x), precision=6, separator=", ") in text
    assert "hint: the rule multiplies the incoming gradient gy by the derivative of sin at x" in _flat(text)
    assert "MyCos is not defined in the notebook" in text
    assert text.endswith("\n" + HIDDEN_NOTE)  # its own lines, whole: never wrapped mid-line
    assert all(len(line) <= 88 for line in HIDDEN_NOTE.splitlines())
    assert "Traceback" not in text


def test_an_unwritten_exercise_says_so_without_a_traceback():
    class Stub(Function):
        def forward(self, x):
            raise NotImplementedError("Exercise 1.1: write MySquare.forward")

    text = check_text("1.1", ns={"MySquare": Stub})
    assert "not written yet (NotImplementedError: Exercise 1.1: write MySquare.forward)" in text
    assert "Traceback" not in text


def test_a_right_answer_passes_and_an_unknown_exercise_is_named():
    class MySquare(Function):
        def forward(self, x):
            return x * x

    text = check_text("1.1", ns={"MySquare": MySquare})
    assert text.startswith("Exercise 1.1: 1 of 1 visible tests passed.")
    assert "there is no such exercise" in check_text("99.9", ns={})


def test_a_test_that_runs_too_long_is_stopped():
    def endless(t):
        while True:
            try:
                pass
            except Exception:  # a student's catch-all does not swallow the time limit
                pass

    outcome = run(Test("0.1", "endless", endless, "", False), {}, time_limit=0.2)
    assert not outcome.passed and "did not finish in 0.2 s" in outcome.message


class DataSquare(Function):
    def forward(self, x):
        return x * x


class DataTanh(Function):
    def forward(self, x):
        return np.tanh(x)


class PlainBroadcastTo(Function):
    def __init__(self, shape):
        self.shape = shape

    def forward(self, x):
        return np.broadcast_to(x, self.shape)


def test_a_rule_on_data_is_told_its_result_has_no_graph():
    register("DataSquare", lambda ctx, gy: gy * 2 * ctx.inputs[0].data)  # right values, no graph
    register("DataTanh", lambda ctx, gy: gy * (1 - ctx.outputs[0].data ** 2))
    try:
        square = check_text("1.2", ns={"MySquare": DataSquare})
        tanh = check_text("3.2", ns={"MyTanh": DataTanh})
    finally:
        del _rules["DataSquare"], _rules["DataTanh"]
    assert "PASS  first derivative" in square
    assert "has no graph (its creator is None), so it cannot be differentiated again" in _flat(square)
    assert "PASS  tanh first derivative" in tanh
    assert "the derivative of order 1 has no graph" in tanh and "from .data or with NumPy" in tanh


def test_a_broadcast_rule_that_leaves_the_sum_to_the_walker_is_told_to_sum():
    register("PlainBroadcastTo", lambda ctx, gy: gy)  # the walker would sum it back
    try:
        text = check_text("4.2", ns={"MyBroadcastTo": PlainBroadcastTo})
    finally:
        del _rules["PlainBroadcastTo"]
    assert "PASS  broadcast to rule\n" in text + "\n"  # through mg.grad it looks right
    assert "FAIL  broadcast to rule returns the shape of x" in text
    assert "summed over its extra axes down to (2, 1) it would be right" in text


def test_an_unwritten_exercise_gets_no_hint_and_a_wrong_attempt_does():
    class Stub(Function):
        def forward(self, x):
            raise NotImplementedError("Exercise 1.1: write MySquare.forward")

    class MyCube(Function):
        def forward(self, x):
            return x * x * x

    assert "hint:" not in check_text("1.1", ns={"MySquare": Stub})  # the hint would give it away
    assert "hint: " in check_text("1.1", ns={"MySquare": MyCube})


def test_an_unwritten_pruned_walker_is_not_blamed_for_calling_a_rule():
    def my_grad_pruned(y, xs):
        raise NotImplementedError("Exercise 2.3: write my_grad_pruned")

    text = check_text("2.3", ns={"my_grad_pruned": my_grad_pruned})
    assert "not written yet (NotImplementedError: Exercise 2.3: write my_grad_pruned)" in text
    assert "called the rule of NoRule" not in text


def _max_pool(rule):
    """A MyMaxPool with a right forward and the given rule, registered under its own name."""
    class MyMaxPool(Function):
        def __init__(self, k):
            self.k = k

        def forward(self, x):
            N, C, H, W = x.shape
            return x.reshape(N, C, H // self.k, self.k, W // self.k, self.k).max(axis=(3, 5))

    register("MyMaxPool", rule)
    return MyMaxPool


def _block_mask(x, y, k):
    N, C, H, W = x.shape
    blocks = x.data.reshape(N, C, H // k, k, W // k, k)
    return (blocks == y.data.reshape(N, C, H // k, 1, W // k, 1)).astype(x.dtype)


def test_a_max_pooling_rule_that_ignores_gy_or_works_on_data_fails():
    F = mg.functions

    def ignores_gy(ctx, gy):
        (x,), (y,), k = ctx.inputs, ctx.outputs, ctx.function.k
        return mg.Variable(_block_mask(x, y, k).reshape(x.shape), requires_grad=False)

    def on_data(ctx, gy):
        (x,), (y,), k = ctx.inputs, ctx.outputs, ctx.function.k
        N, C, Hk, Wk = y.shape
        spread = np.broadcast_to(gy.data.reshape(N, C, Hk, 1, Wk, 1), (N, C, Hk, k, Wk, k))
        return mg.Variable((_block_mask(x, y, k) * spread).reshape(x.shape), requires_grad=False)

    def right(ctx, gy):
        (x,), (y,), k = ctx.inputs, ctx.outputs, ctx.function.k
        N, C, Hk, Wk = y.shape
        mask = mg.Variable(_block_mask(x, y, k), requires_grad=False)
        g = F.broadcast_to(F.reshape(gy, (N, C, Hk, 1, Wk, 1)), (N, C, Hk, k, Wk, k)) * mask
        return F.reshape(g, x.shape)

    try:
        texts = {name: check_text("9.2", ns={"MyMaxPool": _max_pool(rule)})
                 for name, rule in [("ignores_gy", ignores_gy), ("on_data", on_data), ("right", right)]}
    finally:
        del _rules["MyMaxPool"]
    assert texts["right"].startswith("Exercise 9.2: 4 of 4 visible tests passed."), texts["right"]
    assert "FAIL  max gradient" in texts["ignores_gy"]
    assert "PASS  max gradient" in texts["on_data"] and "FAIL  max rule is differentiable" in texts["on_data"]
    assert "has no graph" in texts["on_data"]


def test_an_exercise_that_needs_an_unwritten_earlier_one_says_which():
    class MySumTo(Function):  # 4.1 untouched
        def __init__(self, shape):
            self.shape = shape

        def forward(self, x):
            raise NotImplementedError("Exercise 4.1: write MySumTo.forward")

    text = check_text("4.2", ns={"MySumTo": MySumTo})
    block = text.split("FAIL  sum to rule")[1].split("FAIL  ")[0]
    assert "needs exercise 4.1, which is not written yet" in block
    assert "hint:" not in block


def test_the_points_lost_say_when_an_exercise_needs_an_earlier_one():
    from minigrad.grading.report import lost_points
    from minigrad.grading.score import ExerciseResult, NotebookResult

    needs = "needs exercise 4.1, which is not written yet (NotImplementedError: Exercise 4.1: write ...)"
    own = "not written yet (NotImplementedError: Exercise 4.1: write ...)"
    r = NotebookResult("n.ipynb", "04_broadcasting", [
        ExerciseResult("4.1", "sum_to", 2, 0.0, [{"name": "a", "hidden": False, "passed": False, "message": own}]),
        ExerciseResult("4.2", "rule", 2, 0.0, [{"name": "b", "hidden": False, "passed": False, "message": needs}]),
    ])
    assert lost_points(r) == [("4.1", 2, "not written"), ("4.2", 2, "needs 4.1, not written")]


def test_a_failure_that_may_start_in_a_wrong_earlier_exercise_says_to_fix_that_one_first():
    class MySumTo(Function):  # 4.1 written, but wrong: it sums every axis whatever the shape
        def __init__(self, shape):
            self.shape = tuple(shape)

        def forward(self, x):
            return x.sum() + np.zeros(self.shape)

    class MyBroadcastTo(Function):
        def __init__(self, shape):
            self.shape = tuple(shape)

        def forward(self, x):
            return np.broadcast_to(x, self.shape)

    register("MySumTo", lambda ctx, gy: MyBroadcastTo(ctx.inputs[0].shape)(gy))
    register("MyBroadcastTo", lambda ctx, gy: MySumTo(ctx.inputs[0].shape)(gy))
    try:
        ns = {"MySumTo": MySumTo, "MyBroadcastTo": MyBroadcastTo,
              "my_sum_to": lambda x, shape: MySumTo(shape)(x)}
        text = check_text("4.2", ns=ns)
        assert "FAIL" in text
        assert "Note: exercise 4.1 fails its own visible tests" in _flat(text) and "fix it first" in _flat(text)
        assert "Note:" not in check_text("4.1", ns=ns)  # nothing comes before 4.1
    finally:
        del _rules["MySumTo"], _rules["MyBroadcastTo"]


def test_check_names_only_an_earlier_exercise_this_one_builds_on():
    class MyTanh(Function):  # 3.1's MyExp is missing altogether: 3.2 does not call it
        def forward(self, x):
            return np.tanh(x)

    register("MyTanh", lambda ctx, gy: gy)  # wrong: the factor 1 - y^2 is missing
    try:
        text = check_text("3.2", ns={"MyTanh": MyTanh})
        assert "FAIL" in text and "Note:" not in text
    finally:
        del _rules["MyTanh"]


def test_the_map_of_what_builds_on_what_is_that_of_the_reference_answers():
    import ast

    from minigrad.grading.assignment import default_solutions_dir, read_assignments
    from minigrad.grading.checks import BUILDS_ON
    from minigrad.grading.reference import defined_names

    found = {}
    for assignment in read_assignments(default_solutions_dir()).values():
        for k, later in enumerate(assignment.exercises):
            tree = ast.parse(later.reference_source)
            used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}  # and register("MySquare"):
            used |= {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
            earlier = tuple(e.id for e in assignment.exercises[:k] if used & set(defined_names(e.reference_source)))
            if earlier:
                found[later.id] = earlier
    assert found == BUILDS_ON


def test_a_loss_rule_that_forgets_gy_fails_a_visible_test_that_says_so():
    class MySoftmax(Function):
        def forward(self, x):
            e = np.exp(x - x.max(axis=-1, keepdims=True))
            return e / e.sum(axis=-1, keepdims=True)

    class MySoftmaxCrossEntropy(Function):
        def __init__(self, t):
            self.t = np.asarray(t)

        def forward(self, x):
            p = MySoftmax().forward(x)
            return -np.log(p[np.arange(len(x)), self.t]).mean()

    register("MySoftmax", lambda ctx, gy: gy * ctx.outputs[0] * (1 - ctx.outputs[0]))  # (not under test here)

    @register("MySoftmaxCrossEntropy")
    def forgets_gy(ctx, gy):
        (x,) = ctx.inputs
        onehot = mg.Variable(np.eye(x.shape[1])[ctx.function.t], requires_grad=False)
        return (MySoftmax()(x) - onehot) / x.shape[0]

    try:
        text = check_text("5.4", ns={"MySoftmax": MySoftmax, "MySoftmaxCrossEntropy": MySoftmaxCrossEntropy})
        block = text.split("FAIL  loss gradient")[1]
        assert "does the rule multiply by gy?" in block
    finally:
        del _rules["MySoftmax"], _rules["MySoftmaxCrossEntropy"]


def test_every_line_of_check_fits_a_notebook_and_no_number_is_cut():
    from minigrad.grading.feedback import WIDTH

    class MySquare(Function):  # wrong by a little everywhere: long numbers, on a long array
        def forward(self, x):
            return x * x + 0.123456789

    register("MySquare", lambda ctx, gy: gy * 2.000001 * ctx.inputs[0] + 1e-3)
    try:
        texts = [check_text(e, ns={"MySquare": MySquare}) for e in ("1.1", "1.2")]
    finally:
        del _rules["MySquare"]
    x = np.linspace(-2.0, 3.0, 24).reshape(4, 6)
    from minigrad.grading.compare import describe
    texts.append("\n".join(fit(describe(x * 1.1, x, "a long 2-D value", 1e-6, 1e-8))))
    for text in texts:
        assert all(len(line) <= WIDTH for line in text.splitlines()), max(text.splitlines(), key=len)
    assert "received: [4.123457, 0.373457, 0.123457, 9.123457]" in texts[0]
    numbers = {n for n in re.findall(r"-?\d+\.\d+", np.array2string(x * 1.1, precision=6))}
    assert numbers <= set(re.findall(r"-?\d+\.\d+", texts[2]))  # each number whole on one line


def _tanh_with_rule(rule):
    """A MyTanh whose registered rule is ``rule(ctx, gy)``, as a notebook defines it (the conftest's fixture
    restores the table after the test)."""
    register("MyTanh", rule)
    return {"MyTanh": type("MyTanh", (Function,), {"forward": lambda self, x: np.tanh(x)})}


def _as_graded(test, rule):
    """The grader's verdict on a notebook whose MyTanh has ``rule``: what it returned (the sandbox's side)
    against what the reference rule returns (the grader's side), each run with its own rule registered."""
    from minigrad.grading.testing import Recorder, run_recorded
    from minigrad.grading.verdict import judge

    reference = Recorder(_tanh_with_rule(_right), side="expected")
    expected = reference.record(run_recorded(test, reference))[1]
    student = Recorder(_tanh_with_rule(rule), side="received")
    return judge(test, student.record(run_recorded(test, student))[0], expected)


def _third_order_test():
    from minigrad.grading.feedback import load_visible
    from minigrad.grading.testing import exercise_tests

    load_visible()
    return next(t for t in exercise_tests("3.2") if t.name == "tanh to third order")


def _right(ctx, gy):
    (y,) = ctx.outputs
    return gy * (1 - y * y)


def _wrong_formula(ctx, gy):
    (y,) = ctx.outputs
    return gy * (1 + y * y)


def _on_data(ctx, gy):
    (x,) = ctx.inputs
    return gy * mg.Variable(1 - np.tanh(x.data) ** 2)


def test_the_data_cause_is_named_only_when_the_first_order_is_right_and_a_higher_one_wrong():
    test = _third_order_test()
    for outcome in (run(test, _tanh_with_rule(_wrong_formula)), _as_graded(test, _wrong_formula)):
        # the first order is wrong: what was compared and where it differs, and no guess at a cause
        assert not outcome.passed and ".data" not in outcome.message, outcome.message
        assert "order 1" in outcome.message and "the first derivative is right" not in outcome.message
    for outcome in (run(test, _tanh_with_rule(_on_data)), _as_graded(test, _on_data)):
        # right at order 1, off the graph after it: the evidence points to .data, and the message says so
        assert not outcome.passed and "the first derivative is right and a higher one is not" in outcome.message
        assert "never on .data" in outcome.message


def test_a_rule_that_forgets_gy_is_shown_the_weights_that_explain_expected_when_graded():
    outcome = _as_graded(_third_order_test(), lambda ctx, gy: 1 - ctx.outputs[0] * ctx.outputs[0])
    u = np.random.default_rng(0).standard_normal(3)  # the grader's seeded weights, as _derivatives draws them
    x = np.array([-1.2, 0.3, 2.0])
    text = _flat(outcome.message)

    def shown(a):
        return _flat(np.array2string(a, precision=6, separator=", "))

    assert f"weighted by grad_outputs u (seeded random), u = {shown(u)}" in text
    assert "received times grad_outputs would be right: does the rule multiply by gy?" in text
    assert f"received: {shown(1 - np.tanh(x) ** 2)}" in text and f"expected: {shown(u * (1 - np.tanh(x) ** 2))}" in text


def test_no_hint_runs_two_sentences_together_and_no_text_is_cut_mid_word():
    from minigrad.grading.feedback import load_visible
    from minigrad.grading.testing import _tests
    from minigrad.grading.verdict import TEXT_LIMIT, cap

    load_visible()
    for tests in _tests.values():
        for t in tests.values():
            for text in (t.hint, t.higher):
                assert not re.search(r"[a-z)]\. [a-z]", text), f"{t.exercise} {t.name}: {text}"
    said = "the rule receives " + "Numbers and more words " * 40
    shown = cap(said)
    assert shown.endswith("... (cut)") and len(shown) <= TEXT_LIMIT + len("... (cut)")
    assert said.startswith(shown[: -len("... (cut)")] + " ")  # a whole word, then the mark
    assert cap("x" * 400).startswith("x" * TEXT_LIMIT)  # one long word is cut where it must be
