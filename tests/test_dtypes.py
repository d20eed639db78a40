"""float32 in, float32 out: Python numbers never promote, gradients keep each input's dtype."""

import numpy as np
import pytest

import minigrad as mg
import minigrad.functions as F


# the same tests on every device (see conftest.py)
pytestmark = pytest.mark.usefixtures("device")


def f32(*shape):
    return mg.Variable(np.random.default_rng(0).standard_normal(shape).astype(np.float32))


@pytest.mark.parametrize("expr", [
    lambda x: x * 2.0 + 1,
    lambda x: 2.0 / (x * x + 1.0) - 3,
    lambda x: x ** 2 + 2.0 ** x,
    lambda x: F.tanh(F.sin(x) * F.exp(x * 0.1)) @ np.ones(3, dtype=np.float32),
    lambda x: F.sum(F.log(x * x + 1.0), axis=0),
    lambda x: x[0] * np.float64(3.0),
])
def test_float32_values_and_gradients_stay_float32(expr):
    x = f32(4, 3)
    y = expr(x)
    assert y.dtype == np.float32
    (g,) = mg.grad(y, x)
    assert g.dtype == np.float32
    y = expr(x)
    y.backward()
    assert x.grad.dtype == np.float32


def test_mixed_dtypes_give_each_input_its_own_dtype():
    a = mg.Variable(np.ones(3, dtype=np.float32))
    b = mg.Variable(np.ones(3, dtype=np.float64))
    y = a * b
    assert y.dtype == np.float64
    ga, gb = mg.grad(y, [a, b])
    assert ga.dtype == np.float32 and gb.dtype == np.float64


def test_float64_grad_output_on_float32_output():
    x = f32(3)
    (g,) = mg.grad(x * x, x, grad_outputs=[np.ones(3)])
    assert g.dtype == np.float32


def test_second_derivative_stays_float32():
    x = f32(5)
    (d1,) = mg.grad(F.sin(x), x, create_graph=True)
    (d2,) = mg.grad(d1, x)
    assert d2.dtype == np.float32
    np.testing.assert_allclose(d2.data, -np.sin(x.data), rtol=1e-6)


@pytest.mark.parametrize("expr", [
    lambda x: np.float64(2) * x, lambda x: x * np.float64(2), lambda x: x ** np.float64(2),
    lambda x: np.float64(2) ** x, lambda x: np.float32(2) + x, lambda x: 2 - x, lambda x: x / np.int64(3),
    lambda x: np.int64(3) / x, lambda x: F.maximum(x, np.float64(1.5)), lambda x: F.where(x > 0, x, 1.0),
])
def test_numbers_and_numpy_scalars_take_the_variables_dtype_on_either_side(expr):
    for dtype in (np.float32, np.float64):
        x = mg.Variable(np.array([0.5, 2.0], dtype=dtype))
        y = expr(x)
        assert y.dtype == dtype
        (g,) = mg.grad(F.sum(y), x)
        assert g.dtype == dtype


def test_a_0d_array_is_strong_as_in_numpy():
    x = mg.Variable(np.array([0.5, 2.0], dtype=np.float32))
    assert (x * np.array(2.0)).dtype == np.result_type(np.float32, np.array(2.0)) == np.float64


@pytest.mark.parametrize("layer", ["affine", "convolution"])
def test_a_float64_bias_with_float32_data_is_promoted_not_rounded(layer):
    b = np.array([0.1, 1 / 3])  # not representable in float32
    if layer == "affine":
        x, W = np.zeros((4, 3), np.float32), np.ones((3, 2), np.float32)
        y = F.affine(mg.Variable(x), mg.Variable(W), mg.Variable(b))
        want = np.broadcast_to(b, (4, 2))
    else:
        x, W = np.zeros((1, 1, 3, 3), np.float32), np.ones((2, 1, 2, 2), np.float32)
        y = F.convolution(mg.Variable(x), mg.Variable(W), mg.Variable(b))
        want = np.broadcast_to(b.reshape(1, 2, 1, 1), (1, 2, 2, 2))
    assert y.dtype == np.float64
    np.testing.assert_array_equal(y.numpy(), want)  # 0 + b, exactly: b was not rounded to float32


@pytest.mark.parametrize("expr", [
    lambda x: x * (x > 0), lambda x: x + np.bool_(True), lambda x: x * np.array([True, False]),
    lambda x: x * np.array([1, 2], dtype=np.int8),
])
def test_boolean_masks_and_small_integer_arrays_keep_float32_as_in_numpy(expr):
    x = mg.Variable(np.array([0.5, -2.0], dtype=np.float32))
    y = expr(x)
    assert y.dtype == np.float32
    (g,) = mg.grad(F.sum(y), x)
    assert g.dtype == np.float32


def test_an_int64_array_beside_float32_promotes_as_in_numpy():
    x = mg.Variable(np.array([0.5, -2.0], dtype=np.float32))
    assert (x * np.array([1, 2], dtype=np.int64)).dtype == np.result_type(np.float32, np.int64) == np.float64
