"""minigrad.func and the forward rules: every way of computing a derivative agrees.

For every case of ``tests/cases.py`` (every registered function):

- jacfwd (columns, forward rules) = jacrev (rows, backward rules) = central differences;
- jvp = the JVP obtained by transposing a VJP: d<vjp_fn(u), v>/du, two reverse
  passes and no forward rule at all;
- to second order where the function is smooth;
- and against torch.func.jvp and torch.func.jacfwd where PyTorch is installed.
"""

import numpy as np
import pytest

import minigrad as mg
import minigrad.functions as F
from minigrad import backward_functions, families, forward_functions, func
from minigrad import Function
from cases import CASES

EPS = 1e-6


def variables(arrays):
    return tuple(mg.Variable(a) for a in arrays)


def argnums_of(case):
    return tuple(range(len(case.shapes)))


def numerical_jacobians(f, arrays, eps=EPS):
    """(f(x + h e_k) - f(x - h e_k)) / 2h for each input element: one Jacobian per input."""
    def value(xs):
        with mg.no_grad():
            return f(*[mg.Variable(a) for a in xs]).numpy()

    y = value(arrays)
    jacobians = []
    for i, a in enumerate(arrays):
        columns = []
        for k in range(a.size):
            e = np.zeros(a.size)
            e[k] = eps
            up = [b + e.reshape(a.shape) if j == i else b for j, b in enumerate(arrays)]
            down = [b - e.reshape(a.shape) if j == i else b for j, b in enumerate(arrays)]
            columns.append((value(up) - value(down)).reshape(-1) / (2 * eps))
        jacobians.append(np.stack(columns, axis=-1).reshape(y.shape + a.shape) if columns
                         else np.zeros(y.shape + a.shape))
    return jacobians


def jvp_by_transposed_vjp(f, xs, vs):
    """J v from reverse mode alone: vjp_fn(u) = J^T u is linear in u, and d<J^T u, v>/du = J v."""
    y, vjp_fn = func.vjp(f, *xs)
    u = mg.Variable(np.zeros(y.shape))
    s = sum(((g * v).sum() for g, v in zip(vjp_fn(u), vs)), start=mg.Variable(0.0))
    (t,) = mg.grad(s, u, create_graph=True, materialize_grads=True)
    return t


def close(a, b, what, rtol=1e-6, atol=1e-7):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol, err_msg=what)


# ---- the two tables ----
def library_rules(table):
    """{key: rule} for the rules minigrad registers (tests may register their own)."""
    return {key: rule for key, rule in table.rules.items() if rule.__module__.startswith("minigrad.")}


def test_every_function_with_a_backward_rule_has_a_forward_rule_and_back():
    backward, forward = library_rules(backward_functions.table), library_rules(forward_functions.table)
    assert not backward.keys() - forward.keys(), (
        f"functions with a backward rule and no forward rule: {sorted(backward.keys() - forward.keys())}")
    assert not forward.keys() - backward.keys(), (
        f"functions with a forward rule and no backward rule: {sorted(forward.keys() - backward.keys())}")


def test_each_forward_rule_sits_right_under_its_backward_rule_and_derives_it():
    import inspect

    forward = forward_functions.table.rules
    for name, backward in library_rules(backward_functions.table).items():
        lines, start = inspect.getsourcelines(backward)
        family = {families.linear_forward: "linear", backward: "elementwise"}.get(forward[name])
        if family:  # declared once for the family, right under the rule
            source = inspect.getsource(inspect.getmodule(backward)).splitlines()
            declared = source[start + len(lines) + 1]  # elementwise("Exp"), or one line for a shared rule
            assert declared.startswith(f"{family}(") and f'"{name}"' in declared, f"{name}: {family}(...) under it"
            continue
        assert inspect.getmodule(backward) is inspect.getmodule(forward[name]), name
        assert inspect.getsourcelines(forward[name])[1] == start + len(lines) + 2, (
            f"{name}: its forward rule must come right after its backward rule")
        assert "=>" in forward[name].__doc__, f"{name}: the forward rule's docstring derives it: y = ...  =>  dy = ..."


def test_elementwise_needs_the_backward_rule_it_reuses_and_reuses_it_as_the_forward_rule():
    with pytest.raises(LookupError, match="NoSuchFunction has no backward rule yet"):
        families.elementwise("NoSuchFunction")
    assert forward_functions.table.rules["Exp"] is backward_functions.table.rules["Exp"]
    # J = diag(f'(x)) = J^T: the shared rule gives f'(x) t, checked here against a closed form
    x, t = np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, -3.0])
    _, ty = func.jvp(F.tanh, (x,), (t,))
    close(ty.data, (1 - np.tanh(x) ** 2) * t, "tanh's tangent")


def test_forward_register_as_call_and_decorator_and_show_registry(capsys):
    class Cube(Function):
        def forward(self, x):
            return x ** 3

    @backward_functions.register("Cube")
    def cube_backward(ctx, gy):
        (x,) = ctx.inputs
        return gy * 3 * x * x

    with pytest.raises(NotImplementedError, match=r"no forward rule registered for 'Cube'; add one with "
                                                   r"@register\('Cube'\).*minigrad.forward_functions"):
        func.jvp(lambda x: Cube()(x), (np.array([2.0]),), (np.array([1.0]),))

    forward_functions.register("Cube", lambda ctx, tx: tx * 0.0)
    assert forward_functions.lookup(Cube)(None, 1.0) == 0.0

    @forward_functions.register("Cube")
    def cube_forward(ctx, tx):
        """y = x^3  =>  dy = 3 x^2 dx  =>  ty = 3 x^2 tx."""
        (x,) = ctx.inputs
        return 3 * x * x * tx

    assert forward_functions.lookup("Cube") is cube_forward
    _, t = func.jvp(lambda x: Cube()(x), (np.array([2.0]),), (np.array([1.0]),))
    close(t, [12.0], "3 x^2 at 2")
    forward_functions.show_registry()
    text = capsys.readouterr().out
    assert "0x" not in text
    assert "Sin" in text and "minigrad.functions.elementwise.sin_backward" in text  # elementwise: one rule


def test_a_students_namesake_class_never_gets_the_library_forward_rule():
    class Sin(Function):  # not minigrad's Sin: it computes something else
        def forward(self, x):
            return 2 * x

    with pytest.raises(NotImplementedError, match="is not minigrad's own Sin"):
        func.jvp(lambda x: Sin()(x), (np.array([1.0]),), (np.array([1.0]),))


# ---- every registered function: all ways agree ----
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_jacfwd_equals_jacrev_equals_central_differences(case):
    arrays = case.inputs(seed=2)
    nums = argnums_of(case)
    forward = func.jacfwd(case.f, argnums=nums)(*variables(arrays))
    reverse = func.jacrev(case.f, argnums=nums)(*variables(arrays))
    numeric = numerical_jacobians(case.f, arrays)
    for i, (a, b, n) in enumerate(zip(forward, reverse, numeric)):
        assert a.shape == n.shape == b.shape, f"{case.id}: Jacobian by input {i}: {a.shape}, {b.shape}, {n.shape}"
        close(a, b, f"{case.id}: jacfwd vs jacrev, input {i}", rtol=1e-10, atol=1e-12)
        close(a, n, f"{case.id}: jacfwd vs central differences, input {i}", rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", [c for c in CASES if c.smooth], ids=lambda case: case.id)
def test_second_order_jacobians_agree(case):
    """The Hessian of <f, w> (w fixed, random): jacfwd(jacrev), jacrev(jacrev), jacfwd(jacfwd), and
    central differences of the gradient, input by input."""
    arrays = case.inputs(seed=3)
    w = np.random.default_rng(4).standard_normal(case.f(*variables(arrays)).shape)

    def projected(*xs):
        return F.sum(case.f(*xs) * w)

    nums = argnums_of(case)
    xs = variables(arrays)
    fwd_rev = func.hessian(projected, argnums=nums)(*xs)
    rev_rev = func.jacrev(func.jacrev(projected, argnums=nums), argnums=nums)(*xs)
    fwd_fwd = func.jacfwd(func.jacfwd(projected, argnums=nums), argnums=nums)(*xs)
    for i in range(len(nums)):
        numeric = numerical_jacobians(func.grad(projected, argnums=i), arrays)
        for j in range(len(nums)):
            what = f"{case.id}: d2/dx{i}dx{j}"
            close(fwd_rev[i][j], rev_rev[i][j], f"{what}: forward over reverse vs reverse over reverse", 1e-9, 1e-11)
            close(fwd_fwd[i][j], rev_rev[i][j], f"{what}: forward over forward vs reverse over reverse", 1e-9, 1e-11)
            close(numeric[j], rev_rev[i][j], f"{what}: central differences", 1e-5, 1e-6)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_jvp_equals_the_transposed_vjp_to_second_order(case):
    arrays = case.inputs(seed=5)
    rng = np.random.default_rng(6)
    v1 = tuple(rng.standard_normal(a.shape) for a in arrays)
    v2 = tuple(rng.standard_normal(a.shape) for a in arrays)
    xs = variables(arrays)
    _, t = func.jvp(case.f, xs, v1)
    close(t, jvp_by_transposed_vjp(case.f, xs, v1), f"{case.id}: jvp vs transposed vjp", 1e-10, 1e-12)
    if not case.smooth:
        return

    def by_forward(*ys):
        return func.jvp(case.f, ys, v1)[1]

    def by_reverse(*ys):
        return jvp_by_transposed_vjp(case.f, ys, v1)

    _, t2 = func.jvp(by_forward, xs, v2)
    close(t2, jvp_by_transposed_vjp(by_reverse, xs, v2), f"{case.id}: second order", 1e-9, 1e-11)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_matches_torch_func(case):
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle framework (pip install .[oracle])")
    arrays = case.inputs(seed=7)
    vs = tuple(np.random.default_rng(8).standard_normal(a.shape) for a in arrays)
    nums = argnums_of(case)

    def twin(*ts):
        return case.twin(torch, *ts)

    ts, tvs = tuple(torch.tensor(a) for a in arrays), tuple(torch.tensor(v) for v in vs)
    y, t = func.jvp(case.f, variables(arrays), vs)
    ty, tt = torch.func.jvp(twin, ts, tvs)
    close(y, ty.detach().numpy(), f"{case.id}: value", 1e-12, 1e-14)
    close(t, tt.detach().numpy(), f"{case.id}: jvp vs torch.func.jvp", 1e-9, 1e-11)
    ours = func.jacfwd(case.f, argnums=nums)(*variables(arrays))
    theirs = torch.func.jacfwd(twin, argnums=nums)(*ts)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        close(a, b.detach().numpy(), f"{case.id}: jacfwd vs torch.func.jacfwd, input {i}", 1e-9, 1e-11)


# ---- nesting: no perturbation confusion ----
def test_the_classic_perturbation_confusion_test():
    """d/dx [x * (d/dy (x + y) at y = 1)] at x = 1 is 1; dual numbers that mix up the two
    perturbations answer 2."""
    def inner(x):
        _, t = func.jvp(lambda y: x + y, (1.0,), (1.0,))
        return x * t

    _, t = func.jvp(inner, (1.0,), (1.0,))
    assert t.item() == 1.0


def test_perturbation_confusion_with_jvp_inside_vjp_and_vjp_inside_jvp():
    def jvp_inside(x):
        return x * func.jvp(lambda y: x + y, (1.0,), (1.0,))[1]

    def vjp_inside(x):
        _, vjp_fn = func.vjp(lambda y: x + y, 1.0)
        return x * vjp_fn(mg.Variable(1.0))[0]

    _, vjp_fn = func.vjp(jvp_inside, mg.Variable(1.0))
    assert vjp_fn(mg.Variable(1.0))[0].item() == 1.0  # jvp inside vjp
    assert func.jvp(vjp_inside, (1.0,), (1.0,))[1].item() == 1.0  # vjp inside jvp
    assert func.grad(jvp_inside)(1.0).item() == 1.0


def test_nested_derivatives_that_depend_on_the_outer_variable():
    """d/dx [d/dy (x y^2) at y = x] = d/dx [2 x y]_(y = x) = d/dx 2x^2 = 4x: the inner derivative
    depends on x through both x and y, and each is counted once."""
    def inner(x):
        return func.jvp(lambda y: x * y * y, (x,), (1.0,))[1]

    x = mg.Variable(1.5)
    assert np.isclose(func.jvp(inner, (x,), (1.0,))[1].item(), 6.0)
    assert np.isclose(func.grad(inner)(x).item(), 6.0)
    assert np.isclose(func.jvp(func.grad(inner), (x,), (1.0,))[1].item(), 4.0)


# ---- the transforms ----
def test_hessian_and_hvp_against_the_closed_form():
    rng = np.random.default_rng(9)
    A = rng.standard_normal((4, 4))

    def f(x):  # x^T A x + sum sin x  =>  H = A + A^T - diag(sin x)
        return F.sum(x * F.matmul(A, x)) + F.sum(F.sin(x))

    x, v = rng.standard_normal(4), rng.standard_normal(4)
    H = A + A.T - np.diag(np.sin(x))
    close(func.hessian(f)(x), H, "hessian", 1e-12, 1e-12)
    value, (hv,) = func.hvp(f, (x,), (v,))
    close(value, x @ A @ x + np.sin(x).sum(), "hvp's value", 1e-12, 1e-12)
    close(hv, H @ v, "hvp", 1e-12, 1e-12)


def test_grad_value_and_grad_argnums_and_aux():
    def f(x, y):
        loss = F.sum(x * x * y)
        return loss, {"loss": loss.item()}

    x, y = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    gx, aux = func.grad(f, has_aux=True)(x, y)
    close(gx, 2 * x * y, "d/dx")
    assert aux["loss"] == np.sum(x * x * y)
    (value, aux), (gx, gy) = func.value_and_grad(f, argnums=(0, 1), has_aux=True)(x, y)
    close(value, np.sum(x * x * y), "value")
    close(gy, x * x, "d/dy")
    close(func.grad(lambda a, b: F.sum(a * b), argnums=-1)(x, y), x, "argnums=-1 is the last")
    close(func.jacrev(lambda a, scale=1.0: a * scale)(x, scale=3.0), 3 * np.eye(2), "keyword arguments pass through")


def test_vjp_fn_can_be_called_twice_and_jacobians_have_the_answers_structure():
    x, y = mg.Variable(np.array([0.5, 1.0, 2.0])), mg.Variable(np.array([[1.0, 2.0]]))

    def f(x, y):
        return F.sin(x), F.sum(x) * y

    (a, b), vjp_fn = func.vjp(f, x, y)
    u = (np.ones(3), np.ones((1, 2)))
    first, second = vjp_fn(u), vjp_fn(u)
    close(first[0], second[0], "twice")
    close(first[0], np.cos(x.data) + 3.0, "J^T u by x")
    close(first[1], np.full((1, 2), 3.5), "J^T u by y")
    for jac in (func.jacfwd, func.jacrev):
        (J_sin, J_prod) = jac(f, argnums=(0, 1))(x, y)
        assert J_sin[0].shape == (3, 3) and J_sin[1].shape == (3, 1, 2)
        assert J_prod[0].shape == (1, 2, 3) and J_prod[1].shape == (1, 2, 1, 2)
        close(J_prod[1], np.eye(2).reshape(1, 2, 1, 2) * 3.5, f"{jac.__name__}: d(sum(x) y)/dy")


def test_results_are_differentiable_and_constants_under_no_grad():
    x = mg.Variable(np.array([0.3, 0.7]))
    _, t = func.jvp(F.sin, (x,), (np.ones(2),))
    (g,) = mg.grad(F.sum(t), x)  # d/dx cos(x) through the tangent's graph, back to the caller's x
    close(g, -np.sin(x.data), "reverse over forward, to the primal")
    with mg.no_grad():
        y, t = func.jvp(F.sin, (x,), (np.ones(2),))
        J = func.jacrev(F.sin)(x)
    assert y.creator is None and t.creator is None and J.creator is None
    close(J, np.diag(np.cos(x.data)), "jacrev under no_grad")


def test_tangents_broadcast_dtypes_and_constant_outputs():
    x = np.array([[1.0], [2.0]], dtype=np.float32)
    y, t = func.jvp(lambda a, b: a + b, (x, np.ones(3, np.float32)), (np.ones((2, 1), np.float32), [0, 1, 2]))
    assert t.shape == (2, 3) and t.dtype == np.float32  # broadcast by the walker; a list takes the primal's dtype
    close(t, [[1, 2, 3], [1, 2, 3]], "the tangents of a + b, broadcast")
    _, t = func.jvp(lambda a: mg.Variable(np.ones(2)), (np.ones(3),), (np.ones(3),))
    close(t, np.zeros(2), "an output that does not depend on the input")
    _, t = func.jvp(lambda a: a, (np.ones(3),), (2.0 * np.ones(3),))
    close(t, 2 * np.ones(3), "identity")
    _, t = func.jvp(lambda a, b: a * b, (np.ones(3), np.arange(3.0)), (None, np.ones(3)))
    close(t, np.ones(3), "None: the first argument does not move")


# ---- bad input ----
def test_bad_input_errors_name_the_function_the_argument_and_the_fix():
    x = np.ones(3)
    for transform in (func.grad, func.value_and_grad, func.jacfwd, func.jacrev, func.hessian):
        with pytest.raises(TypeError, match=rf"{transform.__name__}: f must be a function.*got int"):
            transform(3)
    with pytest.raises(TypeError, match=r"jvp: f must be a function"):
        func.jvp(None, (x,), (x,))
    with pytest.raises(TypeError, match=r"jvp: f must return a Variable or a tuple of Variables, got ndarray.*F.sin"):
        func.jvp(lambda a: np.sin(a.data), (x,), (x,))
    with pytest.raises(TypeError, match=r"jacrev: f must return a Variable.*got float"):
        func.jacrev(lambda a: 1.0)(x)
    with pytest.raises(ValueError, match=r"jvp: tangents\[1\] has shape \(2,\) but primals\[1\] has shape \(3,\)"):
        func.jvp(lambda a, b: a * b, (x, x), (x, np.ones(2)))
    with pytest.raises(TypeError, match=r"jvp: tangents\[0\] has dtype float32 but primals\[0\] has dtype float64"):
        func.jvp(F.sin, (x,), (mg.Variable(np.ones(3, np.float32)),))
    with pytest.raises(ValueError, match=r"jvp: tangents has 1 entries but primals has 2; give one per primal"):
        func.jvp(lambda a, b: a * b, (x, x), (x,))
    with pytest.raises(TypeError, match=r"jvp: primals must be a tuple.*\(primals_0,\)"):
        func.jvp(F.sin, x, (x,))
    with pytest.raises(ValueError, match=r"grad: argnums=2 is out of range for f called with 2 positional "
                                         r"argument\(s\); pass 0 to 1"):
        func.grad(lambda a, b: F.sum(a * b), argnums=2)(x, x)
    with pytest.raises(TypeError, match=r"jacfwd: argnums must be an int or a non-empty tuple of ints"):
        func.jacfwd(F.sin, argnums=[0])(x)
    with pytest.raises(ValueError, match=r"grad: f returned an output of shape \(3,\).*func.jacrev.*func.vjp"):
        func.grad(F.sin)(x)
    with pytest.raises(ValueError, match=r"vjp_fn: cotangents\[0\] has shape \(2,\) but outputs\[0\] has shape \(3,\)"):
        func.vjp(F.sin, x)[1](np.ones(2))
    with pytest.raises(TypeError, match=r"grad: with has_aux=True, f must return a pair"):
        func.grad(lambda a: F.sum(a), has_aux=True)(x)


# ---- the device the data lives on ----
@pytest.mark.usefixtures("device")
def test_jacobians_on_every_device():
    x = mg.Variable(np.array([0.2, -0.4, 0.9]))
    expected = np.diag(np.cos([0.2, -0.4, 0.9]))
    for jac in (func.jacfwd, func.jacrev):
        J = jac(F.sin)(x)
        assert type(J.data) is type(x.data)
        close(np.asarray(J), expected, jac.__name__)
    H = func.hessian(lambda a: F.sum(F.sin(a)))(x)
    close(np.asarray(H), -np.diag(np.sin([0.2, -0.4, 0.9])), "hessian")


# ---- the forward rules at the extremes ----
def test_forward_rules_are_sound_at_the_extremes():
    """No overflow, no 0 * inf: each rule in the form that stays finite where the true tangent is."""
    one = (np.ones(2),)
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        _, t = func.jvp(F.sigmoid, (np.array([-800.0, 800.0]),), one)  # from y: no e^-x
        close(t, [0.0, 0.0], "sigmoid far out")
        _, t = func.jvp(lambda a: 1e200 / a, (np.array([1e200, -1e150]),), one)  # no x1^2 = inf
        close(t, [-1e-200, -1e-100], "d(c/x) = -c/x^2 where x^2 overflows", rtol=1e-12, atol=0)
        _, t = func.jvp(lambda a, b: a ** b, (np.zeros(2), np.array([2.0, 3.0])), (np.zeros(2), np.ones(2)))
        close(t, [0.0, 0.0], "d(0^b)/db = 0: y log(x) read as 0 at x = 0, as torch does")
        x = np.array([[1000.0, 1000.0, 0.0], [-1000.0, 5.0, 5.0]])
        v = np.array([[1.0, 3.0, 7.0], [2.0, 4.0, 6.0]])
        _, t = func.jvp(lambda a: F.logsumexp(a, axis=[1]), (x,), (v,))
        close(t, [2.0, 5.0], "logsumexp: the softmax-weighted tangent, huge inputs")
        _, t = func.jvp(lambda a: F.log_softmax(a, axis=1), (x,), (v,))
        close(t, v - np.array([[2.0], [5.0]]), "log_softmax, huge inputs")


def test_pow_forward_rule_at_a_base_of_0_is_its_backward_rule_transposed():
    """At x0 = 0 the backward rule takes limits (x0^0 = 1 is flat in x0; 0^x1 with x1 >= 0 is flat in x1, and
    y log x0 = inf * -inf for x1 < 0): the forward rule must give the same derivatives, not 0 * inf = nan."""
    x0, x1 = np.array([0.0, 0.0, 0.0, 2.0]), np.array([0.0, 2.0, -1.0, 0.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        _, t0 = func.jvp(F.pow, (x0, x1), (np.ones(4), None))
        _, t1 = func.jvp(F.pow, (x0, x1), (None, np.ones(4)))
        a, b = mg.Variable(x0), mg.Variable(x1)
        g0, g1 = mg.grad(F.pow(a, b), [a, b])  # elementwise: the gradient of the sum is the derivative
    expected0 = [0.0, 0.0, -np.inf, 0.0]  # d(x0^x1)/dx0 = x1 x0^(x1 - 1), and 0 where x1 = 0
    expected1 = [0.0, 0.0, -np.inf, np.log(2.0)]  # d(x0^x1)/dx1 = y log x0, and 0 at 0^x1 for x1 >= 0
    np.testing.assert_array_equal(t0.data, expected0)
    np.testing.assert_array_equal(t1.data, expected1)
    np.testing.assert_array_equal(g0.data, expected0)
    np.testing.assert_array_equal(g1.data, expected1)


def test_the_nth_derivative_of_one_over_x_by_nested_forward_mode():
    """d^n/dx^n 1/x = (-1)^n n! / x^(n+1): n forward passes nested, against the closed form."""
    import math

    def derivative(f):
        return lambda x: func.jvp(f, (x,), (1.0,))[1]

    f, x = (lambda x: 1.0 / x), 0.7
    for n in range(1, 7):
        f = derivative(f)
        close(f(mg.Variable(x)), (-1) ** n * math.factorial(n) / x ** (n + 1), f"order {n}", rtol=1e-12, atol=0)


def test_hvp_of_a_vector_valued_f_names_hvp():
    with pytest.raises(ValueError, match=r"^hvp: f returned an output of shape \(3,\)"):
        func.hvp(lambda v: v * v, (np.ones(3),), (np.ones(3),))


def test_vjp_fn_reads_grad_mode_when_it_runs():
    x = mg.Variable(np.array([0.5, 1.0]), requires_grad=True)
    _, vjp_fn = func.vjp(F.sin, x)
    with mg.no_grad():
        (g,) = vjp_fn(np.ones(2))
    assert g.creator is None
    np.testing.assert_allclose(g.data, np.cos([0.5, 1.0]))
    (g,) = vjp_fn(np.ones(2))  # recording on again: the gradient is a graph, differentiable by x
    (h,) = mg.grad(F.sum(g), x)
    np.testing.assert_allclose(h.data, -np.sin([0.5, 1.0]), rtol=1e-15)


def test_vjp_fn_differentiable_by_its_cotangent_alone():
    _, vjp_fn = func.vjp(F.sin, np.array([0.5, 1.0]))
    u = mg.Variable(np.array([2.0, 3.0]), requires_grad=True)
    (g,) = vjp_fn(u)
    (h,) = mg.grad(F.sum(g), u)  # d/du sum(cos(x) u) = cos(x)
    np.testing.assert_allclose(h.data, np.cos([0.5, 1.0]), rtol=1e-15)


TRANSFORMS_OF_ARRAYS = {  # NumPy arguments, constant parameters: nothing can differentiate the results
    "grad": lambda f, x: func.grad(f)(x),
    "value_and_grad": lambda f, x: func.value_and_grad(f)(x)[1],
    "vjp value": lambda f, x: func.vjp(f, x)[0],
    "vjp_fn": lambda f, x: func.vjp(f, x)[1](1.0)[0],
    "jacrev": lambda f, x: func.jacrev(f)(x),
    "linearize value": lambda f, x: func.linearize(f, x)[0],
    "jvp tangent": lambda f, x: func.jvp(f, (x,), (np.ones_like(x),))[1],
    "jacfwd of grad": lambda f, x: func.jacfwd(func.grad(f))(x),
    "hessian": lambda f, x: func.hessian(f)(x),
    "jacrev of jacrev": lambda f, x: func.jacrev(func.jacrev(f))(x),
    "grad of a jvp": lambda f, x: func.grad(lambda z: func.jvp(f, (z,), (np.ones_like(x),))[1])(x),
}


@pytest.mark.parametrize("name", list(TRANSFORMS_OF_ARRAYS))
def test_a_transform_of_arrays_gives_constants_and_a_descent_loop_holds_no_graph(name):
    """As torch.func's and JAX's: a graph behind such a result could only hold memory; in a loop
    w = w - lr * grad(f)(w), it would chain every step's graph to the next."""
    W = np.random.default_rng(3).standard_normal((4, 4))
    f = lambda w: F.sum(F.tanh(F.matmul(W, w)) ** 2)  # noqa: E731
    result = TRANSFORMS_OF_ARRAYS[name](f, np.linspace(-1.0, 1.0, 4))
    assert result.creator is None and not result.requires_grad, name
    w = np.linspace(-1.0, 1.0, 4)
    for _ in range(3):
        w = w - 0.1 * func.grad(f)(w)
    assert w.creator is None


@pytest.mark.parametrize("name", list(TRANSFORMS_OF_ARRAYS))
def test_a_transform_stays_differentiable_by_a_parameter_f_closes_over(name):
    """A closed-over W that requires grad: d/dW of the result, against central differences."""
    rng = np.random.default_rng(4)
    W0, x = rng.standard_normal((4, 4)), rng.standard_normal(4)

    def value(Wv):
        out = TRANSFORMS_OF_ARRAYS[name](lambda w: F.sum(F.tanh(F.matmul(Wv, w)) ** 2), x)
        return F.sum(out * np.arange(1.0, out.size + 1).reshape(out.shape))

    W = mg.Variable(W0, requires_grad=True)
    (dW,) = mg.grad(value(W), W)
    h, numeric = 1e-6, np.empty_like(W0)
    for idx in np.ndindex(*W0.shape):
        E = np.zeros_like(W0)
        E[idx] = h
        numeric[idx] = (value(mg.Variable(W0 + E)).data - value(mg.Variable(W0 - E)).data) / (2 * h)
    np.testing.assert_allclose(dW.data, numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("x_shape, y_shape", [((2,), (0,)), ((0,), (2,)), ((0,), (0,)), ((3,), (2,))])
def test_a_jacobians_dtype_does_not_depend_on_whether_it_has_elements(x_shape, y_shape):
    # jacrev's rows are gradients, of x's dtype; jacfwd's columns are tangents, of y's (as torch.func's):
    # so too when x or y has no element, and no row or column is made at all
    def f(x):  # float32 x -> float64 y of y_shape
        return F.broadcast_to(F.sum(F.cast(x, np.float64)) * 2.0, y_shape)

    x = np.ones(x_shape, dtype=np.float32)
    assert func.jacrev(f)(x).dtype == np.float32
    assert func.jacfwd(f)(x).dtype == np.float64
    assert func.jacrev(f)(x).shape == func.jacfwd(f)(x).shape == y_shape + x_shape


def test_hessian_of_several_outputs_by_several_arguments_has_torch_funcs_structure():
    # h[i][j][k] = d2 y_i / dx_j dx_k (jacrev of several outputs by several arguments is nested: one
    # tuple per output, which jacfwd over it must take apart and put together again)
    def f(x, y):
        return F.sum(x * y), F.sin(x * x * y)

    x, y = np.array([0.3, -0.8]), np.array([1.5, 0.4])
    h = func.hessian(f, argnums=(0, 1))(x, y)
    assert len(h) == 2 and all(len(row) == 2 for row in h) and h[1][0][1].shape == (2, 2, 2)
    close(h[0][0][1], np.eye(2), "d2 sum(x y)/dx dy")
    close(h[0][1][1], np.zeros((2, 2)), "d2 sum(x y)/dy2")
    u = x * x * y  # y_1 = sin(u): d2 y_1/dx2 = -sin(u) (2 x y)^2 + cos(u) 2 y, on the diagonal
    close(h[1][0][0], np.diag(-np.sin(u) * (2 * x * y) ** 2 + np.cos(u) * 2 * y)[:, :, None] * np.eye(2)[:, None, :],
          "d2 sin(x^2 y)/dx2")


def test_jacfwd_of_a_function_returning_one_variable_twice():
    # each output's tangents are read before any is taken off its node: the second y is as the first
    def f(x):
        y = F.sin(x)
        return y, y, F.sum(y)

    x = np.array([0.5, 1.0])
    fwd, rev = func.jacfwd(f)(x), func.jacrev(f)(x)
    for k in range(3):
        close(fwd[k], rev[k], f"jacfwd vs jacrev, output {k}")
    close(fwd[1], np.diag(np.cos(x)), "the second y")
    fwd = func.jacfwd(lambda x, w: (w, x * w, w), argnums=(0, 1))(x, np.array([2.0, 3.0]))
    close(fwd[2][1], np.eye(2), "d w/dw, w returned twice")


def test_the_transforms_errors_name_the_call_the_caller_made():
    # hvp's tangents are hvp's (not the jvp it runs), vjp_fn's cotangents are vjp_fn's whichever method
    # computes it, and cotangents are counted against f's outputs, not its arguments
    x = np.array([1.0, 2.0])

    def loss(a):
        return F.sum(F.sin(a))

    with pytest.raises(ValueError, match=r"hvp: tangents\[0\] has shape \(3,\) but primals\[0\] has shape \(2,\)"):
        func.hvp(loss, (x,), (np.ones(3),))
    with pytest.raises(ValueError, match=r"hvp: tangents has 2 entries but primals has 1"):
        func.hvp(loss, (x,), (x, x))
    with pytest.raises(TypeError, match=r"hvp: tangents must be a tuple with one entry per argument of f"):
        func.hvp(loss, (x,), x)
    for method in ("backward", "transpose"):
        _, vjp_fn = func.vjp(lambda a: (F.sin(a), F.cos(a)), x, method=method)
        with pytest.raises(ValueError, match=r"vjp_fn: cotangents\[1\] has shape \(3,\) but outputs\[1\] has "
                                             r"shape \(2,\)"):
            vjp_fn((np.ones(2), np.ones(3)))
        with pytest.raises(ValueError, match=r"vjp_fn: cotangents has 3 entries but outputs has 2"):
            vjp_fn((x, x, x))
        with pytest.raises(TypeError, match=r"vjp_fn: cotangents must be a tuple with one entry per output of f"):
            vjp_fn(x)
    f_t = func.linear_transpose(func.linearize(F.sin, x)[1], x)
    with pytest.raises(ValueError, match=r"f_t: cotangents\[0\] has shape \(3,\) but f_lin's outputs\[0\] has shape"):
        f_t(np.ones(3))


def test_a_numpy_integer_argnums_is_an_int():
    # argnums=np.int64(0), as from np.argmax, asks for one argument: one gradient, one Jacobian, not a tuple
    x = np.array([1.0, 2.0])
    g = func.grad(lambda a: F.sum(a * a), argnums=np.int64(0))(x)
    close(g, 2 * x, "grad")
    for jac in (func.jacrev, func.jacfwd, func.hessian):
        assert isinstance(jac(lambda a: F.sum(a * a * a), argnums=np.int32(0))(x), mg.Variable), jac.__name__


def test_vjp_fn_takes_a_one_entry_list_of_the_outputs_shape_as_the_cotangent_itself():
    _, vjp_fn = func.vjp(lambda z: F.reshape(z * 2.0, (1, 3)), np.ones(3))
    for u in ([[1.0, 2.0, 3.0]], np.array([[1.0, 2.0, 3.0]]), (np.array([[1.0, 2.0, 3.0]]),)):
        (g,) = vjp_fn(u)
        np.testing.assert_array_equal(g.data, [2.0, 4.0, 6.0])
    _, vjp_fn = func.vjp(lambda z: F.sum(z * 2.0, keepdims=True), np.ones(3))  # output of shape (1,)
    for u in ([3.0], (np.array([3.0]),)):
        np.testing.assert_array_equal(vjp_fn(u)[0].data, [6.0, 6.0, 6.0])


@pytest.mark.parametrize("call", [
    lambda x: func.vjp(F.sin, (x,)),
    lambda x: func.jvp(F.sin, ((x,),), ((x,),)),
    lambda x: func.jvp(F.sin, ([x, x],), (np.ones((2, 3)),)),
], ids=["vjp given a tuple", "jvp given a nested tuple", "jvp given a list of arrays"])
def test_a_tuple_of_arrays_as_one_primal_is_refused_not_stacked(call):
    with pytest.raises(TypeError, match=r"primals\[0\] is a (tuple|list) of arrays or Variables.*np.stack"):
        call(np.ones(3))
    np.testing.assert_array_equal(func.jvp(F.sin, ([[0.0, 0.0]],), ([[1.0, 2.0]],))[1].data, [[1.0, 2.0]])


@pytest.mark.parametrize("where, call", [
    ("jvp", lambda f, x: func.jvp(f, (x, x), (x, x))),
    ("grad", lambda f, x: func.grad(f)(x, x)),
    ("jacrev", lambda f, x: func.jacrev(f)(x, x)),
    ("vjp", lambda f, x: func.vjp(f, x, x)),
])
def test_an_f_given_the_wrong_number_of_arguments_is_named_by_the_transform(where, call):
    with pytest.raises(TypeError, match=rf"^{where}: f cannot take the 2 argument\(s\) given"):
        call(lambda a: F.sum(F.sin(a)), np.ones(3))
    with pytest.raises(TypeError, match=r"^Add: cannot hold data of dtype <U4"):  # (one from inside f: f's own)
        func.jvp(lambda a: F.sum(a) + "text", (np.ones(3),), (np.ones(3),))


def test_newtons_method_with_hessian_holds_no_graph_from_step_to_step():
    f = lambda w: F.sum(F.exp(w) - 2.0 * w + 0.5 * w * w)  # noqa: E731  (minimum where e^w + w = 2)
    w = np.zeros(3)
    for _ in range(8):
        H, g = func.hessian(f)(w), func.grad(f)(w)
        w = w - np.linalg.solve(H.data, g.data)
        assert H.creator is None and g.creator is None
    np.testing.assert_allclose(np.exp(w) + w, 2.0, rtol=1e-12)


def test_nested_jvps_inside_no_grad_keep_the_inner_tangent_for_the_outer_one():
    f = lambda x: F.sum(x ** 4)  # noqa: E731
    x = np.array([0.7, 0.3])
    with mg.no_grad():
        t = func.jvp(lambda z: func.jvp(f, (z,), (np.ones(2),))[1], (x,), (np.ones(2),))[1]
    np.testing.assert_allclose(t.data, np.sum(12 * x ** 2), rtol=1e-14)
