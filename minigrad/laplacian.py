"""The Laplacian of a function, Δf = sum_d d^2 f / dx_d^2, three ways: collapsed, Taylor, nested.

Along a direction v, the second Taylor coefficient of f(x + t v) is y_2 = (1/2) v^T H v (H the
Hessian), so for directions v_k and weights w_k

    sum_k w_k v_k^T H v_k = 2 sum_k w_k y_2(v_k) = sum_ij C_ij H_ij,   C = sum_k w_k v_k v_k^T.

The Laplacian is C = I: the D unit vectors, weights 1. A symmetric C (a diffusion's constant
coefficients) is C = U diag(λ) U^T: its eigenvectors, weighted by its eigenvalues, of any sign.
Drawn at random, S Rademacher vectors z (entries ±1, E[z z^T] = I) with weights 1/S give an
unbiased estimate whose variance falls as 1/S (Hutchinson's trace estimator; STDE); for a C, z
goes through the factors of its positive and its negative part.

- ``"nested"``: reverse over reverse. g = grad f with a graph, then a reverse pass of g . v_k
  gives H v_k: K Hessian-vector products, each about two passes of the network, one direction at
  a time after f and g: 2K + 2 passes. On a batch of fewer than NESTED_STACKED points they run
  together instead, as PyTorch's vmap of Hessian-vector products: f records the batch once per
  direction (K N rows) and two reverse passes give every H v_k. That is 4K passes, but of products
  of K N rows, where a few rows run at a fraction of BLAS's speed (a (4, 768) by (768, 768)
  product: 56 us per row, against 19 us at 512 rows).
- ``"taylor"``: K second-order jets pushed through the Taylor rules together, sharing x_0:
  1 + 2K arrays per node.
- ``"collapsed"``: as "taylor", but the second coefficients travel summed, K + 2 arrays per node
  (minigrad/collapsed.py derives why the sum passes through every rule).

On a batch of points x (N, D), f must map each row on its own (a network does): then the same
directions move every row, and the result is one Laplacian per row, in f's output shape.
"""

import math

import numpy as np

from minigrad import autodiff, taylor
from minigrad import collapsed_recorded as recorded_steps
from minigrad.collapsed import Rows, outputs_of, step
from minigrad.core.rules import backward as backward_rules
from minigrad.core.graph import topological_order
from minigrad.core.variable import Variable
from minigrad.cuda import as_numpy, get_array_module
from minigrad.functions.elementwise import cast
from minigrad.functions.reduction import sum as sum_
from minigrad.functions.shape import concatenate, getitem, reshape
from minigrad.support.config import config, enable_grad, is_grad_enabled
from minigrad.support.memory import ReleasedArray
from minigrad.support.numpy_interop import data_of

METHODS = ("collapsed", "taylor", "nested")
NESTED_STACKED = 16  # below this many points, nested mode stacks the batch once per direction


def laplacian(f, method="collapsed", weights=None, samples=None, seed=None, chunk=None):
    """The function x -> Δf(x) = sum_d d^2 f / dx_d^2, of f's output shape and dtype, for x of shape (D,) or
    a batch (N, D) of points that f maps row by row.

    ``method``: "collapsed" (the default), "taylor" or "nested" (see the module's docstring); they
    agree to rounding. ``weights=C``, a symmetric D x D matrix of finite real numbers: sum_ij C_ij d^2 f /
    dx_i dx_j instead. A C that is not symmetric (to 1e-10) is refused rather than symmetrized: the sum sees
    only its symmetric part, so pass (C + C.T) / 2 for the same value. C is checked, and its eigenvectors
    found, here, once; that its D matches x's last axis, at each call.
    ``samples=S``: an unbiased estimate from S random directions (Rademacher; with an indefinite C, S
    for each of its positive and negative parts), drawn with ``seed``, anything np.random.default_rng
    takes, checked here: an int >= 0 or a SeedSequence gives the same directions at every call, a
    Generator the next ones of its stream, None new ones at each call.
    When f has a parameter that requires grad and recording is on, every method gives a graph, to
    differentiate by the parameters (to train a physics-informed network): "nested" records its
    reverse passes, the Taylor methods walk f's graph with minigrad's functions instead of arrays
    (minigrad/collapsed_recorded.py). Otherwise (inside no_grad(), or constant parameters) the
    result is a constant.

    ``x``: an array, or a Variable. When x requires grad (in grad mode) or a jvp moves it, Δf is
    differentiable with respect to x too, in both modes, to any order (∇Δf, the biharmonic Δ(Δf)):
    the walk is then recorded, on the whole batch at once. An array gives a constant in x.

    ``chunk``: how many directions go through f's graph at a time (None: all), memory traded for
    passes. In the Taylor methods each node's array has chunk + 2 rows ("collapsed") of its value's
    size, and each extra pass costs about two forward passes more (its own values and second
    coefficient). "nested" on a batch of N points records f on chunk N rows (None: all the directions
    below NESTED_STACKED points, else 1); ``chunk=1`` holds one Hessian-vector product at a time, the
    least memory of all the methods (a point (D,) always goes one direction at a time).
    """
    if not callable(f):
        raise TypeError(f"laplacian: f must be a function of one Variable returning a Variable, got "
                        f"{type(f).__name__}; pass the function itself, e.g. func.laplacian(model)")
    if method not in METHODS:
        raise ValueError(f"laplacian: method={method!r} is not one of {METHODS}; 'collapsed' is the fastest")
    samples = _checked_samples(samples)
    seed = _checked_seed(seed)
    chunk = None if chunk is None else _checked_count(chunk, "chunk", "directions per pass (None for all)")
    eigen = None if weights is None else _eigen(_checked_weights(weights), exact=samples is None)

    def operator(x):
        x, link = _checked_point(x)
        V, w = _directions(x.shape[-1], eigen, samples, seed)
        xp = get_array_module(x)
        V, w = xp.asarray(V, dtype=x.dtype), xp.asarray(w)  # (w in float64 until f's output dtype is known)
        if not len(V):  # C = 0
            y = _traced(f, x)[1]
            return Variable(xp.zeros(y.shape, dtype=y.dtype), requires_grad=False)
        if method == "nested":
            stacked = link is None and x.ndim == 2 and len(x) < NESTED_STACKED
            return _nested(f, x, V, w, chunk or (len(V) if stacked else 1), link)
        result = _taylor_mode(f, x, V, w, method == "collapsed", chunk or len(V), link)
        return result if isinstance(result, Variable) else Variable(result, requires_grad=False)

    return operator


def directions(D, C=None, samples=None, seed=None):
    """(V, w): K directions (K, D) and their weights, sum_k w_k v_k v_k^T = C (I when None), exactly or,
    with ``samples``, in expectation. C is checked as laplacian checks ``weights``."""
    eigen = None if C is None else _eigen(_checked_weights(C), exact=samples is None)
    return _directions(D, eigen, samples, seed)


def _directions(D, eigen, samples, seed):
    """directions from C's (U, λ, s) of _eigen (None: the identity)."""
    if eigen is None:
        U, lam, s = np.eye(D), np.ones(D), 1.0
    else:
        U, lam, s = eigen
        if len(U) != D:
            raise ValueError(f"laplacian: weights has shape {(len(U), len(U))}, but x has D = {D} coordinates; "
                             f"pass a symmetric ({D}, {D}) matrix C")
    if samples is None:
        return U.T, lam * s
    z = np.random.default_rng(seed).choice([-1.0, 1.0], size=(samples, len(lam)))
    V, w = [], []
    for part in (lam > 0, lam < 0):  # C = s (A A^T - B B^T): each part drawn through its own factor
        if part.any():
            V.append(z[:, part] @ (U[:, part] * np.sqrt(np.abs(lam[part]))).T)
            w.append(np.full(samples, np.sign(lam[part][0]) * s / samples))
    if not V:
        return np.zeros((0, D)), np.zeros(0)
    return np.concatenate(V), np.concatenate(w)


def _eigen(C, exact=True):
    """(U, λ, s), C = s U diag(λ) U^T: the eigenvectors of C's nonzero eigenvalues (its rank: a low-rank C
    takes fewer directions) and the eigenvalues of C / s, where s is the power of 4 that brings C's entries
    below 4. So eigh never overflows (C + C.T does, for entries near float64's largest, 1.8e308), and the
    random directions (sqrt |λ|, s in the weights) stay of size 1 however large C. ``exact``: the weights
    will be s λ themselves (no samples), which must then be float64 numbers.

    Which eigenvalues are zero: eigh finds those of a block B of coordinates that C couples to within
    about D_B eps max |λ_B| (the rounding of B's own entries moves them that much), so below that an
    eigenvalue is zero as far as C's numbers tell, and is dropped. Coordinates that C does not couple
    (C_ij = 0 between the blocks, ``_blocks``) are not mixed by rounding, so each block is taken on its own:
    a diagonal C (blocks of one coordinate) keeps every nonzero entry, exactly, however small beside the
    others (diag(1, 1e-17) is two directions), and drops only its zeros."""
    top = np.abs(C).max(initial=0.0)
    s = float(np.ldexp(1.0, 2 * ((int(np.frexp(top)[1]) - 1) // 2)))
    half = (C / s + C.T / s) / 2
    U, lam = np.zeros((len(C), 0)), np.zeros(0)
    for block in _blocks(half):
        if len(block) == 1:  # (an entry on its own: its eigenvalue, exactly)
            lam_b, U_b = half[block, block], np.ones((1, 1))
        else:
            lam_b, U_b = np.linalg.eigh(half[np.ix_(block, block)])
        keep = np.abs(lam_b) > len(block) * np.finfo(np.float64).eps * np.abs(lam_b).max(initial=0.0)
        columns = np.zeros((len(C), int(keep.sum())))
        columns[block] = U_b[:, keep]
        U, lam = np.concatenate([U, columns], axis=1), np.concatenate([lam, lam_b[keep]])
    order = np.argsort(lam, kind="stable")  # (ascending, as eigh gives them)
    U, lam = U[:, order], lam[order]
    largest = float(np.abs(lam).max(initial=0.0))
    if exact and math.isinf(largest * s):  # (Python's floats overflow to inf without a warning)
        power = math.log10(largest) + math.log10(s)
        raise ValueError(f"laplacian: weights {C.shape} has entries up to {top:.3g} and an eigenvalue near "
                         f"10^{power:.1f}, beyond float64's largest number (1.8e308), which the exact sum weights "
                         "a direction by; scale C down and the result up, laplacian(f, weights=C / k)(x) * k, "
                         "or pass samples (its directions carry the scale)")
    return U, lam, s


def _blocks(A):
    """The sets of coordinates A couples, directly or through others (A_ij != 0 links i and j), as index
    arrays: the blocks of a block-diagonal A up to a permutation, one for a dense A, D of one for a diagonal."""
    linked, unseen, blocks = A != 0, np.ones(len(A), dtype=bool), []
    while unseen.any():
        block, frontier = np.zeros(len(A), dtype=bool), np.zeros(len(A), dtype=bool)
        frontier[np.argmax(unseen)] = True  # (the first coordinate in no block yet)
        while frontier.any():
            block |= frontier
            frontier = linked[frontier].any(axis=0) & ~block
        unseen &= ~block
        blocks.append(np.flatnonzero(block))
    return blocks


def _checked_samples(samples):
    if samples is None:
        return None
    return _checked_count(samples, "samples", "the number of random directions (None for the exact value)")


def _checked_count(n, what, meaning):
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"laplacian: {what}={n!r} must be a whole number >= 1, {meaning}")
    return int(n)


def _checked_seed(seed):
    """seed as it is, if np.random.default_rng takes it (tried now, not at the first call of the operator;
    a Generator or BitGenerator is wrapped, not drawn from)."""
    try:
        np.random.default_rng(seed)
    except (TypeError, ValueError) as e:
        shown = repr(seed) if len(repr(seed)) <= 60 else repr(seed)[:57] + "..."
        error = ValueError if isinstance(e, ValueError) else TypeError
        raise error(f"laplacian: seed={shown} ({type(seed).__name__}) is not a seed np.random.default_rng "
                    f"takes ({e}); pass an int >= 0, a np.random.SeedSequence or Generator, or None for new "
                    "directions at each call") from None
    return seed


def _checked_weights(weights):
    """weights=C as a float64 array, checked: a square matrix of finite real numbers, symmetric."""
    C = _real_matrix(weights)
    bad = ~np.isfinite(C)
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"laplacian: weights {C.shape} has {int(bad.sum())} entries that are not finite numbers "
                         f"in float64, the first {C[first]} at {first}; pass a matrix of finite numbers")
    half = C / 2  # (C - C.T would overflow for entries near 1.8e308)
    gap = np.abs(half - half.T)
    if (gap > 1e-10 * np.abs(half.T) + 1e-12 * np.abs(half).max(initial=0.0)).any():
        i, j = (int(k) for k in np.unravel_index(np.argmax(gap), gap.shape))
        raise ValueError(f"laplacian: weights {C.shape} is not symmetric, C[{i}, {j}] = {C[i, j]:.6g} but "
                         f"C[{j}, {i}] = {C[j, i]:.6g}; sum_ij C_ij H_ij sees only its symmetric part: "
                         "pass (C + C.T) / 2")
    return C


def _real_matrix(weights):
    """weights as a square float64 array: a real, numeric (D, D) array, or the error saying what it is instead."""
    try:
        C = as_numpy(data_of(weights))
    except ValueError:  # a ragged nested list
        raise ValueError("laplacian: weights is a ragged nested sequence, not a matrix; pass a symmetric (D, D) "
                         "array, D the length of x's last axis") from None
    if C.dtype.kind == "c":
        fix = ("its imaginary parts are all zero: pass C.real" if not C.imag.any() else "the sum is linear in "
               "C: laplacian(f, weights=C.real)(x) + 1j * laplacian(f, weights=C.imag)(x)")
        raise TypeError(f"laplacian: weights {C.shape} has complex dtype {C.dtype}, but the coefficients of "
                        f"sum_ij C_ij d^2 f / dx_i dx_j are real; {fix}")
    if C.dtype.kind not in "biufO":
        raise TypeError(f"laplacian: weights has dtype {C.dtype} (shape {C.shape}), not numbers; pass a symmetric "
                        "(D, D) array of floats, D the length of x's last axis (np.eye(D): the Laplacian itself)")
    try:
        C = C.astype(np.float64)
    except (TypeError, ValueError, OverflowError) as e:  # an object array of non-numbers or complex numbers
        raise TypeError(f"laplacian: weights {C.shape} holds values that are not real numbers ({e}); pass a "
                        "symmetric (D, D) array of floats") from None
    if C.ndim != 2 or C.shape[0] != C.shape[1]:
        raise ValueError(f"laplacian: weights has shape {C.shape}, not a square matrix; pass a symmetric (D, D) "
                         "matrix C, D the length of x's last axis")
    return C


def _checked_point(x):
    """(x's array, checked; the Variable x itself when Δf is to be differentiated with respect to it: it
    requires grad in grad mode, or carries a tangent of a jvp that is running, else None)."""
    link = None
    if isinstance(x, Variable):
        moving = x.node.tangents and any(level.open for level in x.node.tangents)
        link = x if moving or (x.requires_grad and is_grad_enabled()) else None
        x = x.data
    else:
        x = Variable(data_of(x), requires_grad=False).data
    if x.ndim not in (1, 2) or x.shape[-1] == 0:
        raise ValueError(f"laplacian: x has shape {x.shape}; pass one point (D,) or a batch of points (N, D) "
                         "that f maps row by row, with D >= 1")
    return x, link


def _traced(f, x, whole=None, how="", link=None):
    """(x as a fresh Variable, f(x)), recorded; f(x) checked: a Variable, one row per point of a batch.
    ``whole``: the shape of the batch x comes from, ``how`` (the copies or the piece of it x is). With
    ``link`` (the caller's Variable x), the fresh Variable keeps x's graph and tangents behind it."""
    xv = Variable(x, requires_grad=True) if link is None else autodiff.fresh(link)
    with enable_grad():
        y = f(xv)
    if not isinstance(y, Variable):
        raise TypeError(f"laplacian: f returned {type(y).__name__}, not a Variable; build f from minigrad's "
                        "functions (F.tanh, F.affine, F.sum, ...)")
    if x.ndim == 2 and (y.ndim == 0 or y.shape[0] != x.shape[0]):
        whole = whole or x.shape
        raise ValueError(f"laplacian: x is a batch of {whole[0]} points {whole}, so f must map each row "
                         f"on its own and return one row per point, but f returned shape {y.shape} for "
                         f"{x.shape[0]} rows{how}; for one point pass x of shape ({x.shape[-1]},)")
    return xv, y


# ---- nested: reverse over reverse ----
def _nested(f, x, V, w, chunk, link=None):
    """Each part's last reverse pass records its graph only when the result is to be differentiated
    (_differentiated); else the part is detached: a constant, its graph freed at once."""
    if x.ndim == 1 or chunk == 1 or link is not None:
        return _nested_in_turn(f, x, V, w, link)
    total = None
    for start in range(0, len(V), chunk):
        part = _nested_batch(f, x, V[start:start + chunk], w[start:start + chunk])
        total = part if total is None else total + part
    return total


def _nested_batch(f, x, V, w):
    """All K directions at once on a batch (N, D): f on K stacked copies of it, row k N + n moved by v_k,
    so that the rows of g . v (g = grad of f's sum) are the N K values g_n . v_k, one reverse pass of
    their sum gives every H_n v_k, and v_k . H_n v_k summed over k with w is the result."""
    xp = get_array_module(x)
    (K, D), N = V.shape, x.shape[0]
    xv, y = _traced(f, xp.broadcast_to(x, (K, N, D)).reshape(K * N, D), x.shape,
                    f" (method='nested' stacks the batch once per direction: {K} x {N} rows)")
    w, keep = w.astype(y.dtype, copy=False), _differentiated(y, xv)
    moves = xp.broadcast_to(V[:, None, :], (K, N, D)).reshape(K * N, D)

    def trace(ym):
        (g,) = _grad(sum_(ym), xv, create_graph=True)
        (hv,) = _grad(sum_(g * moves), xv, create_graph=keep)
        return _of_dtype(sum_(reshape(sum_(hv * moves, axis=-1), (K, N)) * w[:, None], axis=0), ym.dtype)

    with enable_grad():
        result = _each_output(y, True, trace)
    return result if keep else result.detach()


def _nested_in_turn(f, x, V, w, link=None):
    """One direction at a time: f and g once, then one reverse pass of g . v_k per direction (for one
    point (D,), whose f need not take a batch, for ``chunk=1``, and to differentiate by x, ``link``)."""
    xv, y = _traced(f, x, link=link)
    w, keep = w.astype(y.dtype, copy=False), _differentiated(y, xv, link)
    with enable_grad():  # the graphs differentiated below are recorded even inside no_grad()
        result = _each_output(y, x.ndim == 2, lambda ym: _of_dtype(_trace(ym, xv, V, w, keep), ym.dtype))
    return result if keep else result.detach()


def _differentiated(y, xv, link=None):
    """Whether Δf is to be differentiated, so that its computation is recorded (else it is a constant):
    by x (``link``: x requires grad in grad mode, or a jvp moves it), by whatever a running jvp moves
    (config.levels: its tangents ride on the operations of the walk), or, in grad mode, by a parameter:
    f(x) = y reaches a leaf that requires grad other than the fresh x, ``xv`` (autodiff.differentiable;
    since=inf: every other leaf counts, a transform's inside f too)."""
    return link is not None or bool(config.levels) or autodiff.differentiable([y], math.inf, own=[xv])


def _each_output(y, batch, trace):
    """trace(y_m) for each output element y_m (one per point of a batch), put back in f's output shape."""
    per_point = y.shape[1:] if batch else y.shape
    pieces = [trace(getitem(y, (slice(None),) + m if batch else m) if m else y) for m in np.ndindex(*per_point)]
    if not per_point:
        return pieces[0]
    flat = concatenate([reshape(p, p.shape + (1,)) for p in pieces], axis=-1)
    return reshape(flat, pieces[0].shape + per_point)


def _trace(y, x, V, w, keep):
    """sum_k w_k v_k^T H v_k of y (a scalar, or one per row), by one reverse pass of g . v_k each; the
    last pass records its own graph only when ``keep`` (then the result is differentiable again)."""
    (g,) = _grad(sum_(y), x, create_graph=True)
    total = Variable(get_array_module(x.data).zeros(y.shape, dtype=x.dtype), requires_grad=False)
    for v, wk in zip(V, w):
        (hv,) = _grad(sum_(g * v), x, create_graph=keep)
        total = total + sum_(hv * v, axis=-1) * wk
    return total


def _of_dtype(total, dtype):
    """The sum in f's output dtype: H v has x's (a gradient by x), which may be wider than f's output."""
    return total if total.dtype == dtype else cast(total, dtype)


def _grad(y, x, create_graph):
    try:
        return autodiff.grad(y, x, retain_graph=True, create_graph=create_graph, materialize_grads=True)
    except NotImplementedError as e:
        raise NotImplementedError(f"laplacian(method='nested') differentiates f twice in reverse mode, "
                                  f"through the backward rules: {e}") from e


# ---- Taylor mode: all the directions at once ----
ROWS_PER_PASS = 1024  # rows of coefficients (points x rows per point) a walk of a batch takes at a time


def _taylor_mode(f, x, V, w, collapsed, chunk, link=None):
    """sum_k w_k v_k^T H v_k, walking f's graph with one array per node: the value, every direction's
    first coefficient, and the second coefficients, summed (``collapsed``) or one per direction
    (collapsed.Rows); ``chunk`` directions per walk.

    A batch goes through in pieces of ROWS_PER_PASS rows of coefficients (each piece recorded on its
    own): the memory stays bounded whatever N, for little time, as the matrix products already run at
    full speed at a few hundred rows (a 768 x 768 weight: 18.5 us per row at 416 rows, 19.0 at 832),
    and smaller arrays stay in the caches. Measured against one walk of the whole batch: 0.94x the
    time at 128 points of torch-jet's network (collapsed; "taylor" 0.93x), and at 64 points of a
    50-256-256-1 network 1.08x (collapsed) and 0.67x ("taylor")."""
    points = max(1, ROWS_PER_PASS // Rows(w[:chunk], collapsed).count)
    if x.ndim == 1 or len(x) <= points or link is not None:  # (to differentiate by x: one walk, recorded)
        return _walks(f, x, V, w, collapsed, chunk, link=link)
    how = f" (a piece of {points} points: the batch goes through {ROWS_PER_PASS} rows of coefficients at a time)"
    pieces = [_walks(f, x[i:i + points], V, w, collapsed, chunk, (x.shape, how)) for i in range(0, len(x), points)]
    return concatenate(pieces, axis=0) if isinstance(pieces[0], Variable) else get_array_module(x).concatenate(pieces)


def _walks(f, x, V, w, collapsed, chunk, whole=(None, ""), link=None):
    """_taylor_mode on one piece: f recorded on x, then one walk of its graph per chunk of directions;
    the walk recorded (collapsed_recorded.py) when Δf is to be differentiated (_differentiated: by a
    parameter, inside a jvp, or by x, ``link``: then the value's row is x itself)."""
    xv, y = _traced(f, x, *whole)
    xp, w = get_array_module(x), w.astype(y.dtype, copy=False)
    order = topological_order([y.node])
    recorded = _differentiated(y, xv, link)
    total = Variable(xp.zeros(y.shape, dtype=y.dtype), requires_grad=False) if recorded else xp.zeros(y.shape, y.dtype)
    constants = {}  # the freed constants computed again (_value), for every chunk
    for start in range(0, len(V), chunk):
        Vc, wc = V[start:start + chunk], w[start:start + chunk]
        rows = Rows(wc, collapsed)
        Z = xp.zeros((rows.count,) + x.shape, dtype=x.dtype)
        Z[0] = x
        Z[rows.first] = Vc[:, None, :] if x.ndim == 2 else Vc  # the same direction moves every row
        if link is not None:  # row 0 is x itself, the other rows constants
            Z = concatenate([reshape(link, (1,) + x.shape), Variable(Z[1:], requires_grad=False)], axis=0)
        elif recorded:
            Z = Variable(Z, requires_grad=False)
        state, uses = {xv.node: Z}, _uses(order, y.node)
        with enable_grad():
            for f_node in order:
                if f_node._inputs is not None:  # (None: freed by a backward pass; its outputs are constants)
                    _step(f_node, state, uses, rows, recorded, constants)
        if y.node in state:  # (not: f does not depend on x)
            if recorded:
                total = total + recorded_steps.result(state[y.node], rows)
            else:
                total += rows.result(state[y.node])
    return total


def _uses(order, keep):
    """How many times each node is an input of the walk: its array is freed after the last."""
    uses = {keep: 1}
    for f in order:
        for n in f._inputs or ():
            uses[n] = uses.get(n, 0) + 1
    return uses


def _step(f, state, uses, rows, recorded, constants):
    """One node: its outputs' arrays (Variables, ``recorded``) from its inputs' (collapsed.step)."""
    inputs = f._inputs
    Zs = [state.get(n) for n in inputs]
    if all(Z is None for Z in Zs):
        return  # not downstream of x (made from parameters alone): its values are read from the graph
    x0s = [_value(n, recorded, constants) if Z is None else Z[0] for Z, n in zip(Zs, inputs)]
    try:
        Ys = (recorded_steps.step if recorded else step)(f, Zs, x0s, rows)
    except NotImplementedError as e:
        if recorded and _has_rule(taylor.table, f) and not _has_rule(backward_rules, f):
            raise NotImplementedError(
                f"laplacian(method='collapsed' or 'taylor') is to be differentiated here (by a parameter of f that "
                f"requires grad, or by x), so it walks f's graph recorded (minigrad/collapsed_recorded.py), taking "
                f"each Function's derivatives from its backward rules, which are differentiable, not from its Taylor "
                f"rule: {e}. Register that backward rule to train on the Laplacian, or compute it inside no_grad() "
                f"for its value alone (a constant: the Taylor rule is enough)") from e
        raise NotImplementedError(f"laplacian(method='collapsed' or 'taylor') pushes Taylor coefficients "
                                  f"through each Function's Taylor rule: {e}") from e
    for node, Y in zip(outputs_of(f), Ys):
        if node is not None:
            state[node] = Y
    for n in inputs:
        uses[n] -= 1
        if not uses[n]:
            state.pop(n, None)


def _has_rule(table, f):
    try:
        table.lookup(type(f))
    except NotImplementedError:
        return False
    return True


def _value(node, recorded, constants):
    """A node not downstream of x: its array, or (``recorded``) its Variable, in f's graph.

    The graph frees the array of an output no backward rule reads once its Variable dies
    (support/memory.py): a large constant made inside f from parameters (p * 2) is gone when f returns,
    though the walk reads it after. Such a node is computed again from its creator's inputs (their own
    values, freed or not), once per walk, and kept in ``constants`` until the walk ends: nothing more
    is held than the graph held before it freed the array, and nothing at all when nothing was freed.
    Recorded, the creator is called again on Variables, so the walk's graph reaches the parameters."""
    if type(node.data) is not ReleasedArray:
        return node.variable() if recorded else node.data
    if node not in constants:
        f = node.creator
        if f is None or f._inputs is None:  # (its graph freed by a backward pass: nothing to compute it from)
            raise RuntimeError(f"laplacian: f's graph reads {node.data!r} as a constant, but its values were "
                               "freed with their Variable and its own graph by a backward pass; keep a reference "
                               "to that Variable, or compute it inside f")
        xs = [_value(n, recorded, constants) for n in f._inputs]
        ys = f._new_node()(*xs)  # (on arrays: constants, unrecorded)
        y = ys[next(i for i, n in enumerate(outputs_of(f)) if n is node)] if type(ys) is tuple else ys
        constants[node] = y if recorded else data_of(y)
    return constants[node]
