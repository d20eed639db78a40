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

How it runs: f is called once on a fresh Variable with recording on, which
records its graph; then the nodes are visited in topological order, inputs
first, each rule given its inputs' coefficients. x's series is the one asked
for; any other leaf (a parameter, a number) is a constant, [c, 0, ..., 0].
"""

import math
from numbers import Integral

from minigrad.core.graph import topological_order
from minigrad.core.rules import RuleTable, broadcasts, call_rule
from minigrad.core.variable import Variable
from minigrad.cuda import get_array_module
from minigrad import series
from minigrad.series import constant
from minigrad.support.config import enable_grad
from minigrad.support.numpy_interop import data_of

MAX_ORDER = 170  # 171! overflows float64



def fitted_series(c, node, f, table, args):
    """A Taylor rule's result: as many coefficients as its inputs have, of its output's shape (broadcast)
    and dtype (cast down from a wider one; a narrower one lost digits the forward pass keeps: an error)."""
    length, shape, dtype = len(args[0]), node.data.shape, node.data.dtype
    got = getattr(c, "shape", None)
    if got != (length,) + shape:
        if got is None or not got or got[0] != length or not broadcasts(got[1:], shape):
            raise ValueError(f"the Taylor rule of {f.name} returned {type(c).__name__} of shape {got} for an "
                             f"output of shape {shape}; a rule returns the output's {length} coefficients, an "
                             f"array of shape {(length,) + shape}")
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


def jet(f, x, series):
    """(y_0, [y_1, ..., y_n]): the Taylor coefficients of y(t) = f(x(t)), x(t) = x + sum_k series[k-1] t^k.

    ``series`` lists x_1, ..., x_n, each of x's shape. The coefficients are
    the normalized ones, y_k = (d^k y/dt^k at t = 0) / k!, so ``derivatives``
    is ``jet`` with series [v, 0, ..., 0] and each y_k multiplied by k!
    (JAX's ``jet`` takes and returns the derivatives themselves instead).
    """
    x = _primal(x, "jet")
    xp = get_array_module(x)
    if isinstance(series, (str, bytes)) or not hasattr(series, "__len__"):
        raise TypeError(f"taylor.jet: series must be a list of arrays x_1, ..., x_n of x's shape {x.shape}, "
                        f"got {type(series).__name__}")
    terms = [_term(s, x, f"series[{i}]", "jet") for i, s in enumerate(series)]
    y = propagate(f, x, xp.stack([x, *terms]), "jet")
    return y[0], list(y[1:])


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
    y = propagate(f, x, x_series, "derivatives")
    return [y[k] * float(math.factorial(k)) if k > 1 else y[k] for k in range(len(y))]


def propagate(f, x, x_series, where):
    """The coefficients of f(x(t)), x's being ``x_series``: record f's graph, then run the rules along it."""
    if not callable(f):
        raise TypeError(f"taylor.{where}: f must be a function of one Variable, got {type(f).__name__}")
    with enable_grad():
        xv = Variable(x)
        y = f(xv)
    if not isinstance(y, Variable):
        raise TypeError(
            f"taylor.{where}: f returned {type(y).__name__}, not a Variable; build f from minigrad's "
            "functions (F.tanh(x), x * x, F.sum(...)), which return Variables, not NumPy's (np.tanh) or numbers"
        )
    n = len(x_series) - 1
    coefficients = {xv.node: x_series}

    def of(node):  # an input's coefficients: x's, a recorded node's, or a constant's (padded once)
        c = coefficients.get(node)
        if c is None:
            c = coefficients[node] = constant(node.data, n)
        return c

    for f in topological_order([y.node]):
        if f._inputs is None:
            continue  # freed by a backward pass, before x was made: its outputs are constants here, as in jvp
        outputs = [ref() for ref in f._outputs]
        for out, c in zip(outputs, _call(f, [of(p) for p in f._inputs], outputs)):
            if out is not None:
                coefficients[out] = c
    return of(y.node)


def _call(f, args, outputs):
    """f's rule on ``args``; again, with every zero coefficient exact (series.strong_zeros), if a result
    has a nan: a constant's zeros that met an infinity (0 inf), or a nan of the values themselves."""
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


def _term(s, x, what, where):
    """One coefficient of x's series: an array of x's shape, dtype and device."""
    s = data_of(s)
    shape = tuple(getattr(s, "shape", ()))
    if shape != x.shape:
        raise ValueError(
            f"taylor.{where}: {what} has shape {shape}, but x has shape {x.shape}; each term of x's series "
            f"is a direction in x's space: pass an array of shape {x.shape}"
            + (" (None for ones)" if what == "direction" else "")
        )
    return get_array_module(x).asarray(s, dtype=x.dtype)
