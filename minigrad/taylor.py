"""Taylor mode: every derivative 0..n along a direction, in one pass of polynomial cost.

Nested reverse mode differentiates the graph of the last derivative again,
and for most functions that graph grows by a constant factor per order
(tanh's: 2, 5, 13, 33, 83, ... nodes). Taylor mode instead pushes a
truncated Taylor series through the program once (Griewank and Walther,
"Evaluating Derivatives", ch. 13; JAX's ``jax.experimental.jet``): put

    x(t) = x + v t,   y(t) = f(x(t)) = y_0 + y_1 t + y_2 t^2 + ... + y_n t^n,

and each function maps the coefficients of its inputs to those of its
output by a recurrence of O(n^2) array operations (series.py). Then

    d^k/dt^k f(x + t v) at t = 0  =  k! y_k.

    from minigrad import taylor
    taylor.derivatives(F.tanh, xs, 30)       # [tanh(xs), tanh'(xs), ..., tanh^(30)(xs)]

The rules form a third table beside the backward and forward ones, with the
same shape: ``@taylor.register("Tanh")`` on ``rule(ctx, *xs)``, where each
x in ``xs`` is an input's coefficients (an array with a leading axis of
length n + 1, ``x[0]`` its value), and the rule returns its output's
coefficients (a tuple of them for several outputs). ``ctx`` is the recorded
node, for attributes (``ctx.function.axis``). A rule computes from the
coefficients, not from ``ctx.inputs``: it runs on arrays with their array
module, and need not be differentiable.

How it runs: f is called once on fresh Variables, one per primal, with
recording on, which records its graph; then the nodes are visited in
topological order, inputs first, each rule given its inputs' coefficients.
A primal's series is the one asked for; any other leaf (a parameter, a
number) is a constant, [c, 0, ..., 0].
"""

import itertools
import math
from fractions import Fraction
from numbers import Integral

import numpy as np

from minigrad.core.graph import topological_order
from minigrad.core.rules import RuleTable, broadcasts, call_rule
from minigrad.core.variable import Variable
from minigrad.cuda import get_array_module
from minigrad import series
from minigrad.series import constant
from minigrad.support.config import enable_grad
from minigrad.support.func_arguments import as_outputs, checked_primals
from minigrad.support.numpy_interop import data_of

MAX_ORDER = 170  # 171! overflows float64



def fitted_series(c, node, f, table, args):
    """A Taylor rule's result: as many coefficients as its inputs have, of its output's shape (broadcast)
    and dtype (cast down from a wider one; a narrower one lost digits the forward pass keeps: an error)."""
    length, shape, dtype = len(args[0]), node.data.shape, node.data.dtype
    got = getattr(c, "shape", None)
    if got != (length,) + shape:
        if got is None or not got or got[0] != length or not broadcasts(got[1:], shape):
            what = "None" if c is None else f"{type(c).__name__} of shape {got}"
            raise ValueError(f"the Taylor rule of {f.name} returned {what} for an output of shape {shape}; a "
                             f"rule returns the output's {length} coefficients, an array of shape "
                             f"{(length,) + shape} (a constant's: its value, then zeros)")
        c = get_array_module(c).broadcast_to(c, (length,) + shape)
    if c.dtype == dtype:
        return c
    if c.dtype.kind == "f" and c.dtype.itemsize < dtype.itemsize:
        raise TypeError(f"the Taylor rule of {f.name} returned {c.dtype} coefficients for an output of dtype "
                        f"{dtype}, which the forward pass computed in {dtype}: compute the coefficients in the "
                        f"dtype the inputs promote to (xp.result_type of the inputs' coefficients)")
    return c.astype(dtype)


table = RuleTable("Taylor", "rule(ctx, *input_coefficients) from minigrad.taylor", "series", "output",
                  fit=fitted_series)

# The table's methods, named as the backward table's: register("Tanh", rule) or @register("Tanh") below the
# class; lookup, registered, registry_text, show_registry.
register = table.register
lookup = table.lookup
registered = table.registered
registry_text = table.text
show_registry = table.show


def jet(f, primals, series):
    """(y_0, [y_1, ..., y_n]): the Taylor coefficients of y(t) = f(x(t)), x(t) = x + sum_k series[k-1] t^k.

    One point: ``jet(f, x, [x_1, ..., x_n])``, each x_k of x's shape. The
    coefficients are the normalized ones, y_k = (d^k y/dt^k at t = 0) / k!, so
    ``derivatives`` is ``jet`` with series [v, 0, ..., 0] and each y_k
    multiplied by k! (JAX's ``jet`` takes and returns the derivatives
    themselves instead).

    Several points, as ``func.jvp`` and JAX's ``jet`` take them: a tuple of
    primals and one list of terms per primal, all of the same length n,

        jet(f, (x, z), ([x_1, ..., x_n], [z_1, ..., z_n]))

    is the curve (x(t), z(t)) through the product of their spaces, and
    y(t) = f(x(t), z(t)). Nothing new is needed for it: a rule sees only
    its inputs' coefficients, never where they came from, so each primal is
    one more leaf seeded with its own series (a constant is a leaf seeded
    with [c, 0, ..., 0]). Collecting t^1 gives y_1 = sum_i (df/dx^(i)) x^(i)_1,
    the jvp with tangents (x_1, z_1); t^2 gives y_2 = sum_i (df/dx^(i)) x^(i)_2
    + (1/2) sum_(i,j) (d^2 f/dx^(i) dx^(j)) x^(i)_1 x^(j)_1, the mixed terms
    included. A tuple of primals always means this form: one point written
    as numbers is passed as an array or a list, np.array((0.5, 1.0)).

    When f returns a tuple of Variables, y_0 is a tuple of their values and
    the second entry a tuple of their lists of coefficients, in order.
    """
    if isinstance(primals, tuple):
        xs, terms = _primals_and_series(primals, series)
    else:
        x = _primal(primals, "jet")
        if isinstance(series, (str, bytes)) or not hasattr(series, "__len__"):
            raise TypeError(f"taylor.jet: series must be a list of arrays x_1, ..., x_n of x's shape {x.shape}, "
                            f"got {type(series).__name__}")
        xs, terms = [x], [[_term(s, x, f"series[{i}]", "jet") for i, s in enumerate(series)]]
    ys, single = propagate(f, xs, [get_array_module(x).stack([x, *ts]) for x, ts in zip(xs, terms)], "jet")
    if single:
        return ys[0][0], list(ys[0][1:])
    return tuple(y[0] for y in ys), tuple(list(y[1:]) for y in ys)


def _primals_and_series(primals, series):
    """jet's several-primal form checked: (the primals as arrays, each one's list of terms)."""
    if not primals:
        raise ValueError("taylor.jet: primals is an empty tuple; pass one point per argument of f, "
                         "jet(f, (x,), ([x_1, ..., x_n],))")
    xs = [v.data for v in checked_primals(primals, "taylor.jet", "primals")]
    if not isinstance(series, (tuple, list)):
        raise TypeError(f"taylor.jet: with a tuple of primals, series must be a tuple of {len(xs)} list(s) of "
                        f"terms, one per primal, got {type(series).__name__}: "
                        "jet(f, (x, z), ([x_1, ..., x_n], [z_1, ..., z_n]))")
    if len(series) != len(xs):
        raise ValueError(f"taylor.jet: primals has {len(xs)} entries but series has {len(series)}; give one "
                         "list of terms per primal: jet(f, (x, z), ([x_1, ..., x_n], [z_1, ..., z_n]))")
    terms = []
    for i, (x, s) in enumerate(zip(xs, series)):
        if not isinstance(s, (tuple, list)):
            got = type(s).__name__ + (f" of shape {s.shape}" if hasattr(s, "shape") else "")
            raise TypeError(f"taylor.jet: series[{i}] must be the list of terms of primals[{i}] (each of shape "
                            f"{x.shape}), got {got}; with a tuple of primals, series holds one list per "
                            f"primal: ([x_1, ..., x_n],) for one")
        if len(s) != len(series[0]):
            raise ValueError(f"taylor.jet: series[{i}] has {len(s)} terms but series[0] has {len(series[0])}; "
                             "every primal's series goes to the same order n: pad the shorter with zeros")
        terms.append([_term(t, x, f"series[{i}][{k}]", "jet", f"primals[{i}]") for k, t in enumerate(s)])
    return xs, terms


def derivatives(f, x, n, direction=None):
    """[f(x), D f(x), ..., D^n f(x)]: the derivatives d^k/dt^k f(x + t v) at t = 0, k = 0..n, as arrays.

    ``v`` is ``direction``, of x's shape: ones when None, so that for an
    elementwise f (F.tanh, lambda x: x * F.sin(x)) entry k is the k-th
    derivative f^(k)(x) at every point. ``f`` is a function of one Variable
    built from minigrad's functions.
    """
    if isinstance(n, bool) or not isinstance(n, Integral):
        raise TypeError(f"taylor.derivatives: n must be an int >= 0, the highest order wanted, "
                        f"got {n!r} of type {type(n).__name__}")
    if n < 0:
        raise ValueError(f"taylor.derivatives: n={n} is negative; pass n >= 0 (n=0 gives [f(x)] alone)")
    if n > MAX_ORDER:
        raise ValueError(f"taylor.derivatives: n={n} is above {MAX_ORDER}, where k! overflows float64; "
                         "taylor.jet gives the Taylor coefficients y_k = f_k / k! to any order")
    x = _primal(x, "derivatives")
    xp = get_array_module(x)
    v = xp.ones_like(x) if direction is None else _term(direction, x, "direction", "derivatives")
    x_series = xp.zeros((int(n) + 1,) + x.shape, dtype=x.dtype)
    x_series[0] = x
    if n:
        x_series[1] = v
    ys, single = propagate(f, [x], [x_series], "derivatives")
    if not single:
        raise TypeError("taylor.derivatives: f returned a tuple of Variables; derivatives follows one output "
                        "(taylor.jet follows each of a tuple)")
    y = ys[0]
    return [y[k] * float(math.factorial(k)) if k > 1 else y[k] for k in range(len(y))]


def mixed_partials(f, x, index):
    """The mixed partial derivative d^|i| f / dx_1^i_1 ... dx_D^i_D at x, from univariate Taylor series alone.

    ``index`` is a multi-index i: one int >= 0 per entry of x (a tuple, a list, or an int array of x's
    shape; for a number x, an int n, giving d^n f / dx^n), of order d = |i| = i_1 + ... + i_D; several,
    stacked along a leading axis (at least one), give one result each. The result has f's output shape
    (a leading axis of one entry per index for several). Floats and bools are refused, even 1.0 or True.

    Along a direction j, the d-th Taylor coefficient of f(x + t j) mixes every partial of order d
    (the multinomial expansion of the d-th derivative along j):

        [t^d] f(x + t j) = sum over |m| = d of (j^m / m!) d^m f,    j^m = j_1^m_1 ... j_D^m_D,

    one linear equation in the partials per direction. Take as directions the j of ints >= 0 with
    |j| = d, zero outside i's support: the system then has a closed-form inverse (Griewank, Utke and
    Walther, "Evaluating higher derivative tensors by forward propagation of univariate Taylor
    series", Math. Comp. 69, 2000; Griewank and Walther, "Evaluating Derivatives", ch. 13):

        d^i f = sum over j of gamma_ij [t^d] f(x + t j),
        gamma_ij = sum over 0 < k <= i of (-1)^|i - k| C(i, k) C(d k / |k|, j) (|k| / d)^d,

    where C(i, k) is the product of the C(i_l, k_l), and C(a, n) = a (a - 1) ... (a - n + 1) / n!
    for a real a. The gammas are exact fractions, rounded once.

    Cost: one jet of order d per direction, that is C(s + d - 1, d) jets for an index with s nonzero
    entries (d^2 f / dx_a dx_b: 3, along e_a, e_b and e_a + e_b), each O(d^2) operations per
    Function. Indices given together share their directions: the D(D + 1) / 2 entries of a Hessian
    take D(D + 1) / 2 jets in all.

    Accuracy: the gammas alternate in sign, so rounding grows with d. It has been measured on one
    function at one point only, not bounded in general: tests/test_mixed_partials.py compares every
    partial of exp(a . x), a = (0.7, -1.3, 0.4, 1.1), at x = (0.2, 0.1, -0.3, 0.5) with its closed form
    a^i exp(a . x), and the largest relative error was 1.1e-13 at order 6 and 1.6e-11 at order 10
    (the test allows 2e-13 and 2e-11). Other functions and points may lose more digits; compare with
    another method (func.hessian at order 2) where it matters.
    """
    if not callable(f):
        raise TypeError(f"taylor.mixed_partials: f must be a function of one Variable returning a Variable, got "
                        f"{type(f).__name__}; pass the function itself, e.g. mixed_partials(model, x, index)")
    x = _primal(x, "mixed_partials")
    if not x.size:
        raise ValueError(f"taylor.mixed_partials: x has shape {x.shape}, no entries to differentiate by; pass "
                         "a point with at least one entry (a number for a function of one variable)")
    indices, several = _multi_indices(index, x)
    results = [None] * len(indices)
    for d in sorted({sum(i) for i in indices}):
        same = [n for n, i in enumerate(indices) if sum(i) == d]
        gammas = {n: _gammas(indices[n]) for n in same}
        coefficient = {}  # direction j -> [t^d] f(x + t j), each jet run once
        for j in sorted({j for n in same for j in gammas[n]}):
            direction = get_array_module(x).asarray(j, dtype=x.dtype).reshape(x.shape)
            y0, ys = jet(f, x, [direction] + [get_array_module(x).zeros_like(x)] * (d - 1))
            if isinstance(y0, tuple):
                raise TypeError("taylor.mixed_partials: f returned a tuple of Variables; mixed_partials "
                                "differentiates one output (call it once per output)")
            coefficient[j] = ys[-1] if d else y0
        for n in same:
            results[n] = sum(float(g) * coefficient[j] for j, g in gammas[n].items())
    xp = get_array_module(x)
    return xp.stack(results) if several else xp.asarray(results[0])


def _multi_indices(index, x):
    """mixed_partials' index checked: (a list of multi-indices, each a tuple of x.size ints, several?)."""
    where = "taylor.mixed_partials: index"
    a = _index_array(index, x)
    if a.shape not in (x.shape, a.shape[:1] + x.shape) or a.ndim not in (x.ndim, x.ndim + 1):
        raise ValueError(f"{where} has shape {a.shape}, but x has shape {x.shape}; a multi-index has one "
                         f"order per entry of x (shape {x.shape}), and several are stacked along a leading "
                         f"axis (shape (M,) + {x.shape})")
    several = a.ndim == x.ndim + 1
    rows = [tuple(int(v) for v in row) for row in a.reshape(len(a) if several else 1, x.size)]
    for m, row in enumerate(rows):
        if min(row) < 0:
            entry = tuple(int(k) for k in np.unravel_index(int(np.argmin(row)), x.shape))
            raise ValueError(f"{where} has a negative order {min(row)}, at entry {entry} of x"
                             + (f" in multi-index {m}" if several else "") + "; each entry counts how many "
                             "times f is differentiated in that variable: 0 or more")
    if max(map(sum, rows)) > MAX_ORDER:
        raise ValueError(f"{where} asks for order {max(map(sum, rows))}, above {MAX_ORDER}, where "
                         f"factorials overflow float64; ask for orders |i| of at most {MAX_ORDER}")
    return rows, several


def _index_array(index, x):
    """index as an array of ints (Python ints when they exceed int64): not ragged, not empty, no float or bool."""
    where, example = "taylor.mixed_partials: index", _example_index(x)
    try:
        a = np.asarray(index)
    except ValueError:  # a ragged nested sequence
        lengths = [len(i) if hasattr(i, "__len__") else "a number" for i in index]
        raise ValueError(f"{where} is ragged, its entries of lengths {lengths}, but every multi-index has x's "
                         f"shape {x.shape}; pass one order per entry of x in each, e.g. {example}") from None
    if not a.size:
        raise ValueError(f"{where} is empty (shape {a.shape}), no multi-index to compute; pass at least one, "
                         f"of x's shape {x.shape}, e.g. {example} for d^2 f / dx_0^2")
    typed = index if isinstance(index, np.ndarray) else np.asarray(index, dtype=object)  # (NumPy makes (True, 1) ints)
    whole = typed.dtype.kind in "iu" or (a.dtype.kind in "iuO" and all(_is_int(v) for v in typed.flat))
    if not whole:
        first = next((v for v in typed.flat if not _is_int(v)), typed.flat[0])
        shown = first.item() if isinstance(first, np.generic) else first
        found = type(shown).__name__ if a.dtype.kind in "iu" else a.dtype  # (a bool among ints)
        raise TypeError(f"{where} must hold ints >= 0, one per entry of x, got {found} values, among them "
                        f"{shown!r}; pass e.g. {example} for d^2 f / dx_0^2")
    return a


def _is_int(v):
    return isinstance(v, Integral) and not isinstance(v, (bool, np.bool_))


def _example_index(x):
    """d^2 f / dx_0^2 as a multi-index of x's shape, as one would type it."""
    e = np.zeros(x.shape, dtype=int)
    e.flat[0] = 2
    return repr(tuple(e.tolist()) if e.ndim == 1 else e.tolist())


def _gammas(i):
    """{j: gamma_ij != 0} for the multi-index i, exact. With a = d k_l / |k|, each C(a, j_l) is
    prod_(m < j_l) (d k_l - m |k|) / (|k|^j_l j_l!), and the |k|^d of all of them cancels the one of
    (|k| / d)^d: gamma_ij = sum_k (-1)^|i - k| C(i, k) prod_l prod_(m < j_l) (d k_l - m |k|) / (d^d j!),
    a sum of integers."""
    d = sum(i)
    if not d:
        return {i: Fraction(1)}  # f itself
    ks = []  # (k, |k|, (-1)^|i - k| C(i, k)) for 0 < k <= i
    for k in itertools.product(*[range(il + 1) for il in i]):
        if any(k):
            ks.append((k, sum(k), (-1) ** (d - sum(k)) * math.prod(map(math.comb, i, k))))
    gammas = {}
    for j in _compositions(d, [axis for axis, il in enumerate(i) if il], len(i)):
        total = 0
        for k, size, weight in ks:
            for kl, jl in zip(k, j):
                for m in range(jl):
                    weight *= d * kl - m * size
            total += weight
        if total:
            gammas[j] = Fraction(total, d ** d * math.prod(map(math.factorial, j)))
    return gammas


def _compositions(d, support, size):
    """Every j of ``size`` ints >= 0 summing to d, zero outside ``support``."""
    for chosen in itertools.combinations_with_replacement(support, d):
        j = [0] * size
        for axis in chosen:
            j[axis] += 1
        yield tuple(j)


def propagate(f, xs, xs_series, where):
    """(the coefficients of each output of f(*x(t)), whether f returned one Variable), each x's series being
    the one in ``xs_series``: record f's graph, then run the rules along it."""
    if not callable(f):
        raise TypeError(f"taylor.{where}: f must be a function of "
                        f"{'one Variable' if len(xs) == 1 else f'{len(xs)} Variables'}, got {type(f).__name__}")
    with enable_grad():
        xvs = [Variable(x) for x in xs]
        y = f(*xvs)
    outputs, single = as_outputs(y, f"taylor.{where}")
    n = len(xs_series[0]) - 1
    coefficients = {xv.node: s for xv, s in zip(xvs, xs_series)}

    def of(node):  # an input's coefficients: a primal's, a recorded node's, or a constant's (padded once)
        c = coefficients.get(node)
        if c is None:
            c = coefficients[node] = constant(node.data, n)
        return c

    for f in topological_order([out.node for out in outputs]):
        if f._inputs is None:
            continue  # freed by a backward pass, before x was made: its outputs are constants here, as in jvp
        results = [ref() for ref in f._outputs]
        for out, c in zip(results, call(f, [of(p) for p in f._inputs], results)):
            if out is not None:
                coefficients[out] = c
    return [of(out.node) for out in outputs], single


def call(f, args, outputs):
    """f's rule on ``args``; again, with every zero coefficient exact (series.strong_zeros), if a result
    has a nan: a constant's zeros that met an infinity (0 inf), or a nan of the values themselves.
    Every walk that runs Taylor rules calls them here (propagate, and laplacian's steps in collapsed.py)."""
    results = call_rule(table, f, args, outputs)
    if any(c is not None and get_array_module(c).isnan(c).any() for c in results):
        token = series.strong_zeros.set(True)
        try:
            results = call_rule(table, f, args, outputs)
        finally:
            series.strong_zeros.reset(token)
    return results


def _primal(x, where):
    """The point x as a floating array (a Variable's values, a number, a list or an array)."""
    if x is None:
        raise TypeError(f"taylor.{where}: x is None; pass the point as an array, a number or a Variable")
    return Variable(data_of(x), requires_grad=False).data


def _term(s, x, what, where, primal="x"):
    """One coefficient of x's series: an array of x's shape, dtype and device."""
    s = data_of(s)
    shape = tuple(getattr(s, "shape", ()))
    if shape != x.shape:
        raise ValueError(
            f"taylor.{where}: {what} has shape {shape}, but {primal} has shape {x.shape}; each term of "
            f"{primal}'s series is a direction in {primal}'s space: pass an array of shape {x.shape}"
            + (" (None for ones)" if what == "direction" else "")
        )
    return get_array_module(x).asarray(s, dtype=x.dtype)
