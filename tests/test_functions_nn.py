"""Conventions and errors of the network functions and of the parametric functions.

Derivatives at kinks and ties follow PyTorch, checked here against closed
forms: relu'(0) = 0, abs'(0) = 0, ties of max share the gradient evenly.
"""

import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.functions as F
import minigrad.parametric_functions as PF


def grad_of(f, data):
    x = mg.Variable(np.asarray(data, dtype=np.float64))
    (gx,) = mg.grad(F.sum(f(x)), x)
    return gx.numpy()


# ---- kinks and ties ----
def test_relu_and_abs_have_slope_zero_at_zero():
    np.testing.assert_array_equal(grad_of(F.relu, [-1.0, 0.0, 2.0]), [0.0, 0.0, 1.0])
    np.testing.assert_array_equal(grad_of(F.abs, [-1.0, 0.0, 2.0]), [-1.0, 0.0, 1.0])


def test_clip_passes_the_gradient_on_its_bounds():
    np.testing.assert_array_equal(grad_of(lambda x: F.clip(x, -1, 1), [-2, -1, 0, 1, 2]), [0, 1, 1, 1, 0])


def test_max_and_min_split_ties_evenly():
    np.testing.assert_allclose(grad_of(F.max, [1.0, 3.0, 3.0]), [0.0, 0.5, 0.5])
    np.testing.assert_allclose(grad_of(F.min, [2.0, 2.0, 2.0, 5.0]), [1 / 3, 1 / 3, 1 / 3, 0.0])
    np.testing.assert_allclose(grad_of(lambda x: F.max(x, axis=1), [[1.0, 1.0], [0.0, 4.0]]),
                               [[0.5, 0.5], [0.0, 1.0]])


@pytest.mark.parametrize("axis", [np.int64(-1), (np.int64(0), 1), [np.intp(1)]])
def test_reductions_take_numpy_integer_axes_in_their_rules(axis):
    # axis=np.argmax(...) is a NumPy integer: the forward took it, the rules once failed on it
    data = np.arange(6.0).reshape(2, 3)
    expected = np.ones((2, 3))
    for f in (F.sum, F.mean, F.max, F.min, F.logsumexp):
        x = mg.Variable(data)
        (gx,) = mg.grad(F.sum(f(x, axis=axis) * 2.0), x)
        if f is F.mean:
            count = math.prod(data.shape[int(a)] for a in np.atleast_1d(np.asarray(axis)))
            np.testing.assert_allclose(gx.numpy(), 2.0 * expected / count)
        elif f is F.sum:
            np.testing.assert_allclose(gx.numpy(), 2.0 * expected)
        else:  # each reduced slice's weights add up to 2
            np.testing.assert_allclose(F.sum(gx, axis=axis).numpy(), 2.0)


def test_maximum_and_minimum_split_ties_evenly():
    x0 = mg.Variable([1.0, 2.0, 3.0])
    x1 = mg.Variable([1.0, 5.0, 0.0])
    g0, g1 = mg.grad(F.sum(F.maximum(x0, x1)), [x0, x1])
    np.testing.assert_allclose(g0.numpy(), [0.5, 0.0, 1.0])
    np.testing.assert_allclose(g1.numpy(), [0.5, 1.0, 0.0])
    g0, g1 = mg.grad(F.sum(F.minimum(x0, x1)), [x0, x1])
    np.testing.assert_allclose(g0.numpy(), [0.5, 1.0, 0.0])


def test_max_pooling_sends_a_tie_to_the_first_winner_as_torch():
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle for max pooling's tie rule")
    data = np.array([[[[1.0, 1.0], [0.0, 1.0]]]])
    t = torch.tensor(data, requires_grad=True)
    torch.nn.functional.max_pool2d(t, 2).sum().backward()
    np.testing.assert_array_equal(grad_of(lambda x: F.max_pooling(x, 2), data), t.grad.numpy())


# ---- stability of the exponentials ----
def test_softmax_family_is_stable_at_1000():
    x = mg.Variable([[1000.0, 0.0, -1000.0], [-1000.0, 1000.0, 999.0]])
    t = np.array([[1], [2]])
    loss = F.softmax_cross_entropy(x, t)
    # loss_n = logsumexp(x_n) - x_n[t_n], with logsumexp(1000, 0, -1000) = 1000 (to double precision)
    np.testing.assert_allclose(loss.numpy(), [[1000.0], [1.0 + math.log1p(math.exp(-1))]], rtol=1e-12)
    (gx,) = mg.grad(F.sum(loss), x)
    assert np.all(np.isfinite(gx.numpy()))
    np.testing.assert_allclose(gx.numpy()[0], [1.0, -1.0, 0.0], atol=1e-300)
    assert np.all(np.isfinite(F.softmax(x).numpy()))
    np.testing.assert_allclose(F.log_softmax(x).numpy()[0], [0.0, -1000.0, -2000.0])
    np.testing.assert_allclose(F.logsumexp(x, axis=1).numpy()[0], 1000.0)
    np.testing.assert_allclose(F.sigmoid(mg.Variable([-1000.0, 1000.0])).numpy(), [0.0, 1.0])


def test_softmax_cross_entropy_takes_labels_with_or_without_the_class_axis():
    x = mg.Variable(np.random.default_rng(0).standard_normal((3, 4)))
    a = F.softmax_cross_entropy(x, np.array([[0], [3], [1]]))
    b = F.softmax_cross_entropy(x, mg.Variable([0, 3, 1]))  # float64 labels with integer values
    assert a.shape == (3, 1)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    expected = -np.log(F.softmax(x).numpy()[[0, 1, 2], [0, 3, 1]])
    np.testing.assert_allclose(a.numpy()[:, 0], expected)


@pytest.mark.parametrize("t, match", [
    (np.array([[0], [4]]), r"labels \[4\] are out of range for 4 classes"),
    (np.array([[-1], [0]]), r"labels \[-1\] are out of range"),
    (np.array([[0.5], [1.0]]), r"labels must be integers .*\[0.5\]"),
    (np.array([0, 1, 2]), r"t of shape \(3,\) do not fit scores x of shape \(2, 4\)"),
])
def test_softmax_cross_entropy_label_errors(t, match):
    with pytest.raises(ValueError, match=match):
        F.softmax_cross_entropy(mg.Variable(np.zeros((2, 4))), t)


# ---- shape errors name both shapes ----
def test_convolution_shape_errors_name_both_shapes():
    x = mg.Variable(np.zeros((2, 3, 8, 8)))
    with pytest.raises(ValueError, match=r"x of shape \(2, 3, 8, 8\) has 3 channels but W of shape \(4, 2, 3, 3\)"):
        F.convolution(x, mg.Variable(np.zeros((4, 2, 3, 3))))
    with pytest.raises(ValueError, match=r"b of shape \(3,\) does not fit W of shape \(4, 3, 3, 3\)"):
        F.convolution(x, mg.Variable(np.zeros((4, 3, 3, 3))), mg.Variable(np.zeros(3)))
    with pytest.raises(ValueError, match=r"x of shape \(2, 3, 8, 8\) is smaller in height"):
        F.convolution(x, mg.Variable(np.zeros((4, 3, 9, 3))))


def test_affine_and_concatenate_shape_errors_name_both_shapes():
    with pytest.raises(ValueError, match=r"x of shape \(2, 3, 4\) has 12 features .* W of shape \(10, 5\)"):
        F.affine(mg.Variable(np.zeros((2, 3, 4))), mg.Variable(np.zeros((10, 5))))
    with pytest.raises(ValueError, match=r"\[\(2, 3\), \(3, 3\)\] must agree on every axis but axis 1"):
        F.concatenate(mg.Variable(np.zeros((2, 3))), mg.Variable(np.zeros((3, 3))), axis=1)


def test_affine_flattens_from_base_axis():
    rng = np.random.default_rng(0)
    x, W, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 5)), rng.standard_normal(5)
    y = F.affine(mg.Variable(x), mg.Variable(W), mg.Variable(b), base_axis=2)
    np.testing.assert_allclose(y.numpy(), x @ W + b)


def test_average_pooling_counts_padding_as_zeros():
    y = F.average_pooling(mg.Variable(np.ones((1, 1, 2, 2))), 2, stride=1, pad=1)
    np.testing.assert_allclose(y.numpy()[0, 0], [[0.25, 0.5, 0.25], [0.5, 1.0, 0.5], [0.25, 0.5, 0.25]])


# ---- parametric functions ----
def test_parameters_are_named_created_once_and_reused():
    x = mg.Variable(np.zeros((2, 3, 6, 6)))
    h = PF.convolution(x, 8, (3, 3), (1, 1), name="conv1")
    PF.affine(h, 10, name="pred")
    params = mg.get_parameters()
    assert [(k, v.shape) for k, v in params.items()] == [
        ("conv1/W", (8, 3, 3, 3)), ("conv1/b", (8,)), ("pred/W", (288, 10)), ("pred/b", (10,))]
    assert all(v.name == k for k, v in params.items())
    PF.convolution(x, 8, (3, 3), (1, 1), name="conv1")
    again = mg.get_parameters()
    assert list(again) == list(params) and all(again[k] is params[k] for k in params)


def test_reuse_with_another_shape_names_both_shapes():
    PF.affine(mg.Variable(np.zeros((2, 6))), 4, name="fc")
    with pytest.raises(ValueError, match=r"'fc/W' exists with shape \(6, 4\).* needs shape \(5, 4\)"):
        PF.affine(mg.Variable(np.zeros((2, 5))), 4, name="fc")


def test_parameter_scope_prefixes_names():
    x = mg.Variable(np.zeros((2, 6)))
    with mg.parameter_scope("block1"):
        PF.affine(x, 4, name="fc")
        assert list(mg.get_parameters()) == ["fc/W", "fc/b"]
    PF.affine(x, 3, name="fc")
    assert list(mg.get_parameters()) == ["block1/fc/W", "block1/fc/b", "fc/W", "fc/b"]


def test_seed_and_glorot_initialisation():
    x = mg.Variable(np.zeros((2, 300)))
    mg.seed(3)
    PF.affine(x, 200, name="fc")
    W1 = mg.get_parameters()["fc/W"].numpy()
    mg.clear_parameters()
    mg.seed(3)
    PF.affine(x, 200, name="fc")
    W2 = mg.get_parameters()["fc/W"].numpy()
    np.testing.assert_array_equal(W1, W2)
    a = math.sqrt(6 / (300 + 200))
    assert np.abs(W1).max() <= a and np.abs(W1).max() > 0.99 * a
    np.testing.assert_allclose(W1.std(), a / math.sqrt(3), rtol=0.02)  # the std of U(-a, a)
    np.testing.assert_array_equal(mg.get_parameters()["fc/b"].numpy(), np.zeros(200))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_parameters_and_gradients_keep_the_input_dtype(dtype):
    x = mg.Variable(np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(dtype))
    h = F.max_pooling(F.relu(PF.convolution(x, 4, (3, 3), (1, 1), name="conv")), (2, 2))
    loss = F.mean(F.softmax_cross_entropy(PF.affine(h, 5, name="pred"), np.array([[1], [4]])))
    params = list(mg.get_parameters().values())
    grads = mg.grad(loss, params, create_graph=True)
    assert loss.dtype == dtype
    assert all(p.dtype == dtype for p in params)
    assert all(g.dtype == dtype for g in grads)


def test_parameters_take_the_dtype_of_a_plain_float32_array():
    mg.clear_parameters()
    y = PF.affine(np.ones((2, 3), np.float32), 4, name="fc")
    assert y.dtype == np.float32
    assert [p.dtype for p in mg.get_parameters().values()] == [np.float32, np.float32]
    mg.clear_parameters()



@pytest.mark.parametrize("axis", [(0, 2), [2, -3], (1,), (), (-1, 0, 1)])
def test_prod_over_several_axes_as_numpy_with_its_derivatives(axis):
    # prod takes an axis tuple as sum does (NumPy's prod does): its value is NumPy's, its backward and
    # forward rules agree with central differences to second order, and its Taylor rule with them
    from minigrad import taylor
    from minigrad.numerical import gradcheck

    x = np.random.default_rng(3).uniform(0.5, 1.5, (2, 3, 2)) * np.array([1.0, -1.0])
    for keepdims in (False, True):
        def f(v, keepdims=keepdims):
            return F.prod(v, axis=axis, keepdims=keepdims)

        np.testing.assert_allclose(f(mg.Variable(x)).data, np.prod(x, axis=tuple(axis), keepdims=keepdims),
                                   rtol=1e-14)
        gradcheck(f, [x], order=2)
        v = mg.Variable(x)
        (g,) = mg.grad(F.sum(f(v)), v)
        d = taylor.derivatives(lambda v: F.sum(f(v)), x, 1)  # along ones: the sum of the gradient
        np.testing.assert_allclose(d[1], g.data.sum(), rtol=1e-12)
