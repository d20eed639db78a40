"""Variable: conversion, attributes, operators, repr, and backward() accumulation."""

import operator

import numpy as np
import pytest

import minigrad as mg
import minigrad.functions as F
from minigrad import cuda


def test_numbers_and_integer_arrays_become_float64():
    assert mg.Variable(3).dtype == np.float64
    assert mg.Variable(2.5).shape == ()
    assert mg.Variable(np.arange(3)).dtype == np.float64
    assert mg.Variable([True, False]).dtype == np.float64


def test_float32_stays_float32():
    x = mg.Variable(np.ones(3, dtype=np.float32))
    assert x.dtype == np.float32
    assert mg.Variable.from_numpy_array(np.ones(2, dtype=np.float32)).dtype == np.float32


def test_bad_data_is_refused_with_a_message():
    with pytest.raises(TypeError, match="dtype <U3"):
        mg.Variable(np.array(["abc"]))
    with pytest.raises(TypeError, match="already a Variable|got a Variable"):
        mg.Variable(mg.Variable(1.0))


def test_attributes():
    x = mg.Variable(np.arange(6.0).reshape(2, 3), name="x")
    assert (x.shape, x.ndim, x.size, len(x)) == ((2, 3), 2, 6, 2)
    assert x.name == "x" and x.creator is None and x.grad is None
    assert x.T.shape == (3, 2)
    np.testing.assert_array_equal(x.numpy(), np.arange(6.0).reshape(2, 3))
    assert mg.Variable(4.0).item() == 4.0
    with pytest.raises(TypeError, match="0-dimensional"):
        len(mg.Variable(1.0))
    with pytest.raises(ValueError, match="shape \\(2, 3\\)"):
        x.item()


def test_repr_is_readable_and_deterministic():
    x = mg.Variable([1.0, 2.0], name="x")
    assert repr(x) == "Variable([1., 2.], name='x')"
    y = x * 2
    assert repr(y) == "Variable([2., 4.], creator=Mul)"
    assert repr(mg.Variable(np.float32(1))) == "Variable(1., dtype=float32)"


@pytest.mark.parametrize(
    "expr, expected",
    [
        (lambda x, a: x + a, lambda x, a: x + a),
        (lambda x, a: a + x, lambda x, a: a + x),
        (lambda x, a: x - a, lambda x, a: x - a),
        (lambda x, a: a - x, lambda x, a: a - x),
        (lambda x, a: x * a, lambda x, a: x * a),
        (lambda x, a: a * x, lambda x, a: a * x),
        (lambda x, a: x / a, lambda x, a: x / a),
        (lambda x, a: a / x, lambda x, a: a / x),
        (lambda x, a: x ** 2, lambda x, a: x ** 2),
        (lambda x, a: 2.0 ** x, lambda x, a: 2.0 ** x),
        (lambda x, a: x ** mg.Variable(a), lambda x, a: x ** a),
        (lambda x, a: -x, lambda x, a: -x),
        (lambda x, a: x[1:], lambda x, a: x[1:]),
    ],
)
def test_operators_with_numbers_and_arrays(expr, expected):
    xv = np.array([0.5, 1.5, 2.0])
    a = np.array([1.0, 2.0, 3.0])
    y = expr(mg.Variable(xv), a)
    assert isinstance(y, mg.Variable)
    np.testing.assert_allclose(y.data, expected(xv, a))


def test_ndarray_on_the_left_gives_a_variable():
    x = mg.Variable([1.0, 2.0])
    y = np.array([3.0, 4.0]) * x
    assert isinstance(y, mg.Variable) and y.creator is not None
    z = np.eye(2) @ x
    np.testing.assert_allclose(z.data, [1.0, 2.0])


# a OP x for an array a: (the operator, d sum(a OP x) / dx in closed form)
ARRAY_ON_THE_LEFT = {
    "+": (operator.add, lambda a, x: np.ones_like(x)),
    "-": (operator.sub, lambda a, x: -np.ones_like(x)),
    "*": (operator.mul, lambda a, x: a),
    "/": (operator.truediv, lambda a, x: -a / x**2),
    "**": (operator.pow, lambda a, x: a ** x * np.log(a)),
    "@": (operator.matmul, lambda a, x: a),
}


@pytest.mark.parametrize("op", ARRAY_ON_THE_LEFT)
def test_an_array_on_the_left_hands_the_operator_to_the_variable(device, op):
    """``a * x`` runs ``np.multiply(a, x)``, which hands the product to the Variable: a recorded node."""
    apply, gradient = ARRAY_ON_THE_LEFT[op]
    xv, av = np.array([0.5, 1.5, 2.0]), np.array([1.0, 2.0, 3.0])
    x = mg.Variable(xv)
    a = cuda.to_device(av, device)  # an array of x's device: NumPy's, CuPy's or the stand-in's
    y = apply(a, x)
    assert isinstance(y, mg.Variable) and y.creator is not None and y.device == device
    np.testing.assert_allclose(y.numpy(), apply(av, xv), rtol=1e-14)  # NumPy on the values
    (g,) = mg.grad(F.sum(y), x)
    np.testing.assert_allclose(g.numpy(), gradient(av, xv), rtol=1e-14)


def test_cupys_operator_path_reaches_the_variable(device):
    """CuPy's ``a * x`` calls ``numpy.multiply(a, x)`` unless x's ``__array_ufunc__`` is None.

    (cupy/_core/core.pyx: ``_should_use_rop``.) NumPy then asks the array's
    ``__array_ufunc__``, which declines a type it does not know (the stand-in's
    does as CuPy's does), and then the Variable's, which answers.
    """
    x = mg.Variable(np.array([0.5, 1.5]))
    a = cuda.to_device(np.array([2.0, 4.0]), device)
    for ufunc, expected in [(np.multiply, [1.0, 6.0]), (np.add, [2.5, 5.5]), (np.subtract, [1.5, 2.5]),
                            (np.divide, [4.0, 8 / 3]), (np.power, [2 ** 0.5, 8.0])]:
        y = ufunc(a, x)
        assert isinstance(y, mg.Variable) and y.creator is not None and y.device == device, ufunc
        np.testing.assert_allclose(y.numpy(), expected, rtol=1e-14)
    mask = np.greater(a, x)  # a > x: a comparison records nothing; x < a
    assert not isinstance(mask, mg.Variable)
    np.testing.assert_array_equal(cuda.as_numpy(mask), [True, True])
    assert not np.equal(a, x) and np.not_equal(a, x)  # == is identity, as x == a is


def test_a_numpy_ufunc_on_a_variable_names_the_minigrad_function(device):
    x = mg.Variable(np.array([0.5, 1.5]))
    with pytest.raises(TypeError, match=r"np\.exp\(x\) got a Variable: .*drop the graph.*"
                                        r"Use F\.exp\(x\).*np\.exp\(x\.data\) for the values alone"):
        np.exp(x)
    with pytest.raises(TypeError, match=r"np\.absolute\(x\) .*Use F\.abs\(x\)"):
        np.abs(x)
    with pytest.raises(TypeError, match=r"np\.maximum\(x\) .*Use F\.maximum\(x\)"):
        np.maximum(x, 0.0)
    with pytest.raises(TypeError, match=r"np\.arctan\(x\) .*minigrad\.functions has no arctan: .*a Function"):
        np.arctan(x)
    with pytest.raises(TypeError, match=r"np\.add\.reduce\(x\) .*F\.sum"):
        np.add.reduce(x)
    a = cuda.to_device(np.ones(2), device)
    with pytest.raises(TypeError, match=r"cannot hold a Variable's graph.*a = a \+ x"):
        a += x
    np.testing.assert_array_equal(cuda.as_numpy(a), [1.0, 1.0])  # a is left as it was


def test_numpy_sees_the_values_and_records_nothing():
    x = mg.Variable(np.array([[0.5, -1.0], [2.0, 3.0]], dtype=np.float32))
    assert np.asarray(x) is x.data  # no copy, no object array of Variables
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    assert np.array(x) is not x.data and np.array_equal(np.array(x), x.data)  # np.array copies
    with pytest.raises(ValueError, match="copy is needed"):
        np.asarray(x, dtype=np.float64, copy=False)
    assert np.allclose(x, [[0.5, -1.0], [2.0, 3.0]])
    np.testing.assert_allclose(mg.Variable([1.0, 2.0]), [1.0, 2.0])
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(mg.Variable([1.0, 2.0]), [1.0, 2.5])
    product = np.dot(x, np.eye(2))  # a NumPy function: a plain array, no graph
    assert type(product) is np.ndarray
    np.testing.assert_array_equal(product, x.data)
    assert np.asarray([mg.Variable(1.0), mg.Variable(2.0)]).dtype == np.float64  # a list of Variables


def test_np_sum_is_the_variable_sum():
    x = mg.Variable([1.0, 2.0, 4.0])
    y = np.sum(x)
    assert isinstance(y, mg.Variable) and y.creator is not None and y.item() == 7.0
    with pytest.raises(TypeError, match="out= is NumPy's"):
        np.sum(x, out=np.empty(()))


def test_comparisons_compare_the_values_and_record_nothing():
    x = mg.Variable([1.0, -2.0, 0.0])
    a = np.array([0.0, 0.0, 0.0])
    for got, want in [(x > 0, [True, False, False]), (0 < x, [True, False, False]),
                      (x <= 0, [False, True, True]), (x >= x, [True, True, True]),
                      (a < x, [True, False, False]), (x < mg.Variable(a), [False, True, False])]:
        assert type(got) is np.ndarray and got.dtype == bool  # a constant: no graph
        np.testing.assert_array_equal(got, want)
    (g,) = mg.grad(F.sum(x * x * (x > 0)), x)  # a mask: relu-like, d/dx = 2x where x > 0
    np.testing.assert_allclose(g.data, [2.0, 0.0, 0.0])
    losses = [mg.Variable(0.5), mg.Variable(0.25)]
    assert min(losses) is losses[1] and sorted(losses)[0] is losses[1]


def test_the_truth_of_a_variable_is_that_of_its_one_value():
    assert mg.Variable(1.0) and not mg.Variable(0.0) and mg.Variable([[2.0]])
    if mg.Variable(0.5) > 0.25:  # a one-element comparison is a plain truth value
        pass
    else:
        raise AssertionError("0.5 > 0.25")
    with pytest.raises(ValueError, match=r"Variable of shape \(2,\) is ambiguous.*\.all\(\)"):
        bool(mg.Variable([1.0, 2.0]))


def test_backward_accumulates_into_leaves():
    x = mg.Variable(3.0)
    y = x * x
    y.backward(retain_graph=True)
    assert x.grad.item() == 6.0
    y.backward()
    assert x.grad.item() == 12.0  # accumulated, as in PyTorch
    x.zero_grad()
    assert x.grad is None


def test_backward_on_a_non_scalar_seeds_ones():
    x = mg.Variable([1.0, 2.0, 3.0])
    y = x * x
    y.backward()
    np.testing.assert_allclose(x.grad.data, 2 * x.data)


def test_backward_grad_argument_is_checked():
    x = mg.Variable([1.0, 2.0, 3.0])
    y = x * x
    with pytest.raises(ValueError, match=r"backward: grad has shape \(2,\) but the output has shape \(3,\)"):
        y.backward(np.ones(2))


def test_a_variable_used_twice_accumulates():
    x = mg.Variable(2.0)
    y = x * x * x  # 3x^2 = 12
    y.backward()
    assert x.grad.item() == 12.0


def test_backward_create_graph_makes_grad_differentiable():
    x = mg.Variable(2.0)
    y = x ** 3
    y.backward(create_graph=True)
    gx = x.grad  # 3x^2 = 12, a graph
    assert gx.creator is not None and gx.item() == 12.0
    x.zero_grad()
    gx.backward()
    assert x.grad.item() == 12.0  # 6x


def test_intermediate_grads_only_with_retain_grad():
    x = mg.Variable(2.0)
    h = x * 3
    y = h * h
    y.backward(retain_graph=True)
    assert h.grad is None
    y.backward(retain_grad=True)
    assert h.grad.item() == 12.0  # 2h


def test_grad_setter_checks_shape():
    x = mg.Variable([1.0, 2.0])
    x.grad = np.array([0.5, 0.5])
    assert isinstance(x.grad, mg.Variable)
    with pytest.raises(ValueError, match="shape \\(3,\\)"):
        x.grad = np.ones(3)


def test_no_grad_records_nothing():
    x = mg.Variable(1.0)
    with mg.no_grad():
        y = F.sin(x)
        with mg.enable_grad():
            z = F.sin(x)
    assert y.creator is None and not y.requires_grad
    assert z.creator is not None
    assert mg.is_grad_enabled()


def test_no_grad_as_decorator():
    @mg.no_grad()
    def f(x):
        return x * 2

    assert f(mg.Variable(1.0)).creator is None


def test_constants_record_no_graph():
    c = mg.Variable(1.0, requires_grad=False)
    assert (c * 2).creator is None


def test_a_subclass_of_variable_goes_into_functions_like_a_variable():
    class Named(mg.Variable):
        pass

    x = Named(np.array([1.0, 2.0]))
    (g,) = mg.grad(F.sum(x * x), [x])
    np.testing.assert_allclose(g.numpy(), [2.0, 4.0])
