"""The lean pass (minigrad/support/lean.py): a backward pass that records nothing runs minigrad's rules on
arrays, yours on Variables, and gives the same gradients as a pass that records."""

import threading

import numpy as np
import pytest
from cases import CASES

import minigrad as mg
import minigrad.functions as F
from minigrad import func
from minigrad.backward_functions import register, table
from minigrad.forward_functions import register as register_forward
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
    switched = settings.switched
    with pytest.raises(ZeroDivisionError):
        mg.grad(F.sin(Broken()(x)), x)
    assert not config.lean and settings.leaning == 0
    assert settings.switched == switched and config.enable_backprop is True  # (grad mode is back, and counted)
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


def tangents_of(case, arrays, dtype, recorded):
    """J v by func.jvp: with NumPy primals (a lean level: its forward rules run on arrays), or with primals
    that require grad (every call recorded, the forward rules run on Variables)."""
    rng = np.random.default_rng(11)
    primals = [a.astype(dtype) for a in arrays]
    tangents = [rng.standard_normal(a.shape).astype(dtype) for a in arrays]
    if recorded:
        primals = [mg.Variable(p) for p in primals]
    _, t = func.jvp(case.f, tuple(primals), tuple(tangents))
    return t


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_a_lean_level_gives_the_tangents_of_recorded_calls(case, dtype):
    arrays = case.inputs(seed=3)
    try:
        recorded = tangents_of(case, arrays, dtype, recorded=True)
    except NotImplementedError:
        pytest.skip(f"{case.id}: a Function without a forward rule")
    lean = tangents_of(case, arrays, dtype, recorded=False)
    assert isinstance(lean, mg.Variable) and lean.creator is None and not lean.requires_grad
    assert lean.dtype == recorded.dtype and lean.shape == recorded.shape, case.id
    np.testing.assert_allclose(lean.data, recorded.data, rtol=1e-12 if dtype == np.float64 else 1e-6,
                               atol=0, err_msg=case.id)


def test_a_forward_rule_of_yours_gets_variables_on_a_lean_level():
    seen = {}

    class Triple(Function):
        def forward(self, x):
            return 3 * x

    @register("Triple")
    def triple_backward(ctx, gy):
        return 3 * gy

    @register_forward("Triple")
    def triple_forward(ctx, tx):
        (x,) = ctx.inputs
        seen["types"] = type(tx), type(x), type(F.cos(x))
        return 3 * tx

    x, v = np.array([0.3, -1.2]), np.array([1.0, 2.0])
    _, t = func.jvp(lambda x: F.sin(Triple()(x)), (x,), (v,))  # Sin's forward rule on arrays, Triple's on Variables
    np.testing.assert_allclose(t.data, 3 * np.cos(3 * x) * v, rtol=1e-15)
    assert seen["types"] == (mg.Variable, mg.Variable, mg.Variable)


def test_tangents_stay_differentiable_where_reverse_mode_will_need_them():
    x, v = np.array([0.3, -1.2]), np.array([1.0, 2.0])
    W = mg.Variable(np.array([[1.0, 2.0], [3.0, -1.0]]))  # closed over, requires grad: J v = v W depends on W
    _, t = func.jvp(lambda x: F.sum(F.tanh(F.matmul(x, W))), (x,), (v,))
    (gW,) = mg.grad(t, W)
    h = 1e-6
    for i in range(2):
        for j in range(2):
            Wp, Wm = W.data.copy(), W.data.copy()
            Wp[i, j] += h
            Wm[i, j] -= h
            jv = [((1 - np.tanh(x @ w) ** 2) * (v @ w)).sum() for w in (Wp, Wm)]
            np.testing.assert_allclose(gW.data[i, j], (jv[0] - jv[1]) / (2 * h), rtol=1e-6)
    vv = mg.Variable(v)  # a tangent that requires grad: d(J v)/dv = J^T 1
    _, t = func.jvp(lambda x: F.sum(F.sin(x)), (x,), (vv,))
    (gv,) = mg.grad(t, vv)
    np.testing.assert_allclose(gv.data, np.cos(x), rtol=1e-15)


def test_hvp_gives_a_differentiable_result_only_where_asked():
    x, v = mg.Variable(np.array([0.3, -1.2])), np.array([1.0, 2.0])
    _, (hv,) = func.hvp(lambda x: F.sum(F.sin(x) * x), (x,), (v,))  # x requires grad: H v is a graph of x
    (g,) = mg.grad(F.sum(hv), x)  # d/dx sum((2 cos x - x sin x) v) = (-3 sin x - x cos x) v
    np.testing.assert_allclose(g.data, (-3 * np.sin(x.data) - x.data * np.cos(x.data)) * v, rtol=1e-14)
    _, (hv,) = func.hvp(lambda x: F.sum(F.sin(x) * x), (x.data,), (v,))
    assert hv.creator is None and not hv.requires_grad
    np.testing.assert_allclose(hv.data, (2 * np.cos(x.data) - x.data * np.sin(x.data)) * v, rtol=1e-14)


def test_a_jvp_of_numpy_primals_runs_minigrads_forward_rules_on_arrays(monkeypatch):
    from minigrad.support import lean
    seen = []
    original = lean.pushed

    def spy(call_rule, table, f, tangents, outputs):
        def calling(*args, **kwargs):  # (ctx.inputs as the rule will read them)
            seen.append((f.name, {type(t) for t in tangents if t is not None}, type(f.inputs[0])))
            return call_rule(*args, **kwargs)

        return original(calling, table, f, tangents, outputs)

    monkeypatch.setattr(lean, "pushed", spy)
    x, v = np.array([0.3, -1.2]), np.array([1.0, 2.0])
    func.jvp(lambda x: F.sum(F.sin(x) * x), (x,), (v,))
    assert [name for name, _, _ in seen] == ["Sin", "Mul", "Sum"]
    assert all(types == {np.ndarray} and first is np.ndarray for _, types, first in seen)
    seen.clear()
    func.jvp(lambda x: F.sum(F.sin(x) * x), (mg.Variable(x),), (v,))  # recorded calls: rules on Variables
    assert seen == []


def test_switches_of_grad_mode_are_counted_back_to_zero():
    before = settings.switched
    with mg.no_grad():
        assert settings.switched == before + 1
        with mg.enable_grad():
            assert settings.switched == before + 2
    assert settings.switched == before
