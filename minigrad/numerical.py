"""Numerical derivatives: the independent answer every backward rule is checked against.

Central differences: for a small step h,

    df/dx_k  ~  (f(x + h e_k) - f(x - h e_k)) / (2h),

with an error of order h^2 (the h^1 terms of the two Taylor series cancel).
``gradcheck`` compares the analytic derivatives of minigrad with these, to
any order: the n-th derivative is checked as the numerical derivative of
the (n-1)-th, which minigrad computes analytically.

The step. Rounding makes f(x + h) - f(x - h) wrong by about eps |f|, so the
error of a central difference is about h^2 |f'''| / 6 + eps |f| / h, smallest
near h = eps^(1/3) = 6.1e-6 for a function of unit scale (float64's eps).
Far from 0 the points x +- h are themselves rounded to a multiple of x's
spacing (1.9e-9 at 1e7, 1.2e-7 at 1e9), and so is everything f computes at
that scale; so by default each element gets its own step

    h_k = H * max(1, H |x_k|),   H = eps^(1/3):

H up to |x_k| = 1/H = 1.6e5, then H^2 |x_k| (about 1.6e5 spacings of x_k or
more: its rounding costs a relative error of about H). The step grows with x
only as much as rounding asks, not as H |x_k| (scipy's default): sin at 1e7
would see its step reach 60, ten periods. A function of unit scale far out
(sin at 1e9, where h_k = 0.037 and its curvature costs h^2/6) needs a given
step, ``eps=``.

Near 0 the other way round: a function singular at 0 (1/x, log, sqrt) curves on the scale of x itself,
and its truncation error, relative to f', is about (h / x)^2: 1e-3 for log at x = 1e-4 with h = H. So a
nonzero x_k's step is at most |x_k| / 1000 (a relative error of about 1e-6), but not under NEAR = 1e-8,
where rounding would outgrow it (closer to a singularity than about 1e-5, pass ``eps=``). At x_k = 0
exactly the step stays H: 0 says nothing of the scale f varies on.

Each difference is divided by how far the two points really
are apart, (x_k + h_k) - (x_k - h_k) as computed, not 2 h_k, and is taken
output by output before the outputs are summed: an output that x_k does not
move then differs by exactly 0, and the rounding of the others does not leak
into x_k's derivative.
"""

import numpy as np

from minigrad import func
from minigrad.autodiff import grad
from minigrad.support.config import enable_grad, no_grad
from minigrad.cuda import as_numpy
from minigrad.core.variable import Variable
from minigrad.support.func_arguments import called
from minigrad.support.numpy_interop import as_float_array, data_of

STEP = float(np.finfo(np.float64).eps) ** (1 / 3)  # H: the default step at unit scale, 6.1e-6
NEAR = 1e-8  # the least default step, near 0: rounding then costs about eps |f| / NEAR = 2e-8 |f|
FAST_DIRECTIONS = 2  # random directions per order in gradcheck(..., fast=True)


def numerical_grad(f, inputs, grad_output=None, eps=None):
    """Central-difference gradients of sum(f(*inputs) * grad_output), one array per input.

    ``f`` maps Variables to a Variable; ``inputs`` is a Variable, an array,
    or a list of them, checked in float64 (float32 inputs are converted).
    ``grad_output`` defaults to ones (the plain sum).

    ``eps=None`` (the default) gives each element x_k the step
    STEP * max(1, STEP |x_k|), at most |x_k| / 1000 near 0 but not under NEAR
    (see the module's docstring); a number gives every
    element that step, as an absolute distance. Either way each difference is
    divided by the distance the two points really are apart.

    Cost: 2 evaluations of f per input element, 2n for n elements in all.
    """
    single = not isinstance(inputs, (list, tuple))
    arrays = _checked(f, inputs, eps, "numerical_grad")
    go = None if grad_output is None else as_numpy(data_of(grad_output))

    def value():
        with no_grad():
            y = as_numpy(_call(f, [Variable(a) for a in arrays], "numerical_grad").data)
        if go is None:
            return y  # (summed after the difference: see the module's docstring)
        try:
            return y * go
        except ValueError as e:
            raise ValueError(f"numerical_grad: grad_output of shape {go.shape} does not fit the output of f, "
                             f"of shape {y.shape}; pass an array of that shape, or None for ones") from e

    grads = [_central_differences(value, a, _steps(a, eps)) for a in arrays]
    return grads[0] if single else grads


def _central_differences(value, a, steps):
    """d value() / d a, element by element, moving ``a`` in place by ``steps`` and putting it back."""
    g = np.zeros_like(a)
    flat, gflat, hflat = a.reshape(-1), g.reshape(-1), steps.reshape(-1)
    for k in range(flat.size):
        old = flat[k]
        flat[k] = up_x = old + hflat[k]
        up = value()
        flat[k] = down_x = old - hflat[k]
        down = value()
        flat[k] = old
        gflat[k] = np.sum(up - down) / (up_x - down_x)  # output by output; the distance as rounded, not 2 h
    return g


def _steps(a, eps):
    """The step of each element of ``a``: ``eps`` everywhere, or, when it is None, STEP * max(1, STEP |a|),
    at most |a| / 1000 for a nonzero a near 0, but not under NEAR (see the module's docstring)."""
    if eps is not None:
        return np.full(a.shape, float(eps))
    h = STEP * np.maximum(1.0, STEP * np.abs(a))
    return np.where(a != 0, np.minimum(h, np.maximum(np.abs(a) / 1000, NEAR)), h)


def _moved(arrays, directions, eps):
    """The points x + d and x - d (d = step * direction), the direction really taken, and its scale 2h.

    The direction really taken is ((x + d) - (x - d)) / 2h, as rounded: the direction itself for a given
    step; by default about (step / h) * direction, h = STEP, or the largest step that moves an element if
    every one is under STEP (near 0): so the direction taken is never shorter than the one drawn, and
    atol keeps its meaning.
    """
    steps = [_steps(a, eps) for a in arrays]
    ups = [a + h * v for a, h, v in zip(arrays, steps, directions)]
    downs = [a - h * v for a, h, v in zip(arrays, steps, directions)]
    moving = [float(h[v != 0].max()) for h, v in zip(steps, directions) if np.any(v != 0)]
    scale = 2 * (min(STEP, max(moving, default=STEP)) if eps is None else float(eps))
    return ups, downs, [(u - d) / scale for u, d in zip(ups, downs)], scale


def gradcheck(f, inputs, order=1, eps=None, atol=1e-5, rtol=1e-4, seed=0, modes=("rev", "fwd"), fast=False):
    """Check the derivatives of ``f`` at ``inputs`` against central differences, orders 1..``order``.

    ``modes`` says which to check, as HIPS autograd's ``check_grads``: "rev"
    (reverse mode: ``grad``) and "fwd" (forward mode: ``func.jvp``, see
    ``_check_forward``). In reverse mode the output of ``f`` and every gradient
    are projected on fixed random directions (seeded), so one scalar stands
    for each order. ``eps`` is the step, as in ``numerical_grad``: None scales
    it to each element. Inputs are checked in float64, float32 ones converted
    (exactly), so the default step is float64's. An f that computes in float32
    itself (``F.cast``) is about 1e-3 off with that step; when such an f fails,
    the message says so and gives float32's step, eps=5e-3.

    A value and its reference agree within ``atol + rtol * |reference|``; a NaN
    or an infinity agrees only with the same NaN or infinity.

    ``fast=True`` projects the inputs too, as PyTorch's fast gradcheck: along
    FAST_DIRECTIONS seeded random directions v of all the inputs together, it
    compares u^T J v computed by the mode under test (reverse: <vjp(u), v>;
    forward: <u, jvp(v)>) with the central difference of <u, f(x + h v)>. It
    names no element, and misses an error e in one entry of J when
    |u_i e v_k| stays under the tolerance, which grows with |u^T J v|, that is
    about with the square root of the number of entries: one entry off by
    2e-4 of its size, in a 50-element input, can pass (and does, in
    tests/test_numerical.py) where ``fast=False`` catches it. Without
    ``fast``, every element of the gradient is compared.

    Cost, in evaluations of f, per order, for n input elements in k input
    arrays (counted by tests/test_numerical.py):

    - reverse mode: 2n + 1 (the gradient, then 2 per element); fast: 2 * FAST_DIRECTIONS + 1 = 5;
    - forward mode: 3k (a jvp and 2 points per input moved); fast: 3 * FAST_DIRECTIONS = 6.

    Raises AssertionError naming the order, the input, the worst element, the
    two values and their difference; returns True when every order agrees.
    """
    arrays = _checked(f, inputs, eps, "gradcheck")
    if isinstance(order, bool) or not isinstance(order, int) or order < 1:
        raise ValueError(f"gradcheck: order must be an int >= 1 (the highest derivative to check), got {order!r}")
    if isinstance(modes, str) or not modes or not set(modes) <= {"rev", "fwd"}:
        raise ValueError(f"gradcheck: modes must be a tuple of 'rev' and/or 'fwd', got {modes!r}")
    tol = (atol, rtol)
    try:
        if "rev" in modes:
            check = _check_reverse_fast if fast else _check_reverse
            check(_projections(f, seed), arrays, order, eps, tol, np.random.default_rng([seed, 2]))
        if "fwd" in modes:
            _check_forward(f, arrays, order, eps, tol, seed, fast)
    except AssertionError as e:
        raise AssertionError(f"{e}{_precision_hint(f, arrays, eps)}") from None
    return True


def _precision_hint(f, arrays, eps):
    """How to check an f that computes in less than float64 (a cast inside it), or nothing."""
    with no_grad():
        dtype = np.dtype(_call(f, [Variable(a) for a in arrays], "gradcheck").dtype)
    if dtype.kind != "f" or dtype.itemsize >= 8:
        return ""
    h = float(np.finfo(dtype).eps) ** (1 / 3)
    return (f"; f returns {dtype.name}: its rounding ({np.finfo(dtype).eps:.2g}) needs a larger step than "
            f"eps={eps!r}, about its eps^(1/3): gradcheck(..., eps={h:.0e}), and perhaps rtol=1e-3")


def _projections(f, seed):
    """level(m, xs): a scalar whose gradient is the (m+1)-th derivative of f, projected on seeded directions."""
    rng = np.random.default_rng(seed)
    directions = []  # directions[m] projects the m-th derivative to a scalar

    def level(m, xs, terms=False):
        """``terms``: the products whose sum it is, unsummed (central differences take them one by one)."""
        y = _call(f, xs, "gradcheck")
        if len(directions) == 0:
            directions.append([rng.standard_normal(y.shape)])
        if terms and m == 0:
            return y * directions[0][0]
        s = (y * directions[0][0]).sum()
        for k in range(1, m + 1):
            gs = grad(s, xs, create_graph=True, materialize_grads=True)
            if len(directions) <= k:
                directions.append([rng.standard_normal(x.shape) for x in xs])
            products = [g * v for g, v in zip(gs, directions[k])]
            if terms and k == m:
                return Variable(np.concatenate([as_numpy(p.data).reshape(-1) for p in products]))
            s = sum((p.sum() for p in products), start=0.0)
            if not isinstance(s, Variable):
                s = Variable(s)
        return s

    return level


def _check_reverse(level, arrays, order, eps, tol, rng):
    """Every element of each projected gradient against numerical_grad of the level below."""
    for m in range(order):
        xs = [Variable(a.copy()) for a in arrays]
        analytic = [as_numpy(g.data) for g in grad(level(m, xs), xs, materialize_grads=True)]
        numeric = numerical_grad(lambda *vs, m=m: _with_grad(level, m, vs, terms=True), [a.copy() for a in arrays],
                                 eps=eps)
        for i, (a, n) in enumerate(zip(analytic, numeric)):
            _assert_close(a, n, *tol, f"derivative of order {m + 1} with respect to input {i} differs at index")


def _check_reverse_fast(level, arrays, order, eps, tol, rng):
    """<gradient of the projected level, v> against the central difference of the level along v."""
    for m in range(order):
        xs = [Variable(a.copy()) for a in arrays]
        gs = [as_numpy(g.data) for g in grad(level(m, xs), xs, materialize_grads=True)]
        for j in range(FAST_DIRECTIONS):
            ups, downs, moved, scale = _moved(arrays, [_direction(rng, a.shape) for a in arrays], eps)
            analytic = sum(float(np.sum(g * v)) for g, v in zip(gs, moved))
            up, down = (as_numpy(_with_grad(level, m, ps, terms=True).data) for ps in (ups, downs))
            what = f"derivative of order {m + 1}, reverse mode (vjp)"
            _assert_fast(analytic, float(np.sum(up - down)) / scale, tol, what, j)


def _check_forward(f, arrays, order, eps, tol, seed, fast):
    """Forward mode, orders 1..``order``, against central differences.

    With seeded random directions v_1, v_2, ..., the m-th derivative along
    them is D_m = jvp(D_(m-1), x, v_m), D_0 = f: m forward passes nested, so
    the forward rules are differentiated by forward mode. D_m is compared
    element by element with (D_(m-1)(x + h v_m) - D_(m-1)(x - h v_m)) / (2h),
    with v_m moving one input at a time, so that a mismatch names the input
    (the step h scaled to each element as in ``numerical_grad``, and the
    direction the one really taken). With ``fast``, v_m moves every input and
    both sides are projected on a random u.
    """
    rng = np.random.default_rng([seed, 1])  # a stream of its own: the reverse check draws what it always drew
    directions = [[_direction(rng, a.shape) for a in arrays] for _ in range(order)]

    def derivative(m, xs):
        if m == 0:
            return _call(f, xs, "gradcheck")
        vs = tuple(Variable(v, requires_grad=False) for v in directions[m - 1])
        return func.jvp(lambda *ys: derivative(m - 1, ys), tuple(xs), vs)[1]

    for m in range(1, order + 1):
        if fast:
            _check_forward_fast(derivative, m, arrays, eps, tol, np.random.default_rng([seed, 3, m]))
            continue
        for i in range(len(arrays)):
            alone = [v if k == i else np.zeros_like(v) for k, v in enumerate(directions[m - 1])]
            a, up, down, scale = _jvp_and_differences(derivative, m, arrays, alone, eps)
            _assert_close(a, (up - down) / scale, *tol, f"derivative of order {m} in forward mode (jvp), "
                          f"input {i} moving, differs at output index")


def _check_forward_fast(derivative, m, arrays, eps, tol, rng):
    """<u, jvp(D_(m-1), x, v)> against <u, central difference of D_(m-1) along v>, v moving every input."""
    for j in range(FAST_DIRECTIONS):
        a, up, down, scale = _jvp_and_differences(derivative, m, arrays,
                                                  [_direction(rng, x.shape) for x in arrays], eps)
        u = rng.standard_normal(a.shape)
        _assert_fast(float(np.sum(u * a)), float(np.sum(u * (up - down))) / scale, tol,
                     f"derivative of order {m}, forward mode (jvp)", j)


def _jvp_and_differences(derivative, m, arrays, directions, eps):
    """jvp of D_(m-1) along the direction really taken, D_(m-1) at both moved points, and their scale."""
    ups, downs, moved, scale = _moved(arrays, directions, eps)
    xs = [Variable(a.copy()) for a in arrays]
    try:
        analytic = func.jvp(lambda *ys: derivative(m - 1, ys), tuple(xs),
                            tuple(Variable(v, requires_grad=False) for v in moved))[1]
    except NotImplementedError as e:
        raise NotImplementedError(f"gradcheck, forward mode: {e}; or check reverse mode only: "
                                  "gradcheck(..., modes=('rev',))") from e
    with no_grad():
        up, down = (as_numpy(derivative(m - 1, [Variable(p) for p in ps]).data) for ps in (ups, downs))
    return as_numpy(analytic.data), up, down, scale


def _assert_fast(analytic, numeric, tol, what, j):
    """One projected derivative against its central difference: the direction named, and how to find the element."""
    _assert_close(np.array(analytic), np.array(numeric), *tol, f"fast: {what}, u^T J v along random direction {j} "
                  "(of those the seed draws), differs", "; gradcheck(..., fast=False) compares every element and "
                  "names the one that differs")


def _assert_close(a, n, atol, rtol, what, hint=""):
    """AssertionError naming ``what``, the worst element, both values and their difference, unless close.

    A NaN or an infinity on one side agrees only with the same on the other (NaN with NaN, inf with inf):
    it is reported before any finite difference.
    """
    finite = np.isfinite(a) & np.isfinite(n)
    with np.errstate(invalid="ignore"):
        err = np.where(finite, np.abs(a - n) - (atol + rtol * np.abs(n)), 0.0)
        odd = ~finite & ~((a == n) | (np.isnan(a) & np.isnan(n)))
    if odd.any():
        k, why = np.unravel_index(int(np.argmax(odd)), odd.shape), " (a NaN or an infinity where the other is not)"
    elif err.size and err.max() > 0:
        k, why = np.unravel_index(int(np.argmax(err)), err.shape), ""
    else:
        return
    where = f" {tuple(int(j) for j in k)}" if a.ndim else ""
    raise AssertionError(
        f"gradcheck: {what}{where}: analytic {a[k]:.10g}, numerical {n[k]:.10g}, "
        f"difference {abs(a[k] - n[k]):.3g}{why} (atol={atol}, rtol={rtol}){hint}"
    )


def _checked(f, inputs, eps, where):
    """Inputs (a Variable, an array, or a list of them) as float64 NumPy copies, once f and eps are checked."""
    if not callable(f):
        raise TypeError(f"{where}: f must be a function of Variables returning a Variable, got {type(f).__name__}")
    if eps is not None and (isinstance(eps, (bool, np.bool_)) or not isinstance(eps, (int, float, np.number))
                            or not eps > 0 or not np.isfinite(eps)):
        raise ValueError(f"{where}: eps={eps!r} must be a small positive step, e.g. 1e-6, or None for a step "
                         "scaled to each element")
    if not isinstance(inputs, (list, tuple)):
        inputs = [inputs]
    if not inputs:
        raise ValueError(f"{where}: inputs is empty; pass the inputs f is differentiated at, a list with one "
                         f"array or Variable per argument of f: {where}(f, [x0, x1, ...])")
    return [np.array(as_numpy(as_float_array(data_of(x), where=f"{where}: inputs[{i}]")), dtype=np.float64)
            for i, x in enumerate(inputs)]


def _call(f, xs, where):
    """f(*xs), checked: a TypeError that says how to pass the inputs when f takes another number of them."""
    y = called(f, xs, where, how=f"pass one input per argument of f, as a list: {where}(f, [x0, x1, ...])",
               noun="input")
    if not isinstance(y, Variable):
        raise TypeError(f"{where}: f must return a Variable, got {type(y).__name__}; compute it with minigrad's "
                        "functions (F.sin, F.matmul, ...), not NumPy's")
    return y


def _direction(rng, shape):
    """A random direction whose entries are at least 0.5 in size (random signs, sizes 0.5 to 1.5): each
    element moves by a good part of its step, so no difference drowns in the rounding of a near-zero move."""
    return rng.choice([-1.0, 1.0], size=shape) * rng.uniform(0.5, 1.5, size=shape)


def _with_grad(level, m, points, terms=False):
    """level() at new points (Variables or arrays): it builds graphs, so it runs with recording on."""
    with enable_grad():
        xs = [Variable(data_of(p)) for p in points]
        return level(m, xs, terms)
