"""Devices: where data lives, moving it, refusing to mix, and saying why no GPU can be used."""

import numpy as np
import pytest

import minigrad as mg
import minigrad.functions as F
from minigrad import cuda
from minigrad.backward_functions import lookup, registered

from cases import CASES
from stand_in_device import DeviceArray


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_every_function_stays_on_its_device_to_second_order(case):
    """Forward, first and second derivatives on the stand-in device equal those on the CPU."""
    arrays = case.inputs()
    results = {}
    for device in ("cpu", "stand-in"):
        with mg.device(device):
            xs = [mg.Variable(a) for a in arrays]
            y = case.f(*xs)
            assert y.device == device, f"{case.id}: output on {y.device}"
            gs = mg.grad(F.sum(y * y), xs, create_graph=True, allow_unused=True)
            used = [(x, g) for x, g in zip(xs, gs) if g is not None]
            s = F.sum(sum((g * g).sum() for _, g in used))
            ggs = mg.grad(s, [x for x, _ in used], materialize_grads=True)
            for g in [g for _, g in used] + ggs:
                assert g.device == device, f"{case.id}: a gradient on {g.device}"
            results[device] = [y.numpy()] + [g.numpy() for _, g in used] + [g.numpy() for g in ggs]
    for a, b in zip(results["cpu"], results["stand-in"]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_the_stand_in_device_catches_a_host_array():
    # the check above would catch a function that makes an array with NumPy
    x = mg.Variable(cuda.to_device(np.ones(3), "stand-in"))
    with pytest.raises(TypeError, match="mixes a device array with a NumPy array"):
        x.data + np.zeros(3)


def test_every_registered_function_was_run_on_the_device():
    package = {n for n in registered() if lookup(n).__module__.startswith("minigrad.")}
    assert package <= {case.name for case in CASES}


def test_mixing_devices_names_both_and_the_fix():
    a = mg.Variable(np.ones(3))
    b = mg.Variable(cuda.to_device(np.ones(3), "stand-in"))
    with pytest.raises(TypeError, match=r"Mul: its inputs live on different devices \(inputs\[0\] on cpu, "
                                        r"inputs\[1\] on stand-in\).*x\.to_gpu\(\) or x\.to_cpu\(\)"):
        a * b


def test_numbers_take_the_device_of_the_variable():
    x = mg.Variable(cuda.to_device(np.ones(3, dtype=np.float32), "stand-in"))
    y = 2.0 * x + 1
    assert y.device == "stand-in" and y.dtype == np.float32


def test_default_device_and_device_block():
    assert mg.get_default_device() == "cpu"
    with mg.device("stand-in"):
        assert mg.Variable([1.0, 2.0]).device == "stand-in"
        assert isinstance(mg.Variable(np.ones(2)).data, DeviceArray)
    assert mg.Variable([1.0]).device == "cpu"
    mg.set_default_device("stand-in")
    try:
        assert mg.Variable(1.0).device == "stand-in"
    finally:
        mg.set_default_device("cpu")


def test_parameters_are_made_on_the_input_device():
    import minigrad.parametric_functions as PF

    mg.clear_parameters()
    with mg.device("stand-in"):
        x = mg.Variable(np.ones((2, 3)))
        y = PF.affine(x, 4, name="fc")
    assert y.device == "stand-in"
    assert all(p.device == "stand-in" for p in mg.get_parameters().values())
    mg.clear_parameters()


def test_moving_to_the_cpu_and_numpy():
    x = mg.Variable(cuda.to_device(np.arange(3.0), "stand-in"))
    assert x.to_cpu() is x and x.device == "cpu"
    assert type(x.data) is np.ndarray
    y = mg.Variable(cuda.to_device(np.arange(3.0), "stand-in"))
    assert type(y.numpy()) is np.ndarray


@pytest.mark.skipif(cuda.is_available(), reason="a GPU is usable here: the errors below are for machines without one")
def test_asking_for_a_gpu_without_one_says_why():
    reason = cuda.why_no_gpu()
    assert "CuPy is not installed" in reason or "no CUDA device or driver is usable" in reason
    if "not installed" in reason:
        assert "pip install" in reason and "[gpu]" in reason
    with pytest.raises(RuntimeError, match="minigrad cannot use the GPU: CuPy"):
        mg.set_default_device("gpu")
    with pytest.raises(RuntimeError, match="minigrad cannot use the GPU"):
        mg.Variable(1.0).to_gpu()
    with pytest.raises(RuntimeError, match="minigrad cannot use the GPU"):
        mg.device("gpu")
    assert mg.get_default_device() == "cpu"


def test_unknown_device_name():
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        mg.set_default_device("tpu")


def test_drawing_plotting_and_checking_accept_device_variables():
    import matplotlib

    matplotlib.use("Agg")
    from minigrad.numerical import gradcheck, numerical_grad
    from minigrad.viz import draw_paths, graph_stats, plot_derivatives, to_dot, trace_backward

    xs = np.linspace(-1.0, 1.0, 5)
    x = mg.Variable(cuda.to_device(xs, "stand-in"), name="x")
    y = F.sum(F.sin(x) * x)
    assert "Sin" in to_dot(y, show_values=True)
    assert graph_stats(y).functions == 3
    assert "Sin" in draw_paths(y, x).dot
    assert "Sum" in str(trace_backward(y))
    ax = plot_derivatives(F.sin, x, order=2)
    np.testing.assert_allclose(ax.lines[2].get_ydata(), -np.sin(xs), atol=1e-12)
    np.testing.assert_allclose(numerical_grad(F.sin, x), np.cos(xs), atol=1e-8)
    assert gradcheck(F.tanh, [x], order=2)


def test_raw_device_arrays_are_read_as_arrays_not_as_their_buffers():
    """A plain device array (no Variable) passed where a Variable may go is used as the array itself."""
    import minigrad.parametric_functions as PF
    from minigrad.numerical import numerical_grad

    x = cuda.to_device(np.arange(6.0).reshape(2, 3), "stand-in")
    mg.clear_parameters()
    try:
        assert PF.affine(x, 4, name="fc").device == "stand-in"
        assert all(p.device == "stand-in" for p in mg.get_parameters().values())
    finally:
        mg.clear_parameters()
    labels = cuda.to_device(np.array([[0], [2]]), "stand-in")
    assert F.softmax_cross_entropy(x, labels).device == "stand-in"
    condition = cuda.to_device(np.array([True, False, True]), "stand-in")
    np.testing.assert_array_equal(F.where(condition, mg.Variable(x[0]), mg.Variable(x[1])).numpy(), [0.0, 4.0, 2.0])
    (g,) = numerical_grad(lambda v: v * 2.0, [np.ones(3)], grad_output=cuda.to_device(np.arange(3.0), "stand-in"))
    np.testing.assert_allclose(g, [0.0, 2.0, 4.0], atol=1e-6)


def test_laplacian_and_mixed_partials_on_the_device():
    """Every Laplacian method, its gradient by parameters (the recorded Taylor walk), and mixed partials
    stay on the stand-in device and equal the CPU's."""
    from minigrad import func, taylor

    rng = np.random.default_rng(5)
    W, b, x = rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal((2, 3))
    results = {}
    for device in ("cpu", "stand-in"):
        with mg.device(device):
            Wv, bv = mg.Variable(W), mg.Variable(b)

            def f(h, Wv=Wv, bv=bv):
                return F.sum(F.tanh(F.affine(h, Wv, bv)) * F.softmax(F.affine(h, Wv, bv), axis=1), axis=1)

            found = []
            for method in ("collapsed", "taylor", "nested"):
                value = func.laplacian(f, method)(cuda.to_device(x, device))
                grads = mg.grad(F.sum(value), [Wv, bv])
                assert value.device == device and all(g.device == device for g in grads), method
                found += [value.numpy()] + [g.numpy() for g in grads]
            found.append(cuda.as_numpy(taylor.mixed_partials(lambda p: F.exp(F.sum(p * p)),
                                                              cuda.to_device(x[0], device), (2, 1, 0))))
            results[device] = found
    for a, c in zip(results["cpu"], results["stand-in"]):
        np.testing.assert_allclose(a, c, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_forward_mode_stays_on_its_device(case):
    """func.jvp of device arrays (a lean level: the forward rules run on the arrays) and func.hvp of a sum of
    squares on the stand-in device equal those on the CPU."""
    arrays = case.inputs()
    rng = np.random.default_rng(5)
    vs = [rng.standard_normal(a.shape) for a in arrays]
    results = {}
    for device in ("cpu", "stand-in"):
        def on(a, device=device):
            return a if device == "cpu" else cuda.to_device(a, device)

        try:
            y, t = mg.func.jvp(case.f, tuple(map(on, arrays)), tuple(map(on, vs)))
        except NotImplementedError:
            pytest.skip(f"{case.id}: a Function without a forward rule")
        _, hv = mg.func.hvp(lambda *xs: F.sum(case.f(*xs) ** 2), tuple(map(on, arrays)), tuple(map(on, vs)))
        for value in (y, t, *hv):
            assert value.device == device, f"{case.id}: a result on {value.device}"
        results[device] = [y.numpy(), t.numpy()] + [h.numpy() for h in hv]
    for a, b in zip(results["cpu"], results["stand-in"]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
