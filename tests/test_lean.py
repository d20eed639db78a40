"""The lean pass (minigrad/support/lean.py): a backward pass that records nothing runs minigrad's rules on
arrays, yours on Variables, and gives the same gradients as a pass that records."""

import threading

import numpy as np
import pytest
from cases import CASES

import minigrad as mg
import minigrad.functions as F
from minigrad.backward_functions import register, table
from minigrad.core.function import Function
from minigrad.support import config as settings
from minigrad.support.config import config


def gradients(case, arrays, dtype, create_graph):
    xs = [mg.Variable(a.astype(dtype)) for a in arrays]
    y = case.f(*xs)
    rng = np.random.default_rng(7)
    seed = rng.standard_normal(y.shape).astype(dtype)
    gs = mg.grad(y, xs, grad_outputs=seed, create_graph=create_graph, allow_unused=True, materialize_grads=True)
    return [g.data for g in gs]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_a_lean_pass_gives_the_gradients_of_a_recorded_one(case, dtype):
    arrays = case.inputs(seed=3)
    lean = gradients(case, arrays, dtype, create_graph=False)
    recorded = gradients(case, arrays, dtype, create_graph=True)
    for i, (a, b) in enumerate(zip(lean, recorded)):
        assert type(a) is np.ndarray and a.dtype == dtype and a.shape == arrays[i].shape, case.id
        np.testing.assert_allclose(a, b, rtol=1e-12 if dtype == np.float64 else 1e-6, atol=0,
                                   err_msg=f"{case.id}, input {i}")


def test_minigrad_rules_run_on_arrays_and_yours_on_variables():
    seen = {}

    class Twice(Function):
        def forward(self, x):
            return 2 * x

    @register("Twice")
    def twice_backward(ctx, gy):
        (x,) = ctx.inputs
        seen["types"] = type(gy), type(x), type(F.cos(x)), type(F.cos(x.data))
        return 2 * gy

    x = mg.Variable(np.array([0.3, -1.2]))
    (g,) = mg.grad(F.sin(Twice()(x)), x)  # Sin's rule runs on arrays, Twice's on Variables
    np.testing.assert_allclose(g.data, 2 * np.cos(2 * x.data), rtol=1e-15)
    assert seen["types"] == (mg.Variable, mg.Variable, mg.Variable, mg.Variable)
    assert table.lean["Sin"] and not table.lean["Twice"]


def test_a_minigrad_function_on_arrays_gives_a_variable_outside_a_lean_pass():
    assert isinstance(F.sin(np.array([0.5])), mg.Variable)
    x = mg.Variable(np.array([0.5]))
    mg.grad(F.sin(x), x)
    assert not config.lean and settings.leaning == 0
    assert isinstance(F.cos(np.array([0.5])), mg.Variable)


def test_a_lean_pass_in_one_thread_leaves_the_other_threads_alone():
    ready, done, found = threading.Event(), threading.Event(), {}

    def other():
        ready.wait(10)
        found["type"] = type(F.sin(np.array([0.5])))
        done.set()

    t = threading.Thread(target=other)
    t.start()
    config.lean = True  # as a lean pass in this thread sets it (support/lean.py)
    settings.lean_passes(1)
    try:
        assert type(F.sin(np.array([0.5]))) is np.ndarray  # this thread: arrays in, an array out
        ready.set()
        assert done.wait(10)
    finally:
        config.lean = False
        settings.lean_passes(-1)
        t.join()
    assert found["type"] is mg.Variable


def test_an_error_in_a_rule_ends_the_lean_pass():
    class Broken(Function):
        def forward(self, x):
            return x

    @register("Broken")
    def broken_backward(ctx, gy):
        raise ZeroDivisionError("a rule that fails")

    x = mg.Variable(np.array([1.0]))
    with pytest.raises(ZeroDivisionError):
        mg.grad(F.sin(Broken()(x)), x)
    assert not config.lean and settings.leaning == 0
    assert isinstance(F.sin(np.array([0.5])), mg.Variable)


def test_gradients_summed_in_place_do_not_touch_what_a_rule_returned_twice():
    # add's rule returns gy for both inputs: x + x sums two references to one array, and later terms are
    # added in place to the sum only, never to the seed the caller passed
    x = mg.Variable(np.array([1.0, 2.0]))
    seed = np.array([1.0, 10.0])
    y = (x + x) + x * 3.0
    (g,) = mg.grad(y, x, grad_outputs=seed)
    np.testing.assert_array_equal(g.data, [5.0, 50.0])
    np.testing.assert_array_equal(seed, [1.0, 10.0])
    z = mg.Variable(np.array(2.0))
    (g0,) = mg.grad(z * z * z * z, z)  # 0-d products are NumPy scalars: the sum must stay an array
    assert g0.item() == 32.0
