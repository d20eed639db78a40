"""Functional transforms on both modes, named and used as in torch.func and JAX.

    from minigrad import func

    y, ty = func.jvp(f, (x,), (v,))        # forward mode: ty = J v, one pass
    y, vjp_fn = func.vjp(f, x)             # reverse mode: vjp_fn(u) = (J^T u,)
    func.grad(loss)(w)                     # a function's gradient, as a function
    func.jacfwd(f)(x), func.jacrev(f)(x)   # J by columns (n jvps), by rows (m vjps)
    y, f_jvp = func.linearize(f, x)        # f_jvp(v) = J v, replaying only linear operations
    f_t = func.linear_transpose(f_jvp, x)  # f_t(u) = (J^T u,): reverse mode as forward mode transposed
    func.hessian(f)(x)                     # jacfwd(jacrev(f)): forward over reverse
    func.laplacian(f)(x)                   # sum_d d^2 f/dx_d^2 in collapsed Taylor mode (laplacian.py)

**Forward mode** (``jvp``) opens a level (``core/tangents.py``), hangs the
tangents on fresh copies of its arguments, ``identity(x)``, new nodes that
belong to this call alone, and runs f: as each Function runs, its forward
rule turns its inputs' tangents into its outputs' (``minigrad.forward_functions``).
Nothing is kept for this, so forward mode costs the memory of a few values
and their tangents, not a graph; nothing is recorded for reverse mode either
unless grad mode is on and some primal or tangent requires grad.

Levels keep nested derivatives apart. In d/dx [x * d/dy (x + y)] the inner
jvp's level is deeper: its tangent moves with the outer level's, never the
other way, so d/dy (x + y) = 1 and the answer is 1. An implementation that
carries one untagged dual number per value lets x's perturbation count in
the inner derivative and answers 2 ("perturbation confusion").

The rules run as minigrad functions, so tangents are Variables and every
transform composes with every other, to any order.

What a transform returns is a constant unless something could differentiate it
(``autodiff.differentiable``): grad mode is on and an argument or a parameter f
closes over requires grad, or an enclosing transform moves it. So
``w = w - lr * func.grad(loss)(w)`` and Newton's step with ``func.hessian`` keep
no graph from one step to the next, as in torch.func and JAX.
"""

import contextlib
from numbers import Integral

import numpy as np

from minigrad import autodiff
from minigrad.autodiff import fresh
from minigrad.core.tangents import open_levels
from minigrad.core.variable import Variable
from minigrad.cuda import get_array_module
from minigrad.forward_functions import zero_tangent
from minigrad.functions.elementwise import identity
from minigrad.functions.shape import concatenate, reshape
from minigrad.linearize import linear_transpose, linearize, transposed_vjp  # noqa: F401 (re-exported)
from minigrad.laplacian import laplacian  # noqa: F401  (defined in its own module)
from minigrad.support.config import config, enable_grad, is_grad_enabled, set_grad_enabled
from minigrad.support.lean import lean_level
from minigrad.support.memory import hang_tangent
from minigrad.support.func_arguments import (as_outputs, called, checked_argnums, checked_function, checked_primals,
                                             matching, one_element, with_aux)


# ---- forward mode ----
def jvp(f, primals, tangents, *, has_aux=False):
    """(outputs, output tangents): f at ``primals`` and its Jacobian-vector product J v, v = ``tangents``.

    ``primals`` and ``tangents`` are tuples, one entry per argument of f, of
    the same shapes and dtypes (a tangent may be None: that argument does not
    move). One forward pass: the tangents go through the forward rules as f
    runs, and no graph is kept for them. With NumPy primals (nothing that
    requires grad), the forward rules run on arrays (support/lean.py): f(x)
    and J v together cost about 1.5 evaluations of f on the tanh network of
    ``benchmarks/bench_modes.py``. With ``has_aux``, f returns (output, aux)
    and jvp returns (outputs, tangents, aux).
    """
    return _jvp(f, primals, tangents, has_aux, always_lean=False)


def _jvp(f, primals, tangents, has_aux, always_lean):
    """jvp; ``always_lean``: no reverse pass will differentiate the tangents, wherever they go (hvp's)."""
    checked_function(f, "jvp")
    primals = checked_primals(primals, "jvp", "primals")
    tangents = matching(checked_primals(tangents, "jvp", "tangents", len(primals), allow_none=True), primals,
                        "jvp", "tangents", "primals")
    since = autodiff.mark()
    (level,), close = open_levels(1, _lean(primals + tangents, always_lean))
    try:
        xs = [_seeded(p, {level: t}) for p, t in zip(primals, tangents)]
        with lean_level(level.lean):
            out, aux = _call(f, xs, has_aux, "jvp", record=False)
        outputs, single = as_outputs(out, "jvp")
        touts = _taken(outputs, level)
    finally:
        close()
    keep = bool(config.levels) or autodiff.differentiable(outputs + touts, since, given=primals + tangents)
    out, touts = _kept(out, keep), touts if keep else list(map(_constant, touts))  # (an enclosing jvp's ride on them)
    result = (out, touts[0] if single else tuple(touts))
    return result + (aux,) if has_aux else result


def _lean(values, always=False):
    """When a jvp's forward rules may run on arrays (support/lean.py), as no reverse pass will differentiate
    their tangents: never while another jvp runs (its tangents ride on the rules' operations); else in every
    call if ``always``; else in the calls that record no node, unless one of the primals and tangents given
    (``values``) requires grad (then f's calls record, and their rules run on Variables)."""
    if config.levels:
        return False
    if always:
        return "always"
    return not (is_grad_enabled() and any(v is not None and v.requires_grad for v in values)) and "unrecorded"


def _seeded(x, tangents):
    """identity(x): a node for this call alone (x's graph and outer tangents behind it), carrying
    ``tangents``, {level: tangent} (an array, for a lean level), besides."""
    x = identity(x)
    x.node.tangents = dict(x.node.tangents or {})
    for level, t in tangents.items():
        if t is not None:
            hang_tangent(level, x.node, t.node.data if level.lean else t)
    return x


def _taken(outputs, level):
    """Each output's tangent at ``level`` (zeros where none arrived), taken off its node, as a Variable."""
    found = [(y.node.tangents or {}).get(level) for y in outputs]
    for y in outputs:
        if y.node.tangents:
            y.node.tangents.pop(level, None)
    return [zero_tangent(y) if t is None else t if isinstance(t, Variable) else Variable(t, requires_grad=False)
            for y, t in zip(outputs, found)]


# ---- reverse mode ----
def vjp(f, *primals, has_aux=False, method="backward"):
    """(outputs, vjp_fn): f at ``primals``, and vjp_fn(u) = (J^T u for each primal), a tuple.

    ``u`` has the structure of the outputs (a Variable, or a tuple of them);
    vjp_fn can be called any number of times, each a reverse pass: through
    the backward rules, or, with ``method="transpose"``, through the transpose
    of f's linearization (``linear_transpose(linearize(f, *primals)[1])``).
    """
    if method == "transpose":
        return transposed_vjp(f, *primals, has_aux=has_aux)
    if method != "backward":
        raise ValueError(f"vjp: method={method!r} is not one of 'backward' (the backward rules) and 'transpose' "
                         "(the transpose rules of f's linearization)")
    checked_function(f, "vjp")
    primals = checked_primals(primals, "vjp", "primals")
    since = autodiff.mark()
    xs = [fresh(p) for p in primals]
    out, aux = _call(f, xs, has_aux, "vjp")
    outputs, single = as_outputs(out, "vjp")
    with enable_grad():  # (grad mode is read at each call of vjp_fn, as torch does)
        reaches = autodiff.differentiable(outputs, since, given=primals)

    def vjp_fn(cotangents):
        if single and not _one_entry(cotangents, outputs[0]):
            cotangents = (cotangents,)
        us = matching(checked_primals(cotangents, "vjp_fn", "cotangents", len(outputs), reference="outputs"),
                      outputs, "vjp_fn", "cotangents", "outputs")
        create_graph = is_grad_enabled() and (reaches or any(u.requires_grad for u in us))
        return tuple(autodiff.grad(outputs, xs, grad_outputs=us, retain_graph=True,
                                   create_graph=create_graph, materialize_grads=True))

    result = (_kept(out, is_grad_enabled() and reaches), vjp_fn)
    return result + (aux,) if has_aux else result


def grad(f, argnums=0, has_aux=False):
    """The function computing the gradient of f, whose output has one element, with respect to argument
    ``argnums`` (a tuple of them for a tuple of gradients). With ``has_aux``: (gradient, aux)."""
    checked_function(f, "grad")

    def gradient(*args, **kwargs):
        value, g = _value_and_grad(f, args, kwargs, argnums, has_aux, "grad", value=False)
        return (g, value[1]) if has_aux else g

    return gradient


def value_and_grad(f, argnums=0, has_aux=False):
    """As ``grad``, but the function returns (value, gradient); ((value, aux), gradient) with ``has_aux``."""
    checked_function(f, "value_and_grad")
    return lambda *args, **kwargs: _value_and_grad(f, args, kwargs, argnums, has_aux, "value_and_grad")


def _value_and_grad(f, args, kwargs, argnums, has_aux, where, create_graph=None, value=True):
    """((f's value, or None unless ``value``; with aux), the gradients): recorded only if they can be differentiated."""
    since = autodiff.mark()
    xs, nums = _arguments(args, argnums, where)
    out, aux = _call(f, xs, has_aux, where, kwargs)
    one_element(out, where)
    keep = autodiff.differentiable([out], since, given=args) if create_graph is None else create_graph
    gs = autodiff.grad(out, [xs[i] for i in nums], retain_graph=True, create_graph=keep, materialize_grads=True)
    out = _kept(out, keep) if value else None
    return ((out, aux) if has_aux else out), (gs[0] if isinstance(argnums, Integral) else tuple(gs))


# ---- Jacobians and Hessians ----
def jacfwd(f, argnums=0, *, has_aux=False):
    """The function computing the Jacobian of f, of shape output.shape + input.shape, column by
    column: one tangent per input element, all pushed through one pass of f (cheap for few inputs, many
    outputs); each column is a level of its own, and no column sees another's."""
    checked_function(f, "jacfwd")

    def jacobian(*args, **kwargs):
        nums = checked_argnums(argnums, len(args), "jacfwd")
        wrt = checked_primals([args[i] for i in nums], "jacfwd", "the arguments at argnums")
        since = autodiff.mark()
        levels, close = open_levels(sum(x.size for x in wrt), _lean(wrt))
        try:
            xs, columns = list(args), iter(levels)
            for i, x in zip(nums, wrt):
                xs[i] = _seeded(x, {level: e for e, level in zip(_unit_vectors(x), columns)})
            with lean_level(levels[0].lean if levels else False):
                out, aux = _call(f, xs, has_aux, "jacfwd", kwargs, record=False)
            outputs, single = as_outputs(out, "jacfwd")
            taken = {level: _taken(outputs, level) for level in levels}  # (every output at once: f may
        finally:                                                         # return one Variable twice)
            close()
        columns = iter(levels)
        spans = [[next(columns) for _ in range(x.size)] for x in wrt]
        keep = bool(config.levels) or autodiff.differentiable(
            outputs + [t for ts in taken.values() for t in ts], since, given=wrt)
        if not keep:  # (constants, so the columns are joined without a graph)
            taken = {level: list(map(_constant, ts)) for level, ts in taken.items()}
        jac = []
        for k, y in enumerate(outputs):
            jac.append([_assembled([reshape(taken[level][k], (-1, 1)) for level in span], 1, y, x)
                        for span, x in zip(spans, wrt)])
        return _structured(jac, argnums, single, aux, has_aux)

    return jacobian


def jacrev(f, argnums=0, *, has_aux=False):
    """The function computing the Jacobian of f, of shape output.shape + input.shape, row by
    row: one reverse pass per output element (cheap for many inputs, few outputs)."""
    checked_function(f, "jacrev")

    def jacobian(*args, **kwargs):
        keep, outputs, single, wrt, aux = _traced(f, args, kwargs, argnums, has_aux, "jacrev")
        jac = []
        for y in outputs:
            rows = [[] for _ in wrt]
            for e in _unit_vectors(y):
                gs = autodiff.grad(y, wrt, grad_outputs=e, retain_graph=True, create_graph=keep,
                                   materialize_grads=True)
                for r, g in zip(rows, gs):
                    r.append(reshape(g, (1, -1)))
            with set_grad_enabled(keep):
                jac.append([_assembled(r, 0, y, x) for r, x in zip(rows, wrt)])
        return _structured(jac, argnums, single, aux, has_aux)

    return jacobian


def hessian(f, argnums=0):
    """The function computing the Hessian of f, of shape output.shape + input.shape + input.shape:
    jacfwd(jacrev(f)), forward mode over reverse mode, as in torch.func and JAX.

    For several outputs and a tuple ``argnums``, h[i][j][k] = d2 y_i / dx_j dx_k: jacrev's nested answer
    (a tuple per output) goes through jacfwd flattened, and is nested again.
    """
    checked_function(f, "hessian")

    def hess(*args, **kwargs):
        rows = []  # the number of arguments per output, when jacrev's answer is nested

        def flat_jacrev(*xs, **kw):
            jac = jacrev(f, argnums)(*xs, **kw)
            if isinstance(jac, tuple) and jac and isinstance(jac[0], tuple):
                rows.append(len(jac[0]))
                return tuple(j for row in jac for j in row)
            return jac

        h = jacfwd(flat_jacrev, argnums)(*args, **kwargs)
        if not rows:
            return h
        n = rows[0]
        return tuple(h[i:i + n] for i in range(0, len(h), n))

    return hess


def hvp(f, primals, tangents):
    """(f(*primals), H v): the Hessian of f (one-element output) times ``tangents``, one per primal,
    without forming H: the jvp of f's gradient (forward over reverse), one pass each way.

    The gradient's reverse pass records no graph of its own (its rules carry the tangents as they run, and
    the forward rules computing those tangents run on arrays), unless reverse mode will differentiate the
    result: some primal or tangent is a Variable that requires grad, in grad mode. (To differentiate H v
    with respect to a Variable that f only closes over, pass it as a primal.)
    """
    checked_function(f, "hvp")
    primals = checked_primals(primals, "hvp", "primals")
    matching(checked_primals(tangents, "hvp", "tangents", len(primals), allow_none=True), primals,
             "hvp", "tangents", "primals")  # (checked here, to be named hvp's; jvp takes them as given)
    argnums = tuple(range(len(primals)))
    moving = [t for t in (tangents if isinstance(tangents, (tuple, list)) else ()) if hasattr(t, "requires_grad")]
    create_graph = is_grad_enabled() and any(x.requires_grad for x in [*primals, *moving])

    def flat(*xs):
        value, gs = _value_and_grad(f, xs, None, argnums, False, "hvp", create_graph)
        return (value, *gs)

    (value, *_), (_, *hv) = _jvp(flat, primals, tangents, False, always_lean=not create_graph)
    return value, tuple(hv)


# ---- shared steps ----
def _arguments(args, argnums, where):
    """(the arguments, the ones at ``argnums`` as fresh Variables; the indices of those)."""
    nums = checked_argnums(argnums, len(args), where)
    xs = list(args)
    for i, x in zip(nums, checked_primals([args[i] for i in nums], where, "the arguments at argnums")):
        xs[i] = fresh(x)
    return xs, nums


def _traced(f, args, kwargs, argnums, has_aux, where):
    """(whether reverse mode may differentiate the result (autodiff.differentiable), f's outputs as a list,
    whether it was one, the inputs at argnums, aux)."""
    since = autodiff.mark()
    xs, nums = _arguments(args, argnums, where)
    out, aux = _call(f, xs, has_aux, where, kwargs)
    outputs, single = as_outputs(out, where)
    return autodiff.differentiable(outputs, since, given=args), outputs, single, [xs[i] for i in nums], aux


def _call(f, xs, has_aux, where, kwargs=None, record=True):
    """(f(*xs, **kwargs), aux), recorded (the trace reverse mode walks) or, for forward mode, in the caller's
    grad mode (keyword arguments are passed as they are, never differentiated)."""
    with enable_grad() if record else contextlib.nullcontext():
        out = called(f, xs, where, kwargs)
    return with_aux(out, has_aux, where)


def _one_entry(cotangents, y):
    """Whether a single output's cotangents are given as a one-entry tuple (u,), rather than as u itself:
    a one-entry list or tuple of numbers with y's shape ([[1, 2, 3]] for y of shape (1, 3)) is u."""
    if not (isinstance(cotangents, (tuple, list)) and len(cotangents) == 1):
        return False
    try:
        return np.shape(cotangents) != y.shape
    except ValueError:  # (ragged)
        return True


def _kept(out, keep):
    """The outputs as they are, or, when nothing can differentiate them (``keep`` false), as constants."""
    if keep:
        return out
    return _constant(out) if isinstance(out, Variable) else type(out)(map(_constant, out))


def _constant(y):
    """y detached, unless it is a constant already."""
    return y if y.node.creator is None and not y.node.requires_grad else y.detach()


def _unit_vectors(x):
    """e_0, e_1, ...: constants of x's shape, dtype and device, each with a single 1."""
    data = x.node.data
    xp = get_array_module(data)
    for k in range(data.size):
        e = xp.zeros(data.size, dtype=data.dtype)
        e[k] = 1
        yield Variable(e.reshape(data.shape), requires_grad=False)


def _assembled(pieces, axis, y, x):
    """Rows (axis 0) or columns (axis 1) of the Jacobian of y by x, joined and shaped y.shape + x.shape.

    Rows are gradients, of x's dtype, columns tangents, of y's: so is the Jacobian, with or without elements.
    """
    if not pieces:  # x or y has no element: nothing to join
        xp = get_array_module(y.node.data)
        dtype = x.dtype if axis == 0 else y.dtype
        return Variable(xp.zeros(y.shape + x.shape, dtype=dtype), requires_grad=False)
    return reshape(concatenate(pieces, axis=axis), y.shape + x.shape)


def _structured(jac, argnums, single, aux, has_aux):
    """jac[output][input] in the shape of the answer: one Jacobian, or tuples over outputs and inputs."""
    per_output = [row[0] if isinstance(argnums, Integral) else tuple(row) for row in jac]  # (np.int64 too)
    result = per_output[0] if single else tuple(per_output)
    return (result, aux) if has_aux else result
