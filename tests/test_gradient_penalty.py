"""The seeds' gradient-penalty example (examples/gradient_penalty.py) against PyTorch.

The same parameters, images and labels go through both frameworks; the
loss, the penalty and every parameter's gradient of (loss + penalty) must
agree to a relative 1e-6 in float64.
"""

import importlib.util
import re
import pathlib

import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch", reason="PyTorch is the oracle for the gradient-penalty example")

# the same tests on every device (see conftest.py)
pytestmark = pytest.mark.usefixtures("device")


EXAMPLE = pathlib.Path(__file__).resolve().parent.parent / "examples" / "gradient_penalty.py"


def load_example():
    spec = importlib.util.spec_from_file_location("gradient_penalty", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def example():
    mg.clear_parameters()
    yield load_example()
    mg.clear_parameters()


def test_gradient_penalty_matches_torch(example):
    mg.seed(1)
    x, y = example.make_data(seed=3)
    # First call creates the parameters; give the biases random values too, then run again.
    example.gradient_penalty_step(x, y)
    rng = np.random.default_rng(7)
    params = mg.get_parameters()
    assert list(params) == ["conv1/W", "conv1/b", "conv2/W", "conv2/b", "pred/W", "pred/b"]
    for name, p in params.items():
        if name.endswith("/b"):
            p.data = 0.1 * rng.standard_normal(p.shape)
        p.zero_grad()
    loss, gp = example.gradient_penalty_step(x, y)

    t_loss, t_gp, t_grads = example.torch_step(x.data, y.data, {k: p.data for k, p in params.items()})
    np.testing.assert_allclose(loss.item(), t_loss, rtol=1e-6)
    np.testing.assert_allclose(gp.item(), t_gp, rtol=1e-6)
    for name, p in params.items():
        assert p.dtype == np.float64
        g, t = p.grad.numpy(), t_grads[name]
        # relative to the gradient's scale: elements near 0 have no relative accuracy of their own
        assert np.abs(g - t).max() <= 1e-6 * np.abs(t).max(), name


def test_parameter_shapes_are_the_seeds(example):
    x, y = example.make_data()
    example.gradient_penalty_step(x, y)
    shapes = {k: v.shape for k, v in mg.get_parameters().items()}
    assert shapes == {
        "conv1/W": (8, 3, 3, 3), "conv1/b": (8,), "conv2/W": (16, 8, 3, 3), "conv2/b": (16,),
        "pred/W": (1024, 10), "pred/b": (10,),
    }


@pytest.mark.slow  # the example's step, in both frameworks: a few seconds
def test_the_example_prints_how_far_from_pytorch_it_is(example, device, capsys):
    if device != "cpu":
        pytest.skip("the example runs on the default device, the CPU: once is enough")
    example.main()
    out = capsys.readouterr().out
    assert "PyTorch, on the same parameters" in out, out
    differences = [float(d) for d in re.findall(r"\d\.\de[-+]\d+", out.split("relative differences:")[1])]
    assert len(differences) == 8, out  # the loss, the penalty and six gradients
    assert max(differences) < 1e-12, out  # float64 in both: rounding apart, a wrong rule is 1e-3 or more
