"""Function.__call__ and the registry under student mistakes: the right rule or a clear error, never a wrong number."""

import numpy as np
import pytest

import minigrad as mg
import minigrad.functions as F
from minigrad.backward_functions import lookup, register, show_registry
from minigrad import Function
from minigrad.functions.elementwise import Sin as LibrarySin


def test_a_students_class_named_like_a_library_function_never_gets_its_rule():
    class Sin(Function):  # the student's own: it computes x^2
        def forward(self, x):
            return x ** 2

    x = mg.Variable(0.5)
    with pytest.raises(NotImplementedError, match=r"@register\('Sin'\).*not minigrad's own Sin"):
        mg.grad(Sin()(x), x)
    (g,) = mg.grad(F.sin(x), x)  # the library's Sin keeps its rule
    assert g.item() == pytest.approx(np.cos(0.5))

    @register("Sin")  # nnabla's form: the name means the class just defined
    def square_backward(ctx, gy):
        (x,) = ctx.inputs
        return 2 * x * gy

    (g,) = mg.grad(Sin()(x), x)
    assert g.item() == 1.0
    (g,) = mg.grad(F.sin(x), x)
    assert g.item() == pytest.approx(np.cos(0.5))
    assert lookup(LibrarySin).__name__ == "sin_backward"


def test_a_class_defined_again_keeps_its_rule_and_a_subclass_inherits():
    def define():
        class Twice(Function):
            def forward(self, x):
                return 2 * x

        return Twice

    first = define()
    register("Twice", lambda ctx, gy: 2 * gy)
    second = define()  # a notebook cell run again
    x = mg.Variable(1.0)
    assert mg.grad(second()(x), x)[0].item() == 2.0

    class MySin(LibrarySin):
        pass

    assert mg.grad(MySin()(x), x)[0].item() == pytest.approx(np.cos(1.0))
    assert first is not second


def test_show_registry_names_a_students_namesake_apart(capsys):
    class Exp(Function):
        def forward(self, x):
            return x

    register("Exp", lambda ctx, gy: gy)
    show_registry()
    text = capsys.readouterr().out
    assert "test_function.Exp " in text and "\nExp " in text


def test_one_instance_called_twice_records_two_nodes():
    s = LibrarySin()
    x = mg.Variable(0.5)
    y = s(s(x))
    assert y.creator is not y.creator.inputs[0].creator
    (g,) = mg.grad(y, x)
    assert g.item() == pytest.approx(np.cos(np.sin(0.5)) * np.cos(0.5))


def test_one_instance_called_twice_keeps_its_attributes():
    m = F.reduction.Sum(axis=0, keepdims=False)
    x = mg.Variable(np.ones((2, 3)))
    y = m(x * m(x))  # sum over axis 0 twice: shapes (3,) then ()
    (g,) = mg.grad(y, x)
    np.testing.assert_array_equal(g.data, np.full((2, 3), 4.0))


def test_a_rule_called_by_hand_sees_which_inputs_require_grad():
    x, c = mg.Variable(2.0), mg.Variable(3.0, requires_grad=False)
    y = x * c
    f = y.creator
    assert f.needs_input_grad == (True, False)
    gx, gc = lookup("Mul")(f, mg.Variable(1.0))
    assert gx.item() == 3.0 and gc is None


class StudentError(ValueError):
    def __init__(self, code, detail):
        super().__init__(code, detail)
        self.code = code


def test_an_exception_of_the_students_own_keeps_its_type_and_args():
    class Broken(Function):
        def forward(self, x):
            raise StudentError(7, "bad input")

    with pytest.raises(StudentError) as info:
        Broken()(mg.Variable(1.0))
    assert info.value.args == (7, "bad input") and info.value.code == 7
    assert any("Broken: forward failed" in note for note in getattr(info.value, "__notes__", []))


def test_numpys_own_errors_still_get_the_message_in_front():
    with pytest.raises(ValueError, match=r"Add: forward failed for inputs of shapes \(2,\), \(3,\)"):
        mg.Variable(np.ones(2)) + mg.Variable(np.ones(3))


def test_backward_on_a_result_made_under_no_grad_says_so():
    x = mg.Variable(1.0)
    with mg.no_grad():
        y = F.sin(x)
    with pytest.raises(RuntimeError, match=r"no_grad\(\)"):
        y.backward()


def test_backward_when_no_input_requires_grad_says_so():
    c = mg.Variable(1.0, requires_grad=False)
    with pytest.raises(RuntimeError, match="requires_grad=True"):
        F.sin(c).backward()
    with pytest.raises(RuntimeError, match="requires_grad=True"):
        c.backward()


def test_backward_on_a_leaf_that_requires_grad_sets_its_grad():
    x = mg.Variable(3.0)
    x.backward()
    assert x.grad.item() == 1.0


def test_the_walker_tells_a_rule_which_gradients_are_wanted():
    seen = []

    class Spy(Function):
        def forward(self, x0, x1):
            return x0 * x1

    @register("Spy")
    def spy_backward(ctx, gy):
        seen.append(ctx.needs_input_grad)
        x0, x1 = ctx.inputs
        return gy * x1, gy * x0

    x, w = mg.Variable(2.0), mg.Variable(3.0)
    mg.grad(Spy()(x, w), x)  # w requires grad, but no gradient is asked for it
    assert seen == [(True, False)]


def test_a_list_of_variables_where_one_variable_is_expected_is_refused():
    """my_cos(ctx.inputs) used to make a constant from the values: the graph was cut without a word."""
    x = mg.Variable(np.array([0.5, 1.0]))
    with pytest.raises(TypeError, match=r"Cos: got a list of Variables .*\(x,\) = ctx.inputs"):
        F.cos([x])
    with pytest.raises(TypeError, match="list of Variables"):
        mg.Variable([x, x])
    np.testing.assert_array_equal(F.concatenate([x, x]).data, [0.5, 1.0, 0.5, 1.0])  # the way to join them
