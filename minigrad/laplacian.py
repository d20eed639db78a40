"""The Laplacian of a function, Δf = sum_d d^2 f / dx_d^2, three ways: collapsed, Taylor, nested.

Along a direction v, the second Taylor coefficient of f(x + t v) is y_2 = (1/2) v^T H v (H the
Hessian), so for directions v_k and weights w_k

    sum_k w_k v_k^T H v_k = 2 sum_k w_k y_2(v_k) = sum_ij C_ij H_ij,   C = sum_k w_k v_k v_k^T.

The Laplacian is C = I: the D unit vectors, weights 1. A symmetric C (a diffusion's constant
coefficients) is C = U diag(λ) U^T: its eigenvectors, weighted by its eigenvalues, of any sign.
Drawn at random, S Rademacher vectors z (entries ±1, E[z z^T] = I) with weights 1/S give an
unbiased estimate whose variance falls as 1/S (Hutchinson's trace estimator; STDE); for a C, z
goes through the factors of its positive and its negative part.

- ``"nested"``: reverse over reverse. g = grad f with a graph, then one reverse pass of g . v_k
  per direction gives H v_k: K Hessian-vector products, each about two passes of the network.
- ``"taylor"``: K second-order jets pushed through the Taylor rules together, sharing x_0:
  1 + 2K arrays per node.
- ``"collapsed"``: as "taylor", but the second coefficients travel summed, K + 2 arrays per node
  (minigrad/collapsed.py derives why the sum passes through every rule).

On a batch of points x (N, D), f must map each row on its own (a network does): then the same
directions move every row, and the result is one Laplacian per row, in f's output shape.
"""

import numpy as np

from minigrad import autodiff
from minigrad.collapsed import linearization, outputs_of, weighted_sum
from minigrad.core.graph import topological_order
from minigrad.core.variable import Variable
from minigrad.cuda import get_array_module
from minigrad.functions.reduction import sum as sum_
from minigrad.functions.shape import concatenate, getitem, reshape
from minigrad.support.config import enable_grad, is_grad_enabled
from minigrad.support.memory import ReleasedArray
from minigrad.support.numpy_interop import data_of

METHODS = ("collapsed", "taylor", "nested")


def laplacian(f, method="collapsed", weights=None, samples=None, seed=None):
    """The function x -> Δf(x) = sum_d d^2 f / dx_d^2, of f's output shape, for x of shape (D,) or a
    batch (N, D) of points that f maps row by row.

    ``method``: "collapsed" (the default), "taylor" or "nested" (see the module's docstring); they
    agree to rounding. ``weights=C``, a symmetric D x D matrix: sum_ij C_ij d^2 f / dx_i dx_j instead.
    ``samples=S``: an unbiased estimate from S random directions (Rademacher), drawn with ``seed``.
    "nested" gives a graph when recording is on (differentiable, e.g. by parameters); the Taylor
    methods give constants.
    """
    if not callable(f):
        raise TypeError(f"laplacian: f must be a function of one Variable returning a Variable, got "
                        f"{type(f).__name__}; pass the function itself, e.g. func.laplacian(model)")
    if method not in METHODS:
        raise ValueError(f"laplacian: method={method!r} is not one of {METHODS}; 'collapsed' is the fastest")
    samples = _checked_samples(samples)
    C = None if weights is None else np.asarray(data_of(weights), dtype=np.float64)

    def operator(x):
        x = _checked_point(x)
        V, w = directions(x.shape[-1], C, samples, seed)
        xp = get_array_module(x)
        V, w = xp.asarray(V, dtype=x.dtype), xp.asarray(w, dtype=x.dtype)
        if not len(V):  # C = 0
            return Variable(xp.zeros(_traced(f, x)[1].shape, dtype=x.dtype), requires_grad=False)
        if method == "nested":
            return _nested(f, x, V, w)
        return Variable(_taylor_mode(f, x, V, w, method == "collapsed"), requires_grad=False)

    return operator


def directions(D, C=None, samples=None, seed=None):
    """(V, w): K directions (K, D) and their weights, sum_k w_k v_k v_k^T = C (I when None), exactly or,
    with ``samples``, in expectation."""
    if C is None:
        U, lam = np.eye(D), np.ones(D)
    else:
        if C.shape != (D, D):
            raise ValueError(f"laplacian: weights has shape {C.shape}, but x has D = {D} coordinates; pass "
                             f"a symmetric ({D}, {D}) matrix C")
        if not np.allclose(C, C.T, rtol=1e-10, atol=1e-12 * np.abs(C).max(initial=0.0)):
            raise ValueError(f"laplacian: weights ({D}, {D}) is not symmetric; sum_ij C_ij H_ij sees only "
                             f"its symmetric part: pass (C + C.T) / 2")
        lam, U = np.linalg.eigh((C + C.T) / 2)
        keep = np.abs(lam) > D * np.finfo(np.float64).eps * np.abs(lam).max(initial=0.0)
        U, lam = U[:, keep], lam[keep]  # the rank of C: a low-rank C takes fewer directions
    if samples is None:
        return U.T, lam
    z = np.random.default_rng(seed).choice([-1.0, 1.0], size=(samples, len(lam)))
    V, w = [], []
    for part in (lam > 0, lam < 0):  # C = A A^T - B B^T: each part drawn through its own factor
        if part.any():
            V.append(z[:, part] @ (U[:, part] * np.sqrt(np.abs(lam[part]))).T)
            w.append(np.full(samples, np.sign(lam[part][0]) / samples))
    if not V:
        return np.zeros((0, D)), np.zeros(0)
    return np.concatenate(V), np.concatenate(w)


def _checked_samples(samples):
    if samples is None:
        return None
    if isinstance(samples, (bool, np.bool_)) or not isinstance(samples, (int, np.integer)) or samples < 1:
        raise ValueError(f"laplacian: samples={samples!r} must be a whole number >= 1, the number of random "
                         "directions (None for the exact value)")
    return int(samples)


def _checked_point(x):
    x = Variable(data_of(x), requires_grad=False).data if not isinstance(x, Variable) else x.data
    if x.ndim not in (1, 2) or x.shape[-1] == 0:
        raise ValueError(f"laplacian: x has shape {x.shape}; pass one point (D,) or a batch of points (N, D) "
                         "that f maps row by row, with D >= 1")
    return x


def _traced(f, x):
    """(x as a fresh Variable, f(x)), recorded; f(x) checked: a Variable, one row per point of a batch."""
    xv = Variable(x, requires_grad=True)
    with enable_grad():
        y = f(xv)
    if not isinstance(y, Variable):
        raise TypeError(f"laplacian: f returned {type(y).__name__}, not a Variable; build f from minigrad's "
                        "functions (F.tanh, F.affine, F.sum, ...)")
    if x.ndim == 2 and (y.ndim == 0 or y.shape[0] != x.shape[0]):
        raise ValueError(f"laplacian: x is a batch of {x.shape[0]} points {x.shape}, so f must map each row "
                         f"on its own and return {x.shape[0]} rows, but f returned shape {y.shape}; for one "
                         f"point pass x of shape ({x.shape[-1]},)")
    return xv, y


# ---- nested: reverse over reverse ----
def _nested(f, x, V, w):
    keep = is_grad_enabled()
    xv, y = _traced(f, x)
    batch = x.ndim == 2
    per_point = y.shape[1:] if batch else y.shape
    with enable_grad():  # the graphs differentiated below are recorded even inside no_grad()
        pieces = []
        for m in np.ndindex(*per_point):  # one output element (per point) at a time
            ym = getitem(y, (slice(None),) + m if batch else m) if m else y
            pieces.append(_trace(ym, xv, V, w, keep))
        if per_point:
            flat = concatenate([reshape(p, p.shape + (1,)) for p in pieces], axis=-1)
            pieces = [reshape(flat, y.shape)]
    return pieces[0] if keep else pieces[0].detach()


def _trace(y, x, V, w, keep):
    """sum_k w_k v_k^T H v_k of y (a scalar, or one per row), by one reverse pass of g . v_k each; the
    last pass records its own graph only when ``keep`` (then the result is differentiable again)."""
    (g,) = _grad(sum_(y), x, create_graph=True)
    total = Variable(get_array_module(x.data).zeros(y.shape, dtype=x.dtype), requires_grad=False)
    for v, wk in zip(V, w):
        (hv,) = _grad(sum_(g * v), x, create_graph=keep)
        total = total + sum_(hv * v, axis=-1) * wk
    return total


def _grad(y, x, create_graph):
    try:
        return autodiff.grad(y, x, retain_graph=True, create_graph=create_graph, materialize_grads=True)
    except NotImplementedError as e:
        raise NotImplementedError(f"laplacian(method='nested') differentiates f twice in reverse mode, "
                                  f"through the backward rules: {e}") from e


# ---- Taylor mode: all the directions at once ----
def _taylor_mode(f, x, V, w, collapsed):
    """2 sum_k w_k y_2(v_k), walking f's graph once with every direction's first coefficient and the
    second coefficients, summed (``collapsed``) or one per direction."""
    xv, y = _traced(f, x)
    xp = get_array_module(x)
    seeds = V[:, None, :] if x.ndim == 2 else V  # the same direction moves every row
    state = {xv.node: (x, xp.broadcast_to(seeds, (len(V),) + x.shape), None)}  # node: (x_0, x_1, x_2)
    order = topological_order([y.node])
    uses = _uses(order, y.node)
    for f_node in order:
        if f_node._inputs is None:
            continue  # freed by a backward pass: its outputs are constants
        _step(f_node, state, uses, w if collapsed else None)
    y0, y1, y2 = state.get(y.node, (None, None, None))
    if y2 is None:  # f is linear in x, or does not depend on it
        return xp.zeros(y.shape, dtype=x.dtype)
    return 2 * (y2 if collapsed else weighted_sum(w, y2))


def _uses(order, keep):
    """How many times each node is an input of the walk: its coefficients are freed after the last."""
    uses = {keep: 1}
    for f in order:
        for n in f._inputs or ():
            uses[n] = uses.get(n, 0) + 1
    return uses


def _step(f, state, uses, w):
    """One node: its outputs' (x_0, x_1, x_2) from its inputs'. y_2 = J x_2 + Q, Q summed with w."""
    inputs = f._inputs
    got = [state.get(n) for n in inputs]
    x0s = [s[0] if s is not None else _value(n) for s, n in zip(got, inputs)]
    first = [None if s is None else s[1] for s in got]
    outs = outputs_of(f)
    if all(v is None for v in first):
        return  # not downstream of x (made from parameters alone): its values are read from the graph
    try:
        lin = linearization(f, x0s, [v is not None for v in first])
    except NotImplementedError as e:
        raise NotImplementedError(f"laplacian(method='collapsed' or 'taylor') pushes Taylor coefficients "
                                  f"through each Function's Taylor rule: {e}") from e
    y1s, qs = lin.jet(first, w)
    second = [None if s is None else s[2] for s in got]
    if any(s is not None for s in second):
        lifted = [s if w is None or s is None else s[None] for s in second]  # one summed direction
        pushed = [p if w is None or p is None else p[0] for p in lin.push(lifted)]
    else:
        pushed = [None] * len(outs)
    for node, y0, y1, p, q in zip(outs, lin.values, y1s, pushed, qs):
        if node is not None:
            state[node] = (y0, y1, q if p is None else p if q is None else p + q)
    for n in inputs:
        uses[n] -= 1
        if not uses[n]:
            state.pop(n, None)


def _value(node):
    data = node.data
    if type(data) is ReleasedArray:
        raise RuntimeError(f"laplacian: {data!r} is needed as a constant; keep a reference to it")
    return data
