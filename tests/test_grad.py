"""mg.grad: its documented numbers, every option, and every error by its message."""

import numpy as np
import pytest

import minigrad as mg
import minigrad.functions as F
from minigrad.backward_functions import register
from minigrad import Function


# ---- paddle.grad's documented examples ----
# the same tests on every device (see conftest.py)
pytestmark = pytest.mark.usefixtures("device")


@pytest.mark.parametrize("create_graph, expected", [(False, 2.0), (True, 4.0)])
def test_paddle_create_graph_example(create_graph, expected):
    x = mg.Variable(1.0)
    y = x * x
    (dx,) = mg.grad(y, x, create_graph=create_graph, retain_graph=True)
    z = y + dx
    z.backward()
    assert x.grad.item() == expected


@pytest.mark.parametrize(
    "grad_outputs, expected",
    [(None, 7.0), ([None, 4.0], 16.0), ([4.0, None], 19.0), ([3.0, 4.0], 24.0)],
)
def test_paddle_grad_outputs_example(grad_outputs, expected):
    x = mg.Variable(2.0)
    y1 = x * x
    y2 = x * 3
    if grad_outputs is not None:
        grad_outputs = [g if g is None else mg.Variable(g) for g in grad_outputs]
    (dx,) = mg.grad([y1, y2], [x], grad_outputs=grad_outputs)
    assert dx.item() == expected


# ---- semantics ----
def test_accepts_bare_variables_and_returns_a_list():
    x = mg.Variable(2.0)
    result = mg.grad(x * x, x)
    assert isinstance(result, list) and result[0].item() == 4.0


def test_several_outputs_are_summed():
    x = mg.Variable(0.7)
    (g,) = mg.grad([F.sin(x), F.cos(x), x * x], x)
    assert np.isclose(g.item(), np.cos(0.7) - np.sin(0.7) + 1.4)


def test_grad_outputs_numbers_arrays_and_variables():
    x = mg.Variable([1.0, 2.0])
    y = x * x
    (g1,) = mg.grad(y, x, grad_outputs=[3.0], retain_graph=True)
    (g2,) = mg.grad(y, x, grad_outputs=[np.array([1.0, 0.0])], retain_graph=True)
    (g3,) = mg.grad(y, x, grad_outputs=mg.Variable([0.0, 1.0]))
    np.testing.assert_allclose(g1.numpy(), [6.0, 12.0])
    np.testing.assert_allclose(g2.numpy(), [2.0, 0.0])
    np.testing.assert_allclose(g3.numpy(), [0.0, 4.0])


@pytest.mark.parametrize("number", [3, 3.0, np.float64(3), np.float32(3), np.int64(3), np.int32(3)])
def test_a_numpy_scalar_in_grad_outputs_is_a_number_too(number):
    # every number, a NumPy scalar of any type too (not np.float64 alone, which is a float), is
    # broadcast to its output's shape, in its output's dtype (weak, as it is beside a Variable)
    x = mg.Variable(np.array([1.0, 2.0], dtype=np.float32))
    (g,) = mg.grad(x * x, x, grad_outputs=number, retain_graph=True)
    np.testing.assert_array_equal(g.numpy(), [6.0, 12.0])
    assert g.dtype == np.float32
    (x * x).backward(number)
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 12.0])


def test_grad_leaves_dot_grad_alone_unless_asked():
    x = mg.Variable(3.0)
    y = x * x
    mg.grad(y, x, retain_graph=True)
    assert x.grad is None
    mg.grad(y, x, set_grad=True)
    assert x.grad.item() == 6.0


def test_retain_grad_stores_intermediate_gradients():
    x = mg.Variable(2.0)
    h = x * 3
    y = h * h
    mg.grad(y, x, retain_grad=True)
    assert h.grad.item() == 12.0 and y.grad.item() == 1.0


def test_grad_inputs_are_added():
    x = mg.Variable(2.0)
    (g,) = mg.grad(x * x, x, grad_inputs=[mg.Variable(10.0)])
    assert g.item() == 14.0


def test_grad_inputs_flow_on_upstream_as_chainer_does():
    """x2 = x1^3 lies downstream of x1, y = x2 x1. By hand, with initial values 100 (x1) and 10 (x2):

    g(x2) = 10 + dy/dx2 = 10 + x1 = 12;
    g(x1) = 100 + dy/dx1 (direct) + g(x2) dx2/dx1 = 100 + x2 + 12 * 3 x1^2 = 100 + 8 + 144 = 252.
    """
    x1 = mg.Variable(2.0)
    x2 = x1 ** 3
    g1, g2 = mg.grad(x2 * x1, [x1, x2], grad_inputs=[mg.Variable(100.0), mg.Variable(10.0)])
    assert (g1.item(), g2.item()) == (252.0, 12.0)


def test_grad_inputs_of_an_unreachable_input_come_back_and_are_not_changed():
    x, u = mg.Variable(2.0), mg.Variable(5.0)
    gi = mg.Variable(7.0)
    g, gu = mg.grad(x * x, [x, u], grad_inputs=[mg.Variable(1.0), gi])
    assert (g.item(), gu.item(), gi.item()) == (5.0, 7.0, 7.0)


def test_loss_scale_scales_only_implicit_seeds():
    x = mg.Variable(2.0)
    y = x * x
    (g,) = mg.grad(y, x, loss_scale=8.0, retain_graph=True)
    assert g.item() == 32.0
    (g,) = mg.grad(y, x, grad_outputs=[1.0], loss_scale=8.0)
    assert g.item() == 4.0


def test_no_grad_vars_are_constants():
    x = mg.Variable(2.0)
    h = x * x
    y = h * x  # dy/dx with h constant: h = 4
    (g,) = mg.grad(y, x, no_grad_vars=[h])
    assert g.item() == 4.0


def test_non_leaf_input_and_no_walk_past_it():
    x = mg.Variable(2.0)
    h = x * x
    y = h * 3
    (gh,) = mg.grad(y, h, retain_graph=True)
    assert gh.item() == 3.0
    gh, gx = mg.grad(y, [h, x])
    assert gh.item() == 3.0 and gx.item() == 12.0


def test_output_that_is_an_input_gets_its_seed():
    x = mg.Variable([1.0, 2.0])
    (g,) = mg.grad(x, x)
    np.testing.assert_array_equal(g.numpy(), [1.0, 1.0])


def test_same_input_twice_and_same_output_twice():
    x = mg.Variable(2.0)
    y = x * x
    g1, g2 = mg.grad(y, [x, x], retain_graph=True)
    assert g1.item() == g2.item() == 4.0
    (g,) = mg.grad([y, y], x)
    assert g.item() == 8.0


def test_create_graph_wins_over_no_grad():
    x = mg.Variable(2.0)
    y = x * x * x
    with mg.no_grad():
        (g,) = mg.grad(y, x, create_graph=True)
    assert g.creator is not None
    (gg,) = mg.grad(g, x)
    assert gg.item() == 12.0


def test_results_without_create_graph_are_constants():
    x = mg.Variable(2.0)
    (g,) = mg.grad(x ** 3, x)
    assert g.creator is None


def test_grad_outputs_variables_are_differentiable():
    x = mg.Variable(3.0)
    v = mg.Variable(2.0)
    (g,) = mg.grad(x * x, x, grad_outputs=[v], create_graph=True)  # 2xv
    (gv,) = mg.grad(g, v)
    assert gv.item() == 6.0


def test_fourth_derivative_of_a_cubic_is_a_connected_zero():
    x = mg.Variable(1.5)
    d = x ** 3
    for _ in range(3):
        (d,) = mg.grad(d, x, create_graph=True)
    assert d.item() == 6.0
    (d4,) = mg.grad(d, x)
    assert d4.item() == 0.0


def test_broadcast_inputs_get_their_own_shapes():
    x = mg.Variable(np.ones((3, 1)))
    b = mg.Variable(np.arange(4.0))
    y = x * b
    gx, gb = mg.grad(y, [x, b])
    assert gx.shape == (3, 1) and gb.shape == (4,)
    np.testing.assert_allclose(gx.numpy(), np.full((3, 1), 6.0))
    np.testing.assert_allclose(gb.numpy(), np.full(4, 3.0))


def test_only_the_paths_to_the_inputs_are_visited():
    class Spy(Function):
        def forward(self, x):
            return x * 1.0

    calls = []

    @register("Spy")
    def spy_backward(ctx, gy):
        calls.append(1)
        raise AssertionError("Spy's rule lies off every path and must not run")

    x = mg.Variable(2.0)
    w = mg.Variable(3.0)
    y = x * w + Spy()(w)
    (gx,) = mg.grad(y, x, retain_graph=True)
    assert gx.item() == 3.0 and calls == []
    with pytest.raises(AssertionError, match="off every path"):
        y.backward()  # backward() visits everything, as in PyTorch and chainer


def test_allow_unused_and_materialize_grads():
    x, z = mg.Variable(1.0), mg.Variable([1.0, 2.0])
    y = x * 2
    gx, gz = mg.grad(y, [x, z], allow_unused=True, retain_graph=True)
    assert gz is None
    gx, gz = mg.grad(y, [x, z], materialize_grads=True)
    np.testing.assert_array_equal(gz.numpy(), [0.0, 0.0])


# ---- errors, by their messages ----
def test_unreachable_input_names_index_and_both_ways_out():
    x, z = mg.Variable(1.0), mg.Variable([1.0, 2.0])
    with pytest.raises(ValueError, match=r"inputs\[1\] \(shape \(2,\)\) is not reachable") as e:
        mg.grad(x * 2, [x, z])
    assert "allow_unused=True" in str(e.value) and "materialize_grads=True" in str(e.value)


def test_output_without_graph_gets_a_hint():
    x = mg.Variable(1.0)
    with mg.no_grad():
        y = x * 2
    with pytest.raises(ValueError, match=r"outputs\[0\] has no creator: was it computed under no_grad\(\)"):
        mg.grad(y, x)
    (g,) = mg.grad(x * x, x)  # create_graph=False: g is a constant
    with pytest.raises(ValueError, match="create_graph=False"):
        mg.grad(g, x)


def test_contradictory_unused_options():
    x = mg.Variable(1.0)
    with pytest.raises(ValueError, match="materialize_grads=True .* allow_unused=False"):
        mg.grad(x * 2, x, allow_unused=False, materialize_grads=True)


def test_grad_outputs_wrong_length_and_shape():
    x = mg.Variable([1.0, 2.0, 3.0])
    y = x * 2
    with pytest.raises(ValueError, match="grad_outputs has 2 entries but outputs has 1"):
        mg.grad([y], [x], grad_outputs=[None, None])
    with pytest.raises(ValueError, match=r"grad_outputs\[0\] has shape \(4,\) but outputs\[0\] has shape \(3,\)"):
        mg.grad([y], [x], grad_outputs=[np.ones(4)])
    with pytest.raises(ValueError, match=r"grad_outputs\[0\] has shape \(1,\)"):
        mg.grad([y], [x], grad_outputs=[np.ones(1)])  # broadcastable is still refused
    with pytest.raises(ValueError, match="one entry per output"):
        mg.grad([y, y], [x], grad_outputs=2.0)


def test_empty_and_wrong_types():
    x = mg.Variable(1.0)
    with pytest.raises(ValueError, match="inputs is empty"):
        mg.grad(x * 2, [])
    with pytest.raises(ValueError, match="outputs is empty"):
        mg.grad([], x)
    with pytest.raises(TypeError, match=r"inputs\[0\] is a ndarray, not a Variable"):
        mg.grad(x * 2, [np.ones(1)])
    with pytest.raises(TypeError, match=r"outputs\[0\] is a ndarray, not a Variable.*NumPy function.*F\.exp"):
        mg.grad(np.exp(np.asarray(x)) * np.ones(2), x)  # computed by NumPy: no graph


def test_freed_graph_names_function_and_retain_graph():
    x = mg.Variable(2.0)
    y = F.sin(x) * x
    mg.grad(y, x)
    with pytest.raises(RuntimeError, match="the graph through Mul was freed .* retain_graph=True"):
        mg.grad(y, x)
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward()


def test_freed_even_where_nothing_was_saved():
    x = mg.Variable(2.0)
    y = x + x
    y.backward()
    with pytest.raises(RuntimeError, match="graph through Add was freed"):
        y.backward()


def test_retain_graph_allows_a_second_pass():
    x = mg.Variable(2.0)
    y = F.sin(x) * x
    (g1,) = mg.grad(y, x, retain_graph=True)
    (g2,) = mg.grad(y, x)
    assert g1.item() == g2.item()


def test_create_graph_without_retain_graph_breaks_later_like_pytorch():
    x = mg.Variable(0.5)
    y = F.sin(x) ** 3
    (g,) = mg.grad(y, x, create_graph=True, retain_graph=False)  # 3 sin^2 cos: uses sin(x)
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        mg.grad(g, x)


def test_missing_rule_names_the_function_and_register():
    class Twice(Function):
        def forward(self, x):
            return 2 * x

    x = mg.Variable(1.0)
    y = Twice()(x)
    expected = r"no backward rule registered for 'Twice'; add one with @register\('Twice'\)"
    with pytest.raises(NotImplementedError, match=expected):
        mg.grad(y, x)


def test_forward_only_function_off_the_path_is_fine():
    class Untaught(Function):
        def forward(self, x):
            return 2 * x

    x, w = mg.Variable(1.0), mg.Variable(2.0)
    y = x * w + Untaught()(w)
    (gx,) = mg.grad(y, x)
    assert gx.item() == 2.0


def test_rule_returning_the_wrong_number_of_gradients():
    class Pair(Function):
        def forward(self, a, b):
            return a + b

    register("Pair", lambda ctx, gy: gy)
    x = mg.Variable(1.0)
    with pytest.raises(TypeError, match="rule of Pair returned 1 gradients for 2 inputs"):
        mg.grad(Pair()(x, x), x)


def test_shape_errors_name_the_function_and_shapes():
    a, b = mg.Variable(np.ones(3)), mg.Variable(np.ones(4))
    with pytest.raises(ValueError, match=r"Add: .*\(3,\), \(4,\)"):
        a + b
    with pytest.raises(ValueError, match=r"matmul: shapes \(2, 3\) and \(2, 3\) do not chain"):
        mg.Variable(np.ones((2, 3))) @ mg.Variable(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"Reshape: .*\(6,\)"):
        F.reshape(mg.Variable(np.ones(6)), (4,))
    with pytest.raises(ValueError, match=r"Sum: .*\(2, 3\).*axes of a 2-d array are 0 to 1 \(or -2 to -1"):
        F.sum(mg.Variable(np.ones((2, 3))), axis=2)
    with pytest.raises(ValueError, match=r"Softmax: .*a 1-d array has one axis: pass axis=0"):
        F.softmax(mg.Variable(np.ones(3)))  # its axis defaults to 1, for (N, C) scores


def test_a_function_with_two_outputs():
    class SinCos(Function):
        def forward(self, x):
            return np.sin(x), np.cos(x)

    @register("SinCos")
    def sincos_backward(ctx, gs, gc):
        """s = sin x, c = cos x  =>  gx = gs cos x - gc sin x; an output without a gradient gets None."""
        (x,) = ctx.inputs
        gx = 0
        if gs is not None:
            gx = gx + gs * F.cos(x)
        if gc is not None:
            gx = gx - gc * F.sin(x)
        return gx

    x = mg.Variable(0.4)
    s, c = SinCos()(x)
    assert s.creator is c.creator
    (g,) = mg.grad([s, c], x, retain_graph=True)
    assert np.isclose(g.item(), np.cos(0.4) - np.sin(0.4))
    (g,) = mg.grad(c, x)  # only one output is differentiated: the other's gradient is None
    assert np.isclose(g.item(), -np.sin(0.4))


@pytest.mark.parametrize("f", [lambda x: F.sin(x), lambda x: F.sum(x * 2), lambda x: F.exp(F.sum(x) + 1.0)])
def test_backward_of_a_result_of_no_grad_names_no_grad_however_deep(f):
    x = mg.Variable(np.array([0.5, 1.0]))
    with mg.no_grad():
        y = f(x)
    with pytest.raises(RuntimeError, match=r"computed inside no_grad\(\)"):
        y.backward()
