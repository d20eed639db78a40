"""Bad input gets a clear error: the function, the argument, the shapes or dtypes, and how to fix it.

One test per mistake a student makes, each matching the key parts of the
message, never a bare NumPy or Python error from inside the engine.
"""

import numpy as np
import pytest

import minigrad as mg
import minigrad.functions as F
import minigrad.parametric_functions as PF
from minigrad.numerical import gradcheck, numerical_grad


def v(*shape):
    return mg.Variable(np.ones(shape))


# ---- Variable ----
def test_a_ragged_list_says_its_rows_differ():
    with pytest.raises(ValueError, match=r"Variable: this nested list is not an array: its rows have "
                                         r"different lengths.*give every row the same length"):
        mg.Variable([[1, 2], [3]])


def test_none_says_it_was_none():
    with pytest.raises(TypeError, match=r"Variable: cannot hold data of dtype object \(made from a NoneType\)"):
        mg.Variable(None)
    with pytest.raises(TypeError, match=r"Add: cannot hold data of dtype object \(made from a NoneType\)"):
        v(2) + None


# ---- shapes ----
def test_reshape_says_how_many_elements_the_shape_must_hold():
    with pytest.raises(ValueError, match=r"Reshape: .*cannot reshape x of shape \(2, 3\) to \(4, 2\); .*"
                                         r"dimensions that multiply to 6 \(one of them may be -1"):
        F.reshape(v(2, 3), (4, 2))


@pytest.mark.parametrize("axes", [(1, 0), (0, 0, 1)])
def test_transpose_says_the_axes_must_be_a_permutation(axes):
    with pytest.raises(ValueError, match=rf"Transpose: .*axes \({axes[0]}, .* do not permute the 3 axes of x "
                                         r"of shape \(2, 3, 4\); pass each of 0 to 2 once, e.g. \(2, 1, 0\)"):
        v(2, 3, 4).transpose(*axes)


def test_broadcast_to_fewer_axes_says_why():
    with pytest.raises(ValueError, match=r"BroadcastTo: .*x of shape \(2, 3\) cannot be repeated to shape \(3,\).*"
                                         r"needs at least 2 axes; reshape x first"):
        F.broadcast_to(v(2, 3), (3,))


def test_where_names_the_condition_and_its_shape():
    with pytest.raises(ValueError, match=r"Where: .*condition of shape \(3,\), x0 of shape \(2,\) and x1 of "
                                         r"shape \(2,\) do not broadcast"):
        F.where(np.array([True, False, True]), v(2), v(2))


# ---- convolution and pooling arguments ----
@pytest.mark.parametrize("kwargs, match", [
    ({"stride": 0}, r"convolution: stride must be an int >= 1 or a pair of them \(height, width\), got 0"),
    ({"dilation": 0}, r"convolution: dilation must be an int >= 1 .*got 0"),
    ({"pad": -1}, r"convolution: pad must be an int >= 0 .*got -1"),
    ({"pad": None}, r"convolution: pad must be an int >= 0 .*got None"),
    ({"pad": "same"}, r"convolution: pad must be an int >= 0 .*got 'same'"),
    ({"pad": (1, 1, 1)}, r"convolution: pad must be .*got \(1, 1, 1\)"),
])
def test_convolution_names_a_bad_pad_stride_or_dilation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        F.convolution(v(1, 3, 8, 8), v(4, 3, 3, 3), **kwargs)


@pytest.mark.parametrize("pool", [F.max_pooling, F.average_pooling])
@pytest.mark.parametrize("args, match", [
    ((2.0,), r"kernel must be an int >= 1 .*got 2.0"),
    ((-1,), r"kernel must be an int >= 1 .*got -1"),
    ((None,), r"kernel must be an int >= 1 .*got None"),
    ((2, 0), r"stride must be an int >= 1 .*got 0"),
    ((2, None, -1), r"pad must be an int >= 0 .*got -1"),
])
def test_pooling_names_a_bad_kernel_stride_or_pad(pool, args, match):
    with pytest.raises(ValueError, match=f"{pool.__name__}: {match}"):
        pool(v(1, 3, 8, 8), *args)


# ---- affine and the parametric functions ----
def test_affine_says_a_single_sample_needs_a_batch_axis():
    with pytest.raises(ValueError, match=r"affine: base_axis=1 is out of range for x of shape \(3,\): .*"
                                         r"must be 0 to 0; .*x\[None\] has shape \(1, 3\)"):
        F.affine(v(3), v(3, 2))


def test_pf_affine_checks_base_axis_before_creating_its_weights():
    with pytest.raises(ValueError, match=r"PF.affine: base_axis=1 is out of range for x of shape \(3,\)"):
        PF.affine(v(3), 4)
    assert mg.get_parameters() == {}  # no W of shape (1, 4) left to clash with the corrected call
    assert PF.affine(v(1, 3), 4).shape == (1, 4)


def test_pf_convolution_takes_an_int_kernel_and_names_a_bad_one():
    assert PF.convolution(v(1, 3, 8, 8), 4, 3).shape == (1, 4, 6, 6)
    with pytest.raises(ValueError, match=r"PF.convolution: kernel must be an int >= 1 .*got \(3, 3, 3\)"):
        PF.convolution(v(1, 3, 8, 8), 4, (3, 3, 3), name="conv2")


# ---- classification and elementwise ----
def test_softmax_cross_entropy_refuses_an_axis_out_of_range():
    with pytest.raises(ValueError, match=r"softmax_cross_entropy: axis=2 is out of range for x of shape \(4, 3\); "
                                         r".*pass 0 to 1"):
        F.softmax_cross_entropy(v(4, 3), np.zeros(4, int), axis=2)
    with pytest.raises(ValueError, match=r"axis=1 is out of range for x of shape \(3,\).*pass axis=0"):
        F.softmax_cross_entropy(v(3), np.array(1))


def test_softmax_cross_entropy_refuses_labels_that_are_not_numbers():
    with pytest.raises(TypeError, match=r"softmax_cross_entropy: labels t of dtype <U1 must be integers"):
        F.softmax_cross_entropy(v(4, 3), np.array(list("abca")))


def test_clip_refuses_a_missing_bound_and_says_what_to_use():
    with pytest.raises(TypeError, match=r"clip: x_min=None and x_max=1 must both be numbers; .*F.maximum"):
        F.clip(v(3), None, 1)


@pytest.mark.parametrize("dtype, name", [(np.int32, "int32"), ("float33", "float33")])
def test_cast_refuses_a_dtype_that_is_not_floating(dtype, name):
    with pytest.raises(TypeError, match=rf"cast: dtype={name} is not a floating dtype; .*np.float32 or np.float64"):
        F.cast(v(3), dtype)


# ---- grad ----
def test_grad_inputs_of_the_wrong_shape_are_named():
    x = v(3)
    with pytest.raises(ValueError, match=r"grad: grad_inputs\[0\] has shape \(4,\) but inputs\[0\] has shape \(3,\)"):
        mg.grad(F.sin(x), x, grad_inputs=[v(4)])


# ---- numerical_grad and gradcheck ----
@pytest.mark.parametrize("check", [numerical_grad, gradcheck])
def test_a_function_that_is_not_one_is_named(check):
    with pytest.raises(TypeError, match=rf"{check.__name__}: f must be a function of Variables .*got str"):
        check("sin", np.ones(3))


@pytest.mark.parametrize("check", [numerical_grad, gradcheck])
def test_too_few_inputs_say_to_pass_a_list(check):
    with pytest.raises(TypeError, match=rf"{check.__name__}: f cannot take the 1 input\(s\) given .*"
                                        r"as a list: .*\(f, \[x0, x1, ...\]\)"):
        check(lambda a, b: a * b, np.ones(3))


@pytest.mark.parametrize("check", [numerical_grad, gradcheck])
def test_f_must_return_a_variable(check):
    with pytest.raises(TypeError, match=rf"{check.__name__}: f must return a Variable, got ndarray; .*F.sin"):
        check(lambda a: np.sin(a.data), np.ones(3))


@pytest.mark.parametrize("check", [numerical_grad, gradcheck])
@pytest.mark.parametrize("bad, dtype", [(None, "object"), ("abc", "<U3"), (np.array([1j]), "complex128")])
def test_inputs_that_are_not_real_numbers_are_named(check, bad, dtype):
    with pytest.raises(TypeError, match=rf"{check.__name__}: inputs\[0\]: cannot hold data of dtype {dtype}"):
        check(F.sin, bad)


@pytest.mark.parametrize("check", [numerical_grad, gradcheck])
def test_eps_must_be_positive(check):
    with pytest.raises(ValueError, match=rf"{check.__name__}: eps=0 must be a small positive step"):
        check(F.sin, np.ones(3), eps=0)


def test_numerical_grad_names_a_grad_output_of_the_wrong_shape():
    with pytest.raises(ValueError, match=r"numerical_grad: grad_output of shape \(4,\) does not fit the output "
                                         r"of f, of shape \(3,\)"):
        numerical_grad(F.sin, np.ones(3), grad_output=np.ones(4))


@pytest.mark.parametrize("order", [0, -1, 1.5])
def test_gradcheck_order_must_be_a_positive_int(order):
    with pytest.raises(ValueError, match=rf"gradcheck: order must be an int >= 1 .*got {order}"):
        gradcheck(F.sin, np.ones(3), order=order)
