"""Numerical derivatives: the independent answer every backward rule is checked against.

Central differences: for a small step h,

    df/dx_k  ~  (f(x + h e_k) - f(x - h e_k)) / (2h),

with an error of order h^2 (the h^1 terms of the two Taylor series cancel).
``gradcheck`` compares the analytic derivatives of minigrad with these, to
any order: the n-th derivative is checked as the numerical derivative of
the (n-1)-th, which minigrad computes analytically.
"""

import inspect

import numpy as np

from minigrad import func
from minigrad.autodiff import grad
from minigrad.support.config import enable_grad, no_grad
from minigrad.cuda import as_numpy
from minigrad.core.variable import Variable
from minigrad.support.numpy_interop import as_float_array, data_of


def numerical_grad(f, inputs, grad_output=None, eps=1e-6):
    """Central-difference gradients of sum(f(*inputs) * grad_output), one array per input.

    ``f`` maps Variables to a Variable; ``inputs`` is a Variable, an array,
    or a list of them. ``grad_output`` defaults to ones (the plain sum).
    """
    single = not isinstance(inputs, (list, tuple))
    arrays = _checked(f, inputs, eps, "numerical_grad")
    go = None if grad_output is None else as_numpy(data_of(grad_output))

    def value():
        with no_grad():
            y = as_numpy(_call(f, [Variable(a) for a in arrays], "numerical_grad").data)
        if go is None:
            return float(np.sum(y))
        try:
            return float(np.sum(y * go))
        except ValueError as e:
            raise ValueError(f"numerical_grad: grad_output of shape {go.shape} does not fit the output of f, "
                             f"of shape {y.shape}; pass an array of that shape, or None for ones") from e

    grads = []
    for a in arrays:
        g = np.zeros_like(a)
        flat, gflat = a.reshape(-1), g.reshape(-1)
        for k in range(flat.size):
            old = flat[k]
            flat[k] = old + eps
            up = value()
            flat[k] = old - eps
            down = value()
            flat[k] = old
            gflat[k] = (up - down) / (2 * eps)
        grads.append(g)
    return grads[0] if single else grads


def gradcheck(f, inputs, order=1, eps=1e-6, atol=1e-5, rtol=1e-4, seed=0, modes=("rev", "fwd")):
    """Check the derivatives of ``f`` at ``inputs`` against central differences, orders 1..``order``.

    ``modes`` says which to check, as HIPS autograd's ``check_grads``: "rev"
    (reverse mode: ``grad``) and "fwd" (forward mode: ``func.jvp``, see
    ``_check_forward``). In reverse mode the output of ``f`` and every gradient
    are projected on fixed random directions (seeded), so one scalar stands
    for each order. Raises
    AssertionError naming the order, the input, the worst element, the two
    values and their difference; returns True when every order agrees.
    """
    arrays = _checked(f, inputs, eps, "gradcheck")
    if isinstance(order, bool) or not isinstance(order, int) or order < 1:
        raise ValueError(f"gradcheck: order must be an int >= 1 (the highest derivative to check), got {order!r}")
    if isinstance(modes, str) or not modes or not set(modes) <= {"rev", "fwd"}:
        raise ValueError(f"gradcheck: modes must be a tuple of 'rev' and/or 'fwd', got {modes!r}")
    rng = np.random.default_rng(seed)
    directions = []  # directions[m] projects the m-th derivative to a scalar

    def level(m, xs):
        """A scalar whose gradient is the (m+1)-th derivative, projected."""
        y = _call(f, xs, "gradcheck")
        if len(directions) == 0:
            directions.append([rng.standard_normal(y.shape)])
        s = (y * directions[0][0]).sum()
        for k in range(1, m + 1):
            gs = grad(s, xs, create_graph=True, materialize_grads=True)
            if len(directions) <= k:
                directions.append([rng.standard_normal(x.shape) for x in xs])
            s = sum(((g * v).sum() for g, v in zip(gs, directions[k])), start=0.0)
            if not isinstance(s, Variable):
                s = Variable(s)
        return s

    if "rev" in modes:
        for m in range(order):
            xs = [Variable(a.copy()) for a in arrays]
            s = level(m, xs)
            analytic = [as_numpy(g.data) for g in grad(s, xs, materialize_grads=True)]
            numeric = numerical_grad(lambda *vs, m=m: _with_grad(level, m, vs), [a.copy() for a in arrays], eps=eps)
            for i, (a, n) in enumerate(zip(analytic, numeric)):
                _assert_close(a, n, atol, rtol,
                              f"derivative of order {m + 1} with respect to input {i} differs at index")
    if "fwd" in modes:
        _check_forward(f, arrays, order, eps, atol, rtol, seed)
    return True


def _check_forward(f, arrays, order, eps, atol, rtol, seed):
    """Forward mode, orders 1..``order``, against central differences.

    With seeded random directions v_1, v_2, ..., the m-th derivative along
    them is D_m = jvp(D_(m-1), x, v_m), D_0 = f: m forward passes nested, so
    the forward rules are differentiated by forward mode. D_m is compared
    element by element with (D_(m-1)(x + h v_m) - D_(m-1)(x - h v_m)) / (2h),
    with v_m moving one input at a time, so that a mismatch names the input.
    """
    rng = np.random.default_rng([seed, 1])  # a stream of its own: the reverse check draws what it always drew
    directions = [[rng.standard_normal(a.shape) for a in arrays] for _ in range(order)]

    def derivative(m, xs):
        if m == 0:
            return _call(f, xs, "gradcheck")
        vs = tuple(Variable(v, requires_grad=False) for v in directions[m - 1])
        return func.jvp(lambda *ys: derivative(m - 1, ys), tuple(xs), vs)[1]

    for m in range(1, order + 1):
        for i in range(len(arrays)):
            xs = [Variable(a.copy()) for a in arrays]
            alone = [v if k == i else np.zeros_like(v) for k, v in enumerate(directions[m - 1])]
            try:
                analytic = func.jvp(lambda *ys, m=m: derivative(m - 1, ys), tuple(xs),
                                    tuple(Variable(v, requires_grad=False) for v in alone))[1]
            except NotImplementedError as e:
                raise NotImplementedError(f"gradcheck, forward mode: {e}; or check reverse mode only: "
                                          "gradcheck(..., modes=('rev',))") from e
            with no_grad():
                up, down = (derivative(m - 1, [Variable(a + s * eps * v) for a, v in zip(arrays, alone)])
                            for s in (1, -1))
            a, n = as_numpy(analytic.data), (as_numpy(up.data) - as_numpy(down.data)) / (2 * eps)
            _assert_close(a, n, atol, rtol, f"derivative of order {m} in forward mode (jvp), input {i} moving, "
                          "differs at output index")


def _assert_close(a, n, atol, rtol, what):
    """AssertionError naming ``what``, the worst element, both values and their difference, unless close."""
    err = np.abs(a - n) - (atol + rtol * np.abs(n))
    if err.size and err.max() > 0:
        k = np.unravel_index(int(np.argmax(err)), err.shape) if err.ndim else ()
        raise AssertionError(
            f"gradcheck: {what} {tuple(int(j) for j in k)}: analytic {a[k]:.10g}, numerical {n[k]:.10g}, "
            f"difference {abs(a[k] - n[k]):.3g} (atol={atol}, rtol={rtol})"
        )


def _checked(f, inputs, eps, where):
    """Inputs (a Variable, an array, or a list of them) as float64 NumPy copies, once f and eps are checked."""
    if not callable(f):
        raise TypeError(f"{where}: f must be a function of Variables returning a Variable, got {type(f).__name__}")
    if not eps > 0:
        raise ValueError(f"{where}: eps={eps!r} must be a small positive step, e.g. 1e-6")
    if not isinstance(inputs, (list, tuple)):
        inputs = [inputs]
    return [np.array(as_numpy(as_float_array(data_of(x), where=f"{where}: inputs[{i}]")), dtype=np.float64)
            for i, x in enumerate(inputs)]


def _call(f, xs, where):
    """f(*xs), checked: a TypeError that says how to pass the inputs when f takes another number of them."""
    try:
        y = f(*xs)
    except TypeError as e:
        try:
            inspect.signature(f).bind(*xs)
        except TypeError:  # f does not take len(xs) inputs: the error is in the call, not inside f
            raise TypeError(f"{where}: f cannot take the {len(xs)} input(s) given ({e}); pass one input per "
                            f"argument of f, as a list: {where}(f, [x0, x1, ...])") from e
        except ValueError:  # (no signature to read: a builtin)
            pass
        raise
    if not isinstance(y, Variable):
        raise TypeError(f"{where}: f must return a Variable, got {type(y).__name__}; compute it with minigrad's "
                        "functions (F.sin, F.matmul, ...), not NumPy's")
    return y


def _with_grad(level, m, vs):
    """level() at new points: it builds graphs, so it runs with recording on."""
    with enable_grad():
        xs = [Variable(v.data) for v in vs]
        return level(m, xs)


